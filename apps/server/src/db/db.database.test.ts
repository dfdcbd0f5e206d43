import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
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
