import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import { SignJWT, UnsecuredJWT, decodeJwt, decodeProtectedHeader, generateKeyPair } from 'jose';
import { describeEachDialect } from '../../test/dialects.js';
import { eventually } from '../../test/eventually.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { loadTokenSigner } from './sessions.tokens.js';

const SESSION_TTL = 60_000;
const TOKEN_TTL = 24 * 3_600_000;

/**
 * SPEC "Authentication" and "Embed session", DESIGN "Generate Session", "Exchange", "Revoke", "Embed users" and
 * the embed dashboard read. The app runs on a clock the tests move, so expiry is tested without sleeping.
 */
describeEachDialect('embed sessions', (t) => {
  let clock = Date.parse('2026-06-01T12:00:00.000Z');
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;

  beforeAll(async () => {
    app = await buildApp(testConfig({ embedLifetimes: { sessionTtlMs: SESSION_TTL, tokenTtlMs: TOKEN_TTL } }), { db: t().db, now: () => new Date(clock) });
    const dashboards = (suffix: string) => [
      { ref: 'wb', type: 'WORKBOOK' as const, name: 'Q1', createdBy: 'alice', dashboard: { publicId: `q1-${suffix}`, status: 'published' as const, allowEmbed: true, title: 'Q1', config: { title: 'Q1' }, reportSnapshots: [{ report: 'rp', name: 'Pipeline', kind: 'vega' }] } },
      { ref: 'rp', type: 'REPORT' as const, name: 'Pipeline', createdBy: 'alice' },
      { ref: 'wb-draft', type: 'WORKBOOK' as const, name: 'Draft', createdBy: 'alice', dashboard: { publicId: `draft-${suffix}`, status: 'draft' as const, allowEmbed: true } },
      { ref: 'wb-arch', type: 'WORKBOOK' as const, name: 'Old', createdBy: 'alice', dashboard: { publicId: `arch-${suffix}`, status: 'archived' as const, allowEmbed: true } },
      { ref: 'wb-noembed', type: 'WORKBOOK' as const, name: 'Internal', createdBy: 'alice', dashboard: { publicId: `noembed-${suffix}`, status: 'published' as const, allowEmbed: false } },
    ];
    const suffix = `${Math.random().toString(36).slice(2, 8)}`;
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }],
      deployments: [
        { ref: 'prod', name: 'Prod', items: dashboards(`a${suffix}`) },
        { ref: 'stage', name: 'Stage', items: [{ ref: 'wb-stage', type: 'WORKBOOK', name: 'S', createdBy: 'alice', dashboard: { publicId: `stage-a${suffix}`, status: 'published', allowEmbed: true } }] },
      ],
    });
    other = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Other prod', items: dashboards(`b${suffix}`) }],
    });
    publicIds = { q1: `q1-a${suffix}`, draft: `draft-a${suffix}`, arch: `arch-a${suffix}`, noembed: `noembed-a${suffix}`, stage: `stage-a${suffix}`, otherQ1: `q1-b${suffix}` };
  });
  let publicIds: Record<string, string>;

  afterAll(async () => {
    await app.close();
  });

  /** `key` null sends no Authorization header. */
  const generate = (body: Record<string, unknown>, key: string | null = s.keys.alice!, scheme = 'Bearer') =>
    app.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: key === null ? {} : { authorization: `${scheme} ${key}` }, payload: body });
  const exchange = (sessionId: string) => app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId } });
  const revoke = (body: Record<string, unknown>, key = s.keys.alice!) =>
    app.inject({ method: 'POST', url: '/api/v1/embed/session/revoke', headers: bearer(key), payload: body });
  const readDashboard = (publicId: string, authorization?: string) =>
    app.inject({ url: `/api/v1/embed/dashboard/${publicId}`, headers: authorization === undefined ? {} : { authorization } });

  /** A fresh viewer's session id and its embed token. */
  const viewerToken = async (body: Record<string, unknown> = {}, account = s): Promise<{ sessionId: string; token: string }> => {
    const minted = await generate({ deploymentId: account.refs.prod, externalId: `viewer-${Math.random().toString(36).slice(2)}`, ...body }, account.keys.alice!);
    expect(minted.statusCode, minted.body).toBe(200);
    const sessionId = minted.json().sessionId as string;
    const exchanged = await exchange(sessionId);
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    return { sessionId, token: exchanged.json().token as string };
  };

  describe('generate-session', () => {
    it('mints a single-use session id that expires after the session lifetime', async () => {
      const res = await generate({ deploymentId: s.refs.prod, externalId: 'Ann-1 ' });
      expect(res.statusCode, res.body).toBe(200);
      const { sessionId, expiresAt } = res.json();
      expect(sessionId).toMatch(/^ses_[0-9A-Za-z]{30,}$/);
      expect(expiresAt).toBe(new Date(clock + SESSION_TTL).toISOString());
    });

    it('accepts the admin key as Api-Key too', async () => {
      expect((await generate({ deploymentId: s.refs.prod, externalId: 'x' }, s.keys.alice, 'Api-Key')).statusCode).toBe(200);
    });

    it("creates the embed user in the account's tenant by default, lowercased and trimmed, and updates it on the next session", async () => {
      const externalId = `Carol-${Math.random().toString(36).slice(2, 8)}`;
      expect((await generate({ deploymentId: s.refs.prod, externalId: `  ${externalId} `, email: 'carol@c.test', groups: ['sales'], userAttributes: { region: 'eu' } })).statusCode).toBe(200);
      expect((await generate({ deploymentId: s.refs.prod, externalId, username: 'carol', firstName: 'Carol' })).statusCode).toBe(200);
      const users = (await app.inject({ url: `/api/v1/embed/users?embedTenantName=${s.tenantName}`, headers: bearer(s.keys.alice!) })).json().users;
      const carol = users.find((u: { externalId: string }) => u.externalId === externalId.toLowerCase());
      expect(carol).toMatchObject({ embedTenantName: s.tenantName, username: 'carol', firstName: 'Carol', email: 'carol@c.test', groups: ['sales'], userAttributes: { region: 'eu' } });
      expect(users.filter((u: { externalId: string }) => u.externalId === externalId.toLowerCase())).toHaveLength(1);
    });

    it('puts the viewer in the named embed tenant', async () => {
      const { token } = await viewerToken({ embedTenantName: 'customer-a' });
      expect(decodeJwt(token).ten).toBe('customer-a');
      const listed = (await app.inject({ url: '/api/v1/embed/users?embedTenantName=customer-a', headers: bearer(s.keys.alice!) })).json().users;
      expect(listed.length).toBeGreaterThan(0);
      expect(listed.every((u: { embedTenantName: string }) => u.embedTenantName === 'customer-a')).toBe(true);
    });

    it.each([
      [{ externalId: 'a' }, 'deploymentId'],
      [{ deploymentId: 'x', externalId: 'a' }, 'deploymentId'],
      [{ deploymentId: 1 }, 'externalId'],
      [{ deploymentId: 1, externalId: 'a', internalId: 'b@c.d' }, 'internalId'],
      [{ deploymentId: 1, externalId: ' ' }, 'externalId'],
      [{ deploymentId: 1, externalId: 'a', embedTenantName: 'Bad_Name' }, 'embedTenantName'],
      [{ deploymentId: 1, externalId: 'a', embedTenantname: 'typo' }, 'embedTenantname'],
      [{ deploymentId: 1, externalId: 'a', groups: [{}] }, 'groups.0'],
      [{ deploymentId: 1, externalId: 'a', settings: { allowAi: 'yes' } }, 'settings.allowAi'],
    ] as Array<[Record<string, unknown>, string]>)('answers 400 naming the field for %j', async (body, field) => {
      const res = await generate({ ...body, ...(body.deploymentId === 1 ? { deploymentId: s.refs.prod } : {}) });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error.field).toBe(field);
    });

    it('answers 401 without a key or with an unknown one, 403 for a member, 404 for a deployment of another account', async () => {
      expect((await generate({ deploymentId: s.refs.prod, externalId: 'a' }, null)).statusCode).toBe(401);
      expect((await generate({ deploymentId: s.refs.prod, externalId: 'a' }, 'svc_unknown_key')).statusCode).toBe(401);
      const member = await generate({ deploymentId: s.refs.prod, externalId: 'a' }, s.keys.bob);
      expect(member.statusCode).toBe(403);
      expect(member.json().error.code).toBe('forbidden');
      const foreign = await generate({ deploymentId: other.refs.prod, externalId: 'a' });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json().error.field).toBe('deploymentId');
    });

    it('mints an internalId session for a platform user of the account, 404 for an unknown email', async () => {
      const email = (await t().db.kysely.selectFrom('users').select('email').where('id', '=', s.refs.bob!).executeTakeFirstOrThrow()).email;
      const res = await generate({ deploymentId: s.refs.prod, internalId: email.toUpperCase() });
      expect(res.statusCode, res.body).toBe(200);
      const token = (await exchange(res.json().sessionId)).json().token as string;
      expect(decodeJwt(token)).toMatchObject({ pu: s.refs.bob, eu: null, ten: null });
      // Issue 20: the session opens what Bob could open through the API. Q1 is Alice's and not granted to him.
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${token}`)).statusCode).toBe(403);
      const alice = (await t().db.kysely.selectFrom('users').select('email').where('id', '=', s.refs.alice!).executeTakeFirstOrThrow()).email;
      const admin = (await exchange((await generate({ deploymentId: s.refs.prod, internalId: alice })).json().sessionId)).json().token as string;
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${admin}`)).statusCode).toBe(200);
      expect((await generate({ deploymentId: s.refs.prod, internalId: 'nobody@nowhere.test' })).statusCode).toBe(404);
    });

    it('writes nothing when it fails', async () => {
      // Scoped to the caller's account and the one it named: other test files write into the same database at once.
      const embedUsers = () => t().db.kysely.selectFrom('embed_users as u').innerJoin('accounts as a', 'a.id', 'u.account_id')
        .where('a.tenant_name', 'in', [s.tenantName, other.tenantName]).select((e) => e.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const before = await embedUsers();
      expect((await generate({ deploymentId: other.refs.prod, externalId: 'ghost' })).statusCode).toBe(404);
      const after = await embedUsers();
      expect(Number(after.n)).toBe(Number(before.n));
    });
  });

  describe('exchange (Embed session state table)', () => {
    it('minted -> redeemed: returns a token valid for the token lifetime, with the effective end and the warning', async () => {
      const minted = await generate({ deploymentId: s.refs.prod, externalId: 'dora' });
      const res = await exchange(minted.json().sessionId);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.expiresAt).toBe(new Date(clock + TOKEN_TTL).toISOString());
      expect(body.effectiveEnd).toBe(new Date(clock + TOKEN_TTL - 3_600_000).toISOString());
      expect(body.expiringAt).toBe(new Date(clock + TOKEN_TTL - 3_600_000 - 1_800_000).toISOString());
      const claims = decodeJwt(body.token);
      expect(claims).toMatchObject({ iss: 'svc', aud: 'svc-embed', acc: expect.any(Number), dep: s.refs.prod, ten: s.tenantName, pu: null });
      expect(claims.exp).toBe(Math.floor((clock + TOKEN_TTL) / 1000));
      expect(claims.eff).toBe(clock + TOKEN_TTL - 3_600_000);
      expect(decodeProtectedHeader(body.token).alg).toBe('EdDSA');
    });

    it('redeemed -> second exchange: 401 (single use)', async () => {
      const { sessionId } = await viewerToken();
      const again = await exchange(sessionId);
      expect(again.statusCode).toBe(401);
      expect(again.json().error).toMatchObject({ status: 401, code: 'unauthorized', field: 'sessionId' });
    });

    it('minted -> the session lifetime passes: 401', async () => {
      const minted = await generate({ deploymentId: s.refs.prod, externalId: 'late' });
      clock += SESSION_TTL;
      try {
        expect((await exchange(minted.json().sessionId)).statusCode).toBe(401);
      } finally {
        clock -= SESSION_TTL;
      }
    });

    it('an unknown or malformed id: 401', async () => {
      expect((await exchange('ses_doesnotexist')).statusCode).toBe(401);
      expect((await exchange('nope')).statusCode).toBe(401);
      expect((await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: {} })).json().error.field).toBe('sessionId');
    });

    it('include: answers the session and dashboard reads with the token, exactly as the GETs with that token do', async () => {
      const minted = await generate({ deploymentId: s.refs.prod, externalId: 'with-reads' });
      const res = await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId: minted.json().sessionId, include: { session: true, dashboard: publicIds.q1 } } });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json() as { token: string; included: Record<string, { status: number; body: unknown }> };
      const authorization = `Embed-Token ${body.token}`;
      const session = await app.inject({ url: '/api/v1/embed/session', headers: { authorization } });
      const dashboard = await readDashboard(publicIds.q1!, authorization);
      expect(body.included).toEqual({ session: { status: 200, body: session.json() }, dashboard: { status: 200, body: dashboard.json() } });
      expect((body.included.session!.body as { session: { deploymentId: number } }).session.deploymentId).toBe(s.refs.prod);
      expect((body.included.dashboard!.body as { publicId: string }).publicId).toBe(publicIds.q1);
    });

    it('include: a dashboard the token may not read is its own refusal, with the error body, and the token still works', async () => {
      const cases: Array<[string, number]> = [[publicIds.stage!, 403], [publicIds.draft!, 403], [publicIds.otherQ1!, 404], ['no-such-dashboard', 404]];
      for (const [publicId, status] of cases) {
        const minted = await generate({ deploymentId: s.refs.prod, externalId: `refused-${status}` });
        const res = await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId: minted.json().sessionId, include: { dashboard: publicId } } });
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json() as { token: string; included: { session?: unknown; dashboard: { status: number; body: { error: { status: number; field: string } } } } };
        expect(body.included.session).toBeUndefined();
        expect(body.included.dashboard.status).toBe(status);
        expect(body.included.dashboard.body.error).toMatchObject({ status, field: 'publicId' });
        expect((await readDashboard(publicIds.q1!, `Embed-Token ${body.token}`)).statusCode).toBe(200);
      }
    });

    it('include: a bad include is a 400 naming the field, and the id is not spent', async () => {
      const minted = await generate({ deploymentId: s.refs.prod, externalId: 'bad-include' });
      const sessionId = minted.json().sessionId as string;
      for (const [include, field] of [[{ comments: true }, 'include'], [{ session: 'yes' }, 'include.session'], [{ dashboard: '' }, 'include.dashboard'], ['session', 'include']] as const) {
        const res = await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId, include } });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error.field).toContain(field);
      }
      expect((await exchange(sessionId)).statusCode).toBe(200);
    });

    it('include with a spent id: 401 and nothing included', async () => {
      const { sessionId } = await viewerToken();
      const res = await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId, include: { session: true, dashboard: publicIds.q1 } } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).not.toHaveProperty('included');
    });

    it('two concurrent exchanges of one id: one 200 and one 401', async () => {
      for (let round = 0; round < 5; round++) {
        const minted = await generate({ deploymentId: s.refs.prod, externalId: `race-${round}` });
        const [a, b] = await Promise.all([exchange(minted.json().sessionId), exchange(minted.json().sessionId)]);
        expect([a.statusCode, b.statusCode].sort()).toEqual([200, 401]);
      }
    });

    it('minted -> revoked before the exchange: 401', async () => {
      const minted = await generate({ deploymentId: s.refs.prod, externalId: 'revoked-early' });
      expect((await revoke({ sessionId: minted.json().sessionId })).statusCode).toBe(204);
      expect((await exchange(minted.json().sessionId)).statusCode).toBe(401);
    });
  });

  describe('embed token authentication', () => {
    it('accepts Embed-Token and Bearer, case-sensitively', async () => {
      const { token } = await viewerToken();
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${token}`)).statusCode).toBe(200);
      expect((await readDashboard(publicIds.q1!, `Bearer ${token}`)).statusCode).toBe(200);
      expect((await readDashboard(publicIds.q1!, `embed-token ${token}`)).statusCode).toBe(401);
      expect((await readDashboard(publicIds.q1!, `bearer ${token}`)).statusCode).toBe(401);
      expect((await readDashboard(publicIds.q1!, `Api-Key ${token}`)).statusCode).toBe(401);
      expect((await readDashboard(publicIds.q1!)).statusCode).toBe(401);
    });

    it('token valid -> revoked: refused with 401 on the next request', async () => {
      const { sessionId, token } = await viewerToken();
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${token}`)).statusCode).toBe(200);
      expect((await revoke({ sessionId })).statusCode).toBe(204);
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${token}`)).statusCode).toBe(401);
    });

    it('works until its nominal expiry, then 401', async () => {
      const { token } = await viewerToken();
      clock += TOKEN_TTL - 1000;
      try {
        expect((await readDashboard(publicIds.q1!, `Embed-Token ${token}`)).statusCode).toBe(200);
        clock += 1000;
        expect((await readDashboard(publicIds.q1!, `Embed-Token ${token}`)).statusCode).toBe(401);
      } finally {
        clock -= TOKEN_TTL;
      }
    });

    it('refuses every forgery: tampered payload, another key, alg none, HS256 keyed with the public key, another account', async () => {
      const { token } = await viewerToken();
      const claims = decodeJwt(token);
      const [header, , signature] = token.split('.');
      const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, dep: other.refs.prod })).toString('base64url')}.${signature}`;
      const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
      const otherKey = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA' }).sign(privateKey);
      const none = new UnsecuredJWT(claims).encode();
      const publicJwk = (await t().db.kysely.selectFrom('server_keys').select('public_jwk').where('name', '=', 'embed-token').executeTakeFirstOrThrow()).public_jwk;
      const confused = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(publicJwk));
      const confusedX = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(Buffer.from(JSON.parse(publicJwk).x, 'base64url'));
      for (const forged of [tampered, otherKey, none, confused, confusedX, `${token}x`, 'a.b.c', token.replace(/\..*$/, '')]) {
        const res = await readDashboard(publicIds.q1!, `Embed-Token ${forged}`);
        expect(res.statusCode, forged).toBe(401);
      }
      // Signed with the server's own key but naming a session of another account: the session does not resolve.
      const signer = await loadTokenSigner(t().db.kysely, undefined, () => new Date(clock));
      const foreign = await viewerToken({}, other);
      const foreignClaims = decodeJwt(foreign.token);
      const crossed = await signer.sign({ sid: foreignClaims.sid as number, acc: claims.acc as number, dep: claims.dep as number, ten: claims.ten as string, eu: claims.eu as number, pu: null, eff: claims.eff as number, wrn: claims.wrn as number }, clock, clock + TOKEN_TTL);
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${crossed}`)).statusCode).toBe(401);
      // Another account's genuine token reads its own account only: this account's publicId does not resolve.
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${foreign.token}`)).statusCode).toBe(404);
      expect((await readDashboard(publicIds.otherQ1!, `Embed-Token ${foreign.token}`)).statusCode).toBe(200);
    });

    it('keeps embed tokens off the platform API (403) and API keys off nothing they may use', async () => {
      const { token } = await viewerToken();
      const res = await app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode).toBe(403);
      expect((await generate({ deploymentId: s.refs.prod, externalId: 'a' }, token)).statusCode).toBe(403);
    });
  });

  describe('embed tokens held in memory', () => {
    /**
     * A second app over the same database whose queries are counted (a Kysely plugin that only observes), so the
     * test sees every statement the request path sends. The platform API refuses an embed token (403) before its
     * handler reads anything: whatever such a request queries, authentication queried.
     */
    it('answer a token seen before without any query, and read the session again once it is revoked', async () => {
      const counter = { queries: 0 };
      // Counted as results come back: a statement compiled once (db.prepared.ts) is transformed only once.
      const counting: KyselyPlugin = {
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          counter.queries++;
          return args.result;
        },
      };
      const observed = await buildApp(testConfig(), { db: { ...t().db, kysely: t().db.kysely.withPlugin(counting) }, now: () => new Date(clock) });
      try {
        const { sessionId, token } = await viewerToken();
        const refused = () => observed.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: { authorization: `Embed-Token ${token}` } });
        // On PostgreSQL the seeding's and the minting's own notifications may still be on their way: settle first.
        const settled = await eventually(async () => {
          const before = counter.queries;
          expect((await refused()).statusCode).toBe(403);
          return counter.queries === before;
        });
        expect(settled).toBe(true);
        const before = counter.queries;
        for (let i = 0; i < 50; i++) expect((await refused()).statusCode).toBe(403);
        expect(counter.queries - before).toBe(0);

        expect((await revoke({ sessionId })).statusCode).toBe(204);
        const afterRevoke = counter.queries;
        const res = await refused();
        expect(res.statusCode).toBe(401);
        expect(counter.queries).toBeGreaterThan(afterRevoke);
      } finally {
        await observed.close();
      }
    });
  });

  describe('HS256 with SVC_JWT_SECRET', () => {
    it('signs with HS256 when a secret is configured, and each server refuses the other algorithm', async () => {
      const hs = await buildApp(testConfig({ jwtSecret: 'a-test-secret-that-is-at-least-32-bytes-long' }), { db: t().db, now: () => new Date(clock) });
      try {
        const minted = await generate({ deploymentId: s.refs.prod, externalId: 'hs-viewer' });
        const exchanged = await hs.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId: minted.json().sessionId } });
        expect(exchanged.statusCode, exchanged.body).toBe(200);
        const hsToken = exchanged.json().token as string;
        expect(decodeProtectedHeader(hsToken).alg).toBe('HS256');
        const read = (a: FastifyInstance, token: string) => a.inject({ url: `/api/v1/embed/dashboard/${publicIds.q1}`, headers: { authorization: `Embed-Token ${token}` } });
        expect((await read(hs, hsToken)).statusCode).toBe(200);
        expect((await read(app, hsToken)).statusCode).toBe(401);
        const { token: edToken } = await viewerToken();
        expect((await read(hs, edToken)).statusCode).toBe(401);
      } finally {
        await hs.close();
      }
    });

    it('refuses to start with a secret shorter than 32 bytes', async () => {
      await expect(buildApp(testConfig({ jwtSecret: 'too-short' }), { db: t().db })).rejects.toThrow(/SVC_JWT_SECRET must be at least 32 bytes/);
    });
  });

  describe('GET /api/v1/embed/session', () => {
    it("tells the embed who it is, and { session: null } without a valid token", async () => {
      const { token, sessionId } = await viewerToken({ embedTenantName: 'customer-w' });
      const res = await app.inject({ url: '/api/v1/embed/session', headers: { authorization: `Embed-Token ${token}` } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ session: { mode: 'signed', deploymentId: s.refs.prod, embedTenant: 'customer-w', embedUserId: expect.any(Number), userId: null, allowEmbedComments: false, embedTheme: {}, defaults: { timezone: null, locale: null }, commentEventText: false, explore: 'none', filters: {}, lockedFilters: [] } });
      expect((await app.inject({ url: '/api/v1/embed/session' })).json()).toEqual({ session: null });
      // The host's backend opts in to comment text on the page's svc:event:comment when it mints the session.
      const withText = await viewerToken({ embedTenantName: 'customer-w', settings: { commentEventText: true } });
      expect((await app.inject({ url: '/api/v1/embed/session', headers: { authorization: `Embed-Token ${withText.token}` } })).json().session.commentEventText).toBe(true);
      const refused = await generate({ deploymentId: s.refs.prod, externalId: 'bad-setting', settings: { commentEventText: 'yes' } });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error.field).toContain('commentEventText');
      // settings.explore (issue 35): the embed learns the level it was minted with; an unknown level is a 400.
      for (const level of ['view', 'create'] as const) {
        const explorer = await viewerToken({ embedTenantName: 'customer-w', settings: { explore: level } });
        expect((await app.inject({ url: '/api/v1/embed/session', headers: { authorization: `Embed-Token ${explorer.token}` } })).json().session.explore).toBe(level);
      }
      const badLevel = await generate({ deploymentId: s.refs.prod, externalId: 'bad-level', settings: { explore: 'edit' } });
      expect(badLevel.statusCode).toBe(400);
      expect(badLevel.json().error.field).toContain('explore');
      expect((await revoke({ sessionId })).statusCode).toBe(204);
      expect((await app.inject({ url: '/api/v1/embed/session', headers: { authorization: `Embed-Token ${token}` } })).json()).toEqual({ session: null });
    });
  });

  describe('GET /api/v1/embed/dashboard/{publicId}', () => {
    it('returns the Dashboard with its config and report snapshots', async () => {
      const { token } = await viewerToken();
      const res = await readDashboard(publicIds.q1!, `Embed-Token ${token}`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ publicId: publicIds.q1, status: 'published', allowEmbed: true, deploymentId: s.refs.prod, config: { title: 'Q1' } });
      expect(res.json().reportSnapshots).toHaveLength(1);
    });

    it('404 for a publicId that does not resolve, 403 for draft, archived, not embeddable or another deployment', async () => {
      const { token } = await viewerToken();
      const auth = `Embed-Token ${token}`;
      expect((await readDashboard('no-such-dashboard', auth)).statusCode).toBe(404);
      expect((await readDashboard(publicIds.otherQ1!, auth)).statusCode).toBe(404);
      for (const id of [publicIds.draft, publicIds.arch, publicIds.noembed, publicIds.stage]) {
        const res = await readDashboard(id!, auth);
        expect(res.statusCode, id).toBe(403);
        expect(res.json().error).toMatchObject({ code: 'forbidden', field: 'publicId' });
      }
    });
  });

  describe('revoke and logout', () => {
    it('is idempotent: unknown and already revoked ids answer 204', async () => {
      const { sessionId } = await viewerToken();
      expect((await revoke({ sessionId })).statusCode).toBe(204);
      expect((await revoke({ sessionId })).statusCode).toBe(204);
      expect((await revoke({ sessionId: 'ses_unknown' })).statusCode).toBe(204);
    });

    it("logout by externalId revokes every session of that viewer and no one else's", async () => {
      const a1 = await viewerToken({ externalId: 'logout-me', embedTenantName: 'customer-l' });
      const a2 = await viewerToken({ externalId: 'logout-me', embedTenantName: 'customer-l' });
      const sameIdOtherTenant = await viewerToken({ externalId: 'logout-me', embedTenantName: 'customer-m' });
      expect((await revoke({ externalId: 'Logout-Me', embedTenantName: 'customer-l' })).statusCode).toBe(204);
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${a1.token}`)).statusCode).toBe(401);
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${a2.token}`)).statusCode).toBe(401);
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${sameIdOtherTenant.token}`)).statusCode).toBe(200);
    });

    it('answers 400 for neither or both of sessionId and externalId, 403 for a member, 401 without a key', async () => {
      expect((await revoke({})).statusCode).toBe(400);
      expect((await revoke({ sessionId: 'a', externalId: 'b' })).statusCode).toBe(400);
      expect((await revoke({ sessionId: 'a' }, s.keys.bob)).statusCode).toBe(403);
      expect((await app.inject({ method: 'POST', url: '/api/v1/embed/session/revoke', payload: { sessionId: 'a' } })).statusCode).toBe(401);
    });

    it('cannot revoke the sessions of another account', async () => {
      const foreign = await viewerToken({}, other);
      expect((await revoke({ sessionId: foreign.sessionId })).statusCode).toBe(204);
      expect((await readDashboard(publicIds.otherQ1!, `Embed-Token ${foreign.token}`)).statusCode).toBe(200);
    });
  });

  describe('embed users', () => {
    it('deleting an embed user revokes their sessions; 404 for one of another account', async () => {
      const { token } = await viewerToken({ externalId: 'to-delete', embedTenantName: 'customer-d' });
      const users = (await app.inject({ url: '/api/v1/embed/users?embedTenantName=customer-d', headers: bearer(s.keys.alice!) })).json().users;
      const id = users.find((u: { externalId: string }) => u.externalId === 'to-delete').id as number;
      expect((await app.inject({ method: 'DELETE', url: `/api/v1/embed/users/${id}`, headers: bearer(other.keys.alice!) })).statusCode).toBe(404);
      expect((await app.inject({ method: 'DELETE', url: `/api/v1/embed/users/${id}`, headers: bearer(s.keys.bob!) })).statusCode).toBe(403);
      expect((await app.inject({ method: 'DELETE', url: `/api/v1/embed/users/${id}`, headers: bearer(s.keys.alice!) })).statusCode).toBe(204);
      expect((await readDashboard(publicIds.q1!, `Embed-Token ${token}`)).statusCode).toBe(401);
      expect((await app.inject({ method: 'DELETE', url: `/api/v1/embed/users/${id}`, headers: bearer(s.keys.alice!) })).statusCode).toBe(404);
    });

    it("lists only the caller's account", async () => {
      await viewerToken({ externalId: 'other-viewer', embedTenantName: 'customer-o' }, other);
      const users = (await app.inject({ url: '/api/v1/embed/users', headers: bearer(s.keys.alice!) })).json().users;
      expect(users.some((u: { externalId: string }) => u.externalId === 'other-viewer')).toBe(false);
    });
  });
});
