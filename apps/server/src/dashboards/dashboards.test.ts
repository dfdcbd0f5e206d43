import { beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

const PASSWORD = 'correct horse battery staple';

/**
 * `GET /api/v1/embed/deployments/{deploymentId}/workbooks/{workbookId}/dashboard`, the dashboard of the in-embed
 * path /embed/d/<deployment_id>/app/workbook/<workbook_id>: the same dashboard and the same access rules as
 * `GET /api/v1/embed/dashboard/{publicId}`, checked 401, 400, 403, 404 and success in turn.
 */
describeEachDialect('embed workbook dashboard', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  let viewer: ViewerSession;
  let aliceEmail: string;
  let ids: { main: string; stage: string };

  beforeAll(async () => {
    app = t().app;
    const suffix = uniqueSuffix();
    ids = { main: `wbd-main-${suffix}`, stage: `wbd-stage-${suffix}` };
    const workbook = (ref: string, publicId: string, extra: Record<string, unknown> = {}) => ({
      ref, type: 'WORKBOOK' as const, name: ref, createdBy: 'alice',
      dashboard: { publicId, status: 'published' as const, allowEmbed: true, ...extra },
    });
    aliceEmail = `alice-${suffix}@dashboards.test`;
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin', email: aliceEmail, password: PASSWORD }, { ref: 'bob', role: 'member' }],
      deployments: [
        {
          ref: 'prod', name: 'Prod', items: [
            workbook('wb-main', ids.main, { title: 'Sales', config: { title: 'Sales' }, reportSnapshots: [{ report: 'rp', name: 'Pipeline', kind: 'vega' }] }),
            { ref: 'rp', type: 'REPORT', name: 'Pipeline', createdBy: 'alice' },
            workbook('wb-draft', `wbd-draft-${suffix}`, { status: 'draft' }),
            workbook('wb-archived', `wbd-archived-${suffix}`, { status: 'archived' }),
            workbook('wb-noembed', `wbd-noembed-${suffix}`, { allowEmbed: false }),
            { ref: 'wb-bare', type: 'WORKBOOK', name: 'No dashboard', createdBy: 'alice' },
          ],
        },
        { ref: 'stage', name: 'Stage', items: [workbook('wb-stage', ids.stage)] },
      ],
    });
    other = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Other', items: [workbook('wb-foreign', `wbd-foreign-${suffix}`)] }],
    });
    viewer = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod! });
  });

  const byWorkbook = (deploymentId: number | string, workbookId: number | string, headers: Record<string, string> = viewer.headers) =>
    app.inject({ url: `/api/v1/embed/deployments/${deploymentId}/workbooks/${workbookId}/dashboard`, headers });
  const byPublicId = (publicId: string, headers: Record<string, string> = viewer.headers) =>
    app.inject({ url: `/api/v1/embed/dashboard/${publicId}`, headers });

  describe('401', () => {
    it('answers 401 without a credential, with an unknown token or key, and with a revoked session', async () => {
      const none = await byWorkbook(s.refs.prod!, s.refs['wb-main']!, {});
      expect(none.statusCode).toBe(401);
      expect(none.json().error.code).toBe('unauthorized');
      expect((await byWorkbook(s.refs.prod!, s.refs['wb-main']!, { authorization: 'Embed-Token not.a.token' })).statusCode).toBe(401);
      expect((await byWorkbook(s.refs.prod!, s.refs['wb-main']!, bearer('svc_unknown_key_123'))).statusCode).toBe(401);
      const externalId = `gone-${uniqueSuffix()}`;
      const revoked = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, externalId });
      expect((await byWorkbook(s.refs.prod!, s.refs['wb-main']!, revoked.headers)).statusCode).toBe(200);
      const logout = await app.inject({ method: 'POST', url: '/api/v1/embed/session/revoke', headers: bearer(s.keys.alice!), payload: { externalId } });
      expect(logout.statusCode, logout.body).toBeLessThan(300);
      expect((await byWorkbook(s.refs.prod!, s.refs['wb-main']!, revoked.headers)).statusCode).toBe(401);
    });
  });

  describe('400', () => {
    it.each([['abc'], ['0'], ['-1'], ['1.5'], ['2147483648']])('answers 400 naming the parameter for the id %j', async (bad) => {
      const badDeployment = await byWorkbook(bad, s.refs['wb-main']!);
      expect(badDeployment.statusCode, badDeployment.body).toBe(400);
      expect(badDeployment.json().error).toMatchObject({ code: 'invalid_parameter', field: 'deploymentId' });
      const badWorkbook = await byWorkbook(s.refs.prod!, bad);
      expect(badWorkbook.statusCode, badWorkbook.body).toBe(400);
      expect(badWorkbook.json().error).toMatchObject({ code: 'invalid_parameter', field: 'workbookId' });
    });
  });

  describe('403', () => {
    it.each([['wb-draft'], ['wb-archived'], ['wb-noembed']])('answers 403 for %s, as the publicId route does', async (ref) => {
      const res = await byWorkbook(s.refs.prod!, s.refs[ref]!);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
      expect((await byWorkbook(s.refs.prod!, s.refs[ref]!, bearer(s.keys.alice!))).statusCode).toBe(403);
    });

    it("answers 403 to an embed session for a workbook of another deployment than the session's, 200 to an API key", async () => {
      const res = await byWorkbook(s.refs.stage!, s.refs['wb-stage']!);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
      expect((await byPublicId(ids.stage)).statusCode).toBe(403);
      expect((await byWorkbook(s.refs.stage!, s.refs['wb-stage']!, bearer(s.keys.alice!))).statusCode).toBe(200);
    });
  });

  describe('404', () => {
    it.each([
      ['a workbook without a dashboard', () => [s.refs.prod!, s.refs['wb-bare']!]],
      ['a report', () => [s.refs.prod!, s.refs.rp!]],
      ['a workbook named under the wrong deployment', () => [s.refs.prod!, s.refs['wb-stage']!]],
      ['a workbook of another account', () => [other.refs.prod!, other.refs['wb-foreign']!]],
      ["another account's workbook under the caller's deployment", () => [s.refs.prod!, other.refs['wb-foreign']!]],
      ['ids that name nothing', () => [2147483647, 2147483647]],
    ] as Array<[string, () => [number, number]]>)('answers 404 naming workbookId for %s', async (_what, path) => {
      const [deploymentId, workbookId] = path();
      for (const headers of [viewer.headers, bearer(s.keys.alice!)]) {
        const res = await byWorkbook(deploymentId, workbookId, headers);
        expect(res.statusCode, res.body).toBe(404);
        expect(res.json().error).toMatchObject({ code: 'not_found', field: 'workbookId' });
      }
    });
  });

  describe('200', () => {
    it('answers the same dashboard as GET /api/v1/embed/dashboard/{publicId}, for an embed token, an admin API key and the console cookie, and 403 to a member without a grant', async () => {
      const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: aliceEmail, password: PASSWORD } });
      expect(login.statusCode, login.body).toBe(200);
      const cookie = login.cookies.find((c) => c.name === 'svc_console')!.value;
      const res = await byWorkbook(s.refs.prod!, s.refs['wb-main']!);
      expect(res.statusCode, res.body).toBe(200);
      const dashboard = res.json();
      expect(dashboard).toEqual((await byPublicId(ids.main)).json());
      expect(dashboard).toMatchObject({ publicId: ids.main, title: 'Sales' });
      expect(JSON.stringify(dashboard)).toContain('Pipeline');
      // A member reaches only what DESIGN "Access" grants them: bob was granted nothing (http.isolation.test.ts
      // has the member with a grant).
      const member = await byWorkbook(s.refs.prod!, s.refs['wb-main']!, bearer(s.keys.bob!));
      expect(member.statusCode).toBe(403);
      expect(member.json()).toMatchObject({ error: { code: 'forbidden', field: 'publicId' } });
      const viaCookie = await app.inject({ url: `/api/v1/embed/deployments/${s.refs.prod}/workbooks/${s.refs['wb-main']}/dashboard`, cookies: { svc_console: cookie } });
      expect(viaCookie.statusCode, viaCookie.body).toBe(200);
      expect(viaCookie.json()).toEqual(dashboard);
    });
  });
});
