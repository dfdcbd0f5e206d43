import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/db/db.database.js';
import { migrateToLatest } from '../src/db/db.migrations.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string | null;
  }
}

let created: { adminUrl: string; name: string } | undefined;

function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * One PostgreSQL database per test run (`svc_test_<random>`), migrated once here and dropped at the end, so
 * runs never see each other's rows. Without SVC_TEST_POSTGRES_URL, or when that server does not answer, the
 * PostgreSQL half of every database suite is skipped, and this says so plainly.
 */
export async function setup(project: TestProject): Promise<void> {
  const adminUrl = process.env.SVC_TEST_POSTGRES_URL;
  if (!adminUrl) {
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
    project.provide('postgresUrl', null);
    const reason = error instanceof Error ? error.message : String(error);
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
  project.provide('postgresUrl', url);
  console.info(`PostgreSQL suites run on database ${name}`);
}

export async function teardown(): Promise<void> {
  if (!created) return;
  const client = new pg.Client({ connectionString: created.adminUrl });
  await client.connect();
  await client.query(`drop database if exists ${created.name} with (force)`);
  await client.end();
}
