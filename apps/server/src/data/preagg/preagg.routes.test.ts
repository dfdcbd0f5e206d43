import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { describeEachDialect } from '../../../test/dialects.js';
import { bearer, seedAccount } from '../../../test/factory.js';
import type { SeededAccount } from '../../../test/factory.js';
import { testConfig } from '../../../test/config.js';
import { createOwnDatabase } from '../../../test/own-database.js';
import { openDatabase } from '../../db/db.database.js';
import { migrateToLatest } from '../../db/db.migrations.js';
import { buildApp } from '../../app.js';
import { DEMO_PRE_AGGREGATIONS, DEMO_SEMANTIC_VIEWS, ensureDemoWarehouseSqlite } from '../warehouse/warehouse.demo.js';
import { WarehouseRegistry } from '../warehouse/warehouse.registry.js';
import { buildDue, rollupStatus } from './preagg.scheduler.js';
import type { BuilderContext } from './preagg.scheduler.js';
import { RollupStore } from './preagg.store.js';

interface Status {
  view: string; name: string; timezone: string; built: boolean; builtAt: string | null; buildMs: number | null; rows: number | null; sizeBytes: number | null;
  partitions: Array<{ partition: string; rows: number }>; due: string | null; nextDueAt: string | null; lastError: { message: string; at: string } | null;
}

/**
 * Issue 34, the console's model page: `GET /api/v1/deployments/{id}/pre-aggregations` says what `svc preagg status`
 * says for one deployment (admins): built or not, when, rows, size, partitions, whether and why a build is due.
 */
describeEachDialect('pre-aggregations\' build status through the API', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  let dir: string;
  let builder: BuilderContext;
  let warehouses: WarehouseRegistry;
  // The demo's by_status (one time zone, not partitioned) and daily (partitioned by month), in UTC only: small to build.
  const rollups = DEMO_PRE_AGGREGATIONS.filter((r) => r.name === 'by_status' || r.name === 'daily').map((r) => ({ ...r, timezones: ['UTC'] }));
  const views = DEMO_SEMANTIC_VIEWS.map((v) => (v.name === 'orders' ? { ...v, preAggregations: rollups } : v));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-preagg-status-'));
    const config = testConfig({ data: { preAggregationDir: join(dir, 'rollups') } });
    app = await buildApp(config, { db: t().db });
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }],
      deployments: [{ ref: 'prod', name: 'Prod', semanticViews: views, items: [] }],
    });
    other = await seedAccount(t().db.kysely, { users: [{ ref: 'admin', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Theirs', items: [] }] });
    warehouses = new WarehouseRegistry({ timeoutMs: 60_000, demoPath: () => ensureDemoWarehouseSqlite(config.data.demoWarehousePath) });
    builder = { db: t().db, warehouses, store: new RollupStore(join(dir, 'rollups')), timeoutMs: 60_000, now: () => new Date() };
  });

  afterAll(async () => {
    await app?.close();
    builder?.store.close();
    await warehouses?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const statuses = async (user = 'alice', deploymentId = s.refs.prod!) => {
    const res = await app.inject({ url: `/api/v1/deployments/${deploymentId}/pre-aggregations`, headers: bearer((user === 'other' ? other : s).keys[user === 'other' ? 'admin' : user]!) });
    return res;
  };

  it('says each rollup is not built and why it is due, then built with its time, rows, size and partitions', async () => {
    const before = await statuses();
    expect(before.statusCode, before.body).toBe(200);
    expect(before.headers['cache-control']).toBe('no-store');
    expect((before.json() as { items: Status[] }).items).toEqual([
      { view: 'orders', name: 'daily', timezone: 'UTC', built: false, builtAt: null, buildMs: null, rows: null, sizeBytes: null, partitions: [], due: 'never built', nextDueAt: null, lastError: null },
      { view: 'orders', name: 'by_status', timezone: 'UTC', built: false, builtAt: null, buildMs: null, rows: null, sizeBytes: null, partitions: [], due: 'never built', nextDueAt: null, lastError: null },
    ]);

    const reports = await buildDue(builder, { deploymentId: s.refs.prod! });
    expect(reports.map((r) => `${r.rollup} ${r.status}`)).toEqual(['orders.daily built', 'orders.by_status built']);
    const after = (await statuses()).json() as { items: Status[] };
    // The same as `svc preagg status` reads.
    const cli = await rollupStatus(builder, s.refs.prod!);
    for (const [i, item] of after.items.entries()) {
      const manifest = cli[i]!.manifest!;
      expect(item).toMatchObject({ built: true, builtAt: manifest.builtAt, rows: manifest.rows, due: null, lastError: null });
      expect(item.rows).toBeGreaterThan(0);
      expect(item.sizeBytes).toBeGreaterThan(0);
      expect(item.partitions).toEqual(manifest.files.map((f) => ({ partition: f.partition, rows: f.rows })));
      expect(item.nextDueAt).toBe(new Date(Date.parse(manifest.builtAt) + 3_600_000).toISOString());
      expect(Date.now() - Date.parse(item.builtAt!)).toBeLessThan(600_000);
    }
    // daily is partitioned by month: one file a month of the demo's orders.
    expect(after.items[0]!.partitions.length).toBeGreaterThan(1);
    expect(after.items[0]!.partitions.reduce((n, p) => n + p.rows, 0)).toBe(after.items[0]!.rows);
  });

  it('is the admins\': a member is refused (403), another account\'s deployment is a 404 before any role', async () => {
    const member = await statuses('bob');
    expect(member.statusCode).toBe(403);
    expect(member.json().error.field).toBe('Authorization');
    const theirs = await statuses('other', s.refs.prod!);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().error.field).toBe('deploymentId');
    expect((await statuses('bob', other.refs.prod!)).statusCode).toBe(404);
    expect((await statuses('alice', 2147483000)).statusCode).toBe(404);
    // A deployment without pre-aggregations lists none.
    expect((await statuses('other', other.refs.prod!)).json()).toEqual({ items: [] });
  });

  it('names the last failed build of the serving process\'s own builder (SVC_PREAGG_REFRESH)', async () => {
    // A database of its own: the builder of `svc serve` builds every deployment it holds.
    const database = await createOwnDatabase(t().dialect === 'sqlite' ? null : inject('postgresUrl'), 'svc_preagg_status');
    const db = openDatabase(database.url);
    const ownDir = mkdtempSync(join(tmpdir(), 'svc-preagg-failing-'));
    let serving: FastifyInstance | undefined;
    try {
      await migrateToLatest(db);
      const broken = views.map((v) => (v.name === 'orders' ? { ...v, table: 'no_such_orders', preAggregations: [rollups[1]!] } : v));
      const seeded = await seedAccount(db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Broken', semanticViews: broken, items: [] }] });
      serving = await buildApp(testConfig({ data: { preAggregationDir: join(ownDir, 'rollups'), preAggregationRefresh: true } }), { db });
      const read = async () => ((await serving!.inject({ url: `/api/v1/deployments/${seeded.refs.prod}/pre-aggregations`, headers: bearer(seeded.keys.alice!) })).json() as { items: Status[] }).items;
      await expect.poll(async () => (await read())[0]?.lastError?.message, { timeout: 20_000 }).toMatch(/no_such_orders/);
      const [failed] = await read();
      expect(failed).toMatchObject({ name: 'by_status', built: false, due: 'never built' });
      expect(Date.now() - Date.parse(failed!.lastError!.at)).toBeLessThan(60_000);
    } finally {
      await serving?.close();
      await db.close();
      await database.drop();
      rmSync(ownDir, { recursive: true, force: true });
    }
  }, 60_000);
});
