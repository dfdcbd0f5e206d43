import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/dialects.js';
import { mintViewer } from '../../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../../test/factory.js';
import type { SeededAccount } from '../../../test/factory.js';
import { RAISED_RATE_LIMITS } from '../../../test/limits.js';
import { POLICY_ROWS, openPolicyWarehouse, policyViews } from '../../../test/policy-warehouse.js';
import type { OwnPolicyWarehouse } from '../../../test/policy-warehouse.js';
import { buildApp } from '../../app.js';
import { ImportError, importFile } from '../../import/import.js';
import type { ImportDashboard } from '../../import/import.js';
import { ResultCache, parseInterval } from './cache.results.js';
import { testConfig } from '../../../test/config.js';

/**
 * Issue 21, part 1: the result cache shared by every viewer. Each suite owns a warehouse it may change (a SQLite
 * file, or a PostgreSQL schema of its own) so that a stale answer shows, and a clock it moves, so that refresh
 * keys turn over without waiting.
 */

const TENANT_POLICY = { orders: [{ group: 'customer', rowLevel: { filters: [{ member: 'tenant', operator: 'equals' as const, values: ['{securityContext.tenant}'] }] } }] };
const ordersOf = (tenant: string) => POLICY_ROWS.orders.filter((o) => o.tenant === tenant);

describeEachDialect('result cache', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let dir: string;
  let warehouse: OwnPolicyWarehouse | undefined;
  let warehouseSql: (statement: string) => Promise<void>;
  let clock = Date.parse('2026-06-01T12:00:00Z');
  const sfx = uniqueSuffix();
  const schema = `cache_wh_${sfx.replace(/[^a-z0-9]/gi, '')}`.toLowerCase();
  const hourly = `cache-hourly-${sfx}`;
  const bySql = `cache-sql-${sfx}`;
  const viewers: Record<string, { authorization: string }> = {};

  const dashboard = (publicId: string): ImportDashboard => ({
    publicId, status: 'published' as const, allowEmbed: true,
    config: { widgets: [
      { id: 'kpi', type: 'CHART', position: { x: 0, y: 0, w: 3, h: 2 } },
      { id: 'by-region', type: 'CHART', position: { x: 3, y: 0, w: 3, h: 2 } },
      { id: 'raw', type: 'CHART', position: { x: 6, y: 0, w: 3, h: 2 } },
    ] },
    reportSnapshots: [
      { report: `${publicId}-kpi`, kind: 'kpi', meta: { query: { measures: ['orders.count', 'orders.revenue'] } } },
      { report: `${publicId}-region`, kind: 'vega', meta: { query: { measures: ['orders.count'], dimensions: ['orders.region'] } } },
      { report: `${publicId}-raw`, kind: 'table', sqlQuery: 'SELECT count(*) AS n FROM orders' },
    ],
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-cache-'));
    warehouse = await openPolicyWarehouse(t().dialect, dir, { url: t().url, schema });
    const { source } = warehouse;
    warehouseSql = warehouse.sql;
    app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, metricsToken: 'metrics-secret-for-tests' }), { db: t().db, now: () => new Date(clock) });
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [
        {
          ref: 'hourly', name: 'Hourly', dataSource: { ...source, refreshKey: { every: '1 hour' } }, semanticViews: policyViews(TENANT_POLICY),
          items: [{ ref: 'wb', type: 'WORKBOOK', name: 'Cache', dashboard: dashboard(hourly) }, { ref: `${hourly}-kpi`, type: 'REPORT', name: 'k' }, { ref: `${hourly}-region`, type: 'REPORT', name: 'r' }, { ref: `${hourly}-raw`, type: 'REPORT', name: 'w' }],
        },
        {
          ref: 'bysql', name: 'By SQL', dataSource: { ...source, refreshKey: { sql: 'SELECT count(*), max(id) FROM orders', every: '1 minute' } }, semanticViews: policyViews(),
          items: [{ ref: 'wb2', type: 'WORKBOOK', name: 'Cache 2', dashboard: dashboard(bySql) }, { ref: `${bySql}-kpi`, type: 'REPORT', name: 'k' }, { ref: `${bySql}-region`, type: 'REPORT', name: 'r' }, { ref: `${bySql}-raw`, type: 'REPORT', name: 'w' }],
        },
      ],
    });
    const mint = async (tenant: string) => (await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.hourly!, groups: ['customer'], securityContext: { tenant } })).headers;
    viewers.acme1 = await mint('acme');
    viewers.acme2 = await mint('acme');
    viewers.globex = await mint('globex');
  });

  afterAll(async () => {
    await app?.close();
    await warehouse?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const widget = async (publicId: string, id: string, who: Record<string, string>, payload: object = {}) => {
    const response = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/${id}/data`, headers: who, payload });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { rows: unknown[][]; source: string };
  };
  const metric = async (line: RegExp): Promise<number> => {
    const scraped = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret-for-tests' } });
    const match = scraped.body.split('\n').find((l) => line.test(l));
    return match === undefined ? 0 : Number(match.split(' ').pop());
  };
  const warehouseQueries = () => metric(/^svc_data_queries_total\{target="warehouse"\}/);

  it('answers a repeated widget from the cache and says where each answer came from', async () => {
    const before = await warehouseQueries();
    const first = await widget(hourly, 'kpi', viewers.acme1!);
    const second = await widget(hourly, 'kpi', viewers.acme1!);
    expect(first.source).toBe('warehouse');
    expect(second.source).toBe('cache');
    expect(second.rows).toEqual(first.rows);
    expect(first.rows[0]![0]).toBe(ordersOf('acme').length);
    expect(await warehouseQueries()).toBe(before + 1);
    expect(await metric(/^svc_data_cache_requests_total\{outcome="hit"\}/)).toBeGreaterThanOrEqual(1);
  });

  it('never shares an entry between two tenants, and shares one between two viewers of the same tenant', async () => {
    const acme = await widget(hourly, 'by-region', viewers.acme1!);
    const globex = await widget(hourly, 'by-region', viewers.globex!);
    const acmeAgain = await widget(hourly, 'by-region', viewers.acme2!);
    expect(acme.source).toBe('warehouse');
    expect(globex.source).toBe('warehouse');
    expect(acmeAgain.source).toBe('cache');
    const count = (tenant: string) => {
      const regions = new Map<string, number>();
      for (const order of ordersOf(tenant)) regions.set(order.region, (regions.get(order.region) ?? 0) + 1);
      return [...regions].sort();
    };
    expect(acme.rows.map((r) => [r[0], r[1]]).sort()).toEqual(count('acme'));
    expect(globex.rows.map((r) => [r[0], r[1]]).sort()).toEqual(count('globex'));
    expect(acmeAgain.rows).toEqual(acme.rows);
  });

  it('runs one warehouse query for 100 viewers asking at once (single flight)', async () => {
    const before = await warehouseQueries();
    const waitsBefore = await metric(/^svc_data_cache_requests_total\{outcome="wait"\}/);
    const payload = { filters: { 'orders.status': ['paid', 'open'] } };
    const answers = await Promise.all(Array.from({ length: 100 }, () => widget(hourly, 'by-region', viewers.acme1!, payload)));
    expect(await warehouseQueries()).toBe(before + 1);
    expect(answers.filter((a) => a.source === 'warehouse')).toHaveLength(1);
    expect(answers.filter((a) => a.source === 'cache')).toHaveLength(99);
    for (const answer of answers) expect(answer.rows).toEqual(answers[0]!.rows);
    expect(await metric(/^svc_data_cache_requests_total\{outcome="wait"\}/)).toBeGreaterThan(waitsBefore);
  });

  it('serves what it holds until the refresh key turns over; force reads the warehouse at once', async () => {
    const cached = await widget(hourly, 'kpi', viewers.globex!);
    const id = 900_000 + Math.floor(Math.random() * 1000);
    await warehouseSql(`INSERT INTO orders (id, code, tenant, region, status, amount, created_at, customer_id) VALUES (${id}, 'NEW-${id}', 'globex', 'north', 'paid', 5, '2026-05-01T00:00:00Z', 1)`);
    try {
      const stale = await widget(hourly, 'kpi', viewers.globex!);
      expect(stale.source).toBe('cache');
      expect(stale.rows).toEqual(cached.rows);
      const forced = await widget(hourly, 'kpi', viewers.globex!, { force: true });
      expect(forced.source).toBe('warehouse');
      expect(forced.rows[0]![0]).toBe((cached.rows[0]![0] as number) + 1);
      // The forced answer is what the next viewer gets from the cache.
      const after = await widget(hourly, 'kpi', viewers.globex!);
      expect(after).toMatchObject({ source: 'cache', rows: forced.rows });
    } finally {
      await warehouseSql(`DELETE FROM orders WHERE id = ${id}`);
    }
    // An hour later (`every: "1 hour"`), the entry is stale: the deletion shows.
    clock += 3_600_000;
    const fresh = await widget(hourly, 'kpi', viewers.globex!);
    expect(fresh.source).toBe('warehouse');
    expect(fresh.rows).toEqual(cached.rows);
  });

  it('with an SQL refresh key, serves fresh answers once its value changes (asked once per `every`)', async () => {
    const admin = bearer(s.keys.admin!);
    const first = await widget(bySql, 'raw', admin);
    expect(first.rows).toEqual([[POLICY_ROWS.orders.length]]);
    expect((await widget(bySql, 'raw', admin)).source).toBe('cache');
    const id = 910_000 + Math.floor(Math.random() * 1000);
    await warehouseSql(`INSERT INTO orders (id, code, tenant, region, status, amount, created_at, customer_id) VALUES (${id}, 'NEW-${id}', 'acme', 'south', 'open', 7, '2026-05-02T00:00:00Z', 1)`);
    try {
      // Within the minute the refresh key is not asked again.
      expect((await widget(bySql, 'raw', admin)).source).toBe('cache');
      clock += 61_000;
      const fresh = await widget(bySql, 'raw', admin);
      expect(fresh).toMatchObject({ source: 'warehouse', rows: [[POLICY_ROWS.orders.length + 1]] });
      // Time passing alone does not turn an SQL refresh key over.
      clock += 61_000;
      expect((await widget(bySql, 'raw', admin)).source).toBe('cache');
    } finally {
      await warehouseSql(`DELETE FROM orders WHERE id = ${id}`);
    }
  });

  it('keeps no failure: a refresh-key query that fails is an error naming it, every time', async () => {
    const broken = `cache-broken-${uniqueSuffix()}`;
    const other = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{
        ref: 'broken', name: 'Broken', dataSource: { type: 'demo', refreshKey: { sql: 'SELECT nothing FROM no_such_table' } },
        items: [
          { ref: 'wb', type: 'WORKBOOK', name: 'B', dashboard: { publicId: broken, status: 'published', allowEmbed: true, config: { widgets: [{ id: 'k', type: 'CHART', position: { x: 0, y: 0, w: 3, h: 2 } }] }, reportSnapshots: [{ report: 'r', kind: 'kpi', meta: { query: { measures: ['orders.count'] } } }] } },
          { ref: 'r', type: 'REPORT', name: 'r' },
        ],
      }],
    });
    for (let i = 0; i < 2; i++) {
      const response = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${broken}/widgets/k/data`, headers: bearer(other.keys.admin!), payload: {} });
      expect(response.statusCode).toBe(422);
      expect(response.json().error).toMatchObject({ field: 'dataSource.refreshKey.sql' });
    }
  });

  it('refuses a bad refresh key at its JSON path, writing nothing', async () => {
    for (const [refreshKey, path] of [
      [{ every: 'soon' }, '.every'],
      [{ every: '0 seconds' }, '.every'],
      [{ sql: 'DELETE FROM orders' }, '.sql'],
      [{ sql: 42 }, '.sql'],
      [{}, ''],
      [{ every: '1 hour', when: 'now' }, '.when'],
    ] as const) {
      const tenantName = `cache-bad-${uniqueSuffix()}`;
      const error = await importFile(t().db.kysely, {
        accounts: [{ name: 'Bad', tenantName, users: [], deployments: [{ ref: 'bad', name: 'Bad', dataSource: { type: 'demo', refreshKey } as never }] }],
      }).then(() => undefined, (e: unknown) => e);
      expect(error, JSON.stringify(refreshKey)).toBeInstanceOf(ImportError);
      expect((error as ImportError).path, JSON.stringify(refreshKey)).toBe(`$.accounts[0].deployments[0].dataSource.refreshKey${path}`);
      const written = await t().db.kysely.selectFrom('accounts').select('id').where('tenant_name', '=', tenantName).execute();
      expect(written).toEqual([]);
    }
  });
});

describe('ResultCache', () => {
  const rows = (n: number) => ({ rows: Array.from({ length: n }, (_, i) => [i, `row-${i}`]), truncated: false });

  it('is bounded in bytes, least recently used first out, and keeps no entry over a quarter of its budget', async () => {
    const cache = new ResultCache(2_500);
    const compute = (n: number) => async () => ({ value: rows(n), source: 'warehouse' as const });
    await cache.answer('a', false, compute(40));
    await cache.answer('b', false, compute(40));
    await cache.answer('c', false, compute(40));
    expect((await cache.answer('a', false, compute(40))).source).toBe('cache');
    await cache.answer('d', false, compute(40));
    await cache.answer('e', false, compute(40));
    expect(cache.bytes).toBeLessThanOrEqual(2_500);
    // b, the least recently used, went first; a, read since, stayed.
    expect((await cache.answer('a', false, compute(40))).source).toBe('cache');
    expect((await cache.answer('b', false, compute(40))).source).toBe('warehouse');
    await cache.answer('huge', false, compute(200));
    expect((await cache.answer('huge', false, compute(200))).source).toBe('warehouse');
  });

  it('keeps no failed computation, and lets the next asker try again', async () => {
    const cache = new ResultCache(1_000_000);
    await expect(cache.answer('k', false, async () => { throw new Error('warehouse down'); })).rejects.toThrow('warehouse down');
    expect((await cache.answer('k', false, async () => ({ value: rows(1), source: 'warehouse' as const }))).source).toBe('warehouse');
    expect(cache.counters).toMatchObject({ misses: 2, hits: 0 });
  });

  it('reads intervals as Cube writes them', () => {
    expect(parseInterval('10 seconds')).toBe(10_000);
    expect(parseInterval('1 minute')).toBe(60_000);
    expect(parseInterval('6 hours')).toBe(21_600_000);
    expect(parseInterval('1 day')).toBe(86_400_000);
    expect(parseInterval('0 seconds')).toBeUndefined();
    expect(parseInterval('soon')).toBeUndefined();
  });
});
