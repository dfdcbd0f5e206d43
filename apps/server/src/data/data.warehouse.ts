import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { AppError } from '../core/core.errors.js';
import { DuckDbWarehouse } from './data.duckdb.js';
import type { DataSourceConfig } from './data.model.js';
import type { WarehouseDialect } from './data.compiler.js';

/** The rows of a query: column names, rows as arrays, at most `maxRows + 1` of them (one more tells truncation). */
export interface QueryRows {
  fields: string[];
  rows: unknown[][];
}

export interface RunOptions {
  /** Rows read at most (the compiled query has its own LIMIT; raw SQL is wrapped in one). */
  maxRows: number;
  timeoutMs: number;
}

/** A deployment's data source: read-only, every statement bounded in time and rows. */
export interface Warehouse {
  readonly dialect: WarehouseDialect;
  run(sql: string, parameters: readonly unknown[], options: RunOptions): Promise<QueryRows>;
  close(): Promise<void>;
}

/**
 * The SQLite worker: one read-only connection per child process. A query runs off the event loop, and a query
 * past its time is stopped by killing its process: better-sqlite3 cannot interrupt a statement, and a worker
 * thread that is terminated goes on running the statement in native code (a runaway query would keep a core busy
 * until the server stops). Rows cross with Node's structured clone ('advanced' serialization).
 */
const SQLITE_WORKER = `
const [driver, path] = process.argv.slice(-2);
const Database = require(driver);
const db = new Database(path, { readonly: true, fileMustExist: true });
db.pragma('query_only = ON');
const statements = new Map();
process.on('disconnect', () => process.exit(0));
process.on('message', ({ id, sql, parameters, maxRows }) => {
  try {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      if (!statement.reader) throw new Error('only statements that return rows may run');
      statement.raw(true);
      if (statements.size > 200) statements.clear();
      statements.set(sql, statement);
    }
    const rows = [];
    for (const row of statement.iterate(...parameters)) {
      for (let i = 0; i < row.length; i++) if (typeof row[i] === 'bigint') row[i] = Number(row[i]); else if (row[i] instanceof Uint8Array) row[i] = Buffer.from(row[i]).toString('base64');
      rows.push(row);
      if (rows.length > maxRows) break;
    }
    process.send({ id, fields: statement.columns().map((c) => c.name), rows });
  } catch (error) {
    process.send({ id, error: String(error && error.message || error), code: error && error.code });
  }
});
process.send({ ready: true });
`;

interface Job {
  id: number;
  sql: string;
  parameters: readonly unknown[];
  maxRows: number;
  timeoutMs: number;
  resolve(rows: QueryRows): void;
  reject(error: unknown): void;
}

const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');

type SqliteProcess = ChildProcess;

class SqliteWarehouse implements Warehouse {
  readonly dialect = 'sqlite' as const;
  private readonly idle: SqliteProcess[] = [];
  private readonly busy = new Map<SqliteProcess, { job: Job; timer: ReturnType<typeof setTimeout> }>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly path: string, private readonly size: number) {}

  private spawn(): SqliteProcess {
    const child = spawn(process.execPath, ['-e', SQLITE_WORKER, driverPath, this.path], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    child.on('message', (message: { id?: number; ready?: boolean; fields?: string[]; rows?: unknown[][]; error?: string }) => {
      if (message.ready === true) return;
      const running = this.busy.get(child);
      if (running === undefined || running.job.id !== message.id) return;
      clearTimeout(running.timer);
      this.busy.delete(child);
      this.idle.push(child);
      if (message.error !== undefined) running.job.reject(new AppError('invalid_query', `the data source refused the query: ${message.error}`));
      else running.job.resolve({ fields: message.fields!, rows: message.rows! });
      this.pump();
    });
    child.on('exit', () => {
      // Gone (killed past its time, or failed to open the file): whatever it ran fails, and a fresh one takes the next job.
      const index = this.idle.indexOf(child);
      if (index >= 0) this.idle.splice(index, 1);
      const running = this.busy.get(child);
      this.busy.delete(child);
      if (running !== undefined) {
        clearTimeout(running.timer);
        const reason = /SqliteError: (.*)/.exec(stderr)?.[1] ?? (/Error: (.*)/.exec(stderr)?.[1] ?? 'the worker stopped');
        running.job.reject(new AppError('service_unavailable', `the data source could not be opened: ${reason}`));
      }
      this.pump();
    });
    child.channel?.unref();
    child.unref();
    return child;
  }

  private workers(): number {
    return this.idle.length + this.busy.size;
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.closed) {
      const child = this.idle.pop() ?? (this.workers() < this.size ? this.spawn() : undefined);
      if (child === undefined) return;
      const job = this.queue.shift()!;
      const timer = setTimeout(() => {
        // Past its time: the process is killed with its statement, and a fresh one takes its place when needed.
        this.busy.delete(child);
        child.kill('SIGKILL');
        job.reject(new AppError('query_timeout', `the query ran longer than ${job.timeoutMs} ms and was stopped`));
        this.pump();
      }, job.timeoutMs);
      this.busy.set(child, { job, timer });
      child.send({ id: job.id, sql: job.sql, parameters: job.parameters, maxRows: job.maxRows });
    }
  }

  run(sql: string, parameters: readonly unknown[], options: RunOptions): Promise<QueryRows> {
    if (this.closed) return Promise.reject(new AppError('service_unavailable', 'the data source is closed'));
    const values = parameters.map((value) => (typeof value === 'boolean' ? (value ? 1 : 0) : value));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, sql, parameters: values, maxRows: options.maxRows, timeoutMs: options.timeoutMs, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new AppError('service_unavailable', 'the data source is closed'));
    for (const child of [...this.idle.splice(0), ...this.busy.keys()]) child.kill('SIGKILL');
  }
}

/** PostgreSQL's 64-bit integers and numerics as JavaScript numbers (aggregates; exact below 2^53). */
const numericTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    // Times as ISO 8601 instants, the same text on both dialects.
    if (oid === 1184 || oid === 1114) return (value: string) => new Date(value.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00') + (oid === 1114 ? 'Z' : '')).toISOString();
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

class PostgresWarehouse implements Warehouse {
  readonly dialect = 'postgres' as const;
  private readonly pool: pg.Pool;

  constructor(url: string, schema: string | undefined, timeoutMs: number, size: number) {
    const settings = ['-c default_transaction_read_only=on', `-c statement_timeout=${Math.round(timeoutMs)}`, '-c TimeZone=UTC'];
    if (schema !== undefined) settings.push(`-c search_path=${schema}`);
    this.pool = new pg.Pool({ connectionString: url, max: size, options: settings.join(' '), types: numericTypes, connectionTimeoutMillis: 5_000 });
    this.pool.on('error', () => undefined);
  }

  async run(sql: string, parameters: readonly unknown[], options: RunOptions): Promise<QueryRows> {
    let client: pg.PoolClient | undefined;
    try {
      client = await this.pool.connect();
      // Every statement runs in a read-only transaction (whatever a session setting says), and through the
      // extended protocol, which runs exactly one statement: nothing can be appended after a `;`.
      await client.query('BEGIN READ ONLY');
      const result = await client.query({ text: sql, values: parameters as unknown[], rowMode: 'array', queryMode: 'extended' } as pg.QueryConfig);
      await client.query('COMMIT');
      return { fields: result.fields.map((field) => field.name), rows: (result.rows as unknown[][]).slice(0, options.maxRows + 1) };
    } catch (error) {
      await client?.query('ROLLBACK').catch(() => undefined);
      const code = (error as { code?: string }).code;
      const message = error instanceof Error ? error.message : String(error);
      if (code === '57014') throw new AppError('query_timeout', `the query ran longer than ${options.timeoutMs} ms and was stopped`);
      if (code === undefined || code.startsWith('08') || code === '57P03') throw new AppError('service_unavailable', `the data source is unreachable: ${message}`);
      throw new AppError('invalid_query', `the data source refused the query: ${message}`);
    } finally {
      client?.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

export interface WarehouseSettings {
  timeoutMs: number;
  /** The demo warehouse's file, for `{ "type": "demo" }` data sources. */
  demoPath(): string;
}

/** Opens the warehouse of a data source. */
export function openWarehouse(source: DataSourceConfig, settings: WarehouseSettings): Warehouse {
  switch (source.type) {
    case 'postgres':
      return new PostgresWarehouse(source.url, source.schema, settings.timeoutMs, 4);
    case 'duckdb':
      return new DuckDbWarehouse(source, 2);
    case 'sqlite':
      return new SqliteWarehouse(source.path, 2);
    case 'demo':
      return new SqliteWarehouse(settings.demoPath(), 2);
  }
}

/** Open warehouses, one per distinct data source, shared by every request; closed with the app. */
export class WarehouseRegistry {
  private readonly open = new Map<string, Warehouse>();

  constructor(private readonly settings: WarehouseSettings) {}

  get(source: DataSourceConfig): Warehouse {
    const key = JSON.stringify(source);
    let warehouse = this.open.get(key);
    if (warehouse === undefined) {
      warehouse = openWarehouse(source, this.settings);
      this.open.set(key, warehouse);
    }
    return warehouse;
  }

  async close(): Promise<void> {
    await Promise.all([...this.open.values()].map((warehouse) => warehouse.close()));
    this.open.clear();
  }
}
