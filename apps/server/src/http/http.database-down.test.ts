import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cutProxy } from '../../test/cut-proxy.js';
import type { CutProxy } from '../../test/cut-proxy.js';
import { expectErrorBody } from '../../test/errors.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import type { FastifyInstance } from 'fastify';
import { isDatabaseUnavailable, openDatabase } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';

describe('which database failures are "unavailable"', () => {
  it('counts refused, cut and shut-down connections and a locked SQLite, not a failing query', () => {
    const failure = (message: string, code?: string) => Object.assign(new Error(message), code === undefined ? {} : { code });
    for (const error of [
      failure('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'), failure('read ECONNRESET', 'ECONNRESET'),
      failure('terminating connection due to administrator command', '57P01'), failure('the database system is starting up', '57P03'),
      failure('connection failure', '08006'), failure('Connection terminated unexpectedly'), failure('timeout exceeded when trying to connect'),
      failure('database is locked', 'SQLITE_BUSY'),
    ]) expect(isDatabaseUnavailable(error), error.message).toBe(true);
    for (const error of [
      failure('duplicate key value violates unique constraint', '23505'), failure('canceling statement due to statement timeout', '57014'),
      failure('UNIQUE constraint failed: users.email', 'SQLITE_CONSTRAINT_UNIQUE'), failure('boom'),
    ]) expect(isDatabaseUnavailable(error), error.message).toBe(false);
    expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false);
  });
});

/**
 * svc when PostgreSQL goes away and comes back (a restart, a failover), reached through a TCP proxy the test cuts:
 * requests meanwhile get 503 `service_unavailable` in the error body (try again), not a 500; the process lives on
 * (a broken idle connection must not throw out of the pool); and once the database is back, requests succeed
 * again on fresh connections, without a restart.
 */
const postgresUrl = inject('postgresUrl');
(postgresUrl === null ? describe.skip : describe)(`svc while its PostgreSQL is away${postgresUrl === null ? ' [postgres: SKIPPED, no SVC_TEST_POSTGRES_URL]' : ''}`, () => {
  let proxy: CutProxy;
  let db: Db;
  let app: FastifyInstance;
  let account: SeededAccount;
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);

  beforeAll(async () => {
    const direct = openDatabase(postgresUrl!);
    try {
      account = await seedAccount(direct.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P', items: [] }] });
    } finally {
      await direct.close();
    }
    const url = new URL(postgresUrl!);
    proxy = await cutProxy(Number(url.port === '' ? 5432 : url.port));
    url.host = new URL(proxy.origin).host;
    db = openDatabase(url.toString());
    // No cache may answer for the database: every request below reads it.
    app = await buildApp(testConfig({ listingCacheBytes: 0 }), { db, credentialCacheEntries: 0 });
    process.on('uncaughtException', record);
  });

  afterAll(async () => {
    process.off('uncaughtException', record);
    await app?.close();
    await db?.close();
    await proxy?.close();
  });

  const listing = () => app.inject({ url: `/api/v1/deployments/${account.refs.prod}/workspace`, headers: bearer(account.keys.alice!) });

  it('answers 503 while the database is down, lives on, and answers again once it is back', async () => {
    expect((await listing()).statusCode).toBe(200);

    proxy.refuse();
    proxy.cut();
    // The pool's idle connections hear of it and close; new ones are refused.
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let request = 0; request < 3; request++) {
      const res = await listing();
      expectErrorBody({ status: res.statusCode, text: res.body }, 503);
      expect(res.json().error.code).toBe('service_unavailable');
      expect(res.json().error.message).toMatch(/database cannot be reached/);
    }

    proxy.release();
    expect((await listing()).statusCode).toBe(200);
    expect(uncaught).toEqual([]);
  });
});
