import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Db } from '../db/db.database.js';
import { digestSecret } from '../accounts/accounts.keys.js';
import { AppError } from '../core/core.errors.js';

/** Latency buckets in seconds: from a cached listing (about 1 ms) to a data query at its timeout (30 s). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * `GET /metrics` in Prometheus' text format (docs/operations.md "Metrics"):
 * - `svc_http_request_duration_seconds` by method, route (the route's pattern, never the raw URL, so ids and
 *   query strings stay out) and status; its `_count` is the request count;
 * - `svc_db_pool_connections` by state (total, idle, waiting);
 * - the process's own (`svc_process_*`, `svc_nodejs_*`: CPU, memory, event loop lag, handles).
 *
 * A scrape must send `Authorization: Bearer <token>` (SVC_METRICS_TOKEN). Without a token configured the
 * endpoint is off (403 saying how to turn it on): route names, latencies and memory figures are for the operator,
 * and an anonymous caller on the public port is not one.
 */
export function registerMetrics(app: FastifyInstance, db: Db, token: string | undefined): void {
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

  app.addHook('onResponse', (request, reply, done) => {
    latency.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode }, reply.elapsedTime / 1000);
    done();
  });

  const expected = token === undefined || token === '' ? undefined : Buffer.from(digestSecret(token));
  app.get('/metrics', { schema: { tags: ['Operations'], summary: 'Prometheus metrics of this process', hide: true } }, async (request, reply) => {
    if (expected === undefined) throw new AppError('forbidden', 'metrics are off: set SVC_METRICS_TOKEN and scrape with Authorization: Bearer <token>');
    const sent = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    // Digests of equal length, compared in constant time.
    if (sent === undefined || !timingSafeEqual(Buffer.from(digestSecret(sent)), expected)) {
      throw new AppError('unauthorized', 'metrics need Authorization: Bearer <SVC_METRICS_TOKEN>', 'Authorization');
    }
    void reply.type(registry.contentType);
    return registry.metrics();
  });
}
