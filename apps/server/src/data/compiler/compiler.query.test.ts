import { describe, expect, it } from 'vitest';
import { describeEachWarehouse, demoRows } from '../../../test/warehouse.js';
import type { WarehouseContext } from '../../../test/warehouse.js';
import { AppError } from '../../core/core.errors.js';
import { compileSemanticQuery } from './compiler.query.js';
import { DEMO_SEMANTIC_VIEWS } from '../warehouse/warehouse.demo.js';
import type { DemoOrder } from '../warehouse/warehouse.demo.js';
import { SemanticModel } from '../semantic/semantic.model.js';
import type { Granularity } from '../semantic/semantic.model.js';
import { parseSemanticQuery } from '../semantic/semantic.query.js';
import type { SemanticQuery } from '../semantic/semantic.query.js';
import { withoutPolicies } from '../policy/policy.query.js';

const model = new SemanticModel(DEMO_SEMANTIC_VIEWS);
const NOW = new Date('2026-11-23T12:00:00Z');

async function run(t: WarehouseContext, query: SemanticQuery, timezone = 'UTC', rowCap = 100_000) {
  const compiled = compileSemanticQuery(withoutPolicies(model, query), { dialect: t.dialect, timezone, now: NOW, rowCap });
  const { rows } = await t.warehouse.run(compiled.sql, compiled.parameters, { maxRows: compiled.limit, timeoutMs: 30_000 });
  return { compiled, rows: rows.slice(0, compiled.limit), truncated: compiled.capped && rows.length > compiled.limit };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
/** The local wall time of an ISO instant in a zone, as `YYYY-MM-DDTHH:MM:SS` (computed by Intl, independently of the compiler). */
function localTime(iso: string, timeZone: string): string {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formatters.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(iso)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}`;
}

const localCache = new Map<string, string>();
function expectedBucket(iso: string, timeZone: string, granularity: Granularity): string {
  const key = `${timeZone}|${iso}`;
  let local = localCache.get(key);
  if (local === undefined) {
    local = localTime(iso, timeZone);
    localCache.set(key, local);
  }
  const [date, time] = local.split('T') as [string, string];
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  switch (granularity) {
    case 'year': return `${y}-01-01T00:00:00.000`;
    case 'quarter': return `${y}-${String(Math.floor((m - 1) / 3) * 3 + 1).padStart(2, '0')}-01T00:00:00.000`;
    case 'month': return `${date.slice(0, 7)}-01T00:00:00.000`;
    case 'week': {
      const day = new Date(Date.UTC(y, m - 1, d));
      day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() + 6) % 7));
      return `${day.toISOString().slice(0, 10)}T00:00:00.000`;
    }
    case 'day': return `${date}T00:00:00.000`;
    case 'hour': return `${date}T${time.slice(0, 2)}:00:00.000`;
    case 'minute': return `${date}T${time.slice(0, 5)}:00.000`;
    case 'second': return `${date}T${time}.000`;
  }
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describeEachWarehouse('semantic query compiler', (t) => {
  const { orders, customers, products } = demoRows();

  it('computes every measure type over the whole warehouse, matching the generator', async () => {
    const { rows } = await run(t(), {
      measures: ['orders.count', 'orders.revenue', 'orders.average_order_value', 'orders.smallest_order', 'orders.largest_order', 'orders.customers', 'orders.units'],
    });
    expect(rows).toHaveLength(1);
    const [count, revenue, average, smallest, largest, distinct, units] = rows[0] as number[];
    const amounts = orders.map((o) => o.amount);
    expect(count).toBe(orders.length);
    expect(revenue).toBeCloseTo(sum(amounts), 2);
    expect(average).toBeCloseTo(sum(amounts) / orders.length, 6);
    expect(smallest).toBe(Math.min(...amounts));
    expect(largest).toBe(Math.max(...amounts));
    expect(distinct).toBe(new Set(orders.map((o) => o.customer_id)).size);
    expect(units).toBe(sum(orders.map((o) => o.quantity)));
  });

  it('groups by a dimension, ordered by the first measure descending by default', async () => {
    const { rows, compiled } = await run(t(), { measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.status'] });
    expect(compiled.columns.map((c) => c.name)).toEqual(['orders.status', 'orders.count', 'orders.revenue']);
    const expected = [...groupBy(orders, (o) => o.status)].map(([status, list]) => [status, list.length, sum(list.map((o) => o.amount))] as const)
      .sort((a, b) => b[1] - a[1]);
    expect(rows.map((r) => r[0])).toEqual(expected.map((e) => e[0]));
    rows.forEach((row, i) => {
      expect(row[1]).toBe(expected[i]![1]);
      expect(row[2] as number).toBeCloseTo(expected[i]![2], 2);
    });
  });

  it('orders by a time dimension named without its granularity, as Cube does, when the query buckets it once', async () => {
    const byName = await run(t(), { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }], order: [['orders.created_at', 'desc']] });
    const byColumn = await run(t(), { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }], order: [['orders.created_at.month', 'desc']] });
    expect(byName.rows).toEqual(byColumn.rows);
    const months = byName.rows.map((r) => String(r[0]));
    expect(months.length).toBeGreaterThan(12);
    expect(months).toEqual([...months].sort().reverse());
  });

  it('reads dimensions of joined views (many to one) without multiplying measures', async () => {
    const { rows } = await run(t(), { measures: ['orders.count'], dimensions: ['products.category', 'customers.region'], order: { 'products.category': 'asc', 'customers.region': 'asc' } });
    const productById = new Map(products.map((p) => [p.id, p]));
    const customerById = new Map(customers.map((c) => [c.id, c]));
    const expected = [...groupBy(orders, (o) => `${productById.get(o.product_id)!.category}|${customerById.get(o.customer_id)!.region}`)]
      .map(([key, list]) => [...key.split('|'), list.length]).sort((a, b) => (a[0] === b[0] ? (String(a[1]) < String(b[1]) ? -1 : 1) : String(a[0]) < String(b[0]) ? -1 : 1));
    expect(rows).toEqual(expected);
    expect(sum(rows.map((r) => r[2] as number))).toBe(orders.length);
  });

  const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Sydney'];
  const granularities: Granularity[] = ['year', 'quarter', 'month', 'week', 'day'];
  for (const timezone of zones) {
    it(`buckets by year, quarter, month, week and day in ${timezone}`, async () => {
      for (const granularity of granularities) {
        const { rows } = await run(t(), { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity }] }, timezone);
        const expected = [...groupBy(orders, (o) => expectedBucket(o.created_at, timezone, granularity))].map(([bucket, list]) => [bucket, list.length])
          .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
        expect(rows, `${granularity} in ${timezone}`).toEqual(expected);
      }
    });
  }

  it('buckets by hour across a daylight saving change (Europe/Berlin, 2025-03-30 and 2025-10-26)', async () => {
    for (const day of ['2025-03-30', '2025-10-26']) {
      const { rows } = await run(t(), { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'hour', dateRange: [day, day] }] }, 'Europe/Berlin');
      const inDay = orders.filter((o) => localTime(o.created_at, 'Europe/Berlin').startsWith(day));
      const expected = [...groupBy(inDay, (o) => expectedBucket(o.created_at, 'Europe/Berlin', 'hour'))].map(([b, l]) => [b, l.length]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
      expect(expected.length).toBeGreaterThan(10);
      expect(rows).toEqual(expected);
    }
  });

  it('reads a date range in the query time zone, with Cube\'s inclusive end day', async () => {
    for (const timezone of ['UTC', 'America/New_York']) {
      const { rows } = await run(t(), { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2025-02-01', '2025-02-28'] }] }, timezone);
      expect(rows[0]![0]).toBe(orders.filter((o) => localTime(o.created_at, timezone).startsWith('2025-02')).length);
    }
  });

  it('applies every filter form, as the generator\'s rows say', async () => {
    const count = async (filters: SemanticQuery['filters']) => (await run(t(), { measures: ['orders.count'], filters })).rows[0]![0];
    const count$ = (predicate: (o: DemoOrder) => boolean) => orders.filter(predicate).length;
    const productById = new Map(products.map((p) => [p.id, p]));
    const local = (o: DemoOrder) => o.created_at.slice(0, 10);
    const cases: Array<[SemanticQuery['filters'], (o: DemoOrder) => boolean]> = [
      [[{ member: 'orders.status', operator: 'equals', values: ['cancelled'] }], (o) => o.status === 'cancelled'],
      [[{ member: 'orders.status', operator: 'equals', values: ['cancelled', 'returned'] }], (o) => ['cancelled', 'returned'].includes(o.status)],
      [[{ member: 'orders.status', operator: 'notEquals', values: ['completed'] }], (o) => o.status !== 'completed'],
      [[{ member: 'orders.status', operator: 'contains', values: ['PPE'] }], (o) => o.status.includes('ppe')],
      [[{ member: 'orders.status', operator: 'notContains', values: ['e'] }], (o) => !o.status.includes('e')],
      [[{ member: 'orders.status', operator: 'startsWith', values: ['c'] }], (o) => o.status.startsWith('c')],
      [[{ member: 'orders.status', operator: 'endsWith', values: ['ed'] }], (o) => o.status.endsWith('ed')],
      [[{ member: 'orders.amount', operator: 'gt', values: [500] }], (o) => o.amount > 500],
      [[{ member: 'orders.amount', operator: 'gte', values: ['500'] }], (o) => o.amount >= 500],
      [[{ member: 'orders.quantity', operator: 'lt', values: [2] }], (o) => o.quantity < 2],
      [[{ member: 'orders.quantity', operator: 'lte', values: [2] }], (o) => o.quantity <= 2],
      [[{ member: 'orders.status', operator: 'set' }], () => true],
      [[{ member: 'orders.status', operator: 'notSet' }], () => false],
      [[{ member: 'orders.created_at', operator: 'inDateRange', values: ['2025-01-01', '2025-01-31'] }], (o) => local(o).startsWith('2025-01')],
      [[{ member: 'orders.created_at', operator: 'notInDateRange', values: ['2024-01-01', '2024-12-31'] }], (o) => !local(o).startsWith('2024')],
      [[{ member: 'orders.created_at', operator: 'beforeDate', values: ['2024-03-01'] }], (o) => local(o) < '2024-03-01'],
      [[{ member: 'orders.created_at', operator: 'beforeOrOnDate', values: ['2024-03-01'] }], (o) => local(o) <= '2024-03-01'],
      [[{ member: 'orders.created_at', operator: 'afterDate', values: ['2025-12-30'] }], (o) => local(o) > '2025-12-30'],
      [[{ member: 'orders.created_at', operator: 'afterOrOnDate', values: ['2025-12-30'] }], (o) => local(o) >= '2025-12-30'],
      [[{ member: 'products.category', operator: 'equals', values: ['Books'] }], (o) => productById.get(o.product_id)!.category === 'Books'],
      [[{ or: [{ member: 'orders.status', operator: 'equals', values: ['returned'] }, { member: 'orders.quantity', operator: 'gte', values: [5] }] }],
        (o) => o.status === 'returned' || o.quantity >= 5],
      [[{ and: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }, { or: [{ member: 'orders.amount', operator: 'lt', values: [10] }, { member: 'orders.amount', operator: 'gt', values: [2000] }] }] }],
        (o) => o.status === 'completed' && (o.amount < 10 || o.amount > 2000)],
    ];
    for (const [filters, predicate] of cases) expect(await count(filters), JSON.stringify(filters)).toBe(count$(predicate));
  });

  it('filters on a measure in HAVING', async () => {
    const { rows } = await run(t(), { measures: ['orders.count'], dimensions: ['customers.city'], filters: [{ member: 'orders.count', operator: 'gt', values: [4200] }] });
    const customerById = new Map(customers.map((c) => [c.id, c]));
    const expected = [...groupBy(orders, (o) => customerById.get(o.customer_id)!.city)].filter(([, l]) => l.length > 4200).map(([city]) => city).sort();
    expect(rows.map((r) => r[0]).sort()).toEqual(expected);
  });

  it('binds values: quotes, LIKE wildcards and backslashes match only themselves', async () => {
    const count = async (operator: 'equals' | 'contains', value: string) => (await run(t(), { measures: ['orders.count'], filters: [{ member: 'orders.status', operator, values: [value] }] })).rows[0]![0];
    expect(await count('equals', "completed' OR '1'='1")).toBe(0);
    expect(await count('equals', 'completed"; DROP TABLE orders; --')).toBe(0);
    expect(await count('contains', '%')).toBe(0);
    expect(await count('contains', '_')).toBe(0);
    expect(await count('contains', '\\')).toBe(0);
    expect(await count('contains', 'omp')).toBe(orders.filter((o) => o.status.includes('omp')).length);
    const compiled = compileSemanticQuery(withoutPolicies(model, { measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'equals', values: ["x' OR 1=1 --"] }] }), { dialect: t().dialect, timezone: 'UTC', now: NOW, rowCap: 10 });
    expect(compiled.sql).not.toContain('OR 1=1');
    expect(compiled.parameters).toContain("x' OR 1=1 --");
  });

  it('cuts at the row cap and says so; a query limit under the cap is not truncation', async () => {
    const capped = await run(t(), { measures: ['orders.count'], dimensions: ['customers.name'] }, 'UTC', 50);
    expect(capped.rows).toHaveLength(50);
    expect(capped.truncated).toBe(true);
    const limited = await run(t(), { measures: ['orders.count'], dimensions: ['customers.name'], limit: 5 }, 'UTC', 50);
    expect(limited.rows).toHaveLength(5);
    expect(limited.truncated).toBe(false);
  });
});

describe('semantic query compiler: refused members and shapes', () => {
  const compile = (query: unknown) => compileSemanticQuery(withoutPolicies(model, parseSemanticQuery(query, 'query')), { dialect: 'sqlite', timezone: 'UTC', now: NOW, rowCap: 100 });
  const refusal = (query: unknown): { status: number; field: string | undefined } => {
    try {
      compile(query);
    } catch (error) {
      if (error instanceof AppError) return { status: error.status, field: error.field };
      throw error;
    }
    throw new Error('compiled');
  };

  it.each([
    [{ measures: ['orders.count; DROP TABLE orders'] }, 'query.measures[0]'],
    [{ measures: ['orders."count"'] }, 'query.measures[0]'],
    [{ measures: ['orders.password'] }, 'query.measures[0]'],
    [{ measures: ['secrets.count'] }, 'query.measures[0]'],
    [{ measures: ['orders.count'], dimensions: ['orders.revenue'] }, 'query.dimensions[0]'],
    [{ measures: ['orders.count', 'customers.count'] }, 'query.measures[1]'],
    [{ measures: ['customers.count'], dimensions: ['orders.status'] }, 'query.dimensions[0]'],
    [{ measures: ['orders.count'], dimensions: ['orders.created_at'] }, 'query.dimensions[0]'],
    [{ measures: ['orders.count'], filters: [{ member: 'orders.status) OR (1=1', operator: 'equals', values: ['x'] }] }, 'query.filters[0].member'],
    [{ measures: ['orders.count'], filters: [{ member: 'orders.amount', operator: 'equals', values: ['1 OR 1=1'] }] }, 'query.filters[0].values[0]'],
    [{ measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'inDateRange', values: ['2025-01-01', '2025-02-01'] }] }, 'query.filters[0].operator'],
    [{ measures: ['orders.count'], filters: [{ member: 'orders.created_at', operator: 'inDateRange', values: ['2025-02-30', '2025-03-01'] }] }, 'query.filters[0].values[0]'],
    [{ measures: ['orders.count'], filters: [{ or: [{ member: 'orders.count', operator: 'gt', values: [1] }, { member: 'orders.status', operator: 'set' }] }] }, 'query.filters[0]'],
    [{ measures: ['orders.count'], order: { 'orders.revenue': 'desc' } }, 'query.order[0]'],
    [{ measures: ['orders.count'], order: { 'orders.count': 'sideways' } }, 'query.order.orders.count'],
    [{ measures: ['orders.count'], limit: 0 }, 'query.limit'],
    [{ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'fortnight' }] }, 'query.timeDimensions[0].granularity'],
    [{}, 'query.measures'],
  ])('refuses %j naming %s', (query, field) => {
    const { status, field: named } = refusal(query);
    expect(status).toBe(400);
    expect(named).toBe(field);
  });
});
