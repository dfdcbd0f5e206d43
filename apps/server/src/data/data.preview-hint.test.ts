import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { testConfig } from '../../test/config.js';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { RAISED_RATE_LIMITS } from '../../test/limits.js';
import { buildApp } from '../app.js';
import { buildDue } from './preagg/preagg.scheduler.js';
import { RollupStore } from './preagg/preagg.store.js';
import type { RollupHint } from './preagg/preagg.suggest.js';
import type { SemanticView } from './semantic/semantic.model.js';
import type { SemanticQuery } from './semantic/semantic.query.js';
import { DEMO_PRE_AGGREGATIONS, DEMO_SEMANTIC_VIEWS } from './warehouse/warehouse.demo.js';
import { WarehouseRegistry } from './warehouse/warehouse.registry.js';

/**
 * Issue 34, "why is this slow": an admin's preview answered by the data source says why each pre-aggregation of the
 * view did not answer, and suggests one; the suggestion, added to the model and built, answers the same query.
 */
describeEachDialect('the preview\'s pre-aggregation hint', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let dir: string;
  let store: RollupStore;
  let warehouses: WarehouseRegistry;
  // The demo's monthly rollup (by category, region and tenant; built for UTC only here) and by_customer: revenue by
  // status is in neither.
  const views = (): SemanticView[] => structuredClone(DEMO_SEMANTIC_VIEWS).map((view) => (view.name !== 'orders' ? view : {
    ...view, preAggregations: DEMO_PRE_AGGREGATIONS.filter((r) => r.name === 'monthly' || r.name === 'by_customer').map((r) => ({ ...r, timezones: ['UTC'] })),
  }));
  const byStatus: SemanticQuery = {
    measures: ['orders.revenue', 'orders.count'], dimensions: ['orders.status'],
    timeDimensions: [{ dimension: 'orders.created_at', granularity: 'quarter', dateRange: ['2024-01-01', '2024-12-31'] }],
  };
  type Answer = { rows: unknown[][]; source: string; statement?: { on: string }; rollupHint?: RollupHint };

  const build = () => buildDue({ db: t().db, warehouses, store, timeoutMs: 60_000, now: () => new Date() }, { deploymentId: s.refs.prod! });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-preview-hint-'));
    app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, data: { resultCacheBytes: 0, preAggregationDir: join(dir, 'rollups') } }), { db: t().db });
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }],
      deployments: [{ ref: 'prod', name: 'Hint', semanticViews: views() }],
    });
    store = new RollupStore(join(dir, 'rollups'));
    warehouses = new WarehouseRegistry({ timeoutMs: 30_000, demoPath: () => inject('demoWarehousePath') });
    expect((await build()).map((r) => `${r.rollup} ${r.status}`).sort()).toEqual(['orders.by_customer built', 'orders.monthly built']);
  });

  afterAll(async () => {
    await app?.close();
    store?.close();
    await warehouses?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const preview = async (query: SemanticQuery, key = s.keys.alice!): Promise<Answer> => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/deployments/${s.refs.prod!}/query`, headers: { ...bearer(key), 'content-type': 'application/json' }, payload: { query, timezone: 'UTC' } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Answer>();
  };
  const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r.map((v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)))).sort();

  it('says why each rollup did not answer, suggests one that does, and that one, added and built, answers the query', async () => {
    const slow = await preview(byStatus);
    expect(slow.source).toBe('warehouse');
    expect(slow.rollupHint!.reasons).toEqual([
      { rollup: 'orders.monthly', reason: 'the dimension orders.status is not in it' },
      { rollup: 'orders.by_customer', reason: 'the dimension orders.status is not in it' },
    ]);
    const suggestion = slow.rollupHint!.suggestion!;
    expect(suggestion).toEqual({
      view: 'orders',
      preAggregation: {
        name: 'revenue_count_by_status_quarter', measures: ['orders.revenue', 'orders.count'], dimensions: ['orders.status'],
        timeDimension: 'orders.created_at', granularity: 'quarter', refresh: { every: '1 hour' },
      },
    });

    // The suggestion pasted into the model, as the model page saves it, and built.
    const read = await app.inject({ url: `/api/v1/deployments/${s.refs.prod!}`, headers: bearer(s.keys.alice!) });
    const model = read.json<{ semanticViews: Array<{ name: string; preAggregations?: unknown[] }> }>().semanticViews;
    const orders = model.find((v) => v.name === suggestion.view)!;
    orders.preAggregations = [...(orders.preAggregations ?? []), suggestion.preAggregation];
    const put = await app.inject({ method: 'PUT', url: `/api/v1/deployments/${s.refs.prod!}/model`, headers: { ...bearer(s.keys.alice!), 'if-match': read.headers.etag as string }, payload: { semanticViews: model } });
    expect(put.statusCode, put.body).toBe(200);
    expect((await build()).filter((r) => r.status === 'built').map((r) => r.rollup)).toContain(`orders.${suggestion.preAggregation.name}`);

    const fast = await preview(byStatus);
    expect(fast.source).toBe(`rollup:orders.${suggestion.preAggregation.name}`);
    expect(fast.statement!.on).toBe(fast.source);
    expect(fast.rollupHint).toBeUndefined();
    expect(sorted(fast.rows)).toEqual(sorted(slow.rows));
    expect(slow.rows.length).toBeGreaterThan(1);
  });

  it('names the reasons a rollup gives: a time zone it is not built for, a grain it cannot split, a filter outside it', async () => {
    const berlin = await app.inject({
      method: 'POST', url: `/api/v1/deployments/${s.refs.prod!}/query`, headers: { ...bearer(s.keys.alice!), 'content-type': 'application/json' },
      payload: { query: { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] }, timezone: 'Asia/Tokyo' },
    });
    const hint = berlin.json<Answer>().rollupHint!;
    expect(hint.reasons[0]).toEqual({ rollup: 'orders.monthly', reason: 'it is not built for the time zone Asia/Tokyo (UTC)' });
    expect(hint.suggestion!.preAggregation).toMatchObject({ timezones: ['Asia/Tokyo'], granularity: 'month' });

    const daily = await preview({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day' }] });
    expect(daily.rollupHint!.reasons[0]).toEqual({ rollup: 'orders.monthly', reason: 'day buckets are not made of its month buckets' });
    const filtered = await preview({ measures: ['orders.count'], dimensions: ['products.category'], filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }] });
    expect(filtered.rollupHint!.reasons[0]!.reason).toBe('a filter names orders.status, which is not in it');
    // A filtered member goes into the suggestion, so that the rollup can apply the filter.
    expect(filtered.rollupHint!.suggestion!.preAggregation).toMatchObject({ measures: ['orders.count'], dimensions: ['products.category', 'orders.status'] });
    // A count_distinct does not re-aggregate: the suggestion answers at its own grain only.
    const distinct = await preview({ measures: ['orders.customers'], dimensions: ['orders.status'] });
    expect(distinct.rollupHint!.suggestion!.preAggregation).toEqual({ name: 'customers_by_status', measures: ['orders.customers'], dimensions: ['orders.status'], additive: false, refresh: { every: '1 hour' } });
    // Two time dimensions: no rollup buckets both, and the hint says so instead of suggesting one that would not answer.
    const twoTimes = await preview({
      measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }],
      filters: [{ member: 'customers.created_at', operator: 'afterDate', values: ['2024-01-01'] }],
    });
    expect(twoTimes.rollupHint).toMatchObject({ suggestion: null, unsuggested: 'it reads 2 time dimensions (orders.created_at, customers.created_at); a rollup buckets one' });
  });

  it('gives no hint for an answer from a rollup, and none to a member', async () => {
    const fromRollup = await preview({ measures: ['orders.revenue'], dimensions: ['products.category'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] });
    expect(fromRollup.source).toBe('rollup:orders.monthly');
    expect(fromRollup.rollupHint).toBeUndefined();
    const member = await preview({ measures: ['orders.units'], dimensions: ['orders.status'] }, s.keys.bob!);
    expect(member.source).toBe('warehouse');
    expect(member.rollupHint).toBeUndefined();
    expect(member.statement).toBeUndefined();
  });
});
