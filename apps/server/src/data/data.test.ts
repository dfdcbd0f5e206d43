import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import { WAREHOUSE_SCHEMA } from '../../test/global-setup.js';
import { demoRows } from '../../test/warehouse.js';
import { buildApp } from '../app.js';
import { DEMO_SEMANTIC_VIEWS } from './warehouse/warehouse.demo.js';
import { swappedTitle } from './data.viewer.js';
import { testConfig } from '../../test/config.js';

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** A dashboard of every data-bearing widget kind over the demo warehouse. */
function salesDashboard(publicId: string) {
  return {
    publicId, status: 'published' as const, allowEmbed: true, title: 'Sales',
    config: {
      widgets: ([
        { id: 'category', type: 'FILTER', position: { x: 0, y: 0, w: 3, h: 1 }, config: { member: 'products.category' } },
        { id: 'monthly', type: 'CHART', position: { x: 0, y: 1, w: 6, h: 4 }, config: { reportId: 101 } },
        { id: 'kpi', type: 'CHART', position: { x: 6, y: 1, w: 3, h: 2 }, config: { reportId: 102 } },
        { id: 'daily-returns', type: 'CHART', position: { x: 0, y: 5, w: 6, h: 4 }, config: { reportId: 103 } },
        { id: 'raw', type: 'CHART', position: { x: 6, y: 5, w: 6, h: 4 }, config: { reportId: 104 } },
        { id: 'broken', type: 'CHART', position: { x: 0, y: 9, w: 6, h: 4 }, config: { reportId: 105 } },
        { id: 'writer', type: 'CHART', position: { x: 6, y: 9, w: 6, h: 4 }, config: { reportId: 106 } },
        { id: 'sequence', type: 'CHART', position: { x: 0, y: 12, w: 6, h: 1 }, config: { reportId: 107 } },
        { id: 'by-status', type: 'CHART', position: { x: 6, y: 12, w: 6, h: 1 }, config: { reportId: 108 } },
        // An authoring slip: an option of another view, which the model cannot swap in.
        { id: 'measure', type: 'FIELD', position: { x: 0, y: 14, w: 3, h: 1 }, config: { member: 'orders.count', options: ['orders.count', { member: 'products.count', title: 'Products' }] } },
        { id: 'note', type: 'TEXT', position: { x: 0, y: 13, w: 12, h: 1 }, config: { markdown: '**hi**' } },
      ] as Array<{ id: string; type: 'FILTER' | 'CHART' | 'TEXT' | 'FIELD'; position: { x: number; y: number; w: number; h: number }; config: Record<string, unknown> }>),
    },
    reportSnapshots: [
      {
        report: 'r-monthly', name: 'Revenue by month', kind: 'vega',
        meta: { query: { measures: ['orders.revenue', 'orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-01-01', '2025-12-31'] }] } },
        preferences: { columnFormats: { 'orders.revenue': { type: 'currency', decimalPlaces: 0 } } },
      },
      {
        report: 'r-kpi', name: 'Revenue 2025', kind: 'kpi',
        meta: { query: { measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2025-01-01', '2025-12-31'] }] } },
        periodComparisons: [{ measure: 'orders.revenue', timeDimension: 'orders.created_at', offset: { amount: 1, unit: 'year' }, outputs: ['previous', 'change', 'percentChange'] }],
      },
      {
        report: 'r-returns', name: 'Returns a day', kind: 'table',
        meta: { query: { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: ['2025-01-01', '2025-01-31'] }], filters: [{ member: 'orders.status', operator: 'equals', values: ['returned'] }] } },
        fillMissingRows: { member: 'orders.created_at' },
      },
      { report: 'r-raw', name: 'Raw SQL', kind: 'table', sqlQuery: 'SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status;' },
      { report: 'r-broken', name: 'Broken', kind: 'table', meta: { query: { measures: ['orders.profit'] } } },
      { report: 'r-writer', name: 'Writer', kind: 'table', sqlQuery: 'SELECT count(*) AS n FROM orders; DELETE FROM orders' },
      { report: 'r-sequence', name: 'Sequence', kind: 'table', sqlQuery: "SELECT nextval('svc_test_writes') AS n" },
      {
        report: 'r-by-status', name: 'Revenue and orders by status', kind: 'table',
        meta: { query: { measures: ['orders.revenue', 'orders.count'], dimensions: ['orders.status'], order: { 'orders.revenue': 'desc', 'orders.count': 'asc' } } },
        preferences: { columnFormats: { 'orders.revenue': { type: 'currency', decimalPlaces: 2 } } },
      },
    ],
  };
}

const reports = ['r-monthly', 'r-kpi', 'r-returns', 'r-raw', 'r-broken', 'r-writer', 'r-sequence', 'r-by-status'].map((ref, i) => ({ ref, type: 'REPORT' as const, name: ref, _id: 101 + i }));

describeEachDialect('widget data endpoint', (t) => {
  const { orders, products } = demoRows();
  let s: Awaited<ReturnType<typeof seedAccount>>;
  let viewer: ViewerSession;
  let publicId: string;
  const url = (widgetId: string, id = publicId) => `/api/v1/embed/dashboard/${id}/widgets/${widgetId}/data`;
  const post = (widgetId: string, payload: unknown = {}, headers: Record<string, string> = viewer.headers, id = publicId) =>
    t().app.inject({ method: 'POST', url: url(widgetId, id), headers, payload: payload as object });

  beforeAll(async () => {
    publicId = `sales-${uniqueSuffix()}`;
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [
        { ref: 'prod', name: 'Production', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'Sales', dashboard: salesDashboard(publicId) }, ...reports.map(({ ref, type, name }) => ({ ref, type, name }))] },
        { ref: 'other', name: 'Other' },
      ],
      embedTenants: [{ name: 'customer-a' }, { name: 'customer-b' }],
    });
    // Snapshots name their reports by ref; the widgets above name them by id: map each widget to its report's id.
    const ids = Object.fromEntries(reports.map((r) => [r._id, s.refs[r.ref]!]));
    const row = await t().db.kysely.selectFrom('dashboards').select(['id', 'config']).where('public_id', '=', publicId).executeTakeFirstOrThrow();
    const config = JSON.parse(row.config) as { widgets: Array<{ config?: { reportId?: number } }> };
    for (const widget of config.widgets) if (widget.config?.reportId !== undefined) widget.config.reportId = ids[widget.config.reportId];
    await t().db.kysely.updateTable('dashboards').set({ config: JSON.stringify(config) }).where('id', '=', row.id).execute();
    viewer = await mintViewer(t().app, s.keys.admin!, { deploymentId: s.refs.prod!, embedTenantName: 'customer-a' });
  });

  const productById = () => new Map(products.map((p) => [p.id, p]));
  const inYear = (year: string) => orders.filter((o) => o.created_at.startsWith(year));

  it("runs a CHART widget's semantic query: monthly revenue of 2025 with the snapshot's column format", async () => {
    const res = await post('monthly');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.columns.map((c: { name: string }) => c.name)).toEqual(['orders.created_at.month', 'orders.revenue', 'orders.count']);
    expect(body.columns[1].format).toEqual({ type: 'currency', decimalPlaces: 0 });
    expect(body.timezone).toBe('UTC');
    expect(body.truncated).toBe(false);
    expect(body.rows).toHaveLength(12);
    const january = inYear('2025-01');
    expect(body.rows[0][0]).toBe('2025-01-01T00:00:00.000');
    expect(body.rows[0][1]).toBeCloseTo(sum(january.map((o) => o.amount)), 2);
    expect(body.rows[0][2]).toBe(january.length);
  });

  it("applies the viewer's filters: a value, a list and a range change the numbers", async () => {
    const books = (await post('monthly', { filters: { 'products.category': 'Books' } })).json();
    const byId = productById();
    const january = inYear('2025-01');
    expect(books.rows[0][2]).toBe(january.filter((o) => byId.get(o.product_id)!.category === 'Books').length);
    const two = (await post('monthly', { filters: { 'products.category': ['Books', 'Toys'] } })).json();
    expect(two.rows[0][2]).toBe(january.filter((o) => ['Books', 'Toys'].includes(byId.get(o.product_id)!.category)).length);
    const range = (await post('monthly', { filters: { 'orders.amount': { gte: 100, lte: 200 } } })).json();
    expect(range.rows[0][2]).toBe(january.filter((o) => o.amount >= 100 && o.amount <= 200).length);
    const dated = (await post('monthly', { filters: { 'orders.created_at': { gte: '2025-03-01', lte: '2025-04-30' } } })).json();
    expect(dated.rows.map((r: unknown[]) => r[0])).toEqual(['2025-03-01T00:00:00.000', '2025-04-01T00:00:00.000']);
    const cleared = (await post('monthly', { filters: { 'products.category': null } })).json();
    expect(cleared.rows[0][2]).toBe(january.length);
  });

  it('buckets in the viewer\'s time zone: a New York January holds other orders than a UTC one', async () => {
    const utc = (await post('monthly')).json();
    const ny = (await post('monthly', { timezone: 'America/New_York' })).json();
    expect(ny.timezone).toBe('America/New_York');
    const local = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York', year: 'numeric', month: '2-digit' });
    const nyJanuary = orders.filter((o) => local.format(new Date(o.created_at)) === '2025-01').length;
    expect(ny.rows[0][2]).toBe(nyJanuary);
    expect(ny.rows).not.toEqual(utc.rows);
  });

  it('swaps the granularity for a TIME_GRAIN choice', async () => {
    const quarters = (await post('monthly', { granularity: 'quarter' })).json();
    expect(quarters.columns[0].name).toBe('orders.created_at.quarter');
    expect(quarters.rows.map((r: unknown[]) => r[0])).toEqual(['2025-01-01T00:00:00.000', '2025-04-01T00:00:00.000', '2025-07-01T00:00:00.000', '2025-10-01T00:00:00.000']);
  });

  it('swaps a measure for a FIELD choice of the same view', async () => {
    const res = await post('monthly', { fields: { 'orders.revenue': 'orders.units' } });
    expect(res.json().columns[1].name).toBe('orders.units');
    expect(res.json().rows[0][1]).toBe(sum(inYear('2025-01').map((o) => o.quantity)));
    const refused = await post('monthly', { fields: { 'orders.revenue': 'customers.count' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.field).toBe('fields.orders.revenue');
  });

  it('a swap the dashboard\'s own FIELD control offers but the model refuses is the dashboard\'s fault: 422 naming the control', async () => {
    const offered = await post('monthly', { fields: { 'orders.count': 'products.count' } });
    expect(offered.statusCode).toBe(422);
    expect(offered.json().error).toMatchObject({ code: 'invalid_query', field: 'widgets.measure.config.options' });
    // Not offered by any control: the viewer's ask, a 400.
    const asked = await post('monthly', { fields: { 'orders.count': 'customers.count' } });
    expect(asked.statusCode).toBe(400);
    expect(asked.json().error.field).toBe('fields.orders.count');
  });

  it('a FIELD swap onto a member the query already asks for keeps it once: measures and order (issue 31: no 400)', async () => {
    const res = await post('by-status', { fields: { 'orders.revenue': 'orders.count' } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.columns.map((c: { name: string }) => c.name)).toEqual(['orders.status', 'orders.count']);
    // The order keeps its first entry for the member (revenue's place and direction, now count's): descending.
    const counts = new Map<string, number>();
    for (const o of orders) counts.set(o.status, (counts.get(o.status) ?? 0) + 1);
    expect(body.rows).toEqual([...counts].sort((a, b) => b[1] - a[1]));
    expect(body.fields).toEqual({ 'orders.revenue': 'orders.count' });
    // A swap of a dimension onto one already there keeps one too.
    const dimension = await post('by-status', { fields: { 'orders.status': 'orders.status' } });
    expect(dimension.statusCode).toBe(200);
    expect(dimension.json().fields).toBeUndefined();
  });

  it('titles and formats follow the swapped member: the title names it, its column has its own title and format, not the replaced one\'s', async () => {
    const plain = (await post('kpi')).json();
    expect(plain.title).toBeUndefined();
    expect(plain.fields).toBeUndefined();
    expect(plain.columns[0]).toMatchObject({ name: 'orders.revenue', title: 'Revenue', format: { type: 'currency', decimalPlaces: 0 } });
    const body = (await post('kpi', { fields: { 'orders.revenue': 'orders.count' } })).json();
    expect(body.title).toBe('Orders 2025');
    expect(body.fields).toEqual({ 'orders.revenue': 'orders.count' });
    expect(body.columns.map((c: { name: string }) => c.name)).toEqual(['orders.count', 'orders.count.previous', 'orders.count.change', 'orders.count.percentChange']);
    expect(body.columns[0]).toEqual({ name: 'orders.count', member: 'orders.count', title: 'Orders', type: 'number', kind: 'measure', measureType: 'count' });
    expect(body.rows[0][0]).toBe(inYear('2025').length);
    expect(body.rows[0][1]).toBe(inYear('2024').length);
    // The snapshot's currency format was written for revenue: units, swapped in, shows as a plain number.
    const units = (await post('monthly', { fields: { 'orders.revenue': 'orders.units' } })).json();
    expect(units.columns[1]).toMatchObject({ name: 'orders.units', title: 'Units' });
    expect(units.columns[1].format).toBeUndefined();
    expect(units.title).toBe('Units by month');
    // A title that does not name the swapped member stays as written.
    expect((await post('by-status', { fields: { 'orders.revenue': 'orders.units' } })).json().title).toBe('Units and orders by status');
  });

  it('compares a KPI with the same period a year before (previous, change, percentChange)', async () => {
    const body = (await post('kpi')).json();
    const now = sum(inYear('2025').map((o) => o.amount));
    const before = sum(inYear('2024').map((o) => o.amount));
    expect(body.columns.map((c: { name: string }) => c.name)).toEqual(['orders.revenue', 'orders.revenue.previous', 'orders.revenue.change', 'orders.revenue.percentChange']);
    const [current, previous, change, percent] = body.rows[0] as number[];
    expect(current).toBeCloseTo(now, 2);
    expect(previous).toBeCloseTo(before, 2);
    expect(change).toBeCloseTo(now - before, 2);
    expect(percent).toBeCloseTo(now / before - 1, 6);
  });

  it('fills the days without returns with 0 (fillMissingRows)', async () => {
    const body = (await post('daily-returns')).json();
    expect(body.rows).toHaveLength(31);
    expect(body.rows[0][0]).toBe('2025-01-01T00:00:00.000');
    expect(body.rows[30][0]).toBe('2025-01-31T00:00:00.000');
    const returned = inYear('2025-01').filter((o) => o.status === 'returned');
    for (const [day, count] of body.rows as Array<[string, number]>) {
      expect(count).toBe(returned.filter((o) => o.created_at.startsWith(day.slice(0, 10))).length);
    }
    expect((body.rows as Array<[string, number]>).some(([, count]) => count === 0)).toBe(true);
  });

  it("lists a FILTER widget's values, unnarrowed by its own choice", async () => {
    const body = (await post('category', { filters: { 'products.category': 'Books' } })).json();
    expect(body.rows.map((r: unknown[]) => r[0])).toEqual(['Books', 'Electronics', 'Garden', 'Home', 'Sports', 'Toys']);
  });

  it("runs a snapshot's raw SQL read-only, and refuses a statement that writes", async () => {
    const raw = (await post('raw')).json();
    expect(raw.columns.map((c: { name: string }) => c.name)).toEqual(['status', 'n']);
    expect(raw.rows.find((r: unknown[]) => r[0] === 'returned')[1]).toBe(orders.filter((o) => o.status === 'returned').length);
    const writer = await post('writer');
    expect(writer.statusCode).toBe(422);
    expect(writer.json().error.code).toBe('invalid_query');
    expect((await post('raw')).json().rows).toEqual(raw.rows);
  });

  it("reports a widget whose snapshot's query names an undeclared member as 422, naming the member", async () => {
    const res = await post('broken');
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('invalid_query');
    expect(res.json().error.field).toBe('meta.query.measures[0]');
  });

  it('drills into a mark: the rows under one month of one measure, with the drill members', async () => {
    const res = await post('daily-returns', { drilldown: { member: 'orders.count', point: { 'orders.created_at.day': '2025-01-15T00:00:00.000' } } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.columns.map((c: { name: string }) => c.name)).toEqual(['orders.id', 'orders.status', 'customers.name', 'customers.city', 'products.name', 'orders.quantity', 'orders.amount', 'orders.created_at.second']);
    const expected = orders.filter((o) => o.status === 'returned' && o.created_at.startsWith('2025-01-15')).map((o) => o.id);
    expect(body.rows.map((r: unknown[]) => r[0])).toEqual(expected);
    const refused = await post('daily-returns', { drilldown: { member: 'orders.revenue' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.field).toBe('drilldown.member');
  });

  it('a drill-down past 1,000 rows lists the first 1,000, says it is truncated, and counts every row under the mark', async () => {
    const res = await post('monthly', { drilldown: { member: 'orders.revenue', point: { 'orders.created_at.month': '2025-03-01T00:00:00.000' } } });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const march = orders.filter((o) => o.created_at.startsWith('2025-03'));
    expect(march.length).toBeGreaterThan(1000);
    expect(body.rows).toHaveLength(1000);
    expect(body.truncated).toBe(true);
    expect(body.totalRows).toBe(march.length);
    // A dimension's declared format travels with its column (the demo's amount is currency).
    expect(body.columns.find((c: { name: string }) => c.name === 'orders.amount').format).toEqual({ type: 'currency', decimalPlaces: 2 });
    // The first 1,000 by the primary key.
    expect(body.rows.map((r: unknown[]) => r[0])).toEqual(march.map((o) => o.id).sort((a, b) => a - b).slice(0, 1000));
    // Under the limit: every row, not truncated, counted without a second statement.
    const few = await post('daily-returns', { drilldown: { member: 'orders.count', point: { 'orders.created_at.day': '2025-01-15T00:00:00.000' } } });
    expect(few.json()).toMatchObject({ truncated: false, totalRows: few.json().rows.length });
  });

  it('refuses bad input with 400 naming the field', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['monthly', { filters: { 'orders.nope': 1 } }, 'filters.orders.nope'],
      ['monthly', { filters: { 'orders.amount': 'a lot' } }, 'filters.orders.amount'],
      ['monthly', { filters: { 'orders.created_at': { gte: '2025-02-30' } } }, 'filters.orders.created_at'],
      ['monthly', { filters: { 'orders.amount': {} } }, 'filters.orders.amount'],
      ['monthly', { timezone: '+02:00' }, 'timezone'],
      ['monthly', { timezone: 'Mars/Olympus' }, 'timezone'],
      ['monthly', { granularity: 'fortnight' }, 'granularity'],
      ['monthly', { limit: 5 }, 'limit'],
      ['note', {}, 'widgetId'],
    ];
    for (const [widget, payload, field] of cases) {
      const res = await post(widget, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.field, JSON.stringify(payload)).toBe(field);
    }
  });

  it('runs only the widgets of this dashboard, for sessions that may read it', async () => {
    expect((await post('nope')).statusCode).toBe(404);
    expect((await post('monthly', {}, {})).statusCode).toBe(401);
    expect((await post('monthly', {}, { authorization: 'Embed-Token nope' })).statusCode).toBe(401);
    // Another tenant of the same account reads the same dashboard (tenants separate comments, not dashboards).
    const b = await mintViewer(t().app, s.keys.admin!, { deploymentId: s.refs.prod!, embedTenantName: 'customer-b' });
    expect((await post('monthly', {}, b.headers)).statusCode).toBe(200);
    // A session of another deployment of the account: 403; of another account: the dashboard does not resolve.
    const elsewhere = await mintViewer(t().app, s.keys.admin!, { deploymentId: s.refs.other! });
    expect((await post('monthly', {}, elsewhere.headers)).statusCode).toBe(403);
    const stranger = await seedAccount(t().db.kysely, { users: [{ ref: 'admin', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P' }] });
    const foreign = await mintViewer(t().app, stranger.keys.admin!, { deploymentId: stranger.refs.prod! });
    expect((await post('monthly', {}, foreign.headers)).statusCode).toBe(404);
    // The account's own admin may read it with an API key (private embedding, tools).
    expect((await post('monthly', {}, bearer(s.keys.admin!))).statusCode).toBe(200);
  });

  it("runs an APP dashboard's own queries (the bridge's endpoint); a CLASSIC dashboard runs only its widgets' (403)", async () => {
    const classic = await t().app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/query`, headers: viewer.headers, payload: { query: { measures: ['orders.count'] } } });
    expect(classic.statusCode).toBe(403);
    expect(classic.json().error.field).toBe('publicId');
    const appId = `app-${uniqueSuffix()}`;
    const a = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'App', dashboard: {
        publicId: appId, status: 'published', allowEmbed: true, config: { kind: 'APP', app: { html: '<p>app</p>' } } } }] }],
    });
    const session = await mintViewer(t().app, a.keys.admin!, { deploymentId: a.refs.prod! });
    const run = (query: unknown) => t().app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${appId}/query`, headers: session.headers, payload: { query } });
    const ok = await run({ measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'equals', values: ['returned'] }] });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().rows).toEqual([[orders.filter((o) => o.status === 'returned').length]]);
    const bad = await run({ measures: ['orders.secret'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.field).toBe('query.measures[0]');
    // Another account's viewer does not even find it.
    expect((await t().app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${appId}/query`, headers: viewer.headers, payload: { query: { measures: ['orders.count'] } } })).statusCode).toBe(404);
  });

  it('serves the app frame sandboxed to scripts only, with no network', async () => {
    const res = await t().app.inject({ url: '/embed/app-frame' });
    expect(res.statusCode).toBe(200);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain('sandbox allow-scripts');
    expect(csp).not.toContain('allow-same-origin');
    expect(csp).toContain("connect-src 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(res.body).toContain("event.source !== parent");
  });

  it('stops a statement past its time and keeps serving (504, then 200)', async () => {
    // The quick query after the stopped one gets the same time, on a fresh worker: under a full test run on two
    // cores, spawning it alone took more than 300 ms.
    const app: FastifyInstance = await buildApp(testConfig({ data: { timeoutMs: 1_000 } }), { db: t().db });
    try {
      const slowId = `slow-${uniqueSuffix()}`;
      const slow = await seedAccount(t().db.kysely, {
        users: [{ ref: 'admin', role: 'admin' }],
        deployments: [{
          ref: 'prod', name: 'P', items: [{
            ref: 'wb', type: 'WORKBOOK', name: 'Slow', dashboard: {
              publicId: slowId, status: 'published', allowEmbed: true, config: { widgets: [
                { id: 'forever', type: 'CHART', position: { x: 0, y: 0, w: 1, h: 1 } },
                { id: 'quick', type: 'CHART', position: { x: 1, y: 0, w: 1, h: 1 } },
              ] },
              reportSnapshots: [
                { report: 'r1', sqlQuery: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c' },
                { report: 'r2', sqlQuery: 'SELECT count(*) AS n FROM orders' },
              ],
            },
          }, { ref: 'r1', type: 'REPORT', name: 'r1' }, { ref: 'r2', type: 'REPORT', name: 'r2' }],
        }],
      });
      const session = await mintViewer(app, slow.keys.admin!, { deploymentId: slow.refs.prod! });
      // The recursive query never ends: only the data timeout can answer it (504) before the test's own timeout.
      // Three in a row: each is stopped, not left running (a SQLite statement's process is killed; a worker thread
      // would go on in native code and take a core each, and the quick query below would miss its 300 ms).
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${slowId}/widgets/forever/data`, headers: session.headers, payload: { force: true } });
        expect(res.statusCode).toBe(504);
        expect(res.json().error.code).toBe('query_timeout');
      }
      const quick = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${slowId}/widgets/quick/data`, headers: session.headers, payload: {} });
      expect(quick.statusCode).toBe(200);
      expect(quick.json().rows).toEqual([[orders.length]]);
    } finally {
      await app.close();
    }
  });
});

describeEachDialect('filter check endpoint (issue 31: set-filter is checked before it applies)', (t) => {
  let publicId: string;
  let viewer: ViewerSession;
  const check = (filters: Record<string, unknown>, headers = viewer.headers) =>
    t().app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/filters/check`, headers, payload: { filters } });

  beforeAll(async () => {
    publicId = `filters-${uniqueSuffix()}`;
    // The demo's views, the orders view hiding its tenant column from everyone.
    const views = structuredClone(DEMO_SEMANTIC_VIEWS);
    views.find((view) => view.name === 'orders')!.accessPolicy = [{ group: '*', memberLevel: { excludes: ['tenant'] } }];
    const s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Production', semanticViews: views, items: [{ ref: 'wb', type: 'WORKBOOK', name: 'Filters', dashboard: { publicId, status: 'published', allowEmbed: true, title: 'Filters', config: { widgets: [] } } }] }],
      embedTenants: [{ name: 'customer-a' }],
    });
    viewer = await mintViewer(t().app, s.keys.admin!, { deploymentId: s.refs.prod!, embedTenantName: 'customer-a' });
  });

  it('answers each filter with its dimension\'s title and type, and runs nothing', async () => {
    const res = await check({ 'orders.status': ['completed', 'shipped'], 'orders.amount': { gte: 10 }, 'orders.created_at': '2025-01-01', 'products.category': null });
    expect(res.statusCode).toBe(200);
    expect(res.json().filters).toEqual([
      { member: 'orders.status', title: 'Status', type: 'string' },
      { member: 'orders.amount', title: 'Amount', type: 'number' },
      { member: 'orders.created_at', title: 'Ordered at', type: 'time' },
      { member: 'products.category', title: 'Category', type: 'string' },
    ]);
  });

  it('refuses what every widget would refuse: an unknown member, a measure or a bad value is a 400, a hidden member a 403, each naming the filter', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ 'orders.nope': 'x' }, 400, 'filters.orders.nope'],
      [{ 'nowhere.status': 'x' }, 400, 'filters.nowhere.status'],
      [{ 'orders.revenue': 1 }, 400, 'filters.orders.revenue'],
      [{ 'orders.amount': 'lots' }, 400, 'filters.orders.amount'],
      [{ 'orders.amount': {} }, 400, 'filters.orders.amount'],
      [{ 'orders.created_at': 'someday' }, 400, 'filters.orders.created_at'],
      [{ 'orders.status': 'completed', 'orders.tenant': 'customer-b' }, 403, 'filters.orders.tenant'],
    ];
    for (const [filters, status, field] of cases) {
      const res = await check(filters);
      expect({ status: res.statusCode, field: res.json().error?.field }, JSON.stringify(filters)).toEqual({ status, field });
    }
  });
});

describe('widget data on a PostgreSQL data source', () => {
  const postgresUrl = inject('postgresUrl');
  it.skipIf(postgresUrl === null)('runs the same widget against the demo warehouse loaded into PostgreSQL, read-only', async () => {
    const { openDatabase } = await import('../db/db.database.js');
    const db = openDatabase(postgresUrl!);
    const app = await buildApp(testConfig({ data: { timeoutMs: 2_000 } }), { db });
    try {
      const id = `pg-${uniqueSuffix()}`;
      const dashboard = salesDashboard(id);
      const s = await seedAccount(db.kysely, {
        users: [{ ref: 'admin', role: 'admin' }],
        deployments: [{
          ref: 'prod', name: 'P', dataSource: { type: 'postgres', url: postgresUrl!, schema: WAREHOUSE_SCHEMA },
          items: [{ ref: 'wb', type: 'WORKBOOK', name: 'Sales', dashboard: { ...dashboard, config: { widgets: dashboard.config.widgets.map((w) => ({ ...w, config: w.type === 'CHART' ? {} : w.config })) } } },
            ...reports.map(({ ref, type, name }) => ({ ref, type, name }))],
        }],
      });
      const session = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod! });
      const post = (widget: string, payload: object = {}) => app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${id}/widgets/${widget}/data`, headers: session.headers, payload });
      const { orders } = demoRows();
      const monthly = (await post('monthly', { timezone: 'Europe/Berlin' })).json();
      const local = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit' });
      expect(monthly.rows[0][2]).toBe(orders.filter((o) => local.format(new Date(o.created_at)) === '2025-01').length);
      expect((await post('writer')).statusCode).toBe(422);
      // A function that writes fails inside the read-only transaction every statement runs in.
      const pool = new pg.Client({ connectionString: postgresUrl! });
      await pool.connect();
      await pool.query(`CREATE SEQUENCE IF NOT EXISTS ${WAREHOUSE_SCHEMA}.svc_test_writes`);
      await pool.end();
      const sequence = await post('sequence');
      expect(sequence.statusCode).toBe(422);
      expect(sequence.json().error.message).toMatch(/read-only transaction/);
      const raw = (await post('raw')).json();
      expect(raw.rows.find((r: unknown[]) => r[0] === 'returned')[1]).toBe(orders.filter((o) => o.status === 'returned').length);
    } finally {
      await app.close();
      await db.close();
    }
  });
});

describe('swappedTitle', () => {
  const revenueToOrders = { from: 'orders.revenue', to: 'orders.count', fromTitle: 'Revenue', toTitle: 'Orders' };
  it('replaces the swapped member\'s title as a whole word, in any case, keeping a leading capital', () => {
    expect(swappedTitle('Revenue 2025', [revenueToOrders])).toBe('Orders 2025');
    expect(swappedTitle('Average revenue: regions', [revenueToOrders])).toBe('Average orders: regions');
    expect(swappedTitle('Revenues and Prerevenue', [revenueToOrders])).toBe('Revenues and Prerevenue');
    expect(swappedTitle('Top customers', [revenueToOrders])).toBe('Top customers');
  });
  it('swaps both ways in one pass, so that two swaps do not undo each other', () => {
    const ordersToRevenue = { from: 'orders.count', to: 'orders.revenue', fromTitle: 'Orders', toTitle: 'Revenue' };
    expect(swappedTitle('Revenue and orders', [revenueToOrders, ordersToRevenue])).toBe('Orders and revenue');
  });
  it('keeps a replacement\'s own capitals inside a sentence', () => {
    expect(swappedTitle('Weekly revenue', [{ from: 'a.b', to: 'a.c', fromTitle: 'Revenue', toTitle: 'SKU count' }])).toBe('Weekly SKU count');
  });
});
