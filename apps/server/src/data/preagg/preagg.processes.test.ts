import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/dialects.js';
import { eventually } from '../../../test/eventually.js';
import { bearer, seedAccount, uniqueSuffix } from '../../../test/factory.js';
import type { SeededAccount } from '../../../test/factory.js';
import { RAISED_RATE_LIMITS } from '../../../test/limits.js';
import { expectSameRows } from '../../../test/rows.js';
import { finished, runSvc, spawnSvc, startSvcServe } from '../../../test/svc-process.js';
import type { SvcProcess } from '../../../test/svc-process.js';
import { buildApp } from '../../app.js';
import { openDatabase } from '../../db/db.database.js';
import type { Db } from '../../db/db.database.js';
import { migrateToLatest } from '../../db/db.migrations.js';
import { DEMO_SEMANTIC_VIEWS, writeDemoWarehouseSqlite } from '../warehouse/warehouse.demo.js';
import type { SemanticView } from '../semantic/semantic.model.js';
import type { PreAggregation } from '../semantic/semantic.model.js';
import type { SemanticQuery } from '../semantic/semantic.query.js';
import { testConfig } from '../../../test/config.js';

/**
 * Issue 21: pre-aggregations built and read by several `svc` processes sharing one database and one build
 * directory, as an operator runs them: a build killed with SIGKILL half-way, two `svc serve` processes, and the
 * `svc preagg build|status` commands. On PostgreSQL the suite has a database of its own, so that its builders
 * never meet (or lock) another suite's rollups.
 */

const ORDERS = 300_000;
/** Rebuilt when the warehouse's build_marker changes value (Cube's refresh_key sql). */
const MONTHLY: PreAggregation = {
  name: 'monthly', measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.status'],
  timeDimension: 'orders.created_at', granularity: 'month', timezones: ['Europe/Berlin'],
  refresh: { sql: 'SELECT max(version) FROM build_marker' },
};
const QUERY: SemanticQuery = {
  measures: ['orders.count', 'orders.revenue'],
  timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }],
  order: [['orders.created_at', 'asc']],
};
/** A month after every generated order: rows the warehouse gains after the first build. */
const LATE_MONTH = '2031-03';

function views(): SemanticView[] {
  return DEMO_SEMANTIC_VIEWS.map((view) => (view.name === 'orders' ? { ...view, preAggregations: [MONTHLY] } : view));
}

interface Answer { rows: unknown[][]; source: string }

describeEachDialect('pre-aggregations across processes', (t) => {
  let dir: string;
  let warehousePath: string;
  let dbUrl: string;
  let db: Db;
  let s: SeededAccount;
  let reader: FastifyInstance;
  let warehouseOnly: FastifyInstance;
  let ownDatabase: string | undefined;
  const sfx = uniqueSuffix();
  const appId = `rollup-processes-${sfx}`;
  const started: SvcProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-rollup-processes-'));
    warehousePath = join(dir, 'warehouse.db');
    writeDemoWarehouseSqlite(warehousePath, ORDERS);
    warehouseSql('CREATE TABLE build_marker (version INTEGER NOT NULL); INSERT INTO build_marker VALUES (1);');
    if (t().dialect === 'sqlite') {
      dbUrl = `sqlite:${join(dir, 'svc.db')}`;
    } else {
      ownDatabase = `svc_rollup_processes_${sfx.replace(/[^a-z0-9]/gi, '')}`.toLowerCase();
      await withPostgres(t().url, (client) => client.query(`CREATE DATABASE ${ownDatabase}`));
      const url = new URL(t().url);
      url.pathname = `/${ownDatabase}`;
      dbUrl = url.toString();
    }
    db = openDatabase(dbUrl);
    await migrateToLatest(db);
    s = await seedAccount(db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{
        ref: 'prod', name: 'Rollups across processes', dataSource: { type: 'sqlite', path: warehousePath }, semanticViews: views(),
        items: [{ ref: 'wb', type: 'WORKBOOK', name: 'App', dashboard: { publicId: appId, status: 'published', allowEmbed: true, config: { kind: 'APP', app: { html: '<p>app</p>' } } } }],
      }],
    });
    warehouseOnly = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, data: { resultCacheBytes: 0, preAggregationDir: join(dir, 'never-built') } }), { db });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(started.map((svc) => svc.stop()));
    await reader?.close();
    await warehouseOnly?.close();
    await db?.close();
    if (ownDatabase !== undefined) await withPostgres(t().url, (client) => client.query(`DROP DATABASE IF EXISTS ${ownDatabase} WITH (FORCE)`));
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  function warehouseSql(statement: string): void {
    const warehouse = new Database(warehousePath);
    warehouse.exec(statement);
    warehouse.close();
  }

  const env = (rollups: string, more: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ SVC_PREAGG_DIR: rollups, ...more });

  /** The rollup's directory (one rollup, one zone) under a build directory, once it exists. */
  const rollupDir = (rollups: string) => join(rollups, String(accountIdOf(rollups)), String(s.refs.prod), 'orders_monthly', 'Europe_Berlin');
  const accountIdOf = (rollups: string) => readdirSync(rollups).find((name) => /^\d+$/.test(name)) ?? 'none';
  const currentBuild = (rollups: string): string | undefined => {
    const path = join(rollupDir(rollups), 'current.json');
    return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { buildId: string }).buildId : undefined;
  };
  const buildDirs = (rollups: string) => readdirSync(rollupDir(rollups), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();

  const ask = async (base: string | FastifyInstance, force = false): Promise<Answer> => {
    const url = `/api/v1/embed/dashboard/${appId}/query`;
    const payload = { query: QUERY, timezone: 'Europe/Berlin', ...(force ? { force: true } : {}) };
    const headers = { ...bearer(s.keys.admin!), 'content-type': 'application/json' };
    if (typeof base === 'string') {
      const response = await fetch(`${base}${url}`, { method: 'POST', headers, body: JSON.stringify(payload) });
      const text = await response.text();
      expect(response.status, text).toBe(200);
      return JSON.parse(text) as Answer;
    }
    const response = await base.inject({ method: 'POST', url, headers, payload });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as Answer;
  };

  /** Whether a build holds its lock now: the lock file beside the builds (SQLite), an advisory lock (PostgreSQL). */
  const building = async (rollups: string): Promise<boolean> => {
    if (t().dialect === 'sqlite') return existsSync(join(rollupDir(rollups), 'build.lock'));
    return withPostgres(dbUrl, async (client) => {
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`);
      return rows[0]!.n > 0;
    });
  };

  it('a build killed with SIGKILL half-way leaves the previous build current and readable, and the next svc serve rebuilds it', async () => {
    const rollups = join(dir, 'killed');
    const first = await runSvc(['preagg', 'build', '--db', dbUrl], env(rollups));
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`^built deployment ${s.refs.prod} orders\\.monthly \\(Europe/Berlin\\) \\(never built\\) in \\d+ ms: \\d+ rows, 1 file\\(s\\)\\n$`));
    const before = currentBuild(rollups)!;
    reader = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, data: { resultCacheBytes: 0, preAggregationDir: rollups } }), { db });
    const old = await ask(reader);
    expect(old.source).toBe('rollup:orders.monthly');
    expectSameRows(old.rows, (await ask(warehouseOnly)).rows, 'the first build');

    // The warehouse gains a month of orders and its refresh key changes: the rollup is due.
    warehouseSql(`INSERT INTO orders (customer_id, product_id, status, quantity, amount, created_at, tenant)
      SELECT customer_id, product_id, status, quantity, amount, '${LATE_MONTH}-15T12:00:00.000Z', tenant FROM orders WHERE id <= 500;
      UPDATE build_marker SET version = 2;`);
    const status = await runSvc(['preagg', 'status', '--db', dbUrl], env(rollups));
    expect(status.stdout).toContain(`deployment ${s.refs.prod} orders.monthly (Europe/Berlin): built `);
    expect(status.stdout).toContain('due: its refresh SQL changed value');

    const killed = spawnSvc(['preagg', 'build', '--db', dbUrl], env(rollups));
    const ended = finished(killed);
    expect(await eventually(() => building(rollups), 60_000), 'the build took its lock').toBe(true);
    killed.kill('SIGKILL');
    const run = await ended;
    expect(run.signal).toBe('SIGKILL');
    expect(run.stdout, 'the killed build never finished').not.toContain('built deployment');
    if (t().dialect === 'sqlite') expect(existsSync(join(rollupDir(rollups), 'build.lock')), 'the dead builder\'s lock file is left behind').toBe(true);

    // The previous build stays current and answers as before, without the new month.
    expect(currentBuild(rollups)).toBe(before);
    const during = await ask(reader);
    expect(during).toEqual(old);
    expect(JSON.stringify(during.rows)).not.toContain(LATE_MONTH);

    // The next start finds the rollup due, takes over the dead builder's lock and rebuilds it.
    const svc = await startSvcServe(dbUrl, env(rollups, { SVC_PREAGG_REFRESH: 'true' }));
    started.push(svc);
    expect(await eventually(() => currentBuild(rollups) !== before, 90_000), 'svc serve rebuilt the rollup').toBe(true);
    const rebuilt = await ask(svc.url);
    expect(rebuilt.source).toBe('rollup:orders.monthly');
    expect(JSON.stringify(rebuilt.rows)).toContain(LATE_MONTH);
    expectSameRows(rebuilt.rows, (await ask(warehouseOnly)).rows, 'the rebuilt rollup');
    // Kept: the new build and the one it replaced; a killed build's files (if it wrote any) are gone.
    expect(buildDirs(rollups)).toEqual([before, currentBuild(rollups)!].sort());
    expect(existsSync(join(rollupDir(rollups), 'build.lock'))).toBe(false);
    await svc.stop();
  }, 240_000);

  it('two svc serve processes on one database and one directory: one builds the rollup, both answer from it', async () => {
    const rollups = join(dir, 'shared');
    const logs = ['', ''];
    const pair = await Promise.all([0, 1].map(() => startSvcServe(dbUrl, env(rollups, { SVC_PREAGG_REFRESH: 'true', SVC_LOG_LEVEL: 'info' }))));
    started.push(...pair);
    pair.forEach((svc, i) => {
      logs[i] = svc.startOutput;
      svc.child.stdout!.on('data', (chunk: Buffer) => (logs[i] += chunk.toString()));
    });
    expect(await eventually(() => existsSync(rollups) && currentBuild(rollups) !== undefined, 90_000), 'one of them built the rollup').toBe(true);
    const built = currentBuild(rollups)!;
    const builtBy = () => logs.map((log) => log.split('\n').filter((line) => line.includes('"msg":"pre-aggregation built"')).length);
    // Each process looks for due rollups every 10 s: past the next look of both, still one build.
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    expect(builtBy().sort()).toEqual([0, 1]);
    expect(buildDirs(rollups)).toEqual([built]);
    const answers = await Promise.all(pair.map((svc) => ask(svc.url)));
    for (const answer of answers) expect(answer.source).toBe('rollup:orders.monthly');
    expect(answers[0]!.rows).toEqual(answers[1]!.rows);
    expectSameRows(answers[0]!.rows, (await ask(warehouseOnly)).rows, 'the shared build');
    await Promise.all(pair.map((svc) => svc.stop()));
  }, 240_000);

  it('svc preagg status and build: what is built and due, up to date on a second build, a clear error for a bad deployment or subcommand', async () => {
    const rollups = join(dir, 'cli');
    const what = `deployment ${s.refs.prod} orders.monthly (Europe/Berlin)`;
    const status = await runSvc(['preagg', 'status', '--db', dbUrl, '--deployment', String(s.refs.prod)], env(rollups));
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toBe(`${what}: not built; due: never built\n`);
    const build = await runSvc(['preagg', 'build', '--db', dbUrl, '--deployment', String(s.refs.prod)], env(rollups));
    expect(build.code, build.stderr).toBe(0);
    expect(build.stdout).toMatch(/^built deployment \d+ orders\.monthly \(Europe\/Berlin\) \(never built\) in \d+ ms: \d+ rows, 1 file\(s\)\n$/);
    const again = await runSvc(['preagg', 'build', '--db', dbUrl], env(rollups));
    expect(again.stdout).toBe(`up to date: ${what}\n`);
    const after = await runSvc(['preagg', 'status', '--db', dbUrl], env(rollups));
    expect(after.stdout).toMatch(new RegExp(`^${what.replace(/[().]/g, '\\$&')}: built \\S+ in \\d+ ms: \\d+ rows, 1 file\\(s\\); up to date\\n$`));
    const forced = await runSvc(['preagg', 'build', '--db', dbUrl, '--force'], env(rollups));
    expect(forced.stdout).toMatch(/^built deployment \d+ orders\.monthly \(Europe\/Berlin\) \(asked to\) in \d+ ms/);
    const none = await runSvc(['preagg', 'build', '--db', dbUrl, '--deployment', '999999'], env(rollups));
    expect(none.stdout).toBe('no deployment declares pre-aggregations\n');
    const bad = await runSvc(['preagg', 'build', '--db', dbUrl, '--deployment', 'abc'], env(rollups));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--deployment must be a deployment id (a positive integer), got "abc"');
    const unknown = await runSvc(['preagg', 'frob'], env(rollups));
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('unknown subcommand "frob" (the subcommands are build and status)');
  }, 120_000);
});

async function withPostgres<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
