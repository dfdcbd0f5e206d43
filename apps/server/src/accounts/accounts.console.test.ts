import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount } from '../../test/factory.js';
import { mintViewer } from '../../test/embed.js';
import type { SeededAccount } from '../../test/factory.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';

const PASSWORD = 'correct horse battery staple';

/** Console sessions (issue 3 scope 5): login sets an httpOnly cookie that authenticates a platform user. */
describeEachDialect('console sessions', (t) => {
  let clock = Date.parse('2026-06-01T12:00:00.000Z');
  let app: FastifyInstance;
  let s: SeededAccount;
  let email: string;

  beforeAll(async () => {
    app = await buildApp(testConfig({ rateLimits: { generateSession: 1000, exchange: 1000, login: 1000, windowMs: 60_000 } }), { db: t().db, now: () => new Date(clock) });
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin', password: PASSWORD }, { ref: 'nopass', role: 'member' }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [{ ref: 'r', type: 'REPORT', name: 'R', createdBy: 'alice' }] }],
    });
    email = (await t().db.kysely.selectFrom('users').select('email').where('id', '=', s.refs.alice!).executeTakeFirstOrThrow()).email;
  });

  afterAll(async () => {
    await app.close();
  });

  const login = (body: Record<string, unknown>, host = 'localhost:3000') =>
    app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { host }, payload: body });
  const cookieOf = (res: Awaited<ReturnType<typeof login>>) => {
    const header = res.headers['set-cookie'];
    const line = Array.isArray(header) ? header[0]! : header!;
    return { line, pair: line.split(';')[0]! };
  };
  const listing = (cookie: string) => app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: { cookie } });

  it('signs in with email (any case) and password: an httpOnly cookie, Lax on plain-http localhost', async () => {
    const res = await login({ email: email.toUpperCase(), password: PASSWORD });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().user).toMatchObject({ id: s.refs.alice, role: 'admin', tenantName: s.tenantName });
    const { line, pair } = cookieOf(res);
    expect(line).toMatch(/HttpOnly/i);
    expect(line).toMatch(/SameSite=Lax/i);
    expect(line).not.toMatch(/Secure/i);
    expect(pair).toMatch(/^svc_console=cs_/);
    expect(res.body).not.toContain(pair.split('=')[1]);
    expect((await listing(pair)).statusCode).toBe(200);
  });

  it('sets SameSite=None; Secure anywhere else, so that a private embed iframe sends it', async () => {
    const res = await login({ email, password: PASSWORD }, 'analytics.example.com');
    const { line } = cookieOf(res);
    expect(line).toMatch(/SameSite=None/i);
    expect(line).toMatch(/Secure/i);
  });

  it('answers the same 401 for a wrong password, an unknown email and a user without a password', async () => {
    const nopass = (await t().db.kysely.selectFrom('users').select('email').where('id', '=', s.refs.nopass!).executeTakeFirstOrThrow()).email;
    for (const body of [{ email, password: 'wrong' }, { email: 'nobody@nowhere.test', password: PASSWORD }, { email: nopass, password: '' + PASSWORD }]) {
      const res = await login(body);
      expect(res.statusCode).toBe(401);
      expect(res.json().error.message).toBe('email or password is wrong');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect((await login({ email })).json().error.field).toBe('password');
  });

  it('ends at logout and at expiry', async () => {
    const { pair } = cookieOf(await login({ email, password: PASSWORD }));
    expect((await listing(pair)).statusCode).toBe(200);
    const out = await app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { cookie: pair } });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/svc_console=;/);
    expect((await listing(pair)).statusCode).toBe(401);

    const second = cookieOf(await login({ email, password: PASSWORD })).pair;
    expect((await listing(second)).statusCode).toBe(200);
    clock += 12 * 3_600_000;
    try {
      expect((await listing(second)).statusCode).toBe(401);
    } finally {
      clock -= 12 * 3_600_000;
    }
  });

  it("answers who is calling (GET /api/v1/me): the user, the account and how they signed in, never the credential; 401 once signed out, 403 for an embed token", async () => {
    const { pair } = cookieOf(await login({ email, password: PASSWORD }));
    await t().db.kysely.updateTable('users').set({ first_name: 'Alice' }).where('id', '=', s.refs.alice!).execute();
    const expected = { user: { id: s.refs.alice, email, firstName: 'Alice', role: 'admin' }, account: { tenantName: s.tenantName } };
    const viaCookie = await app.inject({ url: '/api/v1/me', headers: { cookie: pair } });
    expect(viaCookie.statusCode, viaCookie.body).toBe(200);
    expect(viaCookie.json()).toMatchObject({ ...expected, signedInWith: 'console' });
    expect(viaCookie.headers['cache-control']).toBe('no-store');
    expect(viaCookie.body).not.toContain(pair.split('=')[1]);
    const account = (await t().db.kysely.selectFrom('users').select('account_id').where('id', '=', s.refs.alice!).executeTakeFirstOrThrow()).account_id;
    expect(viaCookie.json().account.id).toBe(account);

    const viaKey = await app.inject({ url: '/api/v1/me', headers: bearer(s.keys.nopass!) });
    expect(viaKey.statusCode, viaKey.body).toBe(200);
    expect(viaKey.json()).toMatchObject({ user: { id: s.refs.nopass, role: 'member', firstName: null }, account: { id: account }, signedInWith: 'api-key' });
    expect(viaKey.body).not.toContain(s.keys.nopass!);

    const viewer = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, externalId: 'me-viewer' });
    const embed = await app.inject({ url: '/api/v1/me', headers: viewer.headers });
    expect(embed.statusCode).toBe(403);
    expect(embed.json().error.field).toBe('Authorization');
    expect((await app.inject({ url: '/api/v1/me' })).statusCode).toBe(401);
    await app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: { cookie: pair } });
    expect((await app.inject({ url: '/api/v1/me', headers: { cookie: pair } })).statusCode).toBe(401);
  });

  it('refuses a write with the cookie alone (cross-site forgery), accepts it with X-Requested-With: svc', async () => {
    const { pair } = cookieOf(await login({ email, password: PASSWORD }));
    const url = `/api/v1/deployments/${s.refs.prod}/workspace/${s.refs.r}/favorite`;
    const forged = await app.inject({ method: 'PUT', url, headers: { cookie: pair } });
    expect(forged.statusCode).toBe(403);
    expect(forged.json().error.field).toBe('X-Requested-With');
    expect((await app.inject({ method: 'PUT', url, headers: { cookie: pair, 'x-requested-with': 'svc' } })).statusCode).toBe(204);
  });

  it("lets an admin's console session mint sessions like an admin's API key", async () => {
    const { pair } = cookieOf(await login({ email, password: PASSWORD }));
    const res = await app.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: { cookie: pair, 'x-requested-with': 'svc' }, payload: { deploymentId: s.refs.prod, externalId: 'x' } });
    expect(res.statusCode).toBe(200);
  });

  it('rate-limits login per client and email: 429 with the error body and retry-after', async () => {
    const limited = await buildApp(testConfig({ rateLimits: { generateSession: 2, exchange: 2, login: 2, windowMs: 60_000 } }), { db: t().db });
    try {
      const attempt = () => limited.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'wrong' } });
      expect((await attempt()).statusCode).toBe(401);
      expect((await attempt()).statusCode).toBe(401);
      const third = await attempt();
      expect(third.statusCode).toBe(429);
      expect(third.json().error).toMatchObject({ status: 429, code: 'too_many_requests' });
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      // Another email from the same client still gets through.
      expect((await limited.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'other@x.test', password: 'x' } })).statusCode).toBe(401);

      const exchange = () => limited.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId: 'ses_x' } });
      expect((await exchange()).statusCode).toBe(401);
      expect((await exchange()).statusCode).toBe(401);
      expect((await exchange()).statusCode).toBe(429);

      const generate = () => limited.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: { authorization: `Bearer ${s.keys.alice}` }, payload: { deploymentId: s.refs.prod, externalId: 'rl' } });
      expect((await generate()).statusCode).toBe(200);
      expect((await generate()).statusCode).toBe(200);
      expect((await generate()).statusCode).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
