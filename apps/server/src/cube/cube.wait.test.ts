import cube from '@cubejs-client/core';
import type { Query } from '@cubejs-client/core';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../app.js';
import { AppError } from '../core/core.errors.js';
import { testConfig } from '../../test/config.js';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import type { SemanticView } from '../data/semantic/semantic.model.js';
import { ContinueWait, CubeWaits } from './cube.waits.js';

/**
 * Issue 36, Cube's "Continue wait" (docs/cube.md): a `load` slower than the continue-wait timeout is answered
 * `{"error": "Continue wait"}` with HTTP 200, as Cube's gateway answers it; the query goes on and the same caller's
 * same query picks it up, which the real @cubejs-client/core does by itself. The slow query is a real one: a view of
 * a PostgreSQL warehouse whose SQL sleeps (pg_sleep), so the suites need the test PostgreSQL.
 */
const postgresUrl = inject('postgresUrl');
const SLEEP_S = 1.2;
// Every row of the view waits for one pg_sleep: four rows, two of each parity.
const SLOW: SemanticView = {
  name: 'slow', title: 'Slow', sql: `select g.id, g.id % 2 as parity from generate_series(1, 4) as g(id), (select pg_sleep(${SLEEP_S})) as s`,
  dimensions: [{ name: 'id', type: 'number', primaryKey: true }, { name: 'parity', type: 'number' }],
  measures: [{ name: 'count', type: 'count' }],
};

describeEachDialect('Cube\'s continue wait', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let apiUrl: string;
  // Each test asks its own query (another limit): the result cache would answer a query asked before at once.
  let limit = 100;
  const slowQuery = (): Query => ({ measures: ['slow.count'], dimensions: ['slow.parity'], order: { 'slow.parity': 'asc' }, limit: limit++ });

  beforeAll(async () => {
    if (postgresUrl === null) return;
    app = await buildApp(testConfig({ cube: { continueWaitMs: 300, orphanTimeoutMs: 10_000 } }), { db: t().db });
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Slow', dataSource: { type: 'postgres', url: postgresUrl }, semanticViews: [SLOW] }],
    });
    apiUrl = `${await app.listen({ port: 0, host: '127.0.0.1' })}/cubejs-api/v1`;
  });

  afterAll(async () => {
    await app?.close();
  });

  it.skipIf(postgresUrl === null)('the real client waits through Continue wait answers and gets the rows (an API key and an embed token)', async () => {
    const progress: unknown[] = [];
    const started = Date.now();
    const set = await cube(s.keys.alice!, { apiUrl }).load(slowQuery(), { progressCallback: (p) => progress.push(p) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(SLEEP_S * 1000 - 50);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(set.tablePivot()).toEqual([{ 'slow.parity': '0', 'slow.count': '2' }, { 'slow.parity': '1', 'slow.count': '2' }]);
    const viewer = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod! });
    const viewed = await cube(viewer.token, { apiUrl }).load(slowQuery(), { progressCallback: (p) => progress.push(p) });
    expect(viewed.tablePivot().map((row) => row['slow.count'])).toEqual(['2', '2']);
  });

  it.skipIf(postgresUrl === null)('answers Continue wait with HTTP 200 in Cube\'s body; polling picks up the same run, which another caller does not share', async () => {
    const query = slowQuery();
    const ask = (key: string) => app.inject({ url: `/cubejs-api/v1/load?query=${encodeURIComponent(JSON.stringify(query))}`, headers: bearer(key) });
    const first = await ask(s.keys.alice!);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ error: 'Continue wait' });
    // bob asks the same query: his own run (not alice's), so it too is still running.
    expect((await ask(s.keys.bob!)).json()).toEqual({ error: 'Continue wait' });
    await new Promise((resolve) => setTimeout(resolve, SLEEP_S * 1000));
    // alice's run has ended meanwhile: her next ask is answered at once with its rows.
    const started = Date.now();
    const picked = await ask(s.keys.alice!);
    expect(Date.now() - started).toBeLessThan(250);
    expect(picked.statusCode, picked.body).toBe(200);
    expect(picked.json<{ data: Array<Record<string, string>> }>().data.map((row) => row['slow.count'])).toEqual(['2', '2']);
  });
});

describe('CubeWaits (continue wait\'s in-flight map)', () => {
  const never = (signal: AbortSignal) => new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));

  it('runs a key once for every ask until it is picked up, and answers the settled result to the next ask', async () => {
    const waits = new CubeWaits({ continueWaitMs: 20, orphanTimeoutMs: 10_000, maxEntries: 10 });
    let runs = 0;
    let finish: (value: string) => void = () => undefined;
    const run = () => {
      runs++;
      return new Promise<string>((resolve) => { finish = resolve; });
    };
    await expect(waits.load('k', run)).rejects.toBeInstanceOf(ContinueWait);
    await expect(waits.load('k', run)).rejects.toBeInstanceOf(ContinueWait);
    expect(runs).toBe(1);
    finish('rows');
    await expect(waits.load('k', run)).resolves.toBe('rows');
    expect(waits.size).toBe(0);
    waits.clear();
  });

  it('drops (and aborts) a query nobody asks for within the orphan timeout, and refuses more than its bound with a 503', async () => {
    const waits = new CubeWaits({ continueWaitMs: 10, orphanTimeoutMs: 40, maxEntries: 1 });
    let signal: AbortSignal | undefined;
    await expect(waits.load('a', (given) => { signal = given; return never(given); })).rejects.toBeInstanceOf(ContinueWait);
    const full = await waits.load('b', never).catch((e: unknown) => e);
    expect(full).toBeInstanceOf(AppError);
    expect(full).toMatchObject({ code: 'service_unavailable' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(signal?.aborted).toBe(true);
    expect(waits.size).toBe(0);
    waits.clear();
  });

  it('keys a query by account, caller and query, whatever the order of its keys', () => {
    const query = { measures: ['orders.count'], dimensions: ['orders.status'] };
    expect(CubeWaits.keyOf(1, 'user:2', query)).toBe(CubeWaits.keyOf(1, 'user:2', { dimensions: ['orders.status'], measures: ['orders.count'] }));
    expect(CubeWaits.keyOf(1, 'user:2', query)).not.toBe(CubeWaits.keyOf(1, 'user:3', query));
    expect(CubeWaits.keyOf(1, 'user:2', query)).not.toBe(CubeWaits.keyOf(2, 'user:2', query));
  });
});
