import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AppError } from '../../core/core.errors.js';
import type { QueryRows, RunOptions, Warehouse } from './warehouse.js';

interface Job {
  id: number;
  sql: string;
  parameters: readonly unknown[];
  maxRows: number;
  timeoutMs: number;
  resolve(rows: QueryRows): void;
  reject(error: unknown): void;
}

/** The worker script: beside this module, in src/ (tests) and in dist/ alike (tsc copies it: allowJs). */
const WORKER = fileURLToPath(new URL('./warehouse.sqlite-worker.cjs', import.meta.url));

type SqliteProcess = ChildProcess;

/**
 * A SQLite data source: one read-only connection per child process (warehouse.sqlite-worker.cjs). A query runs off
 * the event loop, and a query past its time is stopped by killing its process: better-sqlite3 cannot interrupt a
 * statement, and a worker thread that is terminated goes on running the statement in native code (a runaway query
 * would keep a core busy until the server stops).
 */
export class SqliteWarehouse implements Warehouse {
  readonly dialect = 'sqlite' as const;
  private readonly idle: SqliteProcess[] = [];
  private readonly busy = new Map<SqliteProcess, { job: Job; timer: ReturnType<typeof setTimeout> }>();
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly path: string, private readonly size: number) {}

  private spawn(): SqliteProcess {
    const child = spawn(process.execPath, [WORKER, this.path], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
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
