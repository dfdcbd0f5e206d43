import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openDatabase, sqliteCacheMiB } from './db.database.js';

/** How svc opens SQLite (docs/operations.md "Configuration"): WAL, reads through mmap, a bounded page cache. */
describe('SQLite settings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-db-settings-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const pragma = async (url: string, name: string, env?: string) => {
    const before = process.env.SVC_SQLITE_CACHE_MB;
    if (env === undefined) delete process.env.SVC_SQLITE_CACHE_MB;
    else process.env.SVC_SQLITE_CACHE_MB = env;
    try {
      const db = openDatabase(url);
      try {
        const { rows } = await sql<Record<string, unknown>>`${sql.raw(`pragma ${name}`)}`.execute(db.kysely);
        return Object.values(rows[0]!)[0];
      } finally {
        await db.close();
      }
    } finally {
      if (before === undefined) delete process.env.SVC_SQLITE_CACHE_MB;
      else process.env.SVC_SQLITE_CACHE_MB = before;
    }
  };

  it('opens in WAL mode with mmap reads and an 8 MiB page cache by default, SVC_SQLITE_CACHE_MB otherwise', async () => {
    const url = `sqlite:${join(dir, 'a.db')}`;
    expect(await pragma(url, 'journal_mode')).toBe('wal');
    expect(await pragma(url, 'cache_size')).toBe(-8 * 1024);
    expect(await pragma(url, 'cache_size', '48')).toBe(-48 * 1024);
    expect(Number(await pragma(url, 'mmap_size'))).toBeGreaterThan(0);
  });

  it('refuses a bad SVC_SQLITE_CACHE_MB by name', () => {
    expect(sqliteCacheMiB({})).toBe(8);
    expect(sqliteCacheMiB({ SVC_SQLITE_CACHE_MB: '32' })).toBe(32);
    for (const bad of ['0', '-4', '1.5', 'lots']) {
      expect(() => sqliteCacheMiB({ SVC_SQLITE_CACHE_MB: bad })).toThrow(new RegExp(`SVC_SQLITE_CACHE_MB must be .*${bad}`));
    }
  });
});

/**
 * A pooled PostgreSQL connection that breaks while idle (the server restarted, an operator or a proxy cut it) must not
 * end svc: node-postgres emits the error on the pool, and a pool without a listener throws it out of the process.
 * Here the backend of svc's own idle connection is terminated from another connection, as `pg_terminate_backend` or
 * a restart does; the next query gets a new connection.
 */
const postgresUrl = inject('postgresUrl');
(postgresUrl === null ? describe.skip : describe)(`a PostgreSQL connection lost while idle${postgresUrl === null ? ' [postgres: SKIPPED, no SVC_TEST_POSTGRES_URL]' : ''}`, () => {
  it('is dropped from the pool without ending the process, and the next query opens a new one', async () => {
    const db = openDatabase(postgresUrl!);
    const admin = new pg.Client({ connectionString: postgresUrl! });
    await admin.connect();
    const uncaught: unknown[] = [];
    const record = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', record);
    try {
      const backend = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db.kysely)).rows[0]!.pid;
      const before = await backend();
      expect((await admin.query('select pg_terminate_backend($1) as done', [before])).rows[0].done).toBe(true);
      // The idle connection hears of it (FATAL 57P01) and closes.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(uncaught).toEqual([]);
      const after = await backend();
      expect(after).not.toBe(before);
      expect(db.poolStats().total).toBe(1);
    } finally {
      process.off('uncaughtException', record);
      await admin.end();
      await db.close();
    }
  });
});
