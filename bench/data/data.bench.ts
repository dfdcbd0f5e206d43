import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, performance as nodePerformance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import pg from 'pg';
import { buildApp } from '../../apps/server/src/app.js';
import { testConfig } from '../../apps/server/test/config.js';
import { importFile } from '../../apps/server/src/import/import.js';
import type { ImportAccount } from '../../apps/server/src/import/import.js';
import { compileSemanticQuery } from '../../apps/server/src/data/compiler/compiler.query.js';
import { withoutPolicies } from '../../apps/server/src/data/policy/policy.query.js';
import type { WarehouseDialect } from '../../apps/server/src/data/semantic/semantic.model.js';
import { DEMO_SEMANTIC_VIEWS, ensureDemoWarehouseSqlite, loadDemoWarehousePostgres } from '../../apps/server/src/data/warehouse/warehouse.demo.js';
import { SemanticModel } from '../../apps/server/src/data/semantic/semantic.model.js';
import type { DataSourceConfig, SemanticView } from '../../apps/server/src/data/semantic/semantic.model.js';
import type { SemanticQuery } from '../../apps/server/src/data/semantic/semantic.query.js';
import { openDatabase } from '../../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../../apps/server/src/db/db.migrations.js';
import { hasChromium, launchChromium } from '../../e2e/browser.js';
import { bundle, demoDashboardItems, e2eAccount, openHostPage, serve, startSvc } from '../../e2e/embed-harness.js';
import { freshDatabase, machine, postgresAnswers, summarize, writeResults } from '../harness.js';
import { buildDue } from '../../apps/server/src/data/preagg/preagg.scheduler.js';
import { RollupStore, deploymentsWithRollups } from '../../apps/server/src/data/preagg/preagg.store.js';
import { WarehouseRegistry } from '../../apps/server/src/data/warehouse/warehouse.registry.js';
import type { Db } from '../../apps/server/src/db/db.database.js';
import type { LatencySummary } from '../harness.js';

/**
 * `npm run bench -- data [--orders 10000000] [--iterations 7] [--loads 10] [--explore [--explorers 50] [--explore-loads 15]]`: the widget data endpoint over the demo
 * warehouse scaled up, on SQLite and PostgreSQL, against the same compiled SQL run directly on the database in the
 * same run (goal: the endpoint adds at most 20%); then time to `dashboard-loaded` of the demo dashboard in Chromium
 * (goal: 1.5 s). Issue 20's policy row: each widget again for a session under a row-level policy keeping one
 * tenant of ten (`orders.tenant = {securityContext.tenant}`), against the same filter written into the widget's
 * query by hand (goal: the policy adds at most 10%).
 */
export const TIMEZONE = 'Europe/Berlin';
export const NOW = new Date('2026-11-23T00:00:00Z');
export const QUERIES: Record<string, SemanticQuery> = {
  kpi: { measures: ['orders.revenue', 'orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2025-01-01', '2025-12-31'] }] },
  monthly: { measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2024-01-01', '2025-12-31'] }] },
  'by-category': { measures: ['orders.revenue', 'orders.count'], dimensions: ['products.category'] },
  'top-customers': { measures: ['orders.revenue'], dimensions: ['customers.name'], order: { 'orders.revenue': 'desc' }, limit: 100 },
};

/** The tenant the policy row reads: one of the demo warehouse's ten, 1/10 of the orders. */
const POLICY_TENANT = 'customer-c';

/** The demo views, with orders guarded: group `all-rows` reads every row, anyone else its securityContext's tenant. */
const POLICY_VIEWS: SemanticView[] = DEMO_SEMANTIC_VIEWS.map((view) => view.name !== 'orders' ? view : {
  ...view,
  accessPolicy: [
    { group: 'all-rows', rowLevel: { allowAll: true } },
    { group: '*', rowLevel: { filters: [{ member: 'orders.tenant', operator: 'equals', values: ['{securityContext.tenant}'] }] } },
  ],
});

/** A widget's query with the policy's filter written in by hand. */
const byHand = (query: SemanticQuery): SemanticQuery => ({ ...query, filters: [...(query.filters ?? []), { member: 'orders.tenant', operator: 'equals', values: [POLICY_TENANT] }] });

/**
 * Two answers alike: the same rows, numbers equal to 1e-9 relative. PostgreSQL's parallel aggregation adds doubles
 * in an order that changes from run to run, so two runs of one sum can differ in the last bits.
 */
function sameAnswer(a: string, b: string): boolean {
  const same = (x: unknown, y: unknown): boolean => {
    if (typeof x === 'number' && typeof y === 'number') return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
    if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => same(v, y[i]));
    if (typeof x === 'object' && x !== null && typeof y === 'object' && y !== null) {
      const keys = Object.keys(x);
      return keys.length === Object.keys(y).length && keys.every((k) => same((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]));
    }
    return x === y;
  };
  return same(JSON.parse(a), JSON.parse(b));
}

/** Each widget, then each again with the policy's filter written by hand (`<id>-by-hand`). */
const WIDGETS: Array<[string, SemanticQuery]> = [...Object.entries(QUERIES), ...Object.entries(QUERIES).map(([id, query]) => [`${id}-by-hand`, byHand(query)] as [string, SemanticQuery])];

export function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(args[i + 1]);
}

function progress(label: string, total: number): (done: number) => void {
  return (done) => process.stderr.write(`\r${label}: ${'#'.repeat(Math.round((done / total) * 30)).padEnd(30, '.')} ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`);
}

/**
 * The warehouse in PostgreSQL schema `bench_wh_<orders>`, loaded unless it already holds that many orders of the
 * current generator (a schema of version 1, without `orders.tenant`, fails the count and is loaded again).
 */
async function postgresWarehouse(url: string, orders: number): Promise<string> {
  const schema = `bench_wh_${orders}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const existing = await client.query(`SELECT count(tenant)::int AS n FROM ${schema}.orders`).catch(() => undefined);
    if (existing?.rows[0]?.n !== orders) await loadDemoWarehousePostgres(client, schema, orders, progress('PostgreSQL warehouse', orders));
    process.stderr.write('\n');
  } finally {
    await client.end();
  }
  return schema;
}

interface DialectResult {
  dialect: WarehouseDialect;
  widgets: Record<string, {
    endpoint: LatencySummary; raw: LatencySummary; ratioP50: number; rows: number;
    /** The same widget for a session under the row-level policy, and with the policy's filter written by hand. */
    policy: LatencySummary; byHand: LatencySummary; policyOverByHandP50: number;
  }>;
  ratioP50Max: number;
  policyOverByHandP50Max: number;
}

/** The bench account: one dashboard of every widget of QUERIES and its by-hand twin, over the warehouse. */
export async function importBench(db: Db, dialect: WarehouseDialect, source: DataSourceConfig): Promise<{ refs: Record<string, number>; publicId: string }> {
  const publicId = `bench-${dialect}`;
  const account = {
    ref: 'bench', name: 'Bench', tenantName: `bench-${dialect}`,
    users: [{ ref: 'admin', email: 'admin@bench.test', role: 'admin', apiKeys: ['svc_bench_data_admin_0001'] }],
    deployments: [{
      ref: 'prod', name: 'Warehouse', dataSource: source, semanticViews: POLICY_VIEWS,
      items: [
        { ref: 'wb', type: 'WORKBOOK', name: 'Bench', dashboard: {
          publicId, status: 'published', allowEmbed: true,
          config: { widgets: WIDGETS.map(([id], i) => ({ id, type: 'CHART', position: { x: 0, y: i, w: 12, h: 1 }, config: { reportId: i } })) },
          reportSnapshots: WIDGETS.map(([id, query]) => ({ report: `r-${id}`, kind: 'table', meta: { query } })),
        } },
        ...WIDGETS.map(([id]) => ({ ref: `r-${id}`, type: 'REPORT', name: id })),
      ],
    }],
  } as unknown as ImportAccount;
  const { refs } = await importFile(db.kysely, { accounts: [account] });
  // Widgets name their snapshot by report id: set each to its report's.
  const row = await db.kysely.selectFrom('dashboards').select(['id', 'config']).where('public_id', '=', publicId).executeTakeFirstOrThrow();
  const config = JSON.parse(row.config) as { widgets: Array<{ id: string; config: { reportId: number } }> };
  for (const widget of config.widgets) widget.config.reportId = refs[`r-${widget.id}`]!;
  await db.kysely.updateTable('dashboards').set({ config: JSON.stringify(config) }).where('id', '=', row.id).execute();
  return { refs, publicId };
}

async function measureDialect(dialect: WarehouseDialect, source: DataSourceConfig, iterations: number): Promise<DialectResult> {
  const svcDb = await freshDatabase('sqlite', '');
  const db = openDatabase(svcDb.url);
  await migrateToLatest(db);
  const { refs, publicId } = await importBench(db, dialect, source);
  const app = await buildApp(testConfig({ data: { timeoutMs: 600_000, rowCap: 10_000 }, rateLimits: { embedPerSession: 100_000_000, embedPerIp: 100_000_000 } }), { db, now: () => NOW });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const tokenFor = (body: Record<string, unknown>) => mintToken(base, refs.prod!, body);
  const token = await tokenFor({ externalId: 'bench', groups: ['all-rows'] });
  const tenantToken = await tokenFor({ externalId: 'bench-tenant', groups: [], securityContext: { tenant: POLICY_TENANT } });

  // The baseline: the same compiled SQL, run directly on the database (one connection, main thread).
  const model = new SemanticModel(DEMO_SEMANTIC_VIEWS);
  const sqlite = source.type === 'sqlite' ? new Database(source.path, { readonly: true }) : undefined;
  const client = source.type === 'postgres' ? new pg.Client({ connectionString: source.url, options: `-c search_path=${source.schema ?? 'public'} -c TimeZone=UTC` }) : undefined;
  await client?.connect();
  const raw = async (query: SemanticQuery): Promise<number> => {
    const compiled = compileSemanticQuery(withoutPolicies(model, query), { dialect, timezone: TIMEZONE, now: NOW, rowCap: 10_000 });
    const started = performance.now();
    if (sqlite) sqlite.prepare(compiled.sql).raw(true).all(...(compiled.parameters as unknown[]));
    else await client!.query({ text: compiled.sql, values: compiled.parameters as unknown[], rowMode: 'array' });
    return performance.now() - started;
  };
  const endpoint = async (widget: string, as = token): Promise<{ ms: number; rows: number; body: string }> => {
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/embed/dashboard/${publicId}/widgets/${widget}/data`, {
      method: 'POST', headers: { authorization: `Embed-Token ${as}`, 'content-type': 'application/json' }, body: JSON.stringify({ timezone: TIMEZONE }),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${widget}: ${res.status} ${text}`);
    return { ms, rows: (JSON.parse(text) as { rows: unknown[] }).rows.length, body: text };
  };

  const widgets: DialectResult['widgets'] = {};
  for (const [widget, query] of Object.entries(QUERIES)) {
    await endpoint(widget);
    await raw(query);
    // The policy must give exactly the hand-filtered answer, or its timing means nothing.
    const [policed, hand] = [await endpoint(widget, tenantToken), await endpoint(`${widget}-by-hand`)];
    if (!sameAnswer(policed.body, hand.body)) throw new Error(`${widget}: the policy's answer differs from the hand-written filter's`);
    const e: number[] = [];
    const r: number[] = [];
    const p: number[] = [];
    const h: number[] = [];
    let rows = 0;
    // Interleaved, so that drift of the machine hits all four alike.
    for (let i = 0; i < iterations; i++) {
      const sample = await endpoint(widget);
      rows = sample.rows;
      e.push(sample.ms);
      r.push(await raw(query));
      // The two compared alternate which goes first, so neither always follows the direct query.
      if (i % 2 === 0) {
        p.push((await endpoint(widget, tenantToken)).ms);
        h.push((await endpoint(`${widget}-by-hand`)).ms);
      } else {
        h.push((await endpoint(`${widget}-by-hand`)).ms);
        p.push((await endpoint(widget, tenantToken)).ms);
      }
      process.stderr.write(`\r${dialect} ${widget}: ${i + 1}/${iterations}   `);
    }
    const endpointSummary = summarize(e);
    const rawSummary = summarize(r);
    const policy = summarize(p);
    const handSummary = summarize(h);
    widgets[widget] = {
      endpoint: endpointSummary, raw: rawSummary, ratioP50: Math.round((endpointSummary.p50 / rawSummary.p50) * 1000) / 1000, rows,
      policy, byHand: handSummary, policyOverByHandP50: Math.round((policy.p50 / handSummary.p50) * 1000) / 1000,
    };
  }
  process.stderr.write('\n');
  sqlite?.close();
  await client?.end();
  await app.close();
  await db.close();
  await svcDb.drop();
  return {
    dialect, widgets, ratioP50Max: Math.max(...Object.values(widgets).map((w) => w.ratioP50)),
    policyOverByHandP50Max: Math.max(...Object.values(widgets).map((w) => w.policyOverByHandP50)),
  };
}

const HOST_PAGE = `<!doctype html><html><body style="margin:0"><div id="c" style="width:1300px;height:2000px"></div>
<script type="module">
  import * as sdk from '/sdk.js';
  window.runEmbed = (baseUrl, publicId, sessionId) => new Promise((resolve, reject) => {
    const container = document.getElementById('c');
    container.replaceChildren();
    const timer = setTimeout(() => reject(new Error('no dashboard-loaded in 30 s')), 30000);
    const t0 = performance.now();
    const handle = sdk.embed({ container, baseUrl, surface: 'dashboard', publicId, getSessionId: () => sessionId });
    handle.on('error', (e) => { clearTimeout(timer); reject(new Error('embed error: ' + JSON.stringify(e))); });
    handle.on('dashboard-loaded', (p) => { clearTimeout(timer); resolve({ ms: performance.now() - t0, widgetCount: p.widgetCount }); handle.destroy(); });
  });
  window.ready = true;
</script></body></html>`;

/**
 * iframe creation to dashboard-loaded of the demo dashboard (every widget type) over the warehouse of `path` with
 * the demo's pre-aggregations built: the first load (result cache cold) and the warm ones.
 */
async function measureBrowser(loads: number, path: string, kept: string): Promise<LatencySummary & { widgetCount: number; firstLoadMs: number; sources: Record<string, number> }> {
  const items = demoDashboardItems();
  const host = await serve({
    '/': { type: 'text/html', body: HOST_PAGE },
    '/sdk.js': { type: 'text/javascript', body: await bundle('packages/embed-sdk/src/index.ts') },
  });
  const hostOrigin = `http://localhost:${host.port}`;
  const rollupDir = mkdtempSync(join(tmpdir(), 'svc-bench-rollups-'));
  const source: DataSourceConfig = { type: 'sqlite', path };
  const svc = await startSvc({ account: e2eAccount([hostOrigin], { items, dataSource: source, semanticViews: DEMO_SEMANTIC_VIEWS }), data: { preAggregationDir: rollupDir, timeoutMs: 600_000 } });
  // The SQLite run's builds (the same warehouse and views); whatever is missing is built here.
  await reuseBuilds(svc.db, rollupDir, kept);
  const built = await buildRollups(svc.db, rollupDir);
  process.stderr.write(`browser: ${built.builds.length} rollups built in ${built.ms} ms (the others as kept by the SQLite run)\n`);
  const sources: Record<string, number> = {};
  const browser = await launchChromium();
  try {
    const page = await openHostPage(browser.context, `${hostOrigin}/`);
    // Where each widget's answer came from (the first load: rollups; later loads: the cache).
    page.on('response', (response) => {
      if (!response.url().endsWith('/data')) return;
      void response.text().then((text) => {
        const source = /"source":"([^"]+)"/.exec(text)?.[1] ?? `status ${response.status()}`;
        sources[source] = (sources[source] ?? 0) + 1;
      }, () => undefined);
    });
    const samples: number[] = [];
    let widgetCount = 0;
    let firstLoadMs = 0;
    for (let i = -2; i < loads; i++) {
      const sessionId = await svc.mint();
      const result = await page.evaluate(({ baseUrl, sessionId }) => (window as unknown as { runEmbed(b: string, p: string, s: string): Promise<{ ms: number; widgetCount: number }> }).runEmbed(baseUrl, 'sales-performance', sessionId), { baseUrl: svc.origin, sessionId });
      widgetCount = result.widgetCount;
      if (i === -2) firstLoadMs = Math.round(result.ms);
      if (i >= 0) samples.push(result.ms);
      process.stderr.write(`\rbrowser: ${i + 3}/${loads + 2}   `);
    }
    process.stderr.write('\n');
    return { ...summarize(samples), widgetCount, firstLoadMs, sources };
  } finally {
    await browser.close();
    await svc.close();
    host.server.close();
    rmSync(rollupDir, { recursive: true, force: true });
  }
}

/**
 * Rollup builds kept between runs in `bench/tmp/rollups-<orders>-<dialect>/` (like the warehouses): building the
 * demo's ten rollups from 10M orders takes 12 minutes on SQLite. A build is read only under the definition it was
 * made with (source, views, rollup, zone), so another deployment over the same warehouse with the same views reads
 * it as its own: the kept builds are copied under the fresh deployment's directory, and only what is missing or
 * differently defined is built. `--rebuild` ignores them.
 */
export async function reuseBuilds(db: Db, dir: string, kept: string): Promise<void> {
  const [deployment] = await deploymentsWithRollups(db.kysely);
  if (deployment !== undefined && existsSync(kept)) cpSync(kept, join(dir, String(deployment.accountId), String(deployment.deploymentId)), { recursive: true });
}

export async function keepBuilds(db: Db, dir: string, kept: string): Promise<void> {
  const [deployment] = await deploymentsWithRollups(db.kysely);
  if (deployment === undefined) return;
  rmSync(kept, { recursive: true, force: true });
  cpSync(join(dir, String(deployment.accountId), String(deployment.deploymentId)), kept, { recursive: true });
}

/** Builds every pre-aggregation of the database's deployments (`svc preagg build`, in process). */
export async function buildRollups(db: Db, dir: string): Promise<{ ms: number; builds: Array<{ rollup: string; timezone: string; rows: number; ms: number }> }> {
  const started = performance.now();
  const warehouses = new WarehouseRegistry({ timeoutMs: 600_000, demoPath: () => '' });
  const store = new RollupStore(dir);
  try {
    const reports = await buildDue({ db, warehouses, store, timeoutMs: 600_000, now: () => NOW });
    const failed = reports.find((r) => r.status === 'failed' || r.status === 'locked');
    if (failed !== undefined) throw new Error(`pre-aggregation ${failed.rollup} (${failed.timezone}): ${failed.status} ${failed.error ?? ''}`);
    return { ms: Math.round(performance.now() - started), builds: reports.filter((r) => r.manifest !== undefined).map((r) => ({ rollup: r.rollup, timezone: r.timezone, rows: r.manifest!.rows, ms: r.manifest!.buildMs })) };
  } finally {
    store.close();
    await warehouses.close();
  }
}

interface RollupResult {
  dialect: WarehouseDialect;
  /** svc's own database: the same dialect as the warehouse's. */
  metadata: 'sqlite' | 'postgres';
  build: Awaited<ReturnType<typeof buildRollups>>;
  widgets: Record<string, { source: string; cold: LatencySummary; cached: LatencySummary }>;
  coldP50Max: number;
  cachedP50Max: number;
  /** 100 viewers opening the dashboard at once on a fresh process: statements run (warehouse and rollup) per widget. */
  concurrent: { viewers: number; widgets: number; statements: number; statementsPerWidget: number };
  /** With `--explore` (issue 35): explore previews beside the widgets, and another tenant's loads under 50 explorers. */
  explore?: ExploreResult;
}

/** `--explore`: how many viewers explore at once, and how many dashboard loads each phase measures. */
interface ExploreOptions { explorers: number; loads: number }

interface ExploreResult {
  /** Per widget query (all rows, and under the one-tenant policy): the explore preview beside the widget, same run. */
  preview: Record<string, { source: string; widgetCold: LatencySummary; exploreCold: LatencySummary; widgetCached: LatencySummary; exploreCached: LatencySummary; coldRatioP50: number }>;
  exploreColdP50Max: number;
  contention: Awaited<ReturnType<typeof measureContention>>;
}

/** The embed tenant whose viewers explore, and the one whose dashboard loads are measured beside them. */
const EXPLORE_TENANT = 'bench-explorers';
const OTHER_TENANT = 'bench-other';

/**
 * Explorer `explorer`'s `count` queries: varied (ranges, dimensions, filters drawn from a generator seeded by the
 * explorer), so that few are answered from the result cache; three in four match a rollup (`monthly`, `daily`,
 * `by_status`), one in four (`orders.customers`, a distinct count no rollup holds) goes to the warehouse.
 */
export function exploreQueries(explorer: number, count: number): SemanticQuery[] {
  let state = (explorer + 1) * 2_654_435_761 >>> 0;
  const next = () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  const day = (n: number) => new Date(Date.UTC(2024, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);
  const days = (length: number): [string, string] => {
    const start = Math.floor(next() * (730 - length));
    return [day(start), day(start + length - 1)];
  };
  const months = (): [string, string] => {
    const a = Math.floor(next() * 24);
    const b = a + Math.floor(next() * (24 - a));
    return [`${2024 + Math.floor(a / 12)}-${String((a % 12) + 1).padStart(2, '0')}-01`, new Date(Date.UTC(2024, b + 1, 0)).toISOString().slice(0, 10)];
  };
  const measures = ['orders.revenue', 'orders.count', 'orders.units', 'orders.average_order_value'];
  return Array.from({ length: count }, (_, i): SemanticQuery => {
    switch (i % 4) {
      case 0: return { measures: [pick(measures)], dimensions: [pick(['products.category', 'customers.region', 'orders.tenant'])], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: months() }] };
      case 1: return { measures: [pick(measures)], filters: [{ member: 'products.category', operator: 'equals', values: [pick(['Books', 'Electronics', 'Garden', 'Home', 'Sports', 'Toys'])] }], timeDimensions: [{ dimension: 'orders.created_at', granularity: pick(['day', 'week'] as const), dateRange: days(7 + Math.floor(next() * 120)) }] };
      case 2: return { measures: [pick(['orders.revenue', 'orders.count'])], dimensions: ['orders.status'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: days(30 + Math.floor(next() * 300)) }] };
      default: return { measures: ['orders.customers'], dimensions: [pick(['products.category', 'customers.segment'])], timeDimensions: [{ dimension: 'orders.created_at', dateRange: months() }] };
    }
  });
}

/**
 * Issue 35: another tenant's dashboard loads (the dashboard, then every widget's data at once, as the embed asks;
 * warm from the cache and cold with `force`), alone, then while `explorers` viewers of one tenant each send explore
 * queries in a loop, then alone again. The tenant gate (SVC_EXPLORE_TENANT_CONCURRENCY) is what is measured: the
 * per-session explore rate limit is raised for the bench, or it would refuse the loops.
 */
async function measureContention(base: string, publicId: string, deploymentId: number, options: ExploreOptions, label: string) {
  const mint = (body: Record<string, unknown>) => mintToken(base, deploymentId, body);
  const other = await mint({ externalId: 'other-viewer', embedTenantName: OTHER_TENANT, groups: ['all-rows'] });
  const tokens: string[] = [];
  for (let i = 0; i < options.explorers; i++) tokens.push(await mint({ externalId: `explorer-${i}`, embedTenantName: EXPLORE_TENANT, groups: ['all-rows'], settings: { explore: 'create' } }));
  const widgets = WIDGETS.map(([id]) => id);
  // Where the time goes, per phase: the server's event loop (it runs on this thread; the clients are workers): how
  // late its timers ran and the share of the time it was busy; and the CPU the whole process used (the server's
  // threads, DuckDB's and the SQLite workers', and the client workers'; not PostgreSQL's backends).
  const lateMs = (ns: number) => Math.max(0, Math.round(ns / 1e4) / 100 - 5);
  const loads = async (phase: string) => {
    const delay = monitorEventLoopDelay({ resolution: 5 });
    const cpu = process.cpuUsage();
    const started = performance.now();
    const utilization = nodePerformance.eventLoopUtilization();
    delay.enable();
    const result = await client<LoadsResult>({ kind: 'loads', base, publicId, widgets, timezone: TIMEZONE, token: other, loads: options.loads, label: `${label} loads, ${phase}` }).result;
    delay.disable();
    const used = process.cpuUsage(cpu);
    process.stderr.write('\n');
    return {
      warm: summarize(result.warm), cold: summarize(result.cold),
      // Past the 5 ms timer itself: 0 is a loop that ran every timer on time.
      eventLoopDelayMs: { p50: lateMs(delay.percentile(50)), p99: lateMs(delay.percentile(99)), max: lateMs(delay.max) },
      eventLoopBusy: Math.round(nodePerformance.eventLoopUtilization(utilization).utilization * 100) / 100,
      processCpuCores: Math.round(((used.user + used.system) / 1000 / (performance.now() - started)) * 100) / 100,
    };
  };
  const quiet = await loads('quiet');
  const crowd = client<ExplorersResult>({ kind: 'explorers', base, timezone: TIMEZONE, explorers: tokens.map((token, i) => ({ token, queries: exploreQueries(i, 200) })) });
  let busy: Awaited<ReturnType<typeof loads>>;
  try {
    // Every explorer has sent its first queries, the tenant's slots are taken and its queue is full.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    busy = await loads(`${options.explorers} explorers`);
  } finally {
    crowd.stop();
  }
  const explored = await crowd.result;
  const after = await loads('quiet again');
  const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
  return {
    explorers: options.explorers, widgets: widgets.length, quiet, busy, after,
    ratioP50: { warm: ratio(busy.warm.p50, quiet.warm.p50), cold: ratio(busy.cold.p50, quiet.cold.p50) },
    explore: {
      seconds: Math.round(explored.seconds * 10) / 10, statuses: explored.statuses, sources: explored.sources,
      answersPerSecond: Math.round((Object.values(explored.sources).reduce((a, b) => a + b, 0) / explored.seconds) * 10) / 10,
      ms: Object.fromEntries(Object.entries(explored.ms).map(([source, ms]) => [source, summarize(ms)])),
    },
  };
}

/**
 * Issue 21: each widget answered from the pre-aggregations, result cache cold (`force`, so every request reads the
 * rollup) and warm; then 100 viewers (each its own session) opening every widget at once against a fresh process.
 */
async function measureRollups(dialect: WarehouseDialect, source: DataSourceConfig, iterations: number, postgresUrl: string, kept: string, explore?: ExploreOptions): Promise<RollupResult> {
  const metadata = dialect === 'postgres' ? 'postgres' : 'sqlite';
  const svcDb = await freshDatabase(metadata, postgresUrl);
  const db = openDatabase(svcDb.url);
  await migrateToLatest(db);
  const { refs, publicId } = await importBench(db, dialect, source);
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-rollups-'));
  // The explore rate limit per session (SVC_RATE_LIMIT_EXPLORE, 60 a minute) is raised too: it would refuse the
  // explorers' loops, and the tenant's concurrency gate (left at its default) is what `--explore` measures.
  const settings = testConfig({
    data: { timeoutMs: 600_000, rowCap: 10_000, preAggregationDir: dir }, metricsToken: 'bench-metrics',
    rateLimits: { embedPerSession: 100_000_000, embedPerIp: 100_000_000, generateSession: 100_000, explorePerSession: 100_000_000 },
  });
  await reuseBuilds(db, dir, kept);
  const build = await buildRollups(db, dir);
  if (build.builds.length > 0) await keepBuilds(db, dir, kept);
  process.stderr.write(`${dialect} rollups built in ${build.ms} ms: ${build.builds.map((b) => `${b.rollup} ${b.timezone} ${b.rows} rows`).join(', ')}\n`);
  const start = async () => {
    const app = await buildApp(settings, { db, now: () => NOW });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { app, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  };
  const first = await start();
  const tokenFor = (base: string, body: Record<string, unknown>) => mintToken(base, refs.prod!, body);
  const admin = await tokenFor(first.base, { externalId: 'bench', groups: ['all-rows'] });
  const tenant = await tokenFor(first.base, { externalId: 'bench-tenant', groups: [], securityContext: { tenant: POLICY_TENANT } });
  const ask = async (base: string, widget: string, token: string) => {
    const res = await fetch(`${base}/api/v1/embed/dashboard/${publicId}/widgets/${widget}/data`, {
      method: 'POST', headers: { authorization: `Embed-Token ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ timezone: TIMEZONE }),
    });
    if (res.status !== 200) throw new Error(`${widget}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  // With --explore, each widget's query again as a viewer's explore preview (a session of another tenant with
  // settings.explore create, all rows or the one-tenant policy), right after the widget.
  const explorer = explore === undefined ? undefined : {
    all: await tokenFor(first.base, { externalId: 'explorer', embedTenantName: EXPLORE_TENANT, groups: ['all-rows'], settings: { explore: 'create' } }),
    policy: await tokenFor(first.base, { externalId: 'explorer-tenant', embedTenantName: EXPLORE_TENANT, groups: [], securityContext: { tenant: POLICY_TENANT }, settings: { explore: 'create' } }),
  };
  const cases: ClientCase[] = Object.entries(QUERIES).flatMap(([id, query]) => [
    { name: id, widget: id, token: admin },
    ...(explorer === undefined ? [] : [{ name: `explore ${id}`, query, token: explorer.all }]),
    { name: `${id} (policy)`, widget: id, token: tenant },
    ...(explorer === undefined ? [] : [{ name: `explore ${id} (policy)`, query, token: explorer.policy }]),
  ]);
  const timed = await timedClient({ base: first.base, publicId, timezone: TIMEZONE, iterations, label: `${dialect} rollups`, cases });
  const widgets: RollupResult['widgets'] = {};
  for (const [name, { source, cold, cached }] of Object.entries(timed)) if (!name.startsWith('explore ')) widgets[name] = { source, cold: summarize(cold), cached: summarize(cached) };
  process.stderr.write('\n');
  let explored: ExploreResult | undefined;
  if (explore !== undefined) {
    const preview: ExploreResult['preview'] = {};
    for (const [name, widget] of Object.entries(widgets)) {
      const e = timed[`explore ${name}`]!;
      const exploreCold = summarize(e.cold);
      if (e.source !== widget.source) throw new Error(`${name}: the explore preview came from ${e.source}, the widget from ${widget.source}`);
      preview[name] = { source: e.source, widgetCold: widget.cold, exploreCold, widgetCached: widget.cached, exploreCached: summarize(e.cached), coldRatioP50: Math.round((exploreCold.p50 / widget.cold.p50) * 1000) / 1000 };
    }
    const contention = await measureContention(first.base, publicId, refs.prod!, explore, dialect);
    explored = { preview, exploreColdP50Max: Math.max(...Object.values(preview).map((p) => p.exploreCold.p50)), contention };
  }
  await first.app.close();

  // 100 viewers, each its own session, open every widget at once on a fresh process (cold cache).
  const second = await start();
  const viewers = await Promise.all(Array.from({ length: 100 }, (_, i) => tokenFor(second.base, { externalId: `viewer-${i}`, groups: ['all-rows'] })));
  const statements = async () => {
    const text = await (await fetch(`${second.base}/metrics`, { headers: { authorization: 'Bearer bench-metrics' } })).text();
    return text.split('\n').filter((l) => l.startsWith('svc_data_queries_total{')).reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  };
  const before = await statements();
  await Promise.all(viewers.flatMap((token) => Object.keys(QUERIES).map((widget) => ask(second.base, widget, token))));
  const ran = (await statements()) - before;
  await second.app.close();
  await db.close();
  await svcDb.drop();
  rmSync(dir, { recursive: true, force: true });
  return {
    dialect, metadata, build, widgets,
    coldP50Max: Math.max(...Object.values(widgets).map((w) => w.cold.p50)),
    cachedP50Max: Math.max(...Object.values(widgets).map((w) => w.cached.p50)),
    concurrent: { viewers: 100, widgets: Object.keys(QUERIES).length, statements: ran, statementsPerWidget: ran / Object.keys(QUERIES).length },
    explore: explored,
  };
}

/** A case of the timed client: a widget's data endpoint, or (`query`) an explore query. */
interface ClientCase { name: string; widget?: string; query?: SemanticQuery; token: string }

/** What the clients of bench/data/data.client.mjs are asked to do (see there), and what they answer. */
type ClientJob =
  | { kind?: 'timed'; base: string; publicId: string; timezone: string; iterations: number; label: string; cases: ClientCase[] }
  | { kind: 'explorers'; base: string; timezone: string; explorers: Array<{ token: string; queries: SemanticQuery[] }> }
  | { kind: 'loads'; base: string; publicId: string; widgets: string[]; timezone: string; token: string; loads: number; label: string };
type ClientResult = Record<string, { source: string; cold: number[]; cached: number[] }>;
interface ExplorersResult { statuses: Record<string, number>; sources: Record<string, number>; ms: Record<string, number[]>; seconds: number }
interface LoadsResult { warm: number[]; cold: number[] }

/**
 * Runs a client job on a worker thread (bench/data/data.client.mjs), so that the client shares nothing with the
 * server but the machine. `stop()` asks a job that loops (the explorers) to finish.
 */
function client<T>(job: ClientJob): { result: Promise<T>; stop(): void } {
  const worker = new Worker(new URL('./data.client.mjs', import.meta.url), { workerData: job });
  const result = new Promise<T>((resolve, reject) => {
    worker.once('message', (message: { result?: T; error?: string }) => {
      void worker.terminate();
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.result!);
    });
    worker.once('error', reject);
  });
  return { result, stop: () => worker.postMessage('stop') };
}

const timedClient = (job: ClientJob & { kind?: 'timed' }): Promise<ClientResult> => client<ClientResult>(job).result;

export async function mintToken(base: string, deploymentId: number, body: Record<string, unknown>): Promise<string> {
  const minted = await (await fetch(`${base}/api/v1/embed/generate-session`, {
    method: 'POST', headers: { authorization: 'Bearer svc_bench_data_admin_0001', 'content-type': 'application/json' },
    body: JSON.stringify({ deploymentId, ...body }),
  })).json() as { sessionId: string };
  const exchanged = await (await fetch(`${base}/api/v1/embed/session/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId: minted.sessionId }) })).json() as { token: string };
  return exchanged.token;
}

export async function main(args: string[]): Promise<void> {
  const orders = option(args, 'orders', 10_000_000);
  const iterations = option(args, 'iterations', 7);
  const loads = option(args, 'loads', 10);
  const started = new Date();
  mkdirSync('bench/tmp', { recursive: true });
  const path = `bench/tmp/warehouse-${orders}.db`;
  process.stderr.write(`SQLite warehouse at ${path} (${orders.toLocaleString('en-US')} orders; written once)\n`);
  ensureDemoWarehouseSqlite(path, orders);
  const absolute = new URL(`../../${path}`, import.meta.url).pathname;
  const sqliteSource: DataSourceConfig = { type: 'sqlite', path: absolute };
  const postgresUrl = process.env.SVC_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const results: DialectResult[] = [];
  const rollups: RollupResult[] = [];
  const only = args.includes('--rollups-only');
  const explore = args.includes('--explore') ? { explorers: option(args, 'explorers', 50), loads: option(args, 'explore-loads', 15) } : undefined;
  if (!only) results.push(await measureDialect('sqlite', sqliteSource, iterations));
  const kept = (dialect: WarehouseDialect) => `bench/tmp/rollups-${orders}-${dialect}`;
  if (args.includes('--rebuild')) for (const dialect of ['sqlite', 'postgres'] as const) rmSync(kept(dialect), { recursive: true, force: true });
  rollups.push(await measureRollups('sqlite', sqliteSource, iterations, postgresUrl, kept('sqlite'), explore));
  if (await postgresAnswers(postgresUrl)) {
    const schema = await postgresWarehouse(postgresUrl, orders);
    const source: DataSourceConfig = { type: 'postgres', url: postgresUrl, schema };
    if (!only) results.push(await measureDialect('postgres', source, iterations));
    rollups.push(await measureRollups('postgres', source, iterations, postgresUrl, kept('postgres'), explore));
  } else {
    process.stderr.write(`PostgreSQL at ${postgresUrl} is not reachable: SKIPPED\n`);
  }
  // `--loads 0`: no browser part.
  const browser = hasChromium && loads > 0 ? await measureBrowser(loads, absolute, kept('sqlite')) : undefined;
  const report = {
    benchmark: 'data', startedAt: started.toISOString(), machine: machine(), orders, iterations, timezone: TIMEZONE, results, rollups, browser,
    goals: { endpointOverheadRatio: 1.2, dashboardLoadedMs: 1500, policyOverByHandRatio: 1.1, rollupColdP50Ms: 50, cachedP50Ms: 5, statementsPerWidgetFor100Viewers: 1, exploreRollupColdP50Ms: 50, otherTenantUnderExploreRatio: 1.5 },
  };
  console.log(JSON.stringify(report, null, 2));
  console.log(`results: ${writeResults('data', report)}`);
}
