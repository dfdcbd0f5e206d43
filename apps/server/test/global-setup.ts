import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/db/db.database.js';
import { migrateToLatest } from '../src/db/db.migrations.js';
import { loadDemoWarehousePostgres, writeDemoWarehouseSqlite } from '../src/data/warehouse/warehouse.demo.js';
import { writeDemoWarehouseDuckDb } from './duckdb-warehouse.js';
import type { DuckDbDemoWarehouse } from './duckdb-warehouse.js';
import { loadPolicyWarehousePostgres, writePolicyWarehouseSqlite } from './policy-warehouse.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string | null;
    /** A Redis that answers (SVC_TEST_REDIS_URL), for the shared rate-limit store; null: those tests are skipped. */
    redisUrl: string | null;
    /** The demo warehouse as a SQLite file, written once per run (also in SVC_DEMO_WAREHOUSE for every svc the tests start). */
    demoWarehousePath: string;
    /** Issue 20's multi-tenant warehouse (test/policy-warehouse.ts) as a SQLite file, written once per run. */
    policyWarehousePath: string;
    /** The demo warehouse as a DuckDB file and as Parquet and CSV files (test/duckdb-warehouse.ts), written once per run. */
    duckdbWarehouse: DuckDbDemoWarehouse;
  }
}

let created: { adminUrl: string; name: string } | undefined;
let warehouseDir: string | undefined;

/** The PostgreSQL schema of the test database that holds the demo warehouse. */
export const WAREHOUSE_SCHEMA = 'demo_wh';

function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Debian's Chromium, as e2e/browser.ts finds it. */
const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Under CI=true a half that would be skipped is a failure: this project's machines always run PostgreSQL and have
 * Chromium, so a skip there means a broken machine, not a smaller run. A new user's `npm test` skips and says so.
 */
function refuseSkipUnderCi(what: string, reason: string): void {
  if (process.env.CI !== 'true') return;
  throw new Error(`CI=true: ${what} must run in CI, but ${reason}. Start it (or install it) and run again.`);
}

/**
 * One PostgreSQL database per test run (`svc_test_<random>`), migrated once here and dropped at the end, so
 * runs never see each other's rows. Without SVC_TEST_POSTGRES_URL, or when that server does not answer, the
 * PostgreSQL half of every database suite is skipped, and this says so plainly (under CI=true it fails instead,
 * and so does a missing Chromium).
 */
export async function setup(project: TestProject): Promise<void> {
  if (!existsSync(CHROMIUM)) refuseSkipUnderCi('the browser tests', `${CHROMIUM} does not exist (apt-get install -y chromium)`);
  warehouseDir = mkdtempSync(join(tmpdir(), 'svc-warehouse-'));
  const demoWarehousePath = join(warehouseDir, 'demo-warehouse.db');
  writeDemoWarehouseSqlite(demoWarehousePath);
  process.env.SVC_DEMO_WAREHOUSE = demoWarehousePath;
  project.provide('demoWarehousePath', demoWarehousePath);
  const policyWarehousePath = join(warehouseDir, 'policy-warehouse.db');
  writePolicyWarehouseSqlite(policyWarehousePath);
  project.provide('policyWarehousePath', policyWarehousePath);
  project.provide('duckdbWarehouse', await writeDemoWarehouseDuckDb(warehouseDir));
  project.provide('redisUrl', await answeringRedis(process.env.SVC_TEST_REDIS_URL));
  const adminUrl = process.env.SVC_TEST_POSTGRES_URL;
  if (!adminUrl) {
    refuseSkipUnderCi('the PostgreSQL half', 'SVC_TEST_POSTGRES_URL is not set');
    project.provide('postgresUrl', null);
    console.warn('\n*** PostgreSQL half SKIPPED: SVC_TEST_POSTGRES_URL is not set; database suites run on SQLite only. ***\n');
    return;
  }
  const name = `svc_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl });
  try {
    await client.connect();
    await client.query(`create database ${name}`);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    refuseSkipUnderCi('the PostgreSQL half', `PostgreSQL refused: ${reason}`);
    project.provide('postgresUrl', null);
    console.warn(`\n*** PostgreSQL half SKIPPED: ${reason}; database suites run on SQLite only. ***\n`);
    return;
  } finally {
    await client.end().catch(() => undefined);
  }
  created = { adminUrl, name };
  const url = databaseUrl(adminUrl, name);
  const db = openDatabase(url);
  await migrateToLatest(db);
  await db.close();
  const warehouse = new pg.Client({ connectionString: url });
  await warehouse.connect();
  await loadDemoWarehousePostgres(warehouse, WAREHOUSE_SCHEMA);
  await loadPolicyWarehousePostgres(warehouse);
  await warehouse.end();
  project.provide('postgresUrl', url);
  console.info(`PostgreSQL suites run on database ${name}`);
}

/** The Redis URL when that Redis answers a PING, else null (and a plain warning; under CI=true, a failure). */
async function answeringRedis(url: string | undefined): Promise<string | null> {
  if (!url) {
    refuseSkipUnderCi('the shared rate-limit tests', 'SVC_TEST_REDIS_URL is not set');
    console.warn('\n*** Redis tests SKIPPED: SVC_TEST_REDIS_URL is not set. ***\n');
    return null;
  }
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return url;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    refuseSkipUnderCi('the shared rate-limit tests', `Redis refused: ${reason}`);
    console.warn(`\n*** Redis tests SKIPPED: ${reason}. ***\n`);
    return null;
  } finally {
    redis.disconnect();
  }
}

export async function teardown(): Promise<void> {
  if (warehouseDir !== undefined) rmSync(warehouseDir, { recursive: true, force: true });
  if (!created) return;
  const client = new pg.Client({ connectionString: created.adminUrl });
  await client.connect();
  await client.query(`drop database if exists ${created.name} with (force)`);
  await client.end();
}
