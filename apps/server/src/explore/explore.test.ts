import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { testConfig } from '../../test/config.js';
import { describeEachDialect } from '../../test/dialects.js';
import type { DialectContext } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { RAISED_RATE_LIMITS } from '../../test/limits.js';
import { POLICY_ROWS, policyViews, policyWarehouseSource } from '../../test/policy-warehouse.js';
import { buildApp } from '../app.js';
import { buildDue } from '../data/preagg/preagg.scheduler.js';
import { RollupStore } from '../data/preagg/preagg.store.js';
import type { AccessPolicy, DataSourceConfig, SemanticView } from '../data/semantic/semantic.model.js';
import { WarehouseRegistry } from '../data/warehouse/warehouse.registry.js';

/*
 * Issue 35, exploration in the embed, the query side (docs/explore.md): GET /api/v1/embed/meta and POST
 * /api/v1/embed/explore/query, by settings.explore level, under the viewer's access policies, and within the
 * limits that protect the warehouse (row cap, statement timeout, per-session rate, rollups only, per-tenant
 * concurrency). Expected rows are computed here from the warehouse's raw rows (POLICY_ROWS).
 */

type Level = 'none' | 'view' | 'create';

/**
 * Orders: every viewer reads their embed tenant's orders in the regions their securityContext names, and never the
 * order code. Customers: staff only (a viewer sees no member of it, so not the view).
 */
const ORDER_POLICY: AccessPolicy[] = [{
  group: '*',
  memberLevel: { includes: '*', excludes: ['code'] },
  rowLevel: { filters: [{ member: 'tenant', operator: 'equals', values: ['{embedTenant}'] }, { member: 'region', operator: 'equals', values: ['{securityContext.regions}'] }] },
}];
const CUSTOMER_POLICY: AccessPolicy[] = [{ group: 'staff' }];
const VIEWS = policyViews({ orders: ORDER_POLICY, customers: CUSTOMER_POLICY });

const BY_REGION = { measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.region'], order: { 'orders.region': 'asc' } };

/** The reference: the tenant's orders in the regions, counted and summed by region, regions ascending. */
function byRegion(tenant: string, regions: string[]): unknown[][] {
  const rows = POLICY_ROWS.orders.filter((o) => o.tenant === tenant && regions.includes(o.region));
  return [...new Set(rows.map((o) => o.region))].sort().map((region) => {
    const mine = rows.filter((o) => o.region === region);
    return [region, mine.length, mine.reduce((sum, o) => sum + o.amount, 0)];
  });
}

/**
 * An account whose deployment reads the policy warehouse with `views`, and one published dashboard `publicId` with
 * one CHART widget, `widgetId`, running `query`; a view of its own beside the warehouse's (a slow one) may be added.
 */
function seedWithWidget(t: () => DialectContext, publicId: string, views: SemanticView[], widgetId: string, query: Record<string, unknown>, refreshKey?: { every: string }): Promise<SeededAccount> {
  return seedAccount(t().db.kysely, {
    users: [{ ref: 'admin', role: 'admin' }],
    deployments: [{
      ref: 'prod', name: 'Prod', dataSource: { ...policyWarehouseSource(t().dialect)!, ...(refreshKey !== undefined ? { refreshKey } : {}) }, semanticViews: views,
      items: [{
        ref: 'wb', type: 'WORKBOOK', name: 'W', dashboard: {
          publicId, status: 'published', allowEmbed: true,
          config: { widgets: [{ id: widgetId, type: 'CHART', position: { x: 0, y: 0, w: 1, h: 1 } }] },
          reportSnapshots: [{ report: 'r1', kind: 'table', meta: { query } }],
        },
      }, { ref: 'r1', type: 'REPORT', name: widgetId }],
    }],
  });
}

describeEachDialect('exploration in the embed: meta and explore queries (issue 35)', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let source: DataSourceConfig;
  const publicId = `explore-${uniqueSuffix()}`;

  beforeAll(async () => {
    source = policyWarehouseSource(t().dialect)!;
    app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS }), { db: t().db });
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{
        ref: 'prod', name: 'Prod', dataSource: source, semanticViews: VIEWS,
        items: [{ ref: 'wb', type: 'WORKBOOK', name: 'W', dashboard: { publicId, status: 'published', allowEmbed: true, config: { widgets: [] } } }],
      }],
    });
  });

  afterAll(async () => {
    await app?.close();
  });

  const viewer = (explore: Level | undefined, tenant = 'acme', regions: string[] = ['north', 'south'], extra: Record<string, unknown> = {}) =>
    mintViewer(app, s.keys.admin!, {
      deploymentId: s.refs.prod!, embedTenantName: tenant, securityContext: { regions },
      ...(explore !== undefined ? { settings: { explore } } : {}), ...extra,
    });
  const meta = (headers: Record<string, string>) => app.inject({ url: '/api/v1/embed/meta', headers });
  const explore = (headers: Record<string, string>, payload: unknown) => app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', headers, payload: payload as Record<string, unknown> });

  it('asks settings.explore: none (the default) is a 403 naming it on both routes; view reads meta but runs no query of its own; create does both', async () => {
    for (const level of [undefined, 'none'] as const) {
      const none = await viewer(level);
      for (const res of [await meta(none.headers), await explore(none.headers, { query: BY_REGION })]) {
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json().error).toMatchObject({ code: 'forbidden', field: 'settings.explore' });
      }
      // Refused before the saved chart is looked for.
      expect((await explore(none.headers, { chartId: 'c1' })).json().error.field).toBe('settings.explore');
    }
    const view = await viewer('view');
    expect((await meta(view.headers)).statusCode).toBe(200);
    const own = await explore(view.headers, { query: BY_REGION });
    expect(own.statusCode).toBe(403);
    expect(own.json().error.field).toBe('settings.explore');
    expect(own.json().error.message).toContain('"create"');
    // A saved chart is view's to run: with no saved chart by that id (none is wired on this branch), a 404 naming it.
    const chart = await explore(view.headers, { chartId: 'no-such-chart' });
    expect(chart.statusCode).toBe(404);
    expect(chart.json().error.field).toBe('chartId');
    const create = await viewer('create');
    expect((await meta(create.headers)).statusCode).toBe(200);
    const ran = await explore(create.headers, { query: BY_REGION });
    expect(ran.statusCode, ran.body).toBe(200);
    expect(ran.json().rows).toEqual(byRegion('acme', ['north', 'south']));
  });

  it('is the embed viewer\'s: no credential is a 401, an API key a 403 naming Authorization', async () => {
    expect((await app.inject({ url: '/api/v1/embed/meta' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', payload: { query: BY_REGION } })).statusCode).toBe(401);
    for (const res of [await meta(bearer(s.keys.admin!)), await explore(bearer(s.keys.admin!), { query: BY_REGION })]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().error.field).toBe('Authorization');
    }
  });

  it('answers meta in the console\'s shape, each listed member as the deployment meta describes it, without what the policy hides', async () => {
    const v = await viewer('view');
    const res = await meta(v.headers);
    expect(res.statusCode).toBe(200);
    const { cubes } = res.json<{ cubes: Array<{ name: string; title: string; measures: Array<{ name: string }>; dimensions: Array<{ name: string }> }> }>();
    // The customers view shows the viewer no member: it is not listed at all.
    expect(cubes.map((c) => c.name)).toEqual(['orders']);
    const orders = cubes[0]!;
    expect(orders.measures.map((m) => m.name)).toEqual(['orders.count', 'orders.revenue', 'orders.customers']);
    expect(orders.dimensions.map((d) => d.name)).toEqual(['orders.id', 'orders.tenant', 'orders.region', 'orders.status', 'orders.amount', 'orders.created_at']);
    expect(res.body).not.toContain('orders.code');
    expect(res.body).not.toContain('customers.');
    // The console's Builder reads it unchanged: every member is what the authors' meta says of it.
    const authors = await app.inject({ url: `/api/v1/deployments/${s.refs.prod}/meta`, headers: bearer(s.keys.admin!) });
    const full = authors.json<{ cubes: Array<{ name: string; title: string; measures: unknown[]; dimensions: Array<{ name: string }> }> }>().cubes.find((c) => c.name === 'orders')!;
    expect(orders.title).toBe(full.title);
    for (const member of [...orders.measures, ...orders.dimensions]) {
      expect(member).toEqual([...full.measures, ...full.dimensions].find((m) => (m as { name: string }).name === member.name));
    }
    // A staff viewer's policy shows customers: the view is listed for them.
    const staff = await viewer('view', 'acme', ['north'], { groups: ['staff'] });
    expect((await meta(staff.headers)).json<{ cubes: Array<{ name: string }> }>().cubes.map((c) => c.name)).toEqual(['orders', 'customers']);
  });

  it('refuses a hidden member typed by hand as widget data does (403), in a measure, a dimension or a filter', async () => {
    const v = await viewer('create');
    const asked = [
      { measures: ['orders.count'], dimensions: ['orders.code'] },
      { measures: ['customers.count'] },
      { measures: ['orders.count'], filters: [{ member: 'orders.code', operator: 'equals', values: ['x'] }] },
    ];
    for (const query of asked) {
      const res = await explore(v.headers, { query });
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
      expect(res.json().error.message).toMatch(/(orders\.code|customers\.count) is not available to you/);
      expect(res.body).not.toContain('MARKER-');
    }
  });

  it('narrows rows by the viewer\'s policy: each tenant its own orders, a narrower securityContext fewer', async () => {
    const cases: Array<[string, string[]]> = [['acme', ['north', 'south']], ['acme', ['north']], ['globex', ['south']]];
    for (const [tenant, regions] of cases) {
      const v = await viewer('create', tenant, regions);
      const res = await explore(v.headers, { query: BY_REGION });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().rows).toEqual(byRegion(tenant, regions));
      // The widget data answer's shape, without a statement or a rollup hint.
      expect(Object.keys(res.json()).sort()).toEqual(['columns', 'ignoredFilters', 'rows', 'source', 'timezone', 'truncated']);
    }
    expect(byRegion('acme', ['north'])).not.toEqual(byRegion('acme', ['north', 'south']));
  });

  it('takes exactly one of query and chartId (400 naming query), a bad query at its field, and a session limited to named dashboards', async () => {
    const v = await viewer('create');
    for (const payload of [{}, { query: BY_REGION, chartId: 'c1' }]) {
      const res = await explore(v.headers, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error.field).toBe('query');
    }
    const unknown = await explore(v.headers, { query: { measures: ['orders.nope'] } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error.field).toBe('query.measures[0]');
    // docs/decisions.md: the dashboards list bounds what opens, not what the viewer may explore of the deployment.
    const limited = await viewer('create', 'acme', ['north'], { dashboards: [publicId] });
    expect((await meta(limited.headers)).statusCode).toBe(200);
    const res = await explore(limited.headers, { query: BY_REGION });
    expect(res.statusCode).toBe(200);
    expect(res.json().rows).toEqual(byRegion('acme', ['north']));
  });
});

describeEachDialect('explore limits: row cap, statement timeout, rate per session (issue 35)', (t) => {
  let s: SeededAccount;
  const publicId = `explore-limits-${uniqueSuffix()}`;
  /** A view whose every statement runs until it is stopped. */
  const forever: SemanticView = {
    name: 'forever',
    sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c',
    dimensions: [{ name: 'x', type: 'number' }], measures: [{ name: 'count', type: 'count' }],
  };

  beforeAll(async () => {
    // Answers stay cached for a week (not the default 10 s), so that two requests cannot straddle a refresh.
    s = await seedWithWidget(t, publicId, [...policyViews(), forever], 'ids', { dimensions: ['orders.id'] }, { every: '1 week' });
  });

  const mint = (app: FastifyInstance) => mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, embedTenantName: 'acme', settings: { explore: 'create' } });

  it('caps an explore query\'s rows at SVC_EXPLORE_MAX_ROWS and says it was truncated; widget data keeps its own cap', async () => {
    const app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, explore: { maxRows: 3 } }), { db: t().db });
    try {
      const v = await mint(app);
      // A limit of the query's own, even one equal to the cap, is not a truncation; the capped query after it shares
      // its cached rows (the same statement) but not that flag.
      const own = await app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', headers: v.headers, payload: { query: { dimensions: ['orders.id'], limit: 3 } } });
      expect(own.json()).toMatchObject({ truncated: false, rows: [[expect.anything()], [expect.anything()], [expect.anything()]] });
      const res = await app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', headers: v.headers, payload: { query: { dimensions: ['orders.id'] } } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().rows).toEqual(own.json().rows);
      expect(res.json().source).toBe('cache');
      expect(res.json().truncated).toBe(true);
      const widget = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/ids/data`, headers: v.headers, payload: {} });
      expect(widget.statusCode).toBe(200);
      expect(widget.json().rows).toHaveLength(POLICY_ROWS.orders.length);
      expect(widget.json().truncated).toBe(false);
    } finally {
      await app.close();
    }
  });

  it('stops an explore statement past SVC_EXPLORE_TIMEOUT_MS (504 query_timeout) and answers the next', async () => {
    const app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, explore: { timeoutMs: 2_000 } }), { db: t().db });
    try {
      const v = await mint(app);
      const started = Date.now();
      const res = await app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', headers: v.headers, payload: { query: { measures: ['forever.count'] } } });
      expect(res.statusCode, res.body).toBe(504);
      expect(res.json().error.code).toBe('query_timeout');
      // Stopped by explore's timeout, not the data path's 30 s.
      expect(Date.now() - started).toBeLessThan(10_000);
      const next = await app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', headers: v.headers, payload: { query: { measures: ['orders.count'] } } });
      expect(next.statusCode, next.body).toBe(200);
      expect(next.json().rows).toEqual([[POLICY_ROWS.orders.length]]);
    } finally {
      await app.close();
    }
  });

  it('limits explore queries per embed session (429 with Retry-After), leaving other sessions and the session\'s widgets alone', async () => {
    const app = await buildApp(testConfig({ rateLimits: { ...RAISED_RATE_LIMITS, explorePerSession: 3 } }), { db: t().db });
    try {
      const v = await mint(app);
      const ask = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', headers, payload: { query: { measures: ['orders.count'] } } });
      for (let i = 0; i < 3; i++) expect((await ask(v.headers)).statusCode).toBe(200);
      const refused = await ask(v.headers);
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error.code).toBe('too_many_requests');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await ask((await mint(app)).headers)).statusCode).toBe(200);
      expect((await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/ids/data`, headers: v.headers, payload: {} })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describeEachDialect('explore on a data source marked exploreRequiresRollup (issue 35)', (t) => {
  let app: FastifyInstance;
  let dir: string;
  let store: RollupStore;
  let warehouses: WarehouseRegistry;
  let v: ViewerSession;
  const publicId = `explore-rollup-${uniqueSuffix()}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-explore-rollup-'));
    const views = policyViews({ orders: ORDER_POLICY });
    views[0]!.preAggregations = [{ name: 'by_region', measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.tenant', 'orders.region'] }];
    const s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{
        ref: 'prod', name: 'Prod', dataSource: { ...policyWarehouseSource(t().dialect)!, exploreRequiresRollup: true }, semanticViews: views,
        items: [{ ref: 'wb', type: 'WORKBOOK', name: 'App', dashboard: { publicId, status: 'published', allowEmbed: true, config: { kind: 'APP', app: { html: '<p/>' } } } }],
      }],
    });
    store = new RollupStore(join(dir, 'rollups'));
    warehouses = new WarehouseRegistry({ timeoutMs: 30_000, demoPath: () => join(dir, 'none.db') });
    const reports = await buildDue({ db: t().db, warehouses, store, timeoutMs: 60_000, now: () => new Date() }, { deploymentId: s.refs.prod! });
    expect(reports.map((r) => r.status)).toEqual(['built']);
    app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, data: { preAggregationDir: join(dir, 'rollups') } }), { db: t().db });
    v = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, embedTenantName: 'acme', securityContext: { regions: ['north'] }, settings: { explore: 'create' } });
  });

  afterAll(async () => {
    await app?.close();
    store?.close();
    await warehouses?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('answers a query a rollup covers from it, under the viewer\'s policy, and refuses one no rollup answers: 400 query_too_broad naming query', async () => {
    const covered = await app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', headers: v.headers, payload: { query: BY_REGION } });
    expect(covered.statusCode, covered.body).toBe(200);
    expect(covered.json().source).toBe('rollup:orders.by_region');
    expect(covered.json().rows).toEqual(byRegion('acme', ['north']));
    const broad = await app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', headers: v.headers, payload: { query: { measures: ['orders.count'], dimensions: ['orders.status'] } } });
    expect(broad.statusCode, broad.body).toBe(400);
    expect(broad.json().error).toMatchObject({ code: 'query_too_broad', message: 'too broad: add a filter or a grain', field: 'query' });
    // The dashboard's own queries are not explore's: the mark does not refuse them.
    const appQuery = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/query`, headers: v.headers, payload: { query: { measures: ['orders.count'], dimensions: ['orders.status'] } } });
    expect(appQuery.statusCode, appQuery.body).toBe(200);
  });
});

describeEachDialect('explore concurrency per embed tenant: one tenant\'s flood starves no other tenant (issue 35)', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  const publicId = `explore-flood-${uniqueSuffix()}`;

  beforeAll(async () => {
    // A view whose every statement takes most of a second on the same data source as the orders: a sleep on
    // PostgreSQL, a counted recursion on SQLite.
    const slow: SemanticView = {
      name: 'slow',
      sql: t().dialect === 'postgres'
        ? 'SELECT g AS x FROM pg_sleep(0.8), generate_series(1, 3) AS g'
        : 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 700000) SELECT x FROM c',
      dimensions: [{ name: 'x', type: 'number' }], measures: [{ name: 'count', type: 'count' }],
    };
    s = await seedWithWidget(t, publicId, [...policyViews(), slow], 'count', { measures: ['orders.count'] });
    app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, explore: { tenantConcurrency: 2 } }), { db: t().db });
  });

  afterAll(async () => {
    await app?.close();
  });

  it('runs 2 of a tenant\'s explore queries at once, queues 16, refuses the rest with 429 and Retry-After; another tenant\'s widget data and explore answer meanwhile', async () => {
    const mint = (tenant: string) => mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, embedTenantName: tenant, settings: { explore: 'create' } });
    const [a, b, c] = await Promise.all([mint('acme'), mint('globex'), mint('initech')]);
    // Warm both lanes (their workers or connections open) so that the timings below measure waiting, not starting.
    await app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', headers: c.headers, payload: { query: { measures: ['orders.count'] } } });
    await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/count/data`, headers: b.headers, payload: {} });

    let doneA = 0;
    const flood = Array.from({ length: 30 }, (_, i) => app.inject({
      method: 'POST', url: '/api/v1/embed/explore/query', headers: a.headers, payload: { query: { measures: ['slow.count'], limit: i + 1 }, force: true },
    }).then((res) => {
      doneA += 1;
      return res;
    }));
    await new Promise((resolve) => setTimeout(resolve, 150));

    const widgetStart = Date.now();
    const widget = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/count/data`, headers: b.headers, payload: { force: true } });
    const widgetMs = Date.now() - widgetStart;
    const doneAtWidget = doneA;
    const otherExplore = await app.inject({ method: 'POST', url: '/api/v1/embed/explore/query', headers: c.headers, payload: { query: { measures: ['orders.count'], dimensions: ['orders.region'] }, force: true } });
    const doneAtExplore = doneA;

    const answers = await Promise.all(flood);
    // Tenant B's widget did not wait behind A's queries (nor behind the two running), and tenant C's explore query
    // waited at most for the two running.
    expect(widget.statusCode, widget.body).toBe(200);
    expect(widget.json().rows).toEqual([[POLICY_ROWS.orders.length]]);
    // Far below the ~9 s A's admitted queries take to drain (18 s when they shared the widgets' connections, unbounded).
    expect(widgetMs, `widget data took ${widgetMs} ms while ${doneAtWidget} of A's queries were done`).toBeLessThan(3_000);
    expect(doneAtWidget).toBeLessThan(12 + 2);
    expect(otherExplore.statusCode, otherExplore.body).toBe(200);
    expect(doneAtExplore - 12, 'A\'s admitted queries done when C\'s explore query answered').toBeLessThanOrEqual(4);
    // The 18 admitted ran two at a time, most of a second each: about nine seconds in all.
    const refused = answers.filter((res) => res.statusCode === 429);
    expect(answers.filter((res) => res.statusCode === 200)).toHaveLength(18);
    expect(refused).toHaveLength(12);
    for (const res of refused) {
      expect(res.json().error.code).toBe('too_many_requests');
      expect(res.headers['retry-after']).toBe('1');
    }
  }, 120_000);
});
