import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import pg from 'pg';
import { buildApp } from '../../apps/server/src/app.js';
import { importFile } from '../../apps/server/src/import/import.js';
import type { ImportAccount } from '../../apps/server/src/import/import.js';
import { compileSemanticQuery } from '../../apps/server/src/data/data.compiler.js';
import type { WarehouseDialect } from '../../apps/server/src/data/data.compiler.js';
import { DEMO_SEMANTIC_VIEWS, ensureDemoWarehouseSqlite, loadDemoWarehousePostgres } from '../../apps/server/src/data/data.demo-warehouse.js';
import { SemanticModel } from '../../apps/server/src/data/data.model.js';
import type { DataSourceConfig, SemanticView } from '../../apps/server/src/data/data.model.js';
import type { SemanticQuery } from '../../apps/server/src/data/data.query.js';
import { openDatabase } from '../../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../../apps/server/src/db/db.migrations.js';
import { hasChromium, launchChromium } from '../../e2e/browser.js';
import { bundle, demoDashboardItems, e2eAccount, openHostPage, serve, startSvc } from '../../e2e/embed-harness.js';
import { freshDatabase, machine, postgresAnswers, summarize, writeResults } from '../harness.js';
import type { LatencySummary } from '../harness.js';

/**
 * `npm run bench -- data [--orders 10000000] [--iterations 7] [--loads 10]`: the widget data endpoint over the demo
 * warehouse scaled up, on SQLite and PostgreSQL, against the same compiled SQL run directly on the database in the
 * same run (goal: the endpoint adds at most 20%); then time to `dashboard-loaded` of the demo dashboard in Chromium
 * (goal: 1.5 s). Issue 20's policy row: each widget again for a session under a row-level policy keeping one
 * tenant of ten (`orders.tenant = {securityContext.tenant}`), against the same filter written into the widget's
 * query by hand (goal: the policy adds at most 10%).
 */
const TIMEZONE = 'Europe/Berlin';
const NOW = new Date('2026-11-23T00:00:00Z');
const QUERIES: Record<string, SemanticQuery> = {
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

function option(args: string[], name: string, fallback: number): number {
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

async function measureDialect(dialect: WarehouseDialect, source: DataSourceConfig, iterations: number): Promise<DialectResult> {
  const svcDb = await freshDatabase('sqlite', '');
  const db = openDatabase(svcDb.url);
  await migrateToLatest(db);
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
  const app = await buildApp({ db, now: () => NOW, data: { timeoutMs: 600_000, rowCap: 10_000 }, rateLimits: { embedPerSession: 100_000_000, embedPerIp: 100_000_000 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const tokenFor = async (body: Record<string, unknown>): Promise<string> => {
    const minted = await (await fetch(`${base}/api/v1/embed/generate-session`, {
      method: 'POST', headers: { authorization: 'Bearer svc_bench_data_admin_0001', 'content-type': 'application/json' },
      body: JSON.stringify({ deploymentId: refs.prod, ...body }),
    })).json() as { sessionId: string };
    const exchanged = await (await fetch(`${base}/api/v1/embed/session/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId: minted.sessionId }) })).json() as { token: string };
    return exchanged.token;
  };
  const token = await tokenFor({ externalId: 'bench', groups: ['all-rows'] });
  const tenantToken = await tokenFor({ externalId: 'bench-tenant', groups: [], securityContext: { tenant: POLICY_TENANT } });

  // The baseline: the same compiled SQL, run directly on the database (one connection, main thread).
  const model = new SemanticModel(DEMO_SEMANTIC_VIEWS);
  const sqlite = source.type === 'sqlite' ? new Database(source.path, { readonly: true }) : undefined;
  const client = source.type === 'postgres' ? new pg.Client({ connectionString: source.url, options: `-c search_path=${source.schema ?? 'public'} -c TimeZone=UTC` }) : undefined;
  await client?.connect();
  const raw = async (query: SemanticQuery): Promise<number> => {
    const compiled = compileSemanticQuery(model, query, { dialect, timezone: TIMEZONE, now: NOW, rowCap: 10_000 });
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

/** iframe creation to dashboard-loaded of the demo dashboard (every widget type, 100,000 orders), warm. */
async function measureBrowser(loads: number): Promise<LatencySummary & { widgetCount: number }> {
  const items = demoDashboardItems();
  const host = await serve({
    '/': { type: 'text/html', body: HOST_PAGE },
    '/sdk.js': { type: 'text/javascript', body: await bundle('packages/embed-sdk/src/index.ts') },
  });
  const hostOrigin = `http://localhost:${host.port}`;
  const svc = await startSvc({ account: e2eAccount([hostOrigin], { items }) });
  const browser = await launchChromium();
  try {
    const page = await openHostPage(browser.context, `${hostOrigin}/`);
    const samples: number[] = [];
    let widgetCount = 0;
    for (let i = -2; i < loads; i++) {
      const sessionId = await svc.mint();
      const result = await page.evaluate(({ baseUrl, sessionId }) => (window as unknown as { runEmbed(b: string, p: string, s: string): Promise<{ ms: number; widgetCount: number }> }).runEmbed(baseUrl, 'sales-performance', sessionId), { baseUrl: svc.origin, sessionId });
      widgetCount = result.widgetCount;
      if (i >= 0) samples.push(result.ms);
      process.stderr.write(`\rbrowser: ${i + 3}/${loads + 2}   `);
    }
    process.stderr.write('\n');
    return { ...summarize(samples), widgetCount };
  } finally {
    await browser.close();
    await svc.close();
    host.server.close();
  }
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
  const results: DialectResult[] = [await measureDialect('sqlite', { type: 'sqlite', path: new URL(`../../${path}`, import.meta.url).pathname }, iterations)];
  const postgresUrl = process.env.SVC_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  if (await postgresAnswers(postgresUrl)) {
    const schema = await postgresWarehouse(postgresUrl, orders);
    results.push(await measureDialect('postgres', { type: 'postgres', url: postgresUrl, schema }, iterations));
  } else {
    process.stderr.write(`PostgreSQL at ${postgresUrl} is not reachable: SKIPPED\n`);
  }
  const browser = hasChromium ? await measureBrowser(loads) : undefined;
  const report = { benchmark: 'data', startedAt: started.toISOString(), machine: machine(), orders, iterations, timezone: TIMEZONE, results, browser, goals: { endpointOverheadRatio: 1.2, dashboardLoadedMs: 1500, policyOverByHandRatio: 1.1 } };
  console.log(JSON.stringify(report, null, 2));
  console.log(`results: ${writeResults('data', report)}`);
}
