import cube from '@cubejs-client/core';
import type { Query } from '@cubejs-client/core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cubePolicyViews } from '../../test/cube.js';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { demoRows } from '../../test/warehouse.js';

/**
 * Issue 36 part 1, Cube's REST API (docs/cube.md), driven by the real @cubejs-client/core against svc listening on
 * a port: `load` and `meta` under each caller's policies, the answers equal to the widget data endpoint's for the same
 * query, Cube's shapes (numbers as text, annotation, the normalized query), and refusals by field in Cube's error shape.
 */
describeEachDialect('Cube\'s REST API', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  let apiUrl: string;
  const publicId = `cube-${uniqueSuffix()}`;
  const BY_STATUS: Query = { measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.status'], order: { 'orders.status': 'asc' } };
  const BY_MONTH: Query = { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2024-01-01', '2024-06-30'] }] };

  beforeAll(async () => {
    app = t().app;
    // The demo's row policy (each viewer reads its tenant's orders), and a measure the viewers may not see.
    const views = cubePolicyViews();
    const position = { x: 0, y: 0, w: 6, h: 3 };
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }],
      groups: [{ ref: 'analysts', name: 'Analysts', members: ['alice'] }],
      deployments: [{
        ref: 'prod', name: 'Prod', semanticViews: views,
        items: [{
          ref: 'wb', type: 'WORKBOOK', name: 'Cube', dashboard: {
            publicId, status: 'published', allowEmbed: true, title: 'Cube',
            config: { widgets: [{ id: 'by-status', type: 'CHART', position }, { id: 'by-month', type: 'CHART', position }] },
            reportSnapshots: [{ report: 'r1', kind: 'table', meta: { query: BY_STATUS } }, { report: 'r2', kind: 'table', meta: { query: BY_MONTH } }],
          },
        }, { ref: 'r1', type: 'REPORT', name: 'By status' }, { ref: 'r2', type: 'REPORT', name: 'By month' }],
      }],
    });
    other = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Theirs' }] });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    apiUrl = `${address}/cubejs-api/v1`;
  });

  afterAll(async () => {
    await app.close();
  });

  const viewer = async (tenant: string) => (await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: tenant, securityContext: { tenant } })).token;
  const widgetRows = async (token: string, widgetId: string) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/${widgetId}/data`, headers: { authorization: `Embed-Token ${token}` }, payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ columns: Array<{ name: string }>; rows: unknown[][] }>();
  };

  it('loads with the unmodified client: tablePivot, chartPivot and seriesNames equal the widget data endpoint\'s rows for each tenant', async () => {
    for (const tenant of ['customer-a', 'customer-b']) {
      const token = await viewer(tenant);
      const api = cube(token, { apiUrl });
      const set = await api.load(BY_STATUS);
      const widget = await widgetRows(token, 'by-status');
      const expected = widget.rows.map((row) => Object.fromEntries(widget.columns.map((c, i) => [c.name, typeof row[i] === 'number' ? String(row[i]) : row[i]])));
      expect(set.tablePivot()).toEqual(expected);
      expect(set.seriesNames().map((s) => s.key)).toEqual(['orders.count', 'orders.revenue']);
      expect(set.chartPivot().map((p) => p.x)).toEqual(widget.rows.map((row) => row[0]));
      // The tenant's own orders only: the counts add up to the tenant's rows in the warehouse.
      const total = set.tablePivot().reduce((sum, row) => sum + Number(row['orders.count']), 0);
      expect(total).toBe(demoRows().ordersOf(tenant).length);
    }
  });

  it('answers a time series as Cube does: the month under both names, the range echoed as absolute local times, missing months filled by chartPivot', async () => {
    const token = await viewer('customer-a');
    const set = await cube(token, { apiUrl }).load(BY_MONTH);
    const widget = await widgetRows(token, 'by-month');
    const raw = set.rawData();
    expect(raw.map((row) => row['orders.created_at.month'])).toEqual(widget.rows.map((row) => row[0]));
    expect(raw.map((row) => row['orders.created_at'])).toEqual(widget.rows.map((row) => row[0]));
    expect(raw.map((row) => row['orders.count'])).toEqual(widget.rows.map((row) => String(row[1])));
    const query = set.query() as { timeDimensions: Array<{ dateRange: string[] }> };
    expect(query.timeDimensions[0]!.dateRange).toEqual(['2024-01-01T00:00:00.000', '2024-06-30T23:59:59.999']);
    expect(set.chartPivot()).toHaveLength(6);
    const annotation = set.annotation() as { timeDimensions: Record<string, { type: string; granularity?: { name: string } }>; measures: Record<string, { type: string; title: string }> };
    expect(annotation.timeDimensions['orders.created_at.month']).toMatchObject({ type: 'time', granularity: { name: 'month' } });
    expect(annotation.measures['orders.count']).toMatchObject({ type: 'number' });
  });

  it('hides from meta what the policy hides, and refuses a hidden member typed by hand', async () => {
    const token = await viewer('customer-a');
    const meta = await cube(token, { apiUrl }).meta();
    const orders = meta.cubes.find((c) => c.name === 'orders')!;
    expect(orders.measures.map((m) => m.name)).toContain('orders.count');
    expect(orders.measures.map((m) => m.name)).not.toContain('orders.average_order_value');
    const admin = await cube(s.keys.alice!, { apiUrl }).meta();
    expect(admin.cubes.find((c) => c.name === 'orders')!.measures.map((m) => m.name)).toContain('orders.average_order_value');
    await expect(cube(token, { apiUrl }).load({ measures: ['orders.average_order_value'] })).rejects.toMatchObject({ status: 403 });
  });

  it('takes an API key as the platform user (their groups: all rows), blending and compareDateRange queries, offset and total', async () => {
    const api = cube(s.keys.alice!, { apiUrl });
    const all = await api.load({ measures: ['orders.count'] });
    expect(Number(all.tablePivot()[0]!['orders.count'])).toBe(demoRows().orders.length);
    const compared = await api.load({
      measures: ['orders.count'],
      timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', compareDateRange: [['2024-01-01', '2024-03-31'], ['2025-01-01', '2025-03-31']] }],
    });
    expect(compared.decompose()).toHaveLength(2);
    expect(compared.decompose().map((one) => one.rawData().length)).toEqual([3, 3]);
    const blended = await api.load([BY_MONTH, { measures: ['orders.revenue'], timeDimensions: BY_MONTH.timeDimensions }]);
    expect(blended.seriesNames().map((s) => s.key)).toEqual(['orders.count', 'orders.revenue']);
    const month = blended.chartPivot()[0]!;
    expect(Number(month['orders.revenue'])).toBeGreaterThan(Number(month['orders.count']));
    const page = await api.load({ ...BY_STATUS, limit: 2, offset: 1, total: true });
    const full = await api.load(BY_STATUS);
    expect(page.tablePivot()).toEqual(full.tablePivot().slice(1, 3));
    expect(page.totalRows()).toBe(full.tablePivot().length);
  });

  it('gives an admin the compiled SQL (sql) of each query under their policies, and nobody else; a rollup that answers it is named', async () => {
    const sql = await cube(s.keys.alice!, { apiUrl }).sql({ ...BY_STATUS, filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }] });
    expect(sql.sql().toLowerCase()).toContain('select');
    expect(sql.sql().toLowerCase()).toContain('status');
    expect(sql.rawQuery().sql[1]).toContain('completed');
    const raw = sql.rawQuery() as unknown as { aliasNameToMember: Record<string, string>; external: boolean; limit: number };
    expect(Object.values(raw.aliasNameToMember)).toEqual(expect.arrayContaining(['orders.count', 'orders.status']));
    expect(raw).toMatchObject({ external: false, limit: 10_000 });
    const compared = await cube(s.keys.alice!, { apiUrl }).sql({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', compareDateRange: [['2024-01-01', '2024-01-31'], ['2025-01-01', '2025-01-31']] }] });
    expect(compared).toHaveLength(2);
    await expect(cube(await viewer('customer-a'), { apiUrl }).sql(BY_STATUS)).rejects.toMatchObject({ status: 403 });
    await expect(cube(s.keys.bob!, { apiUrl }).sql(BY_STATUS)).rejects.toMatchObject({ status: 403 });
  });

  it('dry-runs a query: normalized as load runs it (a relative range made absolute), its pivot query and order, a hidden or unknown member refused', async () => {
    const token = await viewer('customer-a');
    const dry = await cube(token, { apiUrl }).dryRun({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: 'last 7 days' }], order: { 'orders.count': 'desc' } });
    expect(dry.queryType).toBe('regularQuery');
    const range = (dry.normalizedQueries[0] as { timeDimensions: Array<{ dateRange: string[] }> }).timeDimensions[0]!.dateRange;
    expect(range).toHaveLength(2);
    expect(range.every((text) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/.test(text))).toBe(true);
    expect(dry.queryOrder).toEqual([{ 'orders.count': 'desc' }]);
    expect(dry.pivotQuery).toMatchObject({ measures: ['orders.count'], queryType: 'regularQuery' });
    await expect(cube(token, { apiUrl }).dryRun({ measures: ['orders.average_order_value'] })).rejects.toMatchObject({ status: 403 });
    await expect(cube(token, { apiUrl }).dryRun({ measures: ['orders.nope'] })).rejects.toMatchObject({ status: 400 });
  });

  it('refuses what svc cannot serve with a 400 naming the field, in Cube\'s error shape; no credential is a 401; another account\'s deployment a 404', async () => {
    const get = (query: unknown, headers: Record<string, string> = bearer(s.keys.alice!)) =>
      app.inject({ url: `/cubejs-api/v1/load?query=${encodeURIComponent(JSON.stringify(query))}`, headers: { ...headers } });
    for (const [query, field] of [
      [{ measures: ['orders.count'], segments: ['orders.big'] }, 'query.segments[0]'],
      [{ measures: ['orders.count'], ungrouped: true }, 'query.ungrouped'],
      [{ measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'notStartsWith', values: ['c'] }] }, 'query.filters[0].operator'],
      [{ measures: ['orders.count'], offset: -1 }, 'query.offset'],
      [{ measures: ['orders.nope'] }, 'query.measures[0]'],
      [{ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: 'next fortnight' }] }, 'query.timeDimensions[0].dateRange'],
      [[BY_STATUS, BY_MONTH], 'query[0].timeDimensions'],
    ] as const) {
      const res = await get(query);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json<{ error: string; field: string }>().field, res.body).toBe(field);
      expect(typeof res.json<{ error: string }>().error).toBe('string');
    }
    expect((await app.inject({ url: '/cubejs-api/v1/load?query=%7Bnope' , headers: bearer(s.keys.alice!) })).json()).toMatchObject({ field: 'query' });
    const anonymous = await app.inject({ url: `/cubejs-api/v1/meta` });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ field: 'Authorization', error: expect.stringContaining('Authorization') as string });
    const theirs = await app.inject({ url: '/cubejs-api/v1/meta', headers: { authorization: other.keys.alice!, 'x-svc-deployment-id': String(s.refs.prod) } });
    expect(theirs.statusCode).toBe(404);
    // The bare key, as Cube's clients send it, is the same caller as `Bearer <key>`.
    const bare = await app.inject({ url: '/cubejs-api/v1/meta', headers: { authorization: s.keys.alice! } });
    expect(bare.statusCode).toBe(200);
  });
});
