import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './db.schema.js';

export type Dialect = 'sqlite' | 'postgres';

/** An open database: the Kysely instance, which dialect it speaks, and how to close it. */
export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

/** The default database: an embedded SQLite file under ./data. */
export const DEFAULT_DATABASE_URL = 'sqlite:./data/svc.db';

/**
 * Opens `sqlite:PATH` (WAL, the default) or `postgres://...`.
 *
 * @example
 * const db = openDatabase('sqlite:./data/svc.db');
 * await migrateToLatest(db);
 */
export function openDatabase(url: string): Db {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return openPostgres(url);
  }
  if (url.startsWith('sqlite:')) {
    return openSqlite(url.slice('sqlite:'.length));
  }
  throw new Error(`unsupported database URL (expected sqlite:PATH or postgres://...): ${describeDatabaseUrl(url)}`);
}

/** A database URL with any password removed, safe to print. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.startsWith('sqlite:') ? url : '(unparseable URL)';
  }
}

function openSqlite(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL under WAL keeps every committed transaction across a process crash; only power loss can lose the last ones.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // SQLite's default page cache is 2 MiB; listings touch pages all over a large file. A 64 MiB cache and reads
  // through mmap keep the hot part of a million-item workspace in memory without a system call per page.
  sqlite.pragma('cache_size = -65536');
  sqlite.pragma('mmap_size = 1073741824');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return {
    kysely,
    dialect: 'sqlite',
    close: () => kysely.destroy(),
  };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query anew; preparing (parsing and planning) costs as much as running a
 * small indexed query. This keeps the most recently used prepared statements by SQL text. Reuse is safe: the
 * driver runs one query at a time on its single connection and never leaves a statement mid-iteration.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDatabase.Database {
  const cache = new Map<string, SqliteDatabase.Statement>();
  const prepare = (source: string): SqliteDatabase.Statement => {
    let statement = cache.get(source);
    if (statement !== undefined) {
      cache.delete(source);
    } else {
      statement = sqlite.prepare(source);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(source, statement);
    return statement;
  };
  return new Proxy(sqlite, {
    get(target, property, receiver) {
      if (property === 'prepare') return prepare;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function openPostgres(url: string): Db {
  // int8 (count(*), sums) as JS numbers: our counts stay far below 2^53.
  pg.types.setTypeParser(20, (value: string) => Number(value));
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kysely,
    dialect: 'postgres',
    close: () => kysely.destroy(),
  };
}

/** True when the database answers a trivial query. */
export async function isDatabaseReachable(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db.kysely);
    return true;
  } catch {
    return false;
  }
}
