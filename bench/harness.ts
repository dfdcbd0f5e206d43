import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { cpus, totalmem } from 'node:os';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { RAISED_RATE_LIMIT_ENV } from '../apps/server/test/limits.js';

/** A server child process and the address it printed. */
export interface RunningServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Environment for a svc child whose rate limits must not shape a benchmark's load (every SVC_RATE_LIMIT_* raised). */
export const UNLIMITED_RATE_ENV = RAISED_RATE_LIMIT_ENV;

/** Starts a child process and waits for it to print `<prefix> http://host:port`. */
export function startServer(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        resolve({
          url: match[1]!,
          child,
          stop: () => new Promise((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** One GET over a kept-alive connection; resolves to status, body and elapsed milliseconds. */
export function timedGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: Buffer; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end();
  });
}

export interface LatencySummary {
  requests: number;
  p50: number;
  p99: number;
  mean: number;
}

/** p50, p99 and mean of latency samples in milliseconds. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return { requests: sorted.length, p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), mean: round(sorted.reduce((a, b) => a + b, 0) / sorted.length) };
}

/** The middle of `values` (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Sequential latency of one request: `warmup` untimed requests, then `count` timed ones. Fails on any non-200. */
export async function measureLatency(url: string, headers: Record<string, string>, count: number, warmup = 30): Promise<LatencySummary & { samples: number[] }> {
  const samples: number[] = [];
  for (let i = 0; i < warmup + count; i++) {
    const res = await timedGet(url, headers);
    if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${res.body.toString().slice(0, 300)}`);
    if (i >= warmup) samples.push(res.ms);
  }
  return { ...summarize(samples), samples };
}

/** CPU time a process has used so far (user and system, ms; Linux /proc, 10 ms ticks). */
export function processCpuMs(pid: number): number {
  // Fields after the command's closing parenthesis: state is the 3rd field, utime the 14th and stime the 15th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Throughput with autocannon (requests/s averaged over the run); fails if any answer was not 2xx. With `serverPid`,
 * also the CPU time the server spent per request (µs): on this 2-core machine the load generator shares the CPUs,
 * so requests/s moves with whatever else runs, while a server's CPU per request moves much less.
 */
export async function measureThroughput(url: string, headers: Record<string, string>, seconds: number, connections: number, serverPid?: number): Promise<{ rps: number; p50: number; p99: number; cpuMicrosPerRequest?: number }> {
  const cpuBefore = serverPid === undefined ? 0 : processCpuMs(serverPid);
  const result = await autocannon({ url, headers, duration: seconds, connections, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`autocannon on ${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const figures = { rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99 };
  if (serverPid === undefined) return figures;
  return { ...figures, cpuMicrosPerRequest: Math.round(((processCpuMs(serverPid) - cpuBefore) * 1000) / Math.max(1, result.requests.total)) };
}

/** How many requests autocannon completed in `seconds` (all of them 2xx, else it throws). */
export async function measureRequests(url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<{ requests: number }> {
  const result = await autocannon({ url, headers, duration: seconds, connections, pipelining: 1 });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`autocannon on ${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { requests: result.requests.total };
}

/** What the figures were measured on. */
export function machine(): { cpus: number; cpuModel: string; memoryGiB: number; node: string } {
  return { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version };
}

/**
 * A fresh, empty database for one benchmark run: an SQLite file in a temporary directory, or a new PostgreSQL
 * database on the server of `adminUrl`. `drop()` removes it.
 */
export async function freshDatabase(dialect: 'sqlite' | 'postgres', adminUrl: string): Promise<{ url: string; path?: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
    const path = join(dir, 'svc.db');
    return { url: `sqlite:${path}`, path, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `svc_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

export type BenchDialect = 'sqlite' | 'postgres';

/** Whether a PostgreSQL server answers at this URL (3 s at most). */
export async function postgresAnswers(adminUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

/**
 * The dialects a benchmark runs (`--dialects sqlite,postgres`), and the PostgreSQL server it makes its databases on
 * (`SVC_BENCH_POSTGRES_URL`, default the local one). PostgreSQL is dropped, and said so, when it does not answer.
 */
export async function benchDialects(list: string): Promise<{ dialects: BenchDialect[]; adminUrl: string }> {
  const adminUrl = process.env.SVC_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const dialects: BenchDialect[] = [];
  for (const dialect of list.split(',') as BenchDialect[]) {
    if (dialect === 'postgres' && !(await postgresAnswers(adminUrl))) {
      process.stderr.write(`PostgreSQL does not answer at ${adminUrl}: its half of the benchmark is SKIPPED\n`);
      continue;
    }
    dialects.push(dialect);
  }
  return { dialects, adminUrl };
}

/** svc's CLI, as `npm start` runs it (built JavaScript, not the TypeScript source). */
export const SVC_BIN = new URL('../apps/server/bin/svc.js', import.meta.url).pathname;

/** `svc serve` on a database, logging at `warn` with every rate limit raised, plus `env`. */
export function startSvc(databaseUrl: string, env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  return startServer(process.execPath, [SVC_BIN, 'serve', '--db', databaseUrl, '--port', '0'], { SVC_LOG_LEVEL: 'warn', ...UNLIMITED_RATE_ENV, ...env });
}

/** Runs `body` on a fresh database (freshDatabase), dropped however `body` ends. */
export async function withFreshDatabase<T>(dialect: BenchDialect, adminUrl: string, body: (database: Awaited<ReturnType<typeof freshDatabase>>) => Promise<T>): Promise<T> {
  const database = await freshDatabase(dialect, adminUrl);
  try {
    return await body(database);
  } finally {
    await database.drop();
  }
}

/** Runs `body` with servers that are started now, each stopped however `body` ends. */
export async function withServers<S extends Array<Promise<RunningServer>>, T>(starts: [...S], body: (servers: { [K in keyof S]: RunningServer }) => Promise<T>): Promise<T> {
  const settled = await Promise.allSettled(starts);
  const servers = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  try {
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return await body(servers as { [K in keyof S]: RunningServer });
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

/**
 * A benchmark's flags: `--dialects` and the others it names, each with its default (as text, as typed), then
 * the dialects that can run (benchDialects).
 *
 * @example
 * const { dialects, adminUrl, flags } = await benchFlags(args, { dialects: 'sqlite,postgres', seconds: '10' });
 */
export async function benchFlags<F extends string>(args: string[], defaults: { dialects: string } & Record<F, string>): Promise<{ dialects: BenchDialect[]; adminUrl: string; flags: Record<F | 'dialects', string> }> {
  const options = Object.fromEntries(Object.entries(defaults).map(([name, fallback]) => [name, { type: 'string' as const, default: fallback as string }]));
  const { values } = parseArgs({ args, options });
  const flags = values as Record<F | 'dialects', string>;
  return { ...(await benchDialects(flags.dialects)), flags };
}

/** Writes a benchmark's raw figures to `bench/results/<name>.json`; the path written. */
export function writeResults(name: string, report: unknown): string {
  const path = new URL(`./results/${name}.json`, import.meta.url).pathname;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
  return path;
}
