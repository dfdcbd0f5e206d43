import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { openDatabase } from '../src/db/db.database.js';
import type { Dialect } from '../src/db/db.database.js';
import { migrateToLatest } from '../src/db/db.migrations.js';
import { seedAccount, uniqueSuffix } from './factory.js';
import { startSvcServe } from './svc-process.js';
import type { SvcProcess } from './svc-process.js';
// The types of what global-setup.ts provides (inject('postgresUrl')), for the projects that reach this file without it.
import type {} from './global-setup.js';

/** A database no other suite writes to: its URL, the SQLite file behind it, and how to remove it. */
export interface OwnDatabase {
  url: string;
  /** The SQLite file (SQLite only), to look at it directly beside a running process. */
  sqlitePath: string | undefined;
  drop(): Promise<void>;
}

/**
 * A database of its own, empty (not migrated): an SQLite file in a new temporary directory, or, given the URL of a
 * PostgreSQL server, a new database there named `<prefix>_<random>`. For what must meet no other suite's rows:
 * `svc serve` processes that deliver every pending webhook or hold locks, an e2e svc whose account has fixed names.
 *
 * @example
 * const database = await createOwnDatabase(postgresUrl, 'svc_e2e');
 * const db = openDatabase(database.url);
 * // ...
 * await db.close();
 * await database.drop();
 */
export async function createOwnDatabase(postgresUrl: string | null | undefined, prefix: string): Promise<OwnDatabase> {
  if (postgresUrl === null || postgresUrl === undefined) {
    const dir = mkdtempSync(join(tmpdir(), `${prefix.replaceAll('_', '-')}-`));
    const sqlitePath = join(dir, 'svc.db');
    return { url: `sqlite:${sqlitePath}`, sqlitePath, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), sqlitePath: undefined, drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/** What a suite of `svc serve` processes gets: its database, the account seeded in it, and a way to start processes. */
export interface ProcessContext {
  dialect: Dialect;
  url: string;
  sqlitePath: string | undefined;
  /** The API key of the account's admin (alice). */
  adminKey: string;
  deploymentId: number;
  /** The account's one dashboard: published and embeddable. */
  publicId: string;
  /** Starts `svc serve` on the database with `env` added; every process started is stopped after the suite. */
  start(env?: NodeJS.ProcessEnv): Promise<SvcProcess>;
  /** Stops every process started so far. */
  stopAll(): Promise<void>;
}

/**
 * Runs a suite of `svc serve` processes once per database dialect, each on a database of its own
 * (createOwnDatabase, prefix `svc_<name>`), migrated, with one account under `settings`: an admin (alice) and one
 * published, embeddable dashboard `<name>-<random>`; `name` is a lowercase word. The processes are stopped and the database removed after the suite.
 * PostgreSQL without SVC_TEST_POSTGRES_URL is a visibly skipped suite, as in describeEachDialect.
 *
 * @example
 * describeEachOwnDatabase('webhooks across processes', { name: 'hooks', settings: { allowPrivateWebhookUrls: true } }, (t) => {
 *   it('delivers', async () => {
 *     const server = await t().start({ SVC_WEBHOOK_DELIVERY: 'true' });
 *   });
 * });
 */
export function describeEachOwnDatabase(
  title: string,
  account: { name: string; settings: Record<string, unknown> },
  suite: (context: () => ProcessContext) => void,
): void {
  const postgresUrl = inject('postgresUrl');
  for (const dialect of ['sqlite', 'postgres'] as const satisfies readonly Dialect[]) {
    const skip = dialect === 'postgres' && postgresUrl === null;
    (skip ? describe.skip : describe)(skip ? `${title} [postgres: SKIPPED, no SVC_TEST_POSTGRES_URL]` : `${title} [${dialect}]`, () => {
      let context: ProcessContext | undefined;
      let database: OwnDatabase | undefined;
      const running: SvcProcess[] = [];

      beforeAll(async () => {
        database = await createOwnDatabase(dialect === 'sqlite' ? null : postgresUrl, `svc_${account.name}`);
        const db = openDatabase(database.url);
        try {
          await migrateToLatest(db);
          const publicId = `${account.name}-${uniqueSuffix()}`;
          const seeded = await seedAccount(db.kysely, {
            settings: account.settings,
            users: [{ ref: 'alice', role: 'admin' }],
            deployments: [{ ref: 'prod', name: 'Prod', items: [{ ref: 'wb', type: 'WORKBOOK', name: account.name, createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
          });
          const { url, sqlitePath } = database;
          context = {
            dialect, url, sqlitePath, adminKey: seeded.keys.alice!, deploymentId: seeded.refs.prod!, publicId,
            async start(env = {}) {
              const server = await startSvcServe(url, env);
              running.push(server);
              return server;
            },
            async stopAll() {
              while (running.length > 0) await running.pop()!.stop();
            },
          };
        } finally {
          await db.close();
        }
      }, 60_000);

      suite(() => {
        if (!context) throw new Error('process context used outside a test');
        return context;
      });

      // Registered after the suite's own hooks, so it runs before them (after-hooks run in reverse): the processes
      // stop before the suite closes what they talk to (a webhook receiver).
      afterAll(async () => {
        await Promise.all(running.map((server) => server.stop()));
        await database?.drop();
      });
    });
  }
}
