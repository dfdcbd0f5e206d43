import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { openDatabase } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import { migrateToLatest } from '../db/db.migrations.js';
import { bearer, seedAccount } from '../../test/factory.js';

/** A log destination that keeps each line written. */
function captureLog(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

describe('request logging', () => {
  let lines: string[] = [];
  let db: Db;
  let app: FastifyInstance;
  let key: string;
  let deploymentId: number;

  beforeAll(async () => {
    db = openDatabase('sqlite::memory:');
    await migrateToLatest(db);
    const captured = captureLog();
    const stream = captured.stream;
    lines = captured.lines;
    app = await buildApp(testConfig(), { db, logger: { level: 'info', stream } });
    const seeded = await seedAccount(db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P' }] });
    key = seeded.keys.alice!;
    deploymentId = seeded.refs.prod!;
  });

  afterAll(async () => {
    await app.close();
    await db.close();
  });

  it('logs every request with its request id and answers with the same id in x-request-id', async () => {
    const res = await app.inject({ url: `/api/v1/deployments/${deploymentId}/workspace`, headers: { ...bearer(key), 'x-request-id': 'trace-abc-123' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toBe('trace-abc-123');
    const logged = lines.map((line) => JSON.parse(line) as { reqId?: string; msg?: string });
    expect(logged.filter((entry) => entry.reqId === 'trace-abc-123').map((entry) => entry.msg)).toEqual(['incoming request', 'request completed']);
  });

  it('makes up a request id when the caller sends none or an unusable one', async () => {
    const res = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('never writes an API key or an Authorization header into the log', async () => {
    await app.inject({ url: `/api/v1/deployments/${deploymentId}/workspace`, headers: bearer(key) });
    await app.inject({ url: `/api/v1/deployments/${deploymentId}/workspace`, headers: bearer(`${key}x`) });
    const all = lines.join('\n');
    expect(lines.length).toBeGreaterThan(4);
    expect(all).not.toContain(key);
    expect(all.toLowerCase()).not.toContain('authorization');
  });
});

describe('secrets at the most verbose level', () => {
  it('never writes an API key, embed token, session id, password or console cookie, whatever the request did', async () => {
    const { lines, stream } = captureLog();
    const db = openDatabase('sqlite::memory:');
    await migrateToLatest(db);
    const app = await buildApp(testConfig(), { db, logger: { level: 'trace', stream } });
    try {
      const password = 'correct horse battery staple 42';
      const s = await seedAccount(db.kysely, {
        users: [{ ref: 'alice', role: 'admin', password }],
        deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'W', createdBy: 'alice', dashboard: { publicId: 'log-secrets', status: 'published', allowEmbed: true } }] }],
      });
      const key = s.keys.alice!;
      const minted = await app.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(key), payload: { deploymentId: s.refs.prod, externalId: 'viewer-1' } });
      const sessionId = minted.json().sessionId as string;
      // The embed page's own URL carries the session id (the single-use credential) in its query.
      await app.inject({ url: `/embed/dashboard/log-secrets?session=${encodeURIComponent(sessionId)}` });
      const token = (await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId } })).json().token as string;
      // A second exchange of the same id is refused: a failure path with the secret in the body.
      await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId } });
      await app.inject({ url: '/api/v1/embed/dashboard/log-secrets', headers: { authorization: `Embed-Token ${token}` } });
      await app.inject({ url: '/api/v1/embed/dashboard/log-secrets', headers: { authorization: `Embed-Token ${token}x` } });
      const email = (await db.kysely.selectFrom('users').select('email').where('id', '=', s.refs.alice!).executeTakeFirstOrThrow()).email;
      await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: `${password}!` } });
      const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
      const cookie = login.cookies.find((c) => c.name === 'svc_console')!.value;
      await app.inject({ url: '/api/v1/embed/session', cookies: { svc_console: cookie } });
      await app.inject({ method: 'POST', url: '/api/v1/embed/session/revoke', headers: bearer(key), payload: { sessionId } });

      const all = lines.join('\n');
      expect(lines.length).toBeGreaterThan(15);
      for (const secret of [key, sessionId, token, token.split('.')[2]!, password, cookie]) expect(all).not.toContain(secret);
      expect(all).toContain('[Redacted]');
    } finally {
      await app.close();
      await db.close();
    }
  });
});

describe('logging at warn and above', () => {
  it('writes no line for a request that succeeds, and one line with the request id for a failure', async () => {
    const { lines, stream } = captureLog();
    const db = openDatabase('sqlite::memory:');
    await migrateToLatest(db);
    const app = await buildApp(testConfig(), { db, logger: { level: 'warn', stream } });
    try {
      const ok = await app.inject({ url: '/healthz', headers: { 'x-request-id': 'quiet-1' } });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['x-request-id']).toBe('quiet-1');
      expect(lines).toEqual([]);
      // A database that went away: resolving the API key fails, a 500 that is logged.
      await db.close();
      const down = await app.inject({ url: '/api/v1/deployments/1/workspace', headers: { 'x-request-id': 'loud-1', authorization: 'Bearer svc_secret_never_logged' } });
      expect(down.statusCode).toBe(500);
      expect(down.json().error.code).toBe('internal_error');
      const logged = lines.map((line) => JSON.parse(line) as { reqId?: string; msg?: string; level?: number });
      expect(logged).toEqual([expect.objectContaining({ reqId: 'loud-1', msg: 'request failed', level: 50 })]);
      expect(lines.join('\n')).not.toContain('svc_secret_never_logged');
    } finally {
      await app.close();
    }
  });

  it('logs the detail of a query svc could not run (a broken report snapshot: 422 to the caller) at warn, with the request id', async () => {
    const { lines, stream } = captureLog();
    const db = openDatabase('sqlite::memory:');
    await migrateToLatest(db);
    const app = await buildApp(testConfig(), { db, logger: { level: 'warn', stream } });
    try {
      const publicId = `broken-${Date.now()}`;
      const s = await seedAccount(db.kysely, {
        users: [{ ref: 'alice', role: 'admin' }],
        deployments: [{ ref: 'prod', name: 'P', items: [
          { ref: 'rp', type: 'REPORT', name: 'R', createdBy: 'alice' },
          { ref: 'wb', type: 'WORKBOOK', name: 'W', createdBy: 'alice', dashboard: {
            publicId, status: 'published', allowEmbed: true,
            config: { widgets: [{ id: 'w-broken', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 } }] },
            reportSnapshots: [{ report: 'rp', name: 'R', kind: 'table' }],
          } },
        ] }],
      });
      const res = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/w-broken/data`, headers: { ...bearer(s.keys.alice!), 'x-request-id': 'broken-1' }, payload: {} });
      expect(res.statusCode).toBe(422);
      // The API client still gets the error body with its detail.
      expect(res.json().error).toMatchObject({ code: 'invalid_query', message: `report snapshot ${s.refs.rp} has neither meta.query nor sqlQuery` });
      const logged = lines.map((line) => JSON.parse(line) as { reqId?: string; msg?: string; level?: number; err?: { message?: string } });
      expect(logged).toEqual([expect.objectContaining({ reqId: 'broken-1', msg: 'query could not run', level: 40 })]);
      expect(logged[0]!.err!.message).toBe(`report snapshot ${s.refs.rp} has neither meta.query nor sqlQuery`);
      // A caller's own mistake (a 400) is told to the caller only.
      const bad = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/w-broken/data`, headers: bearer(s.keys.alice!), payload: { filters: 'nope' } });
      expect(bad.statusCode).toBe(400);
      expect(lines).toHaveLength(1);
    } finally {
      await app.close();
      await db.close();
    }
  });
});
