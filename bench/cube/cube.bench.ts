import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../apps/server/src/app.js';
import { testConfig } from '../../apps/server/test/config.js';
import type { DataSourceConfig } from '../../apps/server/src/data/semantic/semantic.model.js';
import { ensureDemoWarehouseSqlite } from '../../apps/server/src/data/warehouse/warehouse.demo.js';
import { openDatabase } from '../../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../../apps/server/src/db/db.migrations.js';
import { NOW, QUERIES, TIMEZONE, buildRollups, importBench, keepBuilds, mintToken, option, reuseBuilds } from '../data/data.bench.js';
import pg from 'pg';
import { freshDatabase, machine, summarize, writeResults } from '../harness.js';

/**
 * `npm run bench -- cube [--orders 1000000] [--iterations 40]` (issue 36): Cube's REST API `load` against the widget
 * data endpoint in the same run, on the same rollup-matched query (the data bench's `monthly`: revenue by month over
 * two years, Europe/Berlin), for an embed viewer under the one-tenant row policy, over the demo warehouse scaled to
 * `--orders` (SQLite) with the demo's pre-aggregations built. Both are asked over HTTP from this process,
 * interleaved ask by ask:
 * - **rollup**: each ask a query the cache has not seen (a row limit one higher each time, which the monthly rollup
 *   still answers), the widget with `force`: both read the rollup;
 * - **cached**: the same query again: both from the result cache.
 * Goal: `load`'s p50 at most 1.2 times the widget endpoint's, in each.
 *
 * Then the SQL API (docs/cube-sql.md) on the same app, with the same token as its password (node-postgres):
 * - **sqlConnect**: connect, the same revenue-by-month query with `MEASURE()` and `DATE_TRUNC` (a rollup or the
 *   cache answers it), close: what a BI tool pays per query when it does not pool;
 * - **sqlQuery**: the same query on an open connection.
 * Reported (the issue asks for the figure, with no goal).
 */
const WIDGET = 'monthly';
const POLICY_TENANT = 'customer-c';

export async function main(args: string[]): Promise<void> {
  const orders = option(args, 'orders', 1_000_000);
  const iterations = option(args, 'iterations', 40);
  const started = new Date();
  mkdirSync('bench/tmp', { recursive: true });
  const path = `bench/tmp/warehouse-${orders}.db`;
  process.stderr.write(`SQLite warehouse at ${path} (${orders.toLocaleString('en-US')} orders; written once)\n`);
  ensureDemoWarehouseSqlite(path, orders);
  const source: DataSourceConfig = { type: 'sqlite', path: new URL(`../../${path}`, import.meta.url).pathname };

  const svcDb = await freshDatabase('sqlite', '');
  const db = openDatabase(svcDb.url);
  await migrateToLatest(db);
  const { refs, publicId } = await importBench(db, 'sqlite', source);
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-cube-rollups-'));
  const kept = `bench/tmp/rollups-${orders}-sqlite`;
  await reuseBuilds(db, dir, kept);
  const build = await buildRollups(db, dir);
  if (build.builds.length > 0) await keepBuilds(db, dir, kept);
  const settings = testConfig({
    data: { timeoutMs: 600_000, rowCap: 10_000, preAggregationDir: dir }, rateLimits: { embedPerSession: 100_000_000, embedPerIp: 100_000_000, generateSession: 100_000 },
    sql: { port: 0, host: '127.0.0.1', tlsCert: undefined, tlsKey: undefined, maxConnectionsPerAccount: 20, statementTimeoutMs: 600_000, rowCap: 10_000 },
  });
  const app = await buildApp(settings, { db, now: () => NOW });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    const token = await mintToken(base, refs.prod!, { externalId: 'bench-tenant', groups: [], securityContext: { tenant: POLICY_TENANT } });
    const timed = async (ask: () => Promise<Response>): Promise<{ ms: number; source: string; rows: number }> => {
      const at = performance.now();
      const res = await ask();
      const text = await res.text();
      const ms = performance.now() - at;
      if (res.status !== 200) throw new Error(`${res.status} ${text}`);
      const body = JSON.parse(text) as { source: string; rows?: unknown[]; data?: unknown[]; error?: string };
      if (body.error !== undefined) throw new Error(`load answered ${text}`);
      return { ms, source: body.source, rows: (body.rows ?? body.data)!.length };
    };
    const widget = (force: boolean) => timed(() => fetch(`${base}/api/v1/embed/dashboard/${publicId}/widgets/${WIDGET}/data`, {
      method: 'POST', headers: { authorization: `Embed-Token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ timezone: TIMEZONE, ...(force ? { force: true } : {}) }),
    }));
    const load = (limit: number) => timed(() => fetch(`${base}/cubejs-api/v1/load`, {
      method: 'POST', headers: { authorization: token, 'content-type': 'application/json' },
      body: JSON.stringify({ query: { ...QUERIES[WIDGET], timezone: TIMEZONE, limit } }),
    }));
    // Warm-up: the first ask of each opens the rollup and compiles; the answers must agree.
    const first = await widget(true);
    const firstLoad = await load(1000);
    if (first.rows !== firstLoad.rows) throw new Error(`the widget answered ${first.rows} rows, load ${firstLoad.rows}`);
    const samples = { widgetRollup: [] as number[], loadRollup: [] as number[], widgetCached: [] as number[], loadCached: [] as number[] };
    const sources = new Set<string>();
    for (let i = 0; i < iterations; i++) {
      const limit = 1001 + i;
      const w = await widget(true);
      const l = await load(limit);
      sources.add(`widget ${w.source}`).add(`load ${l.source}`);
      if (!l.source.startsWith('rollup:')) throw new Error(`load of a new query answered from ${l.source}, not a rollup`);
      samples.widgetRollup.push(w.ms);
      samples.loadRollup.push(l.ms);
      const wc = await widget(false);
      const lc = await load(limit);
      if (wc.source !== 'cache' || lc.source !== 'cache') throw new Error(`a repeated ask came from ${wc.source} / ${lc.source}, not the cache`);
      samples.widgetCached.push(wc.ms);
      samples.loadCached.push(lc.ms);
      process.stderr.write(`\rcube ${i + 1}/${iterations}   `);
    }
    process.stderr.write('\n');
    // The SQL API: revenue by month, as the widget's query, through MEASURE() and DATE_TRUNC.
    const sqlText = 'SELECT DATE_TRUNC(\'month\', created_at) AS month, MEASURE(revenue) AS revenue FROM orders GROUP BY 1 ORDER BY 1';
    const sqlClient = () => new pg.Client({ host: '127.0.0.1', port: app.sqlServer!.port, user: 'bench', password: token, database: 'svc', ssl: false });
    const sqlSamples = { connect: [] as number[], query: [] as number[] };
    const open = sqlClient();
    await open.connect();
    try {
      const warm = await open.query(sqlText);
      if (warm.rows.length === 0) throw new Error('the SQL API answered no row');
      for (let i = 0; i < iterations; i++) {
        const at = performance.now();
        const once = sqlClient();
        await once.connect();
        await once.query(sqlText);
        await once.end();
        sqlSamples.connect.push(performance.now() - at);
        const atOpen = performance.now();
        await open.query(sqlText);
        sqlSamples.query.push(performance.now() - atOpen);
        process.stderr.write(`\rsql ${i + 1}/${iterations}   `);
      }
    } finally {
      await open.end();
    }
    process.stderr.write('\n');
    const rollup = { widget: summarize(samples.widgetRollup), load: summarize(samples.loadRollup) };
    const cached = { widget: summarize(samples.widgetCached), load: summarize(samples.loadCached) };
    const report = {
      benchmark: 'cube', startedAt: started.toISOString(), machine: machine(), orders, iterations, timezone: TIMEZONE, query: QUERIES[WIDGET],
      viewer: `embed token, row policy tenant ${POLICY_TENANT}`, build, sources: [...sources],
      rollup: { ...rollup, ratioP50: rollup.load.p50 / rollup.widget.p50 },
      cached: { ...cached, ratioP50: cached.load.p50 / cached.widget.p50 },
      sql: { query: sqlText, connectQueryClose: summarize(sqlSamples.connect), queryOnOpenConnection: summarize(sqlSamples.query) },
      goals: { loadOverWidgetP50: 1.2 },
    };
    console.log(JSON.stringify(report, null, 2));
    console.log(`results: ${writeResults('cube', report)}`);
  } finally {
    await app.close();
    await db.close();
    await svcDb.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
