import { describe, expect, it } from 'vitest';
import { formatCell } from '../dashboard/cells.js';
import type { ResultColumn } from '../api.js';
import { buildQuery, chartTitle, columnFormats, drawingFor, emptyBuilder, filterReady, orderableMembers, suggestKind, withFormats } from './builder.js';
import type { BuilderState } from './builder.js';

const state = (patch: Partial<BuilderState>): BuilderState => ({ ...emptyBuilder('orders'), ...patch });

describe('the chart builder: the query of what was picked', () => {
  it('asks nothing before a measure or a dimension is picked', () => {
    expect(buildQuery(emptyBuilder('orders'))).toBeUndefined();
  });

  it('makes revenue by month for completed orders', () => {
    expect(buildQuery(state({
      measures: ['orders.revenue'], timeDimension: 'orders.created_at', granularity: 'month',
      filters: [{ member: 'orders.status', operator: 'equals', values: 'completed' }],
    }))).toEqual({
      measures: ['orders.revenue'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }],
      filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }],
    });
  });

  it('sends a date range only with both dates, an order, and a limit only when it is a positive whole number', () => {
    const base = { measures: ['orders.count'], timeDimension: 'orders.created_at', granularity: 'week', orderBy: 'orders.count', orderDirection: 'asc' as const };
    expect(buildQuery(state({ ...base, dateFrom: '2025-01-01', limit: '0' }))).toEqual({
      measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week' }], order: [['orders.count', 'asc']],
    });
    expect(buildQuery(state({ ...base, dateFrom: '2025-01-01', dateTo: '2025-03-31', limit: ' 25 ' }))).toMatchObject({
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week', dateRange: ['2025-01-01', '2025-03-31'] }], limit: 25,
    });
    expect(buildQuery(state({ ...base, limit: '2.5' }))?.limit).toBeUndefined();
  });

  it('leaves out filters not yet complete: no member, no value, a date range of one date; set and notSet take none', () => {
    expect(filterReady({ member: '', operator: 'equals', values: 'x' })).toBe(false);
    expect(filterReady({ member: 'orders.status', operator: 'equals', values: ' , ' })).toBe(false);
    expect(filterReady({ member: 'orders.created_at', operator: 'inDateRange', values: '2025-01-01' })).toBe(false);
    expect(filterReady({ member: 'orders.created_at', operator: 'inDateRange', values: '2025-01-01, 2025-02-01' })).toBe(true);
    expect(buildQuery(state({ measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'set', values: 'ignored' }, { member: 'orders.status', operator: 'notEquals', values: 'a, b' }] }))?.filters)
      .toEqual([{ member: 'orders.status', operator: 'set' }, { member: 'orders.status', operator: 'notEquals', values: ['a', 'b'] }]);
  });

  it('orders by the answer\'s columns: measures, dimensions and the time dimension at its grain', () => {
    expect(orderableMembers(state({ measures: ['orders.count'], dimensions: ['orders.status'], timeDimension: 'orders.created_at', granularity: 'month' })))
      .toEqual(['orders.count', 'orders.status', 'orders.created_at.month']);
  });
});

describe('the chart builder: the suggested chart and its drawing', () => {
  it('suggests a line for a time series, bars for a category, a KPI for one value, a table otherwise', () => {
    expect(suggestKind({ measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] })).toBe('line');
    expect(suggestKind({ measures: ['orders.revenue'], dimensions: ['orders.status'] })).toBe('bar');
    expect(suggestKind({ measures: ['orders.revenue'] })).toBe('kpi');
    expect(suggestKind({ dimensions: ['orders.status'] })).toBe('table');
    expect(suggestKind({ measures: ['orders.revenue'], dimensions: ['a', 'b', 'c'] })).toBe('table');
    expect(suggestKind(undefined)).toBe('table');
  });

  it('draws a line over the answer\'s time column, at its grain, with the members\' titles', () => {
    const query = { measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] };
    expect(drawingFor('line', query, { 'orders.revenue': 'Revenue', 'orders.created_at': 'Ordered at' })).toEqual({
      kind: 'vega',
      spec: {
        mark: { type: 'line', point: true, tooltip: true },
        encoding: {
          x: { field: 'orders.created_at.month', type: 'temporal', timeUnit: 'utcyearmonth', title: 'Ordered at' },
          y: { field: 'orders.revenue', type: 'quantitative', title: 'Revenue' },
        },
      },
    });
    expect(drawingFor('bar', query).spec).toMatchObject({ mark: { type: 'bar' }, encoding: { x: { field: 'orders.created_at.month' } } });
  });

  it('draws bars along a category, and the embed\'s own kinds without a spec', () => {
    const query = { measures: ['orders.revenue'], dimensions: ['orders.status'] };
    expect(drawingFor('bar', query).spec).toEqual({
      mark: { type: 'bar', tooltip: true },
      encoding: { y: { field: 'orders.status', type: 'nominal', sort: '-x' }, x: { field: 'orders.revenue', type: 'quantitative' } },
    });
    for (const kind of ['kpi', 'table', 'map', 'sankey'] as const) expect(drawingFor(kind, query)).toEqual({ kind, spec: null });
    expect(drawingFor('line', { dimensions: ['orders.status'] })).toEqual({ kind: 'table', spec: null });
  });

  it('titles a chart from its members', () => {
    expect(chartTitle({ measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at' }] }, { 'orders.revenue': 'Revenue', 'orders.created_at': 'Ordered at' })).toBe('Revenue by Ordered at');
    expect(chartTitle({ measures: ['orders.count'] }, {})).toBe('orders.count');
  });
});

describe('the chart builder: column formats', () => {
  const query = { measures: ['orders.revenue', 'orders.count'], dimensions: ['orders.status'] };

  it('keeps a format per member, with decimal places only when a whole number from 0 to 10 was typed; the model\'s own is no entry', () => {
    expect(columnFormats({
      'orders.revenue': { choice: 'currency', decimals: ' 0 ' },
      'orders.count': { choice: 'percent', decimals: '2.5' },
      'orders.status': { choice: 'model', decimals: '3' },
    }, query)).toEqual({ 'orders.revenue': { type: 'currency', decimalPlaces: 0 }, 'orders.count': { type: 'percent' } });
    expect(columnFormats({ 'orders.revenue': { choice: 'number', decimals: '11' } }, query)).toEqual({ 'orders.revenue': { type: 'number' } });
    expect(columnFormats({ 'orders.revenue': { choice: 'model', decimals: '' } }, query)).toBeUndefined();
  });

  it('forgets the format of a member the query no longer has', () => {
    expect(columnFormats({ 'orders.units': { choice: 'currency', decimals: '' } }, query)).toBeUndefined();
    expect(columnFormats({ 'orders.revenue': { choice: 'currency', decimals: '' } }, undefined)).toBeUndefined();
  });

  it('puts the formats on the answer\'s columns as svc puts them on a widget\'s, so the embed\'s cells show them', () => {
    const columns: ResultColumn[] = [
      { name: 'orders.created_at.month', member: 'orders.created_at', title: 'Ordered at', type: 'time', kind: 'dimension', granularity: 'month' },
      { name: 'orders.revenue', member: 'orders.revenue', title: 'Revenue', type: 'number', kind: 'measure', format: { type: 'currency', decimalPlaces: 0 } },
    ];
    const formatted = withFormats(columns, { 'orders.revenue': { type: 'number', decimalPlaces: 1 }, 'orders.created_at': { type: 'percent' } });
    expect(formatted[1]!.format).toEqual({ type: 'number', decimalPlaces: 1 });
    expect(formatCell(formatted[1]!, 1234.56, 'en-US')).toBe('1,234.6');
    expect(formatCell(columns[1]!, 1234.56, 'en-US')).toBe('$1,235');
    expect(formatCell(withFormats(columns, { 'orders.revenue': { type: 'percent', decimalPlaces: 0 } })[1]!, 0.256, 'en-US')).toBe('26%');
    expect(withFormats(columns, undefined)).toEqual(columns);
  });

  it('draws the chosen format on the measure\'s axis, in d3\'s words as the embed\'s own charts do', () => {
    const timed = { measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] };
    expect(drawingFor('line', timed, {}, { 'orders.revenue': { type: 'currency', decimalPlaces: 0 } }).spec).toMatchObject({ encoding: { y: { axis: { format: '$,.0f' } } } });
    expect(drawingFor('bar', { measures: ['orders.revenue'], dimensions: ['orders.status'] }, {}, { 'orders.revenue': { type: 'percent', decimalPlaces: 1 } }).spec)
      .toMatchObject({ encoding: { x: { field: 'orders.revenue', axis: { format: '.1%' } } } });
    expect((drawingFor('line', timed).spec as { encoding: { y: object } }).encoding.y).not.toHaveProperty('axis');
  });
});
