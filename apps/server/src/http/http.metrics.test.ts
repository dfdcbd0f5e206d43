import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';

/** The value of one sample line of a Prometheus text exposition, or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const present = match[2]!.split(',');
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3]);
  }
  return undefined;
}

/** Issue 8 "Observability": GET /metrics in Prometheus' format (docs/operations.md "Metrics"). */
const TOKEN = 'scrape-secret-0123456789';
const scrape = (app: FastifyInstance) => app.inject({ url: '/metrics', headers: bearer(TOKEN) });

describeEachDialect('metrics', (t) => {
  let app: FastifyInstance;
  let off: FastifyInstance;
  let s: SeededAccount;

  beforeAll(async () => {
    app = await buildApp(testConfig({ metricsToken: TOKEN }), { db: t().db });
    off = await buildApp(testConfig({ metricsToken: '' }), { db: t().db });
    s = await seedAccount(t().db.kysely, { users: [{ ref: 'admin', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P' }] });
  });

  afterAll(async () => {
    await app.close();
    await off.close();
  });

  it('counts requests and their latency by method, route pattern and status, without ids or query strings', async () => {
    const route = '/api/v1/deployments/:deploymentId/workspace';
    const before = await scrape(app);
    expect(before.statusCode).toBe(200);
    expect(before.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const count = (text: string, status: string) => sample(text, 'svc_http_request_duration_seconds_count', { method: 'GET', route, status }) ?? 0;
    for (let i = 0; i < 3; i++) expect((await app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace?first=${i + 1}`, headers: bearer(s.keys.admin!) })).statusCode).toBe(200);
    expect((await app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace` })).statusCode).toBe(401);
    expect((await app.inject({ url: '/no/such/route' })).statusCode).toBe(404);

    const after = (await scrape(app)).body;
    expect(count(after, '200') - count(before.body, '200')).toBe(3);
    expect(count(after, '401') - count(before.body, '401')).toBe(1);
    expect(sample(after, 'svc_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    // Latency buckets are cumulative: the +Inf bucket holds every request of the series.
    expect(sample(after, 'svc_http_request_duration_seconds_bucket', { method: 'GET', route, status: '200', le: '+Inf' })).toBe(count(after, '200'));
    expect(after).not.toContain(`/api/v1/deployments/${s.refs.prod}/workspace`);
    expect(after).not.toContain('first=');
  });

  it('reports the database pool and the process', async () => {
    const text = (await scrape(app)).body;
    const total = sample(text, 'svc_db_pool_connections', { state: 'total' });
    expect(total).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'svc_db_pool_connections', { state: 'idle' })).toBeLessThanOrEqual(total!);
    expect(sample(text, 'svc_db_pool_connections', { state: 'waiting' })).toBe(0);
    expect(text).toMatch(/^svc_process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^svc_nodejs_eventloop_lag_p99_seconds /m);
  });

  it('counts the bytes allocated on the heap, garbage included, and they grow with the work done', async () => {
    const allocated = (text: string) => Number(/^svc_nodejs_heap_allocated_bytes_total (\d+)$/m.exec(text)?.[1]);
    const first = allocated((await scrape(app)).body);
    expect(first).toBeGreaterThan(0);
    // About 16 MiB of short-lived garbage (doubles): several scavenges, so the count must span collections to see it all.
    let kept = 0;
    for (let i = 0; i < 4000; i++) kept += new Array(512).fill(i + 0.5).length;
    expect(kept).toBe(4000 * 512);
    const second = allocated((await scrape(app)).body);
    expect(second - first).toBeGreaterThan(8 * 1024 * 1024);
    expect(second - first).toBeLessThan(64 * 1024 * 1024);
  });

  it('asks for the metrics token, compared as a whole', async () => {
    const refused = await app.inject({ url: '/metrics' });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ error: { status: 401, code: 'unauthorized', field: 'Authorization' } });
    expect((await app.inject({ url: '/metrics', headers: bearer('scrape-secret-012345678') })).statusCode).toBe(401);
    expect((await app.inject({ url: '/metrics', headers: bearer('scrape-secret-0123456789x') })).statusCode).toBe(401);
    const ok = await scrape(app);
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('svc_http_request_duration_seconds');
  });

  it('is off without a configured token: anonymous callers and any token get a 403 saying how to turn it on', async () => {
    for (const headers of [{}, bearer(TOKEN), bearer('')]) {
      const refused = await off.inject({ url: '/metrics', headers });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ error: { status: 403, code: 'forbidden', message: expect.stringContaining('SVC_METRICS_TOKEN') } });
      expect(refused.body).not.toContain('svc_http_request_duration_seconds');
    }
  });
});
