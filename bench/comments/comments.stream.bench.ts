import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { importFile } from '../../apps/server/src/import/import.js';
import { openDatabase } from '../../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../../apps/server/src/db/db.migrations.js';
import { benchFlags, machine, median, startSvc, summarize, withFreshDatabase, withServers, writeResults } from '../harness.js';
import type { BenchDialect, LatencySummary, RunningServer } from '../harness.js';

const ADMIN_KEY = 'svc_bench_streams_admin_0001';
const PUBLIC_ID = 'streams';
const TENANT = 'customer-0';

/**
 * The server's environment for this bench, on top of startSvc's (every SVC_RATE_LIMIT_* raised, so that minting a
 * thousand sessions and opening a thousand streams is not throttled). Each viewer holds one stream on one session,
 * so SVC_COMMENT_STREAMS_PER_SESSION keeps its default (5). A heartbeat of a minute keeps heartbeats out of the
 * measured window; the idle timeout above it keeps idle streams open.
 */
export const STREAM_BENCH_ENV: Record<string, string> = {
  SVC_COMMENT_STREAM_HEARTBEAT_MS: '15000',
  SVC_IDLE_TIMEOUT_MS: '120000',
  SVC_METRICS_TOKEN: 'bench-metrics-token',
};

/**
 * The server's retained JavaScript heap: SIGUSR2 makes it write a heap snapshot (`--heapsnapshot-signal`), which
 * V8 precedes with a full collection; the heap in use read from /metrics right after is what is still referenced.
 * Steadier than RSS, which moves with whether V8 grew its heap. The snapshot is deleted once written.
 */
async function retainedHeap(pid: number, metricsUrl: string, dir: string): Promise<number> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 60_000;
  let written: string | undefined;
  let size = -1;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    written ??= readdirSync(dir).find((name) => !before.has(name) && name.endsWith('.heapsnapshot'));
    if (written === undefined) continue;
    const now = statSync(join(dir, written)).size;
    if (now > 0 && now === size) break;
    size = now;
  }
  if (written === undefined) throw new Error('the server wrote no heap snapshot on SIGUSR2');
  rmSync(join(dir, written), { force: true });
  const scraped = await (await fetch(metricsUrl, { headers: { authorization: `Bearer ${STREAM_BENCH_ENV.SVC_METRICS_TOKEN}` } })).text();
  const line = scraped.split('\n').find((l) => l.startsWith('svc_nodejs_heap_size_used_bytes '));
  if (line === undefined) throw new Error('no svc_nodejs_heap_size_used_bytes in /metrics');
  return Number(line.split(' ').pop());
}

/** What one dialect measured. */
export interface StreamBenchResult {
  dialect: BenchDialect;
  streams: number;
  posts: number;
  /** Time to open every stream (to its `stream.ready`), `concurrency` at a time. */
  openMs: number;
  /** From the start of each POST to each stream's receipt of its `comment.created` (ms): goal p99 ≤ 250. */
  fanOutMs: LatencySummary;
  /** The slowest stream of each post (ms), p50 and p99 over the posts. */
  lastStreamMs: { p50: number; p99: number };
  /** The POST's own answer time (ms, p50). */
  postMs: number;
  /**
   * The server's resident memory (MiB): idle before any stream, with every stream open the first time, idle again
   * once they all closed, with every stream open again (the measured run), and after the posts.
   */
  rssMiB: { coldIdle: number; coldWithStreams: number; idle: number; withStreams: number; afterPosts: number };
  /** The retained JavaScript heap (after a full collection) with the streams open, minus idle, per stream: KiB. */
  retainedKibPerStream: number;
  /**
   * (RSS with the streams - RSS idle) / streams, KiB, for the second opening: what holding a stream costs once the
   * heap has grown for the load and the sessions are known (goal ≤ 20).
   */
  kibPerStream: number;
  /** The same for the first opening: the stream, plus the heap's growth for the burst and each session's first use. */
  kibPerStreamCold: number;
  /** Streams the server ended during the run (none expected). */
  ended: number;
}

/** The server process's resident set (bytes), from /proc. */
function rssBytes(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (line === null) throw new Error(`no VmRSS for ${pid}`);
  return Number(line[1]) * 1024;
}

/** The median of `count` RSS samples `everyMs` apart: one sample may land before or after a collection. */
async function settledRss(pid: number, count = 9, everyMs = 250): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    samples.push(rssBytes(pid));
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return median(samples);
}

async function postJson<T>(url: string, body: unknown, headers: Record<string, string>): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const json = (await res.json()) as T;
  if (!res.ok) throw new Error(`POST ${url} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

/** Mints and exchanges one session per viewer (`v0`...), `concurrency` at a time; their embed tokens. */
async function mintTokens(server: RunningServer, deploymentId: number, count: number, concurrency = 16): Promise<string[]> {
  const tokens: string[] = new Array<string>(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next++;
      const { sessionId } = await postJson<{ sessionId: string }>(`${server.url}/api/v1/embed/generate-session`,
        { deploymentId, externalId: `v${index}`, embedTenantName: TENANT }, { authorization: `Bearer ${ADMIN_KEY}` });
      tokens[index] = (await postJson<{ token: string }>(`${server.url}/api/v1/embed/session/token`, { sessionId }, {})).token;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return tokens;
}

/** The listening client (comments.stream.client.mjs) on a worker thread, driven by messages. */
class StreamClient {
  #worker: Worker;
  #waiters = new Map<string, (message: Record<string, unknown>) => void>();
  #received = new Map<number, () => void>();
  /** Comments every stream has; the worker may say so before the poster has the POST's answer. */
  #complete = new Set<number>();
  #failure: Error | undefined;

  constructor(url: string, tokens: string[], concurrency: number) {
    this.#worker = new Worker(new URL('./comments.stream.client.mjs', import.meta.url), { workerData: { url, tokens, concurrency } });
    this.#worker.on('message', (message: Record<string, unknown>) => {
      if (message.type === 'received') {
        this.#complete.add(message.commentId as number);
        this.#received.get(message.commentId as number)?.();
        return;
      }
      if (message.type === 'error') this.#failure = new Error(message.message as string);
      const waiter = this.#waiters.get(message.type === 'error' ? [...this.#waiters.keys()][0]! : message.type as string);
      waiter?.(message);
    });
    this.#worker.on('error', (error) => {
      this.#failure = error;
      for (const waiter of this.#waiters.values()) waiter({ type: 'error' });
    });
  }

  #ask(type: string, answer: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.#waiters.set(answer, (message) => {
        this.#waiters.delete(answer);
        if (message.type === 'error') reject(this.#failure ?? new Error('the stream client failed'));
        else resolve(message);
      });
      this.#worker.postMessage({ type });
    });
  }

  /** Opens every stream; resolves (ms taken) when each has sent `stream.ready`. */
  async open(): Promise<number> {
    return (await this.#ask('open', 'opened')).ms as number;
  }

  /** Resolves once every stream has received the comment `commentId`; rejects after `timeoutMs`. */
  receivedByAll(commentId: number, timeoutMs: number): { done: Promise<void>; cancel(): void } {
    let cancel = () => undefined as void;
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`comment ${commentId} did not reach every stream in ${timeoutMs} ms`)), timeoutMs);
      const received = () => {
        clearTimeout(timer);
        resolve();
      };
      if (this.#complete.has(commentId)) received();
      else this.#received.set(commentId, received);
      cancel = () => clearTimeout(timer);
    });
    return { done, cancel };
  }

  async report(): Promise<{ received: Map<number, number[]>; ended: number }> {
    const message = await this.#ask('report', 'report');
    return { received: new Map(message.received as Array<[number, number[]]>), ended: message.ended as number };
  }

  async close(): Promise<void> {
    this.#worker.postMessage({ type: 'close' });
    await this.#worker.terminate();
  }
}

const round = (n: number, places = 1) => Math.round(n * 10 ** places) / 10 ** places;
const MiB = (bytes: number) => round(bytes / 2 ** 20);

async function runDialect(dialect: BenchDialect, adminUrl: string, options: { streams: number; posts: number; gapMs: number; concurrency: number }): Promise<StreamBenchResult> {
  return withFreshDatabase(dialect, adminUrl, async (database) => {
    const db = openDatabase(database.url);
    await migrateToLatest(db);
    await importFile(db.kysely, { accounts: [{
      ref: 'acme', name: 'Acme', tenantName: 'acme', settings: { allowEmbedComments: true },
      users: [{ ref: 'admin', email: 'admin@acme.test', role: 'admin', apiKeys: [ADMIN_KEY] }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [
        { ref: 'wb', type: 'WORKBOOK', name: 'Streams', createdBy: 'admin', dashboard: { publicId: PUBLIC_ID, status: 'published', allowEmbed: true } },
      ] }],
    }] });
    const deploymentId = (await db.kysely.selectFrom('deployments').select('id').executeTakeFirstOrThrow()).id;
    await db.close();

    const snapshots = mkdtempSync(join(tmpdir(), 'svc-stream-heap-'));
    const env = { ...STREAM_BENCH_ENV, NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshots}` };
    return withServers([startSvc(database.url, env)], async ([server]) => {
      const pid = server.child.pid!;
      const metricsUrl = `${server.url}/metrics`;
      // The server's warnings and errors (it logs at warn) go with the bench's own progress.
      for (const output of [server.child.stdout, server.child.stderr]) output?.on('data', (chunk: Buffer) => process.stderr.write(`[${dialect} svc] ${chunk.toString()}`));
      const comments = `${server.url}/api/v1/embed/dashboard/${PUBLIC_ID}/comments`;
      const streamUrl = `${comments}/stream`;
      // One more viewer than streams: the poster, who holds no stream.
      const tokens = await mintTokens(server, deploymentId, options.streams + 1);
      const poster = { authorization: `Embed-Token ${tokens.pop()!}` };

      // Warm-up, measured too: every stream opened once, a post's fan-out, then every stream closed. The server's
      // heap grows for the burst and does not give it back, and each session's first use fills caches.
      const coldIdle = await settledRss(pid);
      const warm = new StreamClient(streamUrl, tokens, options.concurrency);
      await warm.open();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const coldWithStreams = await settledRss(pid);
      const warmPost = await postJson<{ id: number }>(comments, { body: 'warm-up' }, poster);
      await warm.receivedByAll(warmPost.id, 30_000).done;
      await warm.close();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const idle = await settledRss(pid);

      const client = new StreamClient(streamUrl, tokens, options.concurrency);
      try {
        const openMs = await client.open();
        process.stderr.write(`[${dialect}] ${options.streams} streams open in ${openMs} ms\n`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const withStreams = await settledRss(pid);
        const heapWithStreams = await retainedHeap(pid, metricsUrl, snapshots);

        const sent = new Map<number, number>();
        const postMs: number[] = [];
        for (let i = 0; i < options.posts; i++) {
          const started = performance.timeOrigin + performance.now();
          const comment = await postJson<{ id: number }>(comments, { body: `fan-out ${i}` }, poster);
          postMs.push(performance.timeOrigin + performance.now() - started);
          sent.set(comment.id, started);
          await client.receivedByAll(comment.id, 30_000).done;
          process.stderr.write(`\r[${dialect}] post ${i + 1}/${options.posts}   `);
          await new Promise((resolve) => setTimeout(resolve, options.gapMs));
        }
        process.stderr.write('\n');
        const afterPosts = await settledRss(pid, 5);
        const { received, ended } = await client.report();
        // The heap without the streams: taken last, since a snapshot grows the RSS the figures above read.
        await client.close();
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const heapIdle = await retainedHeap(pid, metricsUrl, snapshots);
        const samples: number[] = [];
        const lastStream: number[] = [];
        for (const [id, started] of sent) {
          const times = received.get(id) ?? [];
          if (times.length !== options.streams) throw new Error(`comment ${id} reached ${times.length} of ${options.streams} streams`);
          for (const at of times) samples.push(at - started);
          lastStream.push(Math.max(...times) - started);
        }
        const last = summarize(lastStream);
        return {
          dialect, streams: options.streams, posts: options.posts, openMs,
          fanOutMs: summarize(samples),
          lastStreamMs: { p50: last.p50, p99: last.p99 },
          postMs: round(median(postMs), 2),
          rssMiB: { coldIdle: MiB(coldIdle), coldWithStreams: MiB(coldWithStreams), idle: MiB(idle), withStreams: MiB(withStreams), afterPosts: MiB(afterPosts) },
          kibPerStream: round((withStreams - idle) / options.streams / 1024),
          retainedKibPerStream: round((heapWithStreams - heapIdle) / options.streams / 1024, 2),
          kibPerStreamCold: round((coldWithStreams - coldIdle) / options.streams / 1024),
          ended,
        };
      } finally {
        await client.close();
      }
    }).finally(() => rmSync(snapshots, { recursive: true, force: true }));
  });
}

/**
 * `npm run bench -- comments-stream [--dialects sqlite,postgres] [--streams 1000] [--posts 30] [--gap-ms 200]
 * [--concurrency 50]` (issue 23; to be wired into bench/run.ts, or run from `comments`).
 * One `svc serve` child (STREAM_BENCH_ENV); `streams` viewers of one embed tenant, one session and one stream each,
 * on one dashboard, read by a worker thread (comments.stream.client.mjs); a further viewer posts `posts` threads one
 * after another, each once every stream has the previous one. Figures: fan-out latency from each POST's start to each
 * stream's receipt (p50/p99; goal p99 ≤ 250 ms at 1,000 streams) and the server's RSS per open stream (goal ≤ 20 KiB).
 */
export async function main(args: string[]): Promise<void> {
  await runStreamBench(args);
}

/** main(), answering the figures (for a caller that reports them with its own, as `comments` may). */
export async function runStreamBench(args: string[]): Promise<StreamBenchResult[]> {
  const { dialects, adminUrl, flags } = await benchFlags(args, { dialects: 'sqlite,postgres', streams: '1000', posts: '30', 'gap-ms': '200', concurrency: '50' });
  const options = { streams: Number(flags.streams), posts: Number(flags.posts), gapMs: Number(flags['gap-ms']), concurrency: Number(flags.concurrency) };
  const results: StreamBenchResult[] = [];
  for (const dialect of dialects) {
    const result = await runDialect(dialect, adminUrl, options);
    process.stderr.write(`[${dialect}] fan-out p50 ${result.fanOutMs.p50} ms, p99 ${result.fanOutMs.p99} ms; ${result.retainedKibPerStream} KiB retained heap per stream (RSS ${result.kibPerStream} KiB)\n`);
    results.push(result);
  }
  writeResults('comments-stream', { date: new Date().toISOString(), machine: machine(), options, env: STREAM_BENCH_ENV, results });
  process.stdout.write(`${JSON.stringify(results.map((r) => ({
    dialect: r.dialect, streams: r.streams, fanOutP50Ms: r.fanOutMs.p50, fanOutP99Ms: r.fanOutMs.p99, retainedKibPerStream: r.retainedKibPerStream, kibPerStream: r.kibPerStream, kibPerStreamCold: r.kibPerStreamCold,
  })), null, 2)}\n`);
  return results;
}
