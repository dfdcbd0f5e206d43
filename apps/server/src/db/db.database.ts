import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { readSetting } from '../core/core.config.js';
import type { Database } from './db.schema.js';

export type Dialect = 'sqlite' | 'postgres';

/** An open database: the Kysely instance, which dialect it speaks, its change feed, and how to close it. */
export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  changes: ChangeFeed;
  /** Wake-ups when other connections (or processes) commit: see `Notifications`. */
  notifications: Notifications;
  /** Connections of the pool: open, idle, and requests waiting for one (SQLite: its one connection). */
  poolStats(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

/**
 * Tells an in-memory cache whether the credentials it holds may have changed (docs/decisions.md, "Credential
 * cache"). Take a `mark()` before reading; what was read stays good while `unchangedSince(mark, accountId)`.
 *
 * - SQLite: the mark is the connection's own row changes (`total_changes()`, read on every call, 0.1 µs: exact)
 *   and the commits of every other connection or process (`PRAGMA data_version`, which opens a read transaction:
 *   3 µs idle, 10-15 µs under load; re-read when SQLITE_FOREIGN_COMMITS_MS has passed since the last read). So
 *   this process's writes are seen on its next request, another process's within that bound.
 * - PostgreSQL: triggers on accounts, users and api_keys notify `svc_credentials` with the account id on commit;
 *   a dedicated connection listens. The mark is a notification sequence number plus an epoch that moves with
 *   every statement this process writes and every (re)connection. `mark()` is undefined while the listening
 *   connection is down (it reconnects on a later call, at most once a second): then nothing may be cached.
 */
export interface ChangeFeed {
  mark(): ChangeMark | undefined;
  unchangedSince(mark: ChangeMark, accountId: number): boolean;
  /**
   * Resolves once the feed has seen a change of the account after `since` (a mark taken before the write), or
   * after `timeoutMs`; true when it was seen. SQLite sees every commit at once; on PostgreSQL this waits for the
   * write's own notification, which the server sends to every listening process at the same moment.
   */
  awaitAccountChange(accountId: number, since: ChangeMark | undefined, timeoutMs: number): Promise<boolean>;
}

export type ChangeMark = string | { epoch: number; sequence: number };

/** What a listener of a notification channel is told. */
export interface NotificationHandlers {
  /** A notification on the channel, committed by some process (PostgreSQL only), with its payload. */
  notified(payload: string): void;
  /**
   * Notifications may have been missed, or the database cannot name what changed: read again whatever the
   * notifications would have pointed at. PostgreSQL: once the listening connection is (re)established (and so once
   * soon after `listen`). SQLite, which has no notifications: whenever any connection or process may have committed,
   * polled every SQLITE_COMMIT_POLL_MS while anyone listens.
   */
  resync(): void;
}

/**
 * Wake-ups across processes. On PostgreSQL a channel is LISTENed to on the change feed's dedicated connection (a
 * trigger NOTIFYs at commit, to every listening process); on SQLite commits are noticed by polling the commit
 * counters of the change feed. Handlers are called synchronously: they should only schedule work.
 */
export interface Notifications {
  /** Listens to `channel` (lowercase letters and `_`); returns what stops listening. */
  listen(channel: string, handlers: NotificationHandlers): () => void;
}

/**
 * How stale, at most, an SQLite process's view of other processes' commits may be (see ChangeFeed). A write that
 * must be seen by every process on its next request waits this long (twice, for margin) before it answers:
 * `awaitAccountChange` on SQLite.
 */
export const SQLITE_FOREIGN_COMMITS_MS = 1;

/** The notification channel the PostgreSQL credential triggers send on (migration 0002). */
export const CREDENTIAL_CHANNEL = 'svc_credentials';

/** The notification channel the PostgreSQL comment triggers send on (migration 0008): `account:tenant:dashboard`. */
export const COMMENT_EVENT_CHANNEL = 'svc_comment_events';

/** The notification channel of webhook deliveries that became due now (migration 0012's triggers): the account id. */
export const WEBHOOK_DELIVERY_CHANNEL = 'svc_webhook_deliveries';

/** How often SQLite's listeners look for commits (a counter read while nothing changed: about 3 µs). */
export const SQLITE_COMMIT_POLL_MS = 25;

/** The default database: an embedded SQLite file under ./data. */
export const DEFAULT_DATABASE_URL = readSetting('SVC_DATABASE_URL', {});

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

/**
 * SQLite's page cache in MiB, from SVC_SQLITE_CACHE_MB (default 8). With reads through mmap it holds the pages this
 * process wrote and the pages whose newest version is still in the WAL (at most 1,000 pages, 4 MiB, between
 * checkpoints). It fills as pages are written and then keeps its size: at 64 MiB, that filling was the anonymous
 * memory growth of the soak benchmark (bench/README.md "soak").
 */
export function sqliteCacheMiB(env?: NodeJS.ProcessEnv): number {
  return readSetting('SVC_SQLITE_CACHE_MB', env);
}

function openSqlite(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL under WAL keeps every committed transaction across a process crash; only power loss can lose the last ones.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Reads go through mmap, without a system call per page; the page cache (SVC_SQLITE_CACHE_MB) holds the pages
  // this process wrote, which it copies out of the map, and every page when mmap is unavailable.
  sqlite.pragma(`cache_size = ${-1024 * sqliteCacheMiB()}`);
  sqlite.pragma('mmap_size = 1073741824');
  const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  // `PRAGMA data_version` opens a read transaction (~3 µs); `total_changes()` is a counter read (~0.1 µs).
  const othersCommits = sqlite.prepare('pragma data_version').pluck(true);
  const ownChanges = sqlite.prepare('select total_changes()').pluck(true);
  let others = 0;
  let othersReadAt = Number.NEGATIVE_INFINITY;
  const mark = () => {
    if (!sqlite.open) return undefined;
    const now = performance.now();
    if (now - othersReadAt >= SQLITE_FOREIGN_COMMITS_MS) {
      others = othersCommits.get() as number;
      othersReadAt = now;
    }
    return `${ownChanges.get() as number}.${others}`;
  };
  const notifications = new CommitPoll(mark);
  return {
    kysely,
    dialect: 'sqlite',
    changes: {
      mark,
      unchangedSince: (previous) => mark() === previous,
      awaitAccountChange: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 2 * SQLITE_FOREIGN_COMMITS_MS)),
    },
    notifications,
    poolStats: () => ({ total: sqlite.open ? 1 : 0, idle: sqlite.open ? 1 : 0, waiting: 0 }),
    close: () => {
      notifications.close();
      return kysely.destroy();
    },
  };
}

/**
 * SQLite's notifications: it has none, so while anyone listens the change feed's mark (this connection's changes and
 * every other connection's commits) is read every SQLITE_COMMIT_POLL_MS, and a move resyncs every listener.
 */
class CommitPoll implements Notifications {
  #mark: () => ChangeMark | undefined;
  #handlers = new Set<NotificationHandlers>();
  #timer: NodeJS.Timeout | undefined;
  #last: ChangeMark | undefined;

  constructor(mark: () => ChangeMark | undefined) {
    this.#mark = mark;
  }

  listen(_channel: string, handlers: NotificationHandlers): () => void {
    this.#handlers.add(handlers);
    if (this.#timer === undefined) {
      this.#last = this.#mark();
      this.#timer = setInterval(() => this.#poll(), SQLITE_COMMIT_POLL_MS);
      this.#timer.unref();
    }
    queueMicrotask(() => handlers.resync());
    return () => {
      this.#handlers.delete(handlers);
      if (this.#handlers.size === 0) this.close();
    };
  }

  #poll(): void {
    const mark = this.#mark();
    if (mark === undefined || mark === this.#last) return;
    this.#last = mark;
    for (const handlers of this.#handlers) handlers.resync();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query anew; preparing (parsing and planning) costs as much as running a
 * small indexed query. This keeps the most recently used prepared statements by SQL text. Reuse is safe: the
 * driver runs one query at a time on its single connection and never leaves a statement mid-iteration.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDatabase.Database {
  const cache = new Map<string, SqliteDatabase.Statement>();
  const prepare = (text: string): SqliteDatabase.Statement => {
    // Kysely opens every transaction with a deferred `begin`. A transaction that reads first and writes later
    // then has to upgrade its lock, and SQLite refuses that at once (SQLITE_BUSY, no busy wait) when another
    // process committed meanwhile. svc's transactions are writes: each takes the write lock as it begins, and
    // waits for it under busy_timeout.
    const source = text === 'begin' ? 'begin immediate' : text;
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
  // An idle connection that breaks (the server restarted, an operator or a proxy cut it) is dropped by the pool and
  // the next query opens a new one; the error is also emitted on the pool, and without a listener it would end svc.
  pool.on('error', () => undefined);
  const listener = new CredentialListener(url);
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withLocalWriteNotes(pool, listener) }) });
  return {
    kysely,
    dialect: 'postgres',
    changes: listener,
    notifications: listener,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: async () => {
      await listener.close();
      await kysely.destroy();
    },
  };
}

/**
 * This process's own writes move the change feed as soon as each statement (and so each COMMIT) completes,
 * before the notification comes back: a process always reads its own writes. Only what Kysely's driver uses of
 * the pool is wrapped: `connect()`, and on the client `query(text, values)` and `release()`.
 */
function withLocalWriteNotes(pool: pg.Pool, listener: CredentialListener): pg.Pool {
  const connect = async () => {
    const client = await pool.connect();
    return {
      query: async (text: string, values?: unknown[]) => {
        try {
          const result = await client.query(text, values);
          if (result.command !== 'SELECT') listener.noteLocalWrite();
          return result;
        } catch (error) {
          listener.noteLocalWrite();
          throw error;
        }
      },
      release: (error?: Error | boolean) => client.release(error),
    };
  };
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property === 'connect') return connect;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * A dedicated connection listening on CREDENTIAL_CHANNEL, opened on the first `mark()`, and on the channels of
 * `listen` (opened by the first `listen`, and re-opened a second after it is lost while anyone listens). A
 * credential notification names the account whose credentials changed; the epoch moves for everything else (this
 * process's own writes, whose account is not known here, and every loss or gain of the connection).
 */
class CredentialListener implements ChangeFeed, Notifications {
  #url: string;
  #client: pg.Client | undefined;
  #listening = false;
  #closed = false;
  #epoch = 0;
  #sequence = 0;
  #lastChange = new Map<number, number>();
  #lastAttempt = 0;
  #waiters = new Set<{ accountId: number; resolve: (seen: boolean) => void }>();
  #channels = new Map<string, Set<NotificationHandlers>>();
  /** The channels LISTENed to on the current connection. */
  #listened = new Set<string>();
  #reconnect: NodeJS.Timeout | undefined;

  constructor(url: string) {
    this.#url = url;
  }

  mark(): ChangeMark | undefined {
    if (this.#listening) return { epoch: this.#epoch, sequence: this.#sequence };
    if (!this.#closed && this.#client === undefined && Date.now() - this.#lastAttempt >= 1000) void this.#connect();
    return undefined;
  }

  unchangedSince(mark: ChangeMark, accountId: number): boolean {
    if (!this.#listening || typeof mark === 'string' || mark.epoch !== this.#epoch) return false;
    return (this.#lastChange.get(accountId) ?? -1) <= mark.sequence;
  }

  awaitAccountChange(accountId: number, since: ChangeMark | undefined, timeoutMs: number): Promise<boolean> {
    if (!this.#listening || since === undefined || typeof since === 'string') return Promise.resolve(false);
    if ((this.#lastChange.get(accountId) ?? -1) > since.sequence) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = { accountId, resolve: (seen: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        resolve(seen);
      } };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  listen(channel: string, handlers: NotificationHandlers): () => void {
    if (!/^[a-z_]+$/.test(channel) || channel === CREDENTIAL_CHANNEL) throw new Error(`cannot listen to channel ${JSON.stringify(channel)}`);
    let set = this.#channels.get(channel);
    if (set === undefined) this.#channels.set(channel, (set = new Set()));
    set.add(handlers);
    const client = this.#client;
    if (this.#listening && client !== undefined) {
      // Once LISTEN is in effect, nothing committed from then on is missed; what came before is read on resync.
      const fresh = !this.#listened.has(channel);
      this.#listened.add(channel);
      (fresh ? client.query(`LISTEN ${channel}`) : Promise.resolve()).then(() => handlers.resync(), () => undefined);
    } else if (!this.#closed && client === undefined) {
      void this.#connect();
    }
    return () => {
      set.delete(handlers);
    };
  }

  /** A statement of this process's own completed (or failed) that may have written. */
  noteLocalWrite(): void {
    this.#epoch++;
  }

  #noteNotification(payload: string | undefined): void {
    this.#sequence++;
    const accountId = Number(payload);
    const everyAccount = payload === undefined || payload === '' || !Number.isInteger(accountId);
    if (everyAccount) this.#epoch++;
    else this.#lastChange.set(accountId, this.#sequence);
    for (const waiter of this.#waiters) if (everyAccount || waiter.accountId === accountId) waiter.resolve(true);
  }

  #dispatch(channel: string, payload: string | undefined): void {
    for (const handlers of this.#channels.get(channel) ?? []) handlers.notified(payload ?? '');
  }

  #isListenedTo(): boolean {
    for (const set of this.#channels.values()) if (set.size > 0) return true;
    return false;
  }

  async #connect(): Promise<void> {
    this.#lastAttempt = Date.now();
    const client = new pg.Client({ connectionString: this.#url, application_name: 'svc-credential-listener' });
    this.#client = client;
    const lost = () => {
      if (this.#client !== client) return;
      this.#listening = false;
      this.#client = undefined;
      this.#epoch++;
      void client.end().catch(() => undefined);
      // Listeners wait for their notifications: try again in a second (credentials alone wait for the next mark()).
      if (!this.#closed && this.#isListenedTo() && this.#reconnect === undefined) {
        this.#reconnect = setTimeout(() => {
          this.#reconnect = undefined;
          if (!this.#closed && this.#client === undefined) void this.#connect();
        }, 1000);
        this.#reconnect.unref();
      }
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.channel === CREDENTIAL_CHANNEL) this.#noteNotification(message.payload);
      else this.#dispatch(message.channel, message.payload);
    });
    try {
      await client.connect();
      this.#listened = new Set();
      // Channels first listened to while a LISTEN was under way are listened to in the next round.
      for (let channels = [CREDENTIAL_CHANNEL, ...this.#channels.keys()]; channels.length > 0;
        channels = [...this.#channels.keys()].filter((channel) => !this.#listened.has(channel))) {
        await client.query(channels.map((channel) => `LISTEN ${channel}`).join('; '));
        for (const channel of channels) this.#listened.add(channel);
      }
      if (this.#client !== client || this.#closed) return;
      // What changed while nobody listened is unknown: nothing held from before may be trusted.
      this.#epoch++;
      this.#lastChange.clear();
      this.#listening = true;
      for (const set of this.#channels.values()) for (const handlers of set) handlers.resync();
    } catch {
      lost();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listening = false;
    clearTimeout(this.#reconnect);
    for (const waiter of this.#waiters) waiter.resolve(false);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }
}

/** Node's codes for a connection that could not be made or was cut. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a failed query failed because the database could not be reached or was going away, not because of the
 * query: a connection refused or cut, PostgreSQL's connection exceptions (class 08), a shutdown or a restart
 * (57P01-57P03), node-postgres's word for a connection that ended, or SQLite still locked after its busy timeout.
 * A request that meets one is answered 503 (try again), not 500.
 */
/** A write refused by a unique constraint (two writers claiming one name), on either database. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || (typeof e.message === 'string' && e.message.includes('UNIQUE constraint failed'));
}

/** A write that named a row another transaction deleted meanwhile (PostgreSQL 23503, SQLite's FOREIGN KEY constraint). */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return e.code === '23503' || e.code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || (typeof e.message === 'string' && e.message.includes('FOREIGN KEY constraint failed'));
}

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (CONNECTION_CODES.has(code) || code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return true;
    if (code === 'SQLITE_BUSY') return true;
  }
  return error.message.startsWith('Connection terminated') || error.message === 'timeout exceeded when trying to connect';
}

/** True when the database answers a trivial query. */
export async function isDatabaseReachable(db: Db): Promise<boolean> {
  return (await whyDatabaseIsUnreachable(db)) === undefined;
}

/**
 * Why the database does not answer a trivial query (the driver's message), or undefined when it does.
 *
 * @example
 * const reason = await whyDatabaseIsUnreachable(db); // 'connect ECONNREFUSED 127.0.0.1:5432'
 */
export async function whyDatabaseIsUnreachable(db: Db): Promise<string | undefined> {
  try {
    await sql`select 1`.execute(db.kysely);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
