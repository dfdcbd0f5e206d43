import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/dialects.js';
import { mintViewer } from '../../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../../test/factory.js';
import type { SeededAccount } from '../../../test/factory.js';
import { RAISED_RATE_LIMITS } from '../../../test/limits.js';
import { expectSameRows } from '../../../test/rows.js';
import { POLICY_ROWS, POLICY_REGIONS, POLICY_TENANTS, POLICY_TIERS, openPolicyWarehouse, policyViews } from '../../../test/policy-warehouse.js';
import type { OwnPolicyWarehouse } from '../../../test/policy-warehouse.js';
import { buildApp } from '../../app.js';
import type { DataSourceConfig, SemanticView } from '../semantic/semantic.model.js';
import type { AccessPolicy } from '../semantic/semantic.model.js';
import type { PreAggregation } from '../semantic/semantic.model.js';
import type { SemanticQuery } from '../semantic/semantic.query.js';
import { buildDue } from './preagg.scheduler.js';
import type { BuilderContext } from './preagg.scheduler.js';
import { RollupStore, buildRollup, rollupTargets } from './preagg.store.js';
import { SemanticModel } from '../semantic/semantic.model.js';
import { WarehouseRegistry } from '../warehouse/warehouse.registry.js';
import { testConfig } from '../../../test/config.js';

/**
 * Issue 21: pre-aggregations built from a real warehouse (SQLite file, or a PostgreSQL schema of this suite's own)
 * into Parquet files, read through DuckDB. The answers of an app that reads rollups are compared with those of an
 * app that does not (same database, same warehouse, both without a result cache): equal, whatever the query, the
 * time zone and the viewer's policy.
 */

const TIMEZONES = ['UTC', 'America/New_York', 'Asia/Kolkata'];
const DAILY: PreAggregation = {
  name: 'daily', measures: ['orders.count', 'orders.revenue', 'orders.average', 'orders.largest', 'orders.smallest'],
  dimensions: ['orders.tenant', 'orders.region', 'customers.tier'], timeDimension: 'orders.created_at', granularity: 'day',
  partitionGranularity: 'month', timezones: TIMEZONES, refresh: { every: '1 hour', incremental: true, updateWindow: '1 day' },
};
const BUYERS: PreAggregation = { name: 'buyers', measures: ['orders.customers'], dimensions: ['orders.tenant'], timeDimension: 'orders.created_at', granularity: 'month', additive: false };
const TENANT_POLICY: AccessPolicy[] = [
  { group: 'customer', rowLevel: { filters: [{ member: 'tenant', operator: 'equals', values: ['{securityContext.tenant}'] }] } },
  { group: 'admins', rowLevel: { allowAll: true } },
];

function views(): SemanticView[] {
  const all = policyViews({ orders: TENANT_POLICY });
  const orders = all[0]!;
  orders.measures.push({ name: 'average', type: 'avg', column: 'amount' }, { name: 'largest', type: 'max', column: 'amount' }, { name: 'smallest', type: 'min', column: 'amount' });
  orders.preAggregations = [DAILY, BUYERS];
  return all;
}

describeEachDialect('pre-aggregations', (t) => {
  let withRollups: FastifyInstance;
  let without: FastifyInstance;
  let s: SeededAccount;
  let dir: string;
  let store: RollupStore;
  let warehouses: WarehouseRegistry;
  let warehouse: OwnPolicyWarehouse | undefined;
  let warehouseSql: (statement: string) => Promise<void>;
  const sfx = uniqueSuffix();
  const schema = `rollup_wh_${sfx.replace(/[^a-z0-9]/gi, '')}`.toLowerCase();
  const appId = `rollups-app-${sfx}`;
  const viewers: Record<string, Record<string, string>> = {};
  let builder: BuilderContext;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-rollups-'));
    warehouse = await openPolicyWarehouse(t().dialect, dir, { url: t().url, schema });
    const { source } = warehouse;
    warehouseSql = warehouse.sql;
    const data = { resultCacheBytes: 0 };
    withRollups = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, data: { ...data, preAggregationDir: join(dir, 'rollups') } }), { db: t().db });
    without = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, data: { ...data, preAggregationDir: join(dir, 'never-built') } }), { db: t().db });
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      groups: [{ ref: 'g-admins', name: 'admins', members: ['admin'] }],
      deployments: [{
        ref: 'prod', name: 'Rollups', dataSource: source, semanticViews: views(),
        items: [{ ref: 'wb', type: 'WORKBOOK', name: 'App', dashboard: { publicId: appId, status: 'published', allowEmbed: true, config: { kind: 'APP', app: { html: '<p>app</p>' } } } }],
      }],
    });
    for (const tenant of POLICY_TENANTS) {
      viewers[tenant] = (await mintViewer(withRollups, s.keys.admin!, { deploymentId: s.refs.prod!, groups: ['customer'], securityContext: { tenant } })).headers;
    }
    viewers.admin = bearer(s.keys.admin!);
    store = new RollupStore(join(dir, 'rollups'));
    warehouses = new WarehouseRegistry({ timeoutMs: 30_000, demoPath: () => join(dir, 'none.db') });
    builder = { db: t().db, warehouses, store, timeoutMs: 60_000, now: () => new Date() };
    const reports = await buildDue(builder, { deploymentId: s.refs.prod! });
    expect(reports.map((r) => `${r.rollup} ${r.timezone} ${r.status}`).sort()).toEqual([
      'orders.buyers UTC built', 'orders.daily America/New_York built', 'orders.daily Asia/Kolkata built', 'orders.daily UTC built',
    ]);
  });

  afterAll(async () => {
    await withRollups?.close();
    await without?.close();
    store?.close();
    await warehouses?.close();
    await warehouse?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (app: FastifyInstance, who: Record<string, string>, query: SemanticQuery, timezone = 'UTC') => {
    const response = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${appId}/query`, headers: who, payload: { query, timezone } });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { rows: unknown[][]; columns: Array<{ name: string; title: string; kind: string }>; source: string; truncated: boolean };
  };

  it('answers a dashboard\'s queries from the rollup, equal to the warehouse\'s answers', async () => {
    const queries: Array<[SemanticQuery, string]> = [
      [{ measures: ['orders.count', 'orders.revenue', 'orders.average'] }, 'rollup:orders.daily'],
      [{ measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] }, 'rollup:orders.daily'],
      [{ measures: ['orders.count'], dimensions: ['customers.tier'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week', dateRange: ['2025-01-01', '2025-06-30'] }] }, 'rollup:orders.daily'],
      [{ measures: ['orders.customers'], dimensions: ['orders.tenant'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] }, 'rollup:orders.buyers'],
      [{ measures: ['orders.count'], dimensions: ['orders.status'] }, 'warehouse'],
    ];
    for (const [query, source] of queries) {
      const fromRollup = await ask(withRollups, viewers.admin!, query);
      const fromWarehouse = await ask(without, viewers.admin!, query);
      expect(fromRollup.source, JSON.stringify(query)).toBe(source);
      expect(fromWarehouse.source).toBe('warehouse');
      expectSameRows(fromRollup.rows, fromWarehouse.rows, JSON.stringify(query));
      // Under the query's own columns, not the rollup table's (`r.m0`): period comparisons and formats find them.
      expect(fromRollup.columns, JSON.stringify(query)).toEqual(fromWarehouse.columns);
    }
    // The KPI over every order, from the rows themselves.
    const kpi = await ask(withRollups, viewers.admin!, { measures: ['orders.count'] });
    expect(kpi.rows).toEqual([[POLICY_ROWS.orders.length]]);
  });

  it('filters a rollup by each viewer\'s policy: a tenant reads its own rows only', async () => {
    for (const tenant of POLICY_TENANTS) {
      const answer = await ask(withRollups, viewers[tenant]!, { measures: ['orders.count'], dimensions: ['orders.region'] });
      expect(answer.source).toBe('rollup:orders.daily');
      const expected = POLICY_REGIONS.map((region) => [region, POLICY_ROWS.orders.filter((o) => o.tenant === tenant && o.region === region).length]).filter(([, n]) => n !== 0);
      // Ordered as the warehouse orders them: the measure descending (Cube's default), then the dimension.
      expected.sort((a, b) => (b[1] as number) - (a[1] as number) || String(a[0]).localeCompare(String(b[0])));
      expect(answer.rows).toEqual(expected);
    }
  });

  it('property: every query a rollup answers equals the warehouse\'s answer (measures, dimensions, granularities, ranges, filters, zones, viewers)', async () => {
    const measures = ['orders.count', 'orders.revenue', 'orders.average', 'orders.largest', 'orders.smallest'];
    const dimensions = ['orders.tenant', 'orders.region', 'customers.tier', 'orders.status'];
    const day = fc.integer({ min: 0, max: 900 }).map((n) => new Date(Date.UTC(2024, 0, 1) + n * 86_400_000).toISOString().slice(0, 10));
    const filter = fc.oneof(
      fc.record({ member: fc.constant('orders.region'), operator: fc.constantFrom('equals', 'notEquals'), values: fc.subarray([...POLICY_REGIONS], { minLength: 1 }) }),
      fc.record({ member: fc.constant('customers.tier'), operator: fc.constantFrom('equals', 'notEquals', 'set', 'notSet'), values: fc.subarray([...POLICY_TIERS], { minLength: 1 }) }),
      fc.record({ member: fc.constant('orders.tenant'), operator: fc.constantFrom('equals', 'startsWith', 'contains'), values: fc.subarray([...POLICY_TENANTS], { minLength: 1 }) }),
      fc.record({ member: fc.constant('orders.created_at'), operator: fc.constantFrom('afterOrOnDate', 'beforeOrOnDate', 'afterDate', 'beforeDate'), values: day.map((d) => [d]) }),
      fc.record({ member: fc.constant('orders.count'), operator: fc.constantFrom('gt', 'lte'), values: fc.integer({ min: 0, max: 20 }).map((n) => [n]) }),
    );
    const query = fc.record({
      measures: fc.subarray(measures, { minLength: 1 }),
      dimensions: fc.subarray(dimensions, { maxLength: 2 }),
      granularity: fc.constantFrom(undefined, 'day', 'week', 'month', 'quarter', 'year', 'hour'),
      range: fc.option(fc.tuple(day, day).map(([a, b]) => (a <= b ? [a, b] : [b, a])), { nil: undefined }),
      filters: fc.array(filter, { maxLength: 2 }),
      order: fc.constantFrom(undefined, 'measure-desc'),
      limit: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
      timezone: fc.constantFrom(...TIMEZONES, 'Europe/Berlin'),
      viewer: fc.constantFrom('admin', ...POLICY_TENANTS),
    });
    let fromRollups = 0;
    let runs = 0;
    await fc.assert(fc.asyncProperty(query, async (q) => {
      runs++;
      const semantic: SemanticQuery = {
        measures: q.measures, dimensions: q.dimensions,
        ...(q.granularity !== undefined || q.range !== undefined ? { timeDimensions: [{ dimension: 'orders.created_at', ...(q.granularity !== undefined ? { granularity: q.granularity } : {}), ...(q.range !== undefined ? { dateRange: q.range } : {}) }] } : {}),
        filters: q.filters.map((f) => (f.operator === 'set' || f.operator === 'notSet' ? { member: f.member, operator: f.operator } : f)) as SemanticQuery['filters'],
        ...(q.order === 'measure-desc' ? { order: [[q.measures[0]!, 'desc']] as Array<[string, 'asc' | 'desc']> } : {}),
        ...(q.limit !== undefined ? { limit: q.limit } : {}),
      };
      const who = viewers[q.viewer]!;
      const a = await ask(withRollups, who, semantic, q.timezone);
      const b = await ask(without, who, semantic, q.timezone);
      if (a.source.startsWith('rollup:')) fromRollups++;
      expectSameRows(a.rows, b.rows, `${JSON.stringify(semantic)} in ${q.timezone} as ${q.viewer} (${a.source})`);
      expect(a.truncated).toBe(b.truncated);
    }), { seed: 21, numRuns: 150 });
    // The property means something only if many queries were answered from a rollup.
    expect(fromRollups).toBeGreaterThan(runs / 4);
  });

  it('a refresh under concurrent reads never shows a half-built rollup: every answer is the old build\'s or the new one\'s', async () => {
    const query: SemanticQuery = { measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.region'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] };
    const before = await ask(withRollups, viewers.admin!, query);
    expect(before.source).toBe('rollup:orders.daily');
    // New orders in every month: a build that mixed old and new partitions would give neither answer.
    const added = POLICY_ROWS.orders.filter((_, i) => i % 3 === 0).map((o, i) => `(${800_000 + i}, 'NEW-${i}', '${o.tenant}', '${o.region}', 'paid', 1000, '${o.created_at}', ${o.customer_id})`);
    await warehouseSql(`INSERT INTO orders (id, code, tenant, region, status, amount, created_at, customer_id) VALUES ${added.join(', ')}`);
    try {
      const after = await ask(without, viewers.admin!, query);
      expect(after.rows).not.toEqual(before.rows);
      let reading = true;
      const seen = new Set<string>();
      const reader = (async () => {
        while (reading) {
          const answer = await ask(withRollups, viewers.admin!, query);
          expect(answer.source).toBe('rollup:orders.daily');
          const rows = JSON.stringify(answer.rows);
          expect([JSON.stringify(before.rows), JSON.stringify(after.rows)]).toContain(rows);
          seen.add(rows);
        }
      })();
      for (let i = 0; i < 3; i++) {
        const reports = await buildDue(builder, { deploymentId: s.refs.prod!, force: true });
        expect(reports.every((r) => r.status === 'built'), JSON.stringify(reports)).toBe(true);
      }
      // Readers see a new build within a second (each process reads current.json again at most once a second).
      await new Promise((resolve) => setTimeout(resolve, 1100));
      reading = false;
      await reader;
      expect(JSON.stringify((await ask(withRollups, viewers.admin!, query)).rows)).toBe(JSON.stringify(after.rows));
      expect(seen.size).toBeGreaterThanOrEqual(1);
    } finally {
      await warehouseSql('DELETE FROM orders WHERE id >= 800000');
      await buildDue(builder, { deploymentId: s.refs.prod!, force: true });
    }
    // Old builds are removed: the current one and the one before it stay.
    const utc = store.directoryOf({ accountId: (await t().db.kysely.selectFrom('deployments').select('account_id').where('id', '=', s.refs.prod!).executeTakeFirstOrThrow()).account_id, deploymentId: s.refs.prod!, view: views()[0]!, rollup: DAILY, timezone: 'UTC' });
    const builds = readdirSync(utc, { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(builds.length).toBeLessThanOrEqual(3);
    const manifest = JSON.parse(readFileSync(join(utc, 'current.json'), 'utf8')) as { files: Array<{ partition: string }> };
    expect(manifest.files.length).toBeGreaterThan(12);
    expect(manifest.files.every((f) => /^\d{4}-\d{2}$|^none$/.test(f.partition))).toBe(true);
  });

  it('an incremental build reads only its update window\'s partitions and keeps the older ones as built', async () => {
    const accountId = (await t().db.kysely.selectFrom('deployments').select('account_id').where('id', '=', s.refs.prod!).executeTakeFirstOrThrow()).account_id;
    const source = (await t().db.kysely.selectFrom('deployments').select('data_source').where('id', '=', s.refs.prod!).executeTakeFirstOrThrow()).data_source;
    const target = rollupTargets(accountId, s.refs.prod!, JSON.parse(source!) as DataSourceConfig, new SemanticModel(views())).find((x) => x.rollup.name === 'daily' && x.timezone === 'UTC')!;
    const query: SemanticQuery = { measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] };
    const revenueOf = (rows: unknown[][], month: string) => rows.find((r) => String(r[0]).startsWith(month))?.[1];
    // The warehouse's answer before the change (the rollup equals it, once the last test's rebuild is read).
    const before = await ask(without, viewers.admin!, query);
    const old = POLICY_ROWS.orders.find((o) => o.created_at < '2025-05')!;
    const recent = POLICY_ROWS.orders.find((o) => o.created_at >= '2025-07')!;
    const oldMonth = old.created_at.slice(0, 7);
    const recentMonth = recent.created_at.slice(0, 7);
    await warehouseSql(`UPDATE orders SET amount = amount + 1000 WHERE id IN (${old.id}, ${recent.id})`);
    try {
      // As of mid-June 2025, a window of one day: June 2025 onwards is read again, earlier months are kept.
      const manifest = await buildRollup(store, target, { warehouse: warehouses.get(target.source), dialect: t().dialect, timeoutMs: 60_000, now: () => new Date('2025-06-15T12:00:00Z') }, null);
      expect(manifest.files.some((f) => f.partition === oldMonth)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const after = await ask(withRollups, viewers.admin!, query);
      expect(after.source).toBe('rollup:orders.daily');
      expect(revenueOf(after.rows, oldMonth)).toBe(revenueOf(before.rows, oldMonth));
      expect(revenueOf(after.rows, recentMonth)).toBe((revenueOf(before.rows, recentMonth) as number) + 1000);
      // A full build (--force) reads every partition again.
      await buildDue(builder, { deploymentId: s.refs.prod!, force: true });
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const full = await ask(withRollups, viewers.admin!, query);
      expect(revenueOf(full.rows, oldMonth)).toBe((revenueOf(before.rows, oldMonth) as number) + 1000);
    } finally {
      await warehouseSql(`UPDATE orders SET amount = amount - 1000 WHERE id IN (${old.id}, ${recent.id})`);
      await buildDue(builder, { deploymentId: s.refs.prod!, force: true });
    }
  });
});
