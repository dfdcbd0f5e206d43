import { timingSafeEqual } from 'node:crypto';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Db } from '../db/db.database.js';
import { digestSecret } from '../core/core.digest.js';
import { AppError } from '../core/core.errors.js';

/** Latency buckets in seconds: from a cached listing (about 1 ms) to a data query at its timeout (30 s). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Bytes this process has allocated on V8's heap since it started counting, garbage included: what each request
 * costs the collector. V8 reports the heap in use before and after each collection (GCProfiler); between two
 * collections the heap in use grows only by allocation, so the sum of those growths is the total allocated.
 */
export class AllocationCounter {
  #profiler = new GCProfiler();
  #total = 0;
  #lastUsed = getHeapStatistics().used_heap_size;

  constructor() {
    this.#profiler.start();
  }

  /** The total so far. A collection that runs between reading the profile and restarting it is missed (µs apart). */
  read(): number {
    const { statistics } = this.#profiler.stop();
    for (const gc of statistics) {
      this.#total += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - this.#lastUsed);
      this.#lastUsed = gc.afterGC.heapStatistics.usedHeapSize;
    }
    const used = getHeapStatistics().used_heap_size;
    this.#total += Math.max(0, used - this.#lastUsed);
    this.#lastUsed = used;
    this.#profiler = new GCProfiler();
    this.#profiler.start();
    return this.#total;
  }

  stop(): void {
    this.#profiler.stop();
  }
}

/**
 * The result cache's figures, read at each scrape: app.ts gives a function that reads them from data/'s cache
 * (http/ imports no feature). Counts are totals since the process started.
 */
export interface ResultCacheStats {
  hits: number;
  misses: number;
  /** Requests that joined a computation running for the same key. */
  waits: number;
  /** Requests that asked for a refresh. */
  forced: number;
  warehouseQueries: number;
  rollupQueries: number;
  bytes: number;
  entries: number;
}

/**
 * `GET /metrics` in Prometheus' text format (docs/operations.md "Metrics"):
 * - `svc_http_request_duration_seconds` by method, route (the route's pattern, never the raw URL, so ids and
 *   query strings stay out) and status; its `_count` is the request count;
 * - `svc_db_pool_connections` by state (total, idle, waiting);
 * - `svc_nodejs_heap_allocated_bytes_total`: bytes allocated on the JavaScript heap (garbage included);
 * - `svc_data_cache_requests_total` by outcome (hit, miss, wait: joined a computation running for the same key,
 *   forced), `svc_data_cache_bytes` and `svc_data_cache_entries`: the result cache of data answers;
 * - `svc_data_queries_total` by target (warehouse, rollup): statements the data path ran;
 * - the process's own (`svc_process_*`, `svc_nodejs_*`: CPU, memory, event loop lag, handles).
 *
 * A scrape must send `Authorization: Bearer <token>` (SVC_METRICS_TOKEN). Without a token configured the
 * endpoint is off (403 saying how to turn it on): route names, latencies and memory figures are for the operator,
 * and an anonymous caller on the public port is not one. Off, nothing is measured either: no request pays for a
 * figure nobody can read.
 */
export function registerMetrics(app: FastifyInstance, db: Db, token: string | undefined, resultCacheStats?: () => ResultCacheStats): void {
  const expected = token === undefined || token === '' ? undefined : Buffer.from(digestSecret(token));
  const registry = expected === undefined ? undefined : measure(app, db, resultCacheStats);
  app.get('/metrics', { schema: { tags: ['Operations'], summary: 'Prometheus metrics of this process', hide: true } }, async (request, reply) => {
    if (expected === undefined || registry === undefined) throw new AppError('forbidden', 'metrics are off: set SVC_METRICS_TOKEN and scrape with Authorization: Bearer <token>');
    const sent = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    // Digests of equal length, compared in constant time.
    if (sent === undefined || !timingSafeEqual(Buffer.from(digestSecret(sent)), expected)) {
      throw new AppError('unauthorized', 'metrics need Authorization: Bearer <SVC_METRICS_TOKEN>', 'Authorization');
    }
    void reply.type(registry.contentType);
    return registry.metrics();
  });
}

/** The registry of every figure, and the hook that times each request. */
function measure(app: FastifyInstance, db: Db, resultCacheStats: (() => ResultCacheStats) | undefined): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  const latency = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'Time from the request to the end of its response, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: 'svc_db_pool_connections',
    help: 'Database connections of this process by state: total (open), idle, waiting (requests queued for one)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = db.poolStats();
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
  const allocations = new AllocationCounter();
  let reported = 0;
  new Counter({
    name: 'svc_nodejs_heap_allocated_bytes_total',
    help: 'Bytes allocated on the JavaScript heap since the process started, garbage included',
    registers: [registry],
    collect() {
      const total = allocations.read();
      this.inc(total - reported);
      reported = total;
    },
  });
  if (resultCacheStats !== undefined) measureResultCache(registry, resultCacheStats);
  app.addHook('onClose', (_app, done) => {
    allocations.stop();
    done();
  });

  // One child per method, route and status, found again by a string key: prom-client would otherwise hash the
  // label object on every observation.
  const children = new Map<string, ReturnType<typeof latency.labels>>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let child = children.get(key);
    if (child === undefined) {
      child = latency.labels({ method: request.method, route, status: reply.statusCode });
      children.set(key, child);
    }
    child.observe(reply.elapsedTime / 1000);
    done();
  });
  return registry;
}

/** The result cache's figures, read from its counters at each scrape (nothing is paid per request). */
function measureResultCache(registry: Registry, stats: () => ResultCacheStats): void {
  const reported = { hit: 0, miss: 0, wait: 0, forced: 0, warehouse: 0, rollup: 0 };
  new Counter({
    name: 'svc_data_cache_requests_total',
    help: 'Data answers asked of the result cache, by outcome: hit, miss, wait (joined the same computation), forced (refresh)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      const counters = stats();
      for (const [outcome, total] of [['hit', counters.hits], ['miss', counters.misses], ['wait', counters.waits], ['forced', counters.forced]] as const) {
        this.inc({ outcome }, total - reported[outcome]);
        reported[outcome] = total;
      }
    },
  });
  new Counter({
    name: 'svc_data_queries_total',
    help: 'Statements the data path ran, by target: warehouse (the data source) or rollup (a pre-aggregation)',
    labelNames: ['target'] as const,
    registers: [registry],
    collect() {
      const counters = stats();
      for (const [target, total] of [['warehouse', counters.warehouseQueries], ['rollup', counters.rollupQueries]] as const) {
        this.inc({ target }, total - reported[target]);
        reported[target] = total;
      }
    },
  });
  new Gauge({ name: 'svc_data_cache_bytes', help: 'Bytes the result cache holds', registers: [registry], collect() { this.set(stats().bytes); } });
  new Gauge({ name: 'svc_data_cache_entries', help: 'Entries the result cache holds', registers: [registry], collect() { this.set(stats().entries); } });
}
