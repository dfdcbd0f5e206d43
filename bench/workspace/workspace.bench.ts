import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SingleBar, Presets } from 'cli-progress';
import { openDatabase } from '../../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../../apps/server/src/db/db.migrations.js';
import { compactNameSearchIndex } from '../../apps/server/src/db/db.search-index.js';
import { benchDialects, freshDatabase, machine, writeResults, measureLatency, measureRequests, measureThroughput, startServer, summarize, timedGet } from '../harness.js';
import type { BenchDialect, LatencySummary, RunningServer } from '../harness.js';
import { RARE_TOKEN, generateWorkspace } from './workspace.generate.js';
import { loadWorkspace } from './workspace.load.js';

const SVC_BIN = new URL('../../apps/server/bin/svc.js', import.meta.url).pathname;
const BARE_SERVER = new URL('./bare-server.js', import.meta.url).pathname;

type Dialect = BenchDialect;
// searchItems (not in the goal): the same search over workbooks and reports only, so no folder phase
// fills the page first and every non-folder match is looked up and sorted.
// searchFirst5 (not in the goal): the same search, 5 per page. The token matches 7 names at 10k and ~900
// at 1M, so with the default 50 per page the two sizes answer pages of 7 and 50 items; at 5 both pages are full
// and the ratio shows what the workspace's size alone costs.
const QUERIES = ['root', 'deepFolder', 'search', 'searchItems', 'searchFirst5', 'memberRoot'] as const;
type QueryName = (typeof QUERIES)[number];

interface SizeResult {
  dialect: Dialect;
  items: number;
  loadSeconds: number;
  latencyMs: Record<QueryName, LatencySummary>;
  throughput?: Throughput;
}

interface Throughput {
  connections: number;
  seconds: number;
  responseBytes: number;
  bareRps: number;
  /** A Fastify server with one route answering the same bytes: what the framework alone costs. */
  fastifyRps: number;
  cachedRps: number;
  uncachedRps: number;
  /** The uncached listing with SVC_PREPARED_STATEMENTS=false: every query built and compiled afresh. */
  uncachedFreshRps: number;
  fastifyRatio: number;
  cachedRatio: number;
  uncachedRatio: number;
  /** CPU time each server spent per request (µs, from /proc): steadier than requests/s, which the load generator's share of the 2 cores moves. */
  cpuMicrosPerRequest: { bare: number; fastify: number; cached: number; uncached: number; uncachedFresh: number };
  /** svc's cached listing's CPU per request over the bare server's and over Fastify's. */
  cachedCpuOverBare: number;
  cachedCpuOverFastify: number;
  /** Bytes allocated on the server's JavaScript heap per request (garbage included), from its /metrics. */
  allocatedBytesPerRequest: { cached: number; uncached: number; uncachedFresh: number };
}

const WARMUP_SECONDS = 3;
const METRICS_TOKEN = 'workspace-bench-metrics';
const FASTIFY_FLOOR = new URL('./fastify-floor.js', import.meta.url).pathname;

/** The server's heap bytes allocated so far, from its /metrics. */
async function allocatedBytes(serverUrl: string): Promise<number> {
  const text = (await timedGet(`${serverUrl}/metrics`, { authorization: `Bearer ${METRICS_TOKEN}` })).body.toString();
  const match = /^svc_nodejs_heap_allocated_bytes_total (\d+)$/m.exec(text);
  if (match === null) throw new Error(`no svc_nodejs_heap_allocated_bytes_total in ${serverUrl}/metrics`);
  return Number(match[1]);
}

/**
 * Root listing throughput against a bare node:http server and a one-route Fastify server answering the same bytes,
 * with the listing cache on (the default: a repeated request is answered from memory, its credential and data
 * version held in memory too) and off (every request runs the listing queries), and off with every query built
 * afresh (SVC_PREPARED_STATEMENTS=false). Every server is warmed up, then each is measured in turn and the bare
 * server again at the end, so that drift hits each of them.
 *
 * The throughput servers run as svc does by default (metrics off: no latency hook). The bytes each request
 * allocates are measured on a second set of svc servers with metrics on, in shorter runs of their own.
 */
async function compareThroughput(uncachedUrl: string, headers: Record<string, string>, databaseUrl: string, options: { seconds: number; connections: number }): Promise<Throughput> {
  const sample = await timedGet(uncachedUrl, headers);
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-body-'));
  const bodyFile = join(dir, 'root.json');
  writeFileSync(bodyFile, sample.body);
  const svc = (env: Record<string, string>) => startServer(process.execPath, [SVC_BIN, 'serve', '--db', databaseUrl, '--port', '0'], { SVC_LOG_LEVEL: 'warn', ...env });
  const uncachedEnv = { SVC_LISTING_CACHE_MB: '0' };
  const freshEnv = { ...uncachedEnv, SVC_PREPARED_STATEMENTS: 'false' };
  const metricsEnv = { SVC_METRICS_TOKEN: METRICS_TOKEN };
  const servers: RunningServer[] = [];
  const start = async (server: Promise<RunningServer>) => {
    servers.push(await server);
    return servers[servers.length - 1]!;
  };
  try {
    const bare = await start(startServer(process.execPath, [BARE_SERVER, bodyFile]));
    const fastify = await start(startServer(process.execPath, [FASTIFY_FLOOR, bodyFile]));
    const cached = await start(svc({}));
    const uncached = await start(svc(uncachedEnv));
    const fresh = await start(svc(freshEnv));
    const counted = { cached: await start(svc(metricsEnv)), uncached: await start(svc({ ...uncachedEnv, ...metricsEnv })), uncachedFresh: await start(svc({ ...freshEnv, ...metricsEnv })) };
    const path = new URL(uncachedUrl).pathname + new URL(uncachedUrl).search;
    const run = (server: RunningServer, h: Record<string, string>, seconds = options.seconds) => measureThroughput(`${server.url}${path}`, h, seconds, options.connections, server.child.pid);
    // Each server is warmed up first, unmeasured: svc's request path needs some thousands of requests before V8
    // has optimized it, and the bare server was started a moment ago too.
    for (const server of servers) await run(server, server === bare || server === fastify ? {} : headers, WARMUP_SECONDS);
    const bareRun = await run(bare, {});
    const fastifyRun = await run(fastify, {});
    const cachedRun = await run(cached, headers);
    const uncachedRun = await run(uncached, headers);
    const freshRun = await run(fresh, headers);
    const bareAgainRun = await run(bare, {});
    const [bareRps, fastifyRps, cachedRps, uncachedRps, uncachedFreshRps, bareAgain] = [bareRun, fastifyRun, cachedRun, uncachedRun, freshRun, bareAgainRun].map((r) => r.rps) as [number, number, number, number, number, number];
    const cpu = (r: { cpuMicrosPerRequest?: number }) => r.cpuMicrosPerRequest ?? Number.NaN;
    const cpuMicrosPerRequest = {
      bare: Math.round((cpu(bareRun) + cpu(bareAgainRun)) / 2), fastify: cpu(fastifyRun), cached: cpu(cachedRun), uncached: cpu(uncachedRun), uncachedFresh: cpu(freshRun),
    };

    const allocatedBytesPerRequest = { cached: 0, uncached: 0, uncachedFresh: 0 };
    for (const [name, server] of Object.entries(counted) as Array<[keyof typeof counted, RunningServer]>) {
      const before = await allocatedBytes(server.url);
      const { requests } = await measureRequests(`${server.url}${path}`, headers, WARMUP_SECONDS, options.connections);
      allocatedBytesPerRequest[name] = Math.round((await allocatedBytes(server.url) - before) / requests);
    }
    const bareMean = Math.round((bareRps + bareAgain) / 2);
    const ratio = (rps: number) => Math.round((rps / bareMean) * 1000) / 1000;
    return {
      connections: options.connections, seconds: options.seconds, responseBytes: sample.body.length, bareRps: bareMean, fastifyRps,
      cachedRps, uncachedRps, uncachedFreshRps, fastifyRatio: ratio(fastifyRps), cachedRatio: ratio(cachedRps), uncachedRatio: ratio(uncachedRps),
      cpuMicrosPerRequest,
      cachedCpuOverBare: Math.round((cpuMicrosPerRequest.cached / cpuMicrosPerRequest.bare) * 100) / 100,
      cachedCpuOverFastify: Math.round((cpuMicrosPerRequest.cached / cpuMicrosPerRequest.fastify) * 100) / 100,
      allocatedBytesPerRequest,
    };
  } finally {
    for (const server of servers) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function prepareDatabase(dialect: Dialect, adminUrl: string): Promise<{ url: string; target: Parameters<typeof loadWorkspace>[0]; drop(): Promise<void> }> {
  const database = await freshDatabase(dialect, adminUrl);
  const target = dialect === 'sqlite' ? { dialect, path: database.path! } : { dialect, url: database.url };
  return { url: database.url, target, drop: () => database.drop() };
}

interface PreparedSize {
  items: number;
  loadSeconds: number;
  databaseUrl: string;
  server: RunningServer;
  targets: Record<QueryName, { url: string; headers: Record<string, string> }>;
  drop(): Promise<void>;
}

/** Creates, migrates and loads one database, and starts svc on it with the listing cache off. */
async function prepareSize(dialect: Dialect, items: number, adminUrl: string): Promise<PreparedSize> {
  const database = await prepareDatabase(dialect, adminUrl);
  const db = openDatabase(database.url);
  await migrateToLatest(db);
  await db.close();

  const started = performance.now();
  process.stderr.write(`\n[${dialect}] generating ${items.toLocaleString('en')} items\n`);
  const workspace = generateWorkspace(items);
  const bar = new SingleBar({ format: `[${dialect}] loading {bar} {percentage}% | {value}/{total} items | {duration}s`, stream: process.stderr, noTTYOutput: true, notTTYSchedule: 10_000 }, Presets.shades_classic);
  bar.start(items, 0);
  const loaded = await loadWorkspace(database.target, workspace, (done) => bar.update(done));
  bar.stop();
  // The load ends as `svc import` does: on SQLite, the name search indexes merged into one segment each.
  const loadedDb = openDatabase(database.url);
  await compactNameSearchIndex(loadedDb.kysely, loadedDb.dialect);
  await loadedDb.close();
  const loadSeconds = Math.round((performance.now() - started) / 100) / 10;

  // Latency is measured with the listing cache off: it is the cost of the listing itself at this size.
  const server = await startServer(process.execPath, [SVC_BIN, 'serve', '--db', database.url, '--port', '0'], { SVC_LOG_LEVEL: 'warn', SVC_LISTING_CACHE_MB: '0' });
  const base = `${server.url}/api/v1/deployments/${loaded.deploymentId}/workspace`;
  const admin = { authorization: `Bearer ${loaded.adminKey}` };
  const member = { authorization: `Bearer ${loaded.memberKey}` };
  return {
    items, loadSeconds, databaseUrl: database.url, server,
    targets: {
      root: { url: base, headers: admin },
      deepFolder: { url: `${base}?folderId=${loaded.deepFolderId}`, headers: admin },
      search: { url: `${base}?search=${RARE_TOKEN}`, headers: admin },
      searchItems: { url: `${base}?search=${RARE_TOKEN}&types=WORKBOOK&types=REPORT`, headers: admin },
      searchFirst5: { url: `${base}?search=${RARE_TOKEN}&first=5`, headers: admin },
      memberRoot: { url: base, headers: member },
    },
    drop: async () => {
      await server.stop();
      await database.drop();
    },
  };
}

/**
 * Every size of one dialect is loaded and served at once, and the latency batches alternate between sizes
 * (round after round), so that the machine's drift during the run hits every size alike and the large/small
 * ratios compare like with like.
 */
async function runDialect(dialect: Dialect, sizes: number[], adminUrl: string, options: { requests: number; rounds: number; seconds: number; connections: number }): Promise<SizeResult[]> {
  const prepared: PreparedSize[] = [];
  try {
    for (const items of sizes) prepared.push(await prepareSize(dialect, items, adminUrl));
    const samples = new Map<string, number[]>();
    const perBatch = Math.max(1, Math.ceil(options.requests / options.rounds));
    for (const p of prepared) for (const q of QUERIES) await measureLatency(p.targets[q].url, p.targets[q].headers, 1, 30);
    for (let round = 0; round < options.rounds; round++) {
      for (const q of QUERIES) {
        for (const p of round % 2 === 0 ? prepared : [...prepared].reverse()) {
          const batch = await measureLatency(p.targets[q].url, p.targets[q].headers, perBatch, 0);
          const key = `${p.items}:${q}`;
          samples.set(key, [...(samples.get(key) ?? []), ...batch.samples]);
        }
      }
    }
    const results: SizeResult[] = [];
    for (const p of prepared) {
      const latencyMs = Object.fromEntries(QUERIES.map((q) => [q, summarize(samples.get(`${p.items}:${q}`)!)])) as Record<QueryName, LatencySummary>;
      for (const q of QUERIES) process.stderr.write(`[${dialect} ${p.items}] ${q}: p50 ${latencyMs[q].p50} ms, p99 ${latencyMs[q].p99} ms\n`);
      const result: SizeResult = { dialect, items: p.items, loadSeconds: p.loadSeconds, latencyMs };
      if (p.items === Math.max(...sizes)) {
        result.throughput = await compareThroughput(p.targets.root.url, p.targets.root.headers, p.databaseUrl, options);
        process.stderr.write(`[${dialect} ${p.items}] throughput: ${JSON.stringify(result.throughput)}\n`);
      }
      results.push(result);
    }
    return results;
  } finally {
    for (const p of prepared) await p.drop();
  }
}

/**
 * `npm run bench -- workspace [--sizes 10000,1000000] [--dialects sqlite,postgres] [--requests 400] [--rounds 10] [--seconds 10]`
 * Latency (p50/p99) of the root listing, a deep folder, a ~0.1% search and a member's listing at each size, the
 * large/small p50 ratio, and the root listing's throughput against a bare node:http server sending the same bytes.
 */
export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      sizes: { type: 'string', default: '10000,1000000' },
      dialects: { type: 'string', default: 'sqlite,postgres' },
      requests: { type: 'string', default: '400' },
      rounds: { type: 'string', default: '10' },
      seconds: { type: 'string', default: '10' },
      connections: { type: 'string', default: '10' },
    },
  });
  const sizes = values.sizes.split(',').map(Number);
  const { dialects, adminUrl } = await benchDialects(values.dialects);
  const largest = Math.max(...sizes);
  const runs: SizeResult[] = [];
  for (const dialect of dialects) {
    runs.push(...(await runDialect(dialect, sizes, adminUrl, {
      requests: Number(values.requests), rounds: Number(values.rounds), seconds: Number(values.seconds), connections: Number(values.connections),
    })));
  }
  const smallest = Math.min(...sizes);
  const ratios = dialects.map((dialect) => {
    const small = runs.find((r) => r.dialect === dialect && r.items === smallest)!;
    const large = runs.find((r) => r.dialect === dialect && r.items === largest)!;
    return {
      dialect,
      [`p50 ${largest}/${smallest}`]: Object.fromEntries(QUERIES.map((q) => [q, Math.round((large.latencyMs[q].p50 / small.latencyMs[q].p50) * 100) / 100])),
    };
  });
  const report = { benchmark: 'workspace', date: new Date().toISOString(), machine: machine(), runs, ratios };
  const path = writeResults('workspace', report);
  process.stdout.write(`${JSON.stringify({ ratios, throughput: runs.filter((r) => r.throughput).map((r) => ({ dialect: r.dialect, ...r.throughput })) }, null, 2)}\n`);
  process.stdout.write(`results written to ${path}\n`);
}
