import { describe, expect, it } from 'vitest';
import type { Draft, Meta } from '../api.js';
import { buildQuery, drawingFor } from '../../../embed/src/explore/builder.js';
import { chartStart } from '../../../embed/src/explore/chartEdit.js';
import { checkForm, formOf, swapCandidates, widgetAtPath } from './forms.js';

const meta: Meta = {
  cubes: [
    {
      name: 'orders', title: 'Orders',
      measures: [{ name: 'orders.revenue', title: 'Revenue', type: 'number' }, { name: 'orders.count', title: 'Orders', type: 'number' }],
      dimensions: [{ name: 'orders.status', title: 'Status', type: 'string' }, { name: 'orders.created_at', title: 'Ordered at', type: 'time' }],
    },
    { name: 'customers', title: 'Customers', measures: [{ name: 'customers.count', title: 'Customers', type: 'number' }], dimensions: [{ name: 'customers.region', title: 'Region', type: 'string' }] },
  ],
};

describe("the editor's widget forms", () => {
  it('makes the config the embed reads for each kind', () => {
    expect(checkForm({ ...formOf('FILTER'), member: 'customers.region' }, meta)).toEqual({ config: { member: 'customers.region', title: 'Region' }, problems: [] });
    expect(checkForm({ ...formOf('FILTER'), member: 'orders.status', title: ' State ' }, meta).config).toEqual({ member: 'orders.status', title: 'State' });
    expect(checkForm({ ...formOf('TIME_GRAIN'), grains: ['quarter', 'week'] }, meta).config).toEqual({ options: ['week', 'quarter'], title: undefined, default: undefined });
    expect(checkForm({ ...formOf('FIELD'), member: 'orders.revenue', candidates: ['orders.count'], title: 'Measure' }, meta).config).toEqual({
      member: 'orders.revenue', options: [{ member: 'orders.revenue', title: 'Revenue' }, { member: 'orders.count', title: 'Orders' }], title: 'Measure',
    });
    expect(checkForm({ ...formOf('CONTAINER'), title: 'Status' }, meta).config).toEqual({ title: 'Status' });
    expect(checkForm(formOf('DIVIDER'), meta).config).toEqual({});
    expect(checkForm({ ...formOf('TEXT'), markdown: '# Hi' }, meta).config).toEqual({ markdown: '# Hi', text: undefined });
  });

  it('names what is wrong, by field', () => {
    expect(checkForm(formOf('FILTER'), meta).problems).toEqual([{ field: 'member', message: 'problemFilterMember' }]);
    expect(checkForm({ ...formOf('FILTER'), member: 'orders.revenue' }, meta).problems).toEqual([{ field: 'member', message: 'problemNotDimension' }]);
    expect(checkForm({ ...formOf('TIME_GRAIN'), grains: [] }, meta).problems).toEqual([{ field: 'grains', message: 'problemGrains' }]);
    expect(checkForm(formOf('FIELD'), meta).problems).toEqual([{ field: 'member', message: 'problemFieldMember' }]);
    expect(checkForm({ ...formOf('FIELD'), member: 'orders.revenue' }, meta).problems).toEqual([{ field: 'candidates', message: 'problemCandidates' }]);
    expect(checkForm({ ...formOf('FIELD'), member: 'orders.revenue', candidates: ['customers.count'] }, meta).problems).toEqual([{ field: 'candidates', message: 'problemCandidateKind' }]);
    expect(checkForm({ ...formOf('CONTAINER'), title: '  ' }, meta).problems).toEqual([{ field: 'title', message: 'problemContainerTitle' }]);
    expect(checkForm({ ...formOf('TEXT'), markdown: ' ' }, meta).problems).toEqual([{ field: 'markdown', message: 'problemMarkdown' }]);
  });

  it('offers a FIELD the members of its view and kind only', () => {
    expect(swapCandidates(meta, 'orders.revenue').map((m) => m.name)).toEqual(['orders.count']);
    expect(swapCandidates(meta, 'orders.status').map((m) => m.name)).toEqual([]);
    expect(swapCandidates(meta, 'nope.x')).toEqual([]);
  });

  it('reads a widget already added back into its form', () => {
    const draft: Draft = {
      title: null, description: null, allowEmbed: true, reportSnapshots: [],
      config: { widgets: [
        { id: 'c', type: 'CONTAINER', position: { x: 0, y: 0, w: 12, h: 4 }, config: { title: 'Box' } },
        { id: 'f', type: 'FILTER', position: { x: 0, y: 0, w: 3, h: 2 }, config: { member: 'orders.status', parentId: 'c' } },
      ] },
    };
    expect(formOf('FIELD', { id: 'x', type: 'FIELD', position: { x: 0, y: 0, w: 3, h: 2 }, config: { member: 'orders.revenue', options: ['orders.revenue', { member: 'orders.count' }] } }))
      .toMatchObject({ member: 'orders.revenue', candidates: ['orders.count'] });
    expect(formOf('TIME_GRAIN', { id: 'g', type: 'TIME_GRAIN', position: { x: 0, y: 0, w: 3, h: 2 } }).grains).toEqual(['day', 'week', 'month', 'quarter', 'year']);
    expect(formOf('CONTAINER', draft.config.widgets![0], draft)).toMatchObject({ title: 'Box', children: ['f'] });
    expect(formOf('TEXT', { id: 't', type: 'TEXT', position: { x: 0, y: 0, w: 3, h: 2 }, config: { text: 'old' } }).markdown).toBe('old');
    expect(widgetAtPath(draft, 'config.widgets[1].config.member')).toBe('f');
    expect(widgetAtPath(draft, 'reportSnapshots[0].meta')).toBeUndefined();
    expect(widgetAtPath(draft, undefined)).toBeUndefined();
  });

  it('starts the chart builder from a saved chart: its query, kind and title, and says when it cannot hold all of it', () => {
    const query = { measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }], filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }], order: [['orders.revenue', 'asc']], limit: 10 };
    const edit = chartStart({ title: 'Revenue by month', ...drawingFor('area', query as never), meta: { query } }, meta)!;
    expect(edit.complete).toBe(true);
    expect(edit.start.kind).toBe('area');
    expect(edit.start.title).toBe('Revenue by month');
    expect(edit.start.state).toMatchObject({ view: 'orders', measures: ['orders.revenue'], timeDimension: 'orders.created_at', granularity: 'month', orderBy: 'orders.revenue', orderDirection: 'asc', limit: '10' });
    expect(buildQuery(edit.start.state)).toEqual(query);
    expect(chartStart({ kind: 'kpi', meta: { query: { measures: ['customers.count'] } } }, meta)!.start).toMatchObject({ kind: 'kpi', state: { view: 'customers' } });
    const grouped = chartStart({ kind: 'table', meta: { query: { measures: ['orders.count'], filters: [{ or: [{ member: 'orders.status', operator: 'equals', values: ['a'] }] }] } } }, meta)!;
    expect(grouped.complete).toBe(false);
    expect(chartStart({ kind: 'table', sqlQuery: 'select 1' }, meta)).toBeUndefined();
  });
});
