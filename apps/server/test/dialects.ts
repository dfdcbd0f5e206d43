import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { buildApp } from '../src/app.js';
import { testConfig } from './config.js';
import { openDatabase } from '../src/db/db.database.js';
import type { Db, Dialect } from '../src/db/db.database.js';
import { migrateToLatest } from '../src/db/db.migrations.js';

/** What a database suite gets: the app over a real database of one dialect. */
export interface DialectContext {
  dialect: Dialect;
  /** The database URL, to open a second connection (or a second app) on the same database. */
  url: string;
  db: Db;
  app: FastifyInstance;
}

/**
 * Runs a suite once per database dialect against real engines (STYLE.md, after Kysely's test suite): SQLite in a
 * fresh WAL file, and PostgreSQL in this run's database when one is available, else a visibly skipped suite.
 *
 * @example
 * describeEachDialect('workspace listing', (t) => {
 *   it('answers', async () => expect((await t().app.inject({ url: '/healthz' })).statusCode).toBe(200));
 * });
 */
export function describeEachDialect(name: string, suite: (context: () => DialectContext) => void): void {
  const postgresUrl = inject('postgresUrl');
  for (const dialect of ['sqlite', 'postgres'] as const) {
    const skip = dialect === 'postgres' && postgresUrl === null;
    const title = skip ? `${name} [postgres: SKIPPED, no SVC_TEST_POSTGRES_URL]` : `${name} [${dialect}]`;
    (skip ? describe.skip : describe)(title, () => {
      let context: DialectContext | undefined;
      let dir: string | undefined;
      beforeAll(async () => {
        let url: string;
        if (dialect === 'sqlite') {
          dir = mkdtempSync(join(tmpdir(), 'svc-test-'));
          url = `sqlite:${join(dir, 'svc.db')}`;
        } else {
          url = postgresUrl!;
        }
        const db = openDatabase(url);
        if (dialect === 'sqlite') await migrateToLatest(db);
        const app = await buildApp(testConfig(), { db });
        context = { dialect, url, db, app };
      });
      afterAll(async () => {
        await context?.app.close();
        await context?.db.close();
        if (dir) rmSync(dir, { recursive: true, force: true });
      });
      suite(() => {
        if (!context) throw new Error('dialect context used outside a test');
        return context;
      });
    });
  }
}
