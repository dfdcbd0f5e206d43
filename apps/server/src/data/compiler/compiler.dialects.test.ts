import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { warehouseSources } from '../../../test/warehouse.js';
import { compileSemanticQuery } from './compiler.query.js';
import type { WarehouseDialect } from '../semantic/semantic.model.js';
import { DEMO_SEMANTIC_VIEWS } from '../warehouse/warehouse.demo.js';
import { GRANULARITIES, SemanticModel } from '../semantic/semantic.model.js';
import type { SemanticQuery } from '../semantic/semantic.query.js';
import { openWarehouse } from '../warehouse/warehouse.registry.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { withoutPolicies } from '../policy/policy.query.js';

/**
 * One table of semantic queries, run on every warehouse of the demo data (SQLite, PostgreSQL when there is one,
 * DuckDB's database file and its Parquet and CSV copies): each must give SQLite's rows. Strings and integers are
 * compared exactly; other numbers to 1e-9 relative, since an engine's parallel aggregation adds doubles in
 * another order. The time columns differ by warehouse (ISO text on SQLite, timestamptz on PostgreSQL, TIMESTAMP,
 * TIMESTAMPTZ and text on DuckDB), so the buckets' text is checked across every form.
 */

const model = new SemanticModel(DEMO_SEMANTIC_VIEWS);
const NOW = new Date('2025-11-23T12:00:00Z');

/** UTC; a zone with daylight saving; two with half-hour (and one with 45-minute) offsets, one of them with DST too. */
const ZONES = ['UTC', 'Europe/Berlin', 'America/St_Johns', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe'];

type Case = [name: string, query: SemanticQuery, timezone: string];

const CASES: Case[] = [
  ...ZONES.flatMap((zone): Case[] => [
    ...(['year', 'quarter', 'month', 'week', 'day'] as const).map((granularity): Case => [
      `${granularity} buckets`, { measures: ['orders.count', 'orders.revenue', 'orders.average_order_value'], timeDimensions: [{ dimension: 'orders.created_at', granularity }] }, zone,
    ]),
    // Hours, minutes and seconds around the days the clocks change (in Europe and North America) and a new year.
    ...(['hour', 'minute', 'second'] as const).flatMap((granularity) => [['2025-03-08', '2025-03-10'], ['2025-03-29', '2025-03-31'], ['2025-10-25', '2025-11-03'], ['2024-12-31', '2025-01-01']].map(([from, to]): Case => [
      `${granularity} buckets from ${from} to ${to}`, { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity, dateRange: [from!, to!] }] }, zone,
    ])),
    ['a relative date range', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week', dateRange: 'last 12 weeks' }] }, zone],
    ['a TIMESTAMPTZ (DuckDB file) or CSV-typed (DuckDB files) column by month', { measures: ['customers.count'], timeDimensions: [{ dimension: 'customers.created_at', granularity: 'month' }] }, zone],
    ['time filters of every operator, with times of day', { measures: ['orders.count'], dimensions: ['orders.status'], filters: [
      { or: [
        { member: 'orders.created_at', operator: 'inDateRange', values: ['2025-03-30', '2025-03-30'] },
        { member: 'orders.created_at', operator: 'beforeDate', values: ['2024-01-03'] },
        { member: 'orders.created_at', operator: 'afterOrOnDate', values: ['2025-12-31T12:00:00'] },
        { and: [{ member: 'orders.created_at', operator: 'afterDate', values: ['2024-06-01'] }, { member: 'orders.created_at', operator: 'beforeOrOnDate', values: ['2024-06-02'] }] },
        { and: [{ member: 'orders.created_at', operator: 'gte', values: ['2025-11-02T01:00:00'] }, { member: 'orders.created_at', operator: 'lt', values: ['2025-11-02T03:30:00'] }] },
      ] },
      { member: 'orders.created_at', operator: 'notInDateRange', values: ['2024-01-01T00:00:00Z', '2024-01-01T12:00:00Z'] },
    ] }, zone],
  ]),
  ['every measure type over everything', { measures: ['orders.count', 'orders.revenue', 'orders.average_order_value', 'orders.smallest_order', 'orders.largest_order', 'orders.customers', 'orders.units'] }, 'UTC'],
  ['count_distinct and avg by a joined dimension', { measures: ['orders.customers', 'orders.average_order_value'], dimensions: ['products.category'] }, 'UTC'],
  ['two joined dimensions, ordered by a measure with a limit', { measures: ['orders.revenue', 'orders.count'], dimensions: ['customers.region', 'products.category'], order: { 'orders.revenue': 'desc' }, limit: 7 }, 'UTC'],
  ['strings with accents and capitals sort byte-wise', { measures: ['orders.count'], dimensions: ['customers.city', 'customers.name'], order: [['customers.city', 'desc'], ['customers.name', 'asc']], limit: 400 }, 'UTC'],
  ['dimensions only (a FILTER widget\'s values)', { dimensions: ['customers.country', 'customers.segment'] }, 'UTC'],
  ['string filters', { measures: ['orders.count'], dimensions: ['orders.status'], filters: [
    { member: 'orders.status', operator: 'notEquals', values: ['shipped'] },
    { or: [{ member: 'orders.status', operator: 'contains', values: ['PLE'] }, { member: 'orders.status', operator: 'startsWith', values: ['ret'] }, { member: 'orders.status', operator: 'endsWith', values: ['ing'] }] },
    { member: 'orders.status', operator: 'notContains', values: ['%'] },
  ] }, 'UTC'],
  ['number filters and a joined string filter', { measures: ['orders.revenue', 'orders.units'], dimensions: ['customers.city'], filters: [
    { member: 'orders.amount', operator: 'gte', values: [100] }, { member: 'orders.amount', operator: 'lt', values: ['900.5'] },
    { member: 'orders.quantity', operator: 'equals', values: [2, 3] }, { member: 'customers.country', operator: 'equals', values: ['Brazil', 'Germany', 'Colombia'] },
    { member: 'products.price', operator: 'set' },
  ] }, 'UTC'],
  ['a measure filter in HAVING, ordered by a dimension descending', { measures: ['orders.count', 'orders.largest_order'], dimensions: ['products.name'], filters: [{ member: 'orders.count', operator: 'gt', values: [1600] }], order: { 'products.name': 'desc' } }, 'UTC'],
  ['a filter that matches nothing', { measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.status'], filters: [{ member: 'orders.status', operator: 'notSet' }] }, 'UTC'],
  ['drill-down rows: every dimension of an order at second granularity', {
    dimensions: ['orders.id', 'orders.status', 'customers.name', 'products.name', 'orders.amount'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'second', dateRange: ['2025-06-01', '2025-06-01'] }], order: { 'orders.id': 'asc' },
  }, 'Asia/Kathmandu'],
];

/** Two result rows alike: the same strings and integers, other numbers to 1e-9 relative. */
function sameRows(actual: unknown[][], expected: unknown[][]): string | undefined {
  if (actual.length !== expected.length) return `${actual.length} rows, expected ${expected.length}`;
  for (const [r, row] of expected.entries()) {
    const got = actual[r]!;
    for (const [c, want] of row.entries()) {
      const value = got[c];
      const same = typeof want === 'number' && typeof value === 'number' && !(Number.isInteger(want) && Number.isInteger(value))
        ? Math.abs(value - want) <= 1e-9 * Math.max(1, Math.abs(want))
        : value === want;
      if (!same) return `row ${r}, column ${c}: ${JSON.stringify(value)}, expected ${JSON.stringify(want)} (row ${JSON.stringify(got)}, expected ${JSON.stringify(row)})`;
    }
  }
  return undefined;
}

describe('the same semantic queries give the same rows on every warehouse', () => {
  const sources = warehouseSources();
  const open: Array<{ label: string; dialect: WarehouseDialect; warehouse: Warehouse }> = [];
  beforeAll(() => {
    for (const { label, dialect, source } of sources) {
      if (source !== null) open.push({ label, dialect, warehouse: openWarehouse(source, { timeoutMs: 30_000, demoPath: () => '' }) });
    }
  });
  afterAll(async () => {
    await Promise.all(open.map(({ warehouse }) => warehouse.close()));
  });

  it('runs on SQLite, DuckDB (file, and Parquet and CSV) and PostgreSQL when there is one', () => {
    expect(sources.filter((s) => s.source !== null).map((s) => s.label)).toEqual(expect.arrayContaining(['sqlite', 'duckdb file', 'duckdb parquet and csv']));
    expect(GRANULARITIES.every((g) => CASES.some(([, query]) => query.timeDimensions?.some((td) => td.granularity === g)))).toBe(true);
  });

  it.each(CASES.map(([name, query, timezone]) => ({ name, query, timezone })))('$name in $timezone', async ({ query, timezone }) => {
    const answers = await Promise.all(open.map(async ({ label, dialect, warehouse }) => {
      const compiled = compileSemanticQuery(withoutPolicies(model, query), { dialect, timezone, now: NOW, rowCap: 100_000 });
      const { rows } = await warehouse.run(compiled.sql, compiled.parameters, { maxRows: compiled.limit, timeoutMs: 30_000 });
      return { label, rows };
    }));
    const [reference, ...others] = answers;
    expect(reference!.label).toBe('sqlite');
    for (const { label, rows } of others) expect(sameRows(rows, reference!.rows), label).toBeUndefined();
  });

  it('is not vacuous: the table\'s answers have rows, and the time buckets are in the local wall-clock form', async () => {
    const sqlite = open.find((o) => o.label === 'sqlite')!;
    let empty = 0;
    for (const [name, query, timezone] of CASES) {
      const compiled = compileSemanticQuery(withoutPolicies(model, query), { dialect: 'sqlite', timezone, now: NOW, rowCap: 100_000 });
      const { rows } = await sqlite.warehouse.run(compiled.sql, compiled.parameters, { maxRows: compiled.limit, timeoutMs: 30_000 });
      if (rows.length === 0) empty += 1;
      if (query.timeDimensions?.some((td) => td.granularity !== undefined)) {
        expect(rows.every((row) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000$/.test(String(row.find((v) => typeof v === 'string' && /^\d{4}-/.test(v))))), name).toBe(true);
      }
    }
    // Only the notSet filter matches nothing.
    expect(empty).toBe(1);
  });
});
