import cube from '@cubejs-client/core';
import type { Query } from '@cubejs-client/core';
import type { FastifyInstance } from 'fastify';
import { SignJWT, UnsecuredJWT } from 'jose';
import type { JWTPayload } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { cubePolicyViews } from '../../test/cube.js';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { demoRows } from '../../test/warehouse.js';

/**
 * Issue 36, Cube-style JWTs (docs/cube.md "A Cube JWT"): an admin makes a deployment's Cube API secret through the
 * platform API, a host's backend signs tokens with it (HS256), and the real @cubejs-client/core `cube(jwt, {apiUrl})`
 * reads svc listening on a port under the policies those claims make: the same rows as a viewer's widget. Tokens
 * signed otherwise (another secret, expired, not yet valid, `alg: none`, another algorithm) are 401s in Cube's
 * error shape, and a rotation or a revocation refuses the old secret's tokens at once.
 */
describeEachDialect('Cube JWTs', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  let apiUrl: string;
  const publicId = `cube-jwt-${uniqueSuffix()}`;
  const KEY = 'a test encryption key of at least thirty-two bytes';
  const BY_STATUS: Query = { measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.status'], order: { 'orders.status': 'asc' } };

  beforeAll(async () => {
    // Its own app, so that the secret is sealed (SVC_ENCRYPTION_KEY set), on the suite's database.
    app = await buildApp(testConfig({ encryptionKeys: [KEY] }), { db: t().db });
    const views = cubePolicyViews();
    const position = { x: 0, y: 0, w: 6, h: 3 };
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }],
      deployments: [{
        ref: 'prod', name: 'Prod', semanticViews: views,
        items: [{
          ref: 'wb', type: 'WORKBOOK', name: 'Cube', dashboard: {
            publicId, status: 'published', allowEmbed: true, title: 'Cube',
            config: { widgets: [{ id: 'by-status', type: 'CHART', position }] },
            reportSnapshots: [{ report: 'r1', kind: 'table', meta: { query: BY_STATUS } }],
          },
        }, { ref: 'r1', type: 'REPORT', name: 'By status' }],
      }, { ref: 'staging', name: 'Staging' }],
    });
    other = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Theirs' }] });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    apiUrl = `${address}/cubejs-api/v1`;
  });

  afterAll(async () => {
    await app.close();
  });

  const makeSecret = async (key = s.keys.alice!, deploymentId = s.refs.prod!) =>
    app.inject({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/cube-secret`, headers: bearer(key) });
  const sign = (secret: string, claims: JWTPayload, alg = 'HS256', expiresIn: string | number = '1h') =>
    new SignJWT(claims).setProtectedHeader({ alg }).setIssuedAt().setExpirationTime(expiresIn).sign(new TextEncoder().encode(secret));
  const load = (authorization: string, query: Query = BY_STATUS, headers: Record<string, string> = {}) =>
    app.inject({ url: `/cubejs-api/v1/load?query=${encodeURIComponent(JSON.stringify(query))}`, headers: { authorization, ...headers } });
  const countOf = (rows: Array<Record<string, unknown>>) => rows.reduce((sum, row) => sum + Number(row['orders.count']), 0);

  it('lets admins alone make the secret, shown once and stored sealed; another account\'s deployment is a 404', async () => {
    expect((await makeSecret(s.keys.bob!)).statusCode).toBe(403);
    expect((await makeSecret(other.keys.alice!)).statusCode).toBe(404);
    expect((await app.inject({ method: 'POST', url: `/api/v1/deployments/${s.refs.prod}/cube-secret` })).statusCode).toBe(401);
    const made = await makeSecret();
    expect(made.statusCode, made.body).toBe(201);
    const { secret, deploymentId, createdAt } = made.json<{ secret: string; deploymentId: number; createdAt: string }>();
    expect(deploymentId).toBe(s.refs.prod);
    expect(secret.length).toBeGreaterThanOrEqual(40);
    expect(Number.isNaN(Date.parse(createdAt))).toBe(false);
    expect(made.headers['cache-control']).toBe('no-store');
    const row = await t().db.kysely.selectFrom('deployments').select(['cube_secret']).where('id', '=', s.refs.prod!).executeTakeFirstOrThrow();
    expect(row.cube_secret).toMatch(/^svc-sealed:v1:/);
    expect(row.cube_secret).not.toContain(secret);
  });

  it('reads with the unmodified client under the claims\' policy: a tenant sees its rows only, the same as its viewer\'s widget', async () => {
    const { secret } = (await makeSecret()).json<{ secret: string }>();
    for (const tenant of ['customer-a', 'customer-b']) {
      const jwt = await sign(secret, { tenant, deploymentId: s.refs.prod });
      const set = await cube(jwt, { apiUrl }).load(BY_STATUS);
      expect(countOf(set.tablePivot())).toBe(demoRows().ordersOf(tenant).length);
      const viewer = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: tenant, securityContext: { tenant } });
      const widget = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/by-status/data`, headers: { authorization: `Embed-Token ${viewer.token}` }, payload: {} });
      const { columns, rows } = widget.json<{ columns: Array<{ name: string }>; rows: unknown[][] }>();
      expect(set.tablePivot()).toEqual(rows.map((r) => Object.fromEntries(columns.map((c, i) => [c.name, typeof r[i] === 'number' ? String(r[i]) : r[i]]))));
    }
    // The deployment named by the header instead of a claim, as an API key names one; `Bearer <jwt>` too.
    const jwt = await sign(secret, { tenant: 'customer-a' });
    const byHeader = await cube(jwt, { apiUrl, headers: { 'x-svc-deployment-id': String(s.refs.prod) } }).load(BY_STATUS);
    expect(countOf(byHeader.tablePivot())).toBe(demoRows().ordersOf('customer-a').length);
    const bearerJwt = await load(`Bearer ${jwt}`, BY_STATUS, { 'x-svc-deployment-id': String(s.refs.prod) });
    expect(bearerJwt.statusCode, bearerJwt.body).toBe(200);
    // Cube's deprecated place for the context, `u`; and the groups claim (Analysts see every row).
    const legacy = await cube(await sign(secret, { u: { tenant: 'customer-b' }, deploymentId: s.refs.prod }), { apiUrl }).load(BY_STATUS);
    expect(countOf(legacy.tablePivot())).toBe(demoRows().ordersOf('customer-b').length);
    const analyst = await cube(await sign(secret, { groups: ['Analysts'], deploymentId: s.refs.prod }), { apiUrl }).load(BY_STATUS);
    expect(countOf(analyst.tablePivot())).toBe(demoRows().orders.length);
    // No tenant claim: the row filter's `{securityContext.tenant}` matches nothing.
    const none = await cube(await sign(secret, { deploymentId: s.refs.prod }), { apiUrl }).load(BY_STATUS);
    expect(countOf(none.tablePivot())).toBe(0);
    // meta hides what the policy hides; the compiled SQL is for admins' keys only.
    const meta = await cube(await sign(secret, { tenant: 'customer-a', deploymentId: s.refs.prod }), { apiUrl }).meta();
    expect(meta.cubes.find((c) => c.name === 'orders')!.measures.map((m) => m.name)).not.toContain('orders.average_order_value');
    await expect(cube(jwt, { apiUrl, headers: { 'x-svc-deployment-id': String(s.refs.prod) } }).sql(BY_STATUS)).rejects.toMatchObject({ status: 403 });
  });

  it('refuses a token of another secret, expired, not yet valid, unsigned (alg none) or of another algorithm: 401 in Cube\'s error shape', async () => {
    const { secret } = (await makeSecret()).json<{ secret: string }>();
    const claims = { tenant: 'customer-a', deploymentId: s.refs.prod };
    const now = Math.floor(Date.now() / 1000);
    const refused = [
      await sign('not the secret, but long enough to be one', claims),
      await sign(secret, claims, 'HS256', now - 60),
      await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setNotBefore(now + 3600).setExpirationTime('2h').sign(new TextEncoder().encode(secret)),
      new UnsecuredJWT(claims).setExpirationTime('1h').encode(),
      await sign(secret, claims, 'HS512'),
      // The right secret, but for the staging deployment it is not the secret of.
      await sign(secret, { ...claims, deploymentId: s.refs.staging }),
      // The right secret, but no deployment named.
      await sign(secret, { tenant: 'customer-a' }),
    ];
    for (const jwt of refused) {
      const res = await load(jwt);
      expect(res.statusCode, jwt).toBe(401);
      expect(res.json()).toMatchObject({ code: 'unauthorized', field: 'Authorization', error: expect.any(String) as string });
      expect(res.body).not.toContain(secret);
    }
    await expect(cube(refused[0]!, { apiUrl }).load(BY_STATUS)).rejects.toMatchObject({ status: 401 });
    // A claim of the wrong type is a 401 too, not a 500.
    expect((await load(await sign(secret, { ...claims, groups: 'Analysts' }))).statusCode).toBe(401);
  });

  it('refuses the old secret\'s tokens once the secret is rotated, and every token once it is revoked', async () => {
    const first = (await makeSecret()).json<{ secret: string }>().secret;
    const claims = { tenant: 'customer-a', deploymentId: s.refs.prod };
    const old = await sign(first, claims);
    expect((await load(old)).statusCode).toBe(200);
    const second = (await makeSecret()).json<{ secret: string }>().secret;
    expect(second).not.toBe(first);
    expect((await load(old)).statusCode).toBe(401);
    const fresh = await sign(second, claims);
    expect((await load(fresh)).statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/deployments/${s.refs.prod}/cube-secret`, headers: bearer(s.keys.bob!) })).statusCode).toBe(403);
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/deployments/${s.refs.prod}/cube-secret`, headers: bearer(other.keys.alice!) })).statusCode).toBe(404);
    expect((await app.inject({ method: 'DELETE', url: `/api/v1/deployments/${s.refs.prod}/cube-secret`, headers: bearer(s.keys.alice!) })).statusCode).toBe(204);
    expect((await load(fresh)).statusCode).toBe(401);
    const audit = await app.inject({ url: '/api/v1/audit', headers: bearer(s.keys.alice!) });
    expect(audit.statusCode, audit.body).toBe(200);
    for (const action of ['cube_secret.create', 'cube_secret.rotate', 'cube_secret.revoke']) expect(audit.body).toContain(action);
  });
});
