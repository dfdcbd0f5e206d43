import type { FastifyInstance } from 'fastify';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { demoRows } from '../../test/warehouse.js';
import type { SemanticView } from '../data/semantic/semantic.model.js';
import { DEMO_SEMANTIC_VIEWS } from '../data/warehouse/warehouse.demo.js';
import { PREVIEW_TOKEN_TTL_MS } from './sessions.service.js';

/**
 * Issue 34 part 4, "View as a customer" (docs/console.md; docs/authoring.md "Previewing as a customer"): an admin
 * mints a preview session for one dashboard, and the real embed page shows it, published or its draft, as a viewer
 * of that tenant and context would see it, framed by the console only.
 */
describeEachDialect('preview sessions (View as a customer)', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  const suffix = uniqueSuffix();
  const ids = { shown: `preview-${suffix}`, neighbour: `preview-n-${suffix}`, fresh: `preview-f-${suffix}`, theirs: `preview-t-${suffix}` };
  const admin = () => bearer(s.keys.alice!);

  const call = (method: 'GET' | 'POST' | 'PUT', url: string, headers: Record<string, string>, body?: unknown) =>
    app.inject({ method, url, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
  /** A dashboard of one CHART widget, `id`, counting orders (by status when `byStatus`). */
  const dashboard = (publicId: string, id: string, byStatus = false) => ({
    publicId, title: `Orders ${id}`,
    config: { widgets: [{ id, type: 'CHART' as const, position: { x: 0, y: 0, w: 12, h: 4 } }] },
    reportSnapshots: [{ name: id, title: id, kind: 'table' as const, meta: { query: { measures: ['orders.count'], ...(byStatus ? { dimensions: ['orders.status'] } : {}) } } }],
  });
  const make = async (account: SeededAccount, body: ReturnType<typeof dashboard>, publish: boolean) => {
    const created = await call('POST', `/api/v1/deployments/${account.refs.prod}/dashboards`, bearer(account.keys.alice!), body);
    expect(created.statusCode, created.body).toBe(201);
    if (publish) expect((await call('POST', `/api/v1/dashboards/${body.publicId}/publish`, bearer(account.keys.alice!))).statusCode).toBe(200);
  };
  const preview = (publicId: string, body: unknown, headers = admin()) => call('POST', `/api/v1/dashboards/${publicId}/preview-sessions`, headers, body);
  /** A preview session redeemed: its token's headers, and the exchange's answer. */
  const viewAs = async (publicId: string, body: unknown) => {
    const minted = await preview(publicId, body);
    expect(minted.statusCode, minted.body).toBe(201);
    const exchanged = await call('POST', '/api/v1/embed/session/token', {}, { sessionId: minted.json<{ sessionId: string }>().sessionId });
    expect(exchanged.statusCode, exchanged.body).toBe(200);
    return { headers: { authorization: `Embed-Token ${exchanged.json<{ token: string }>().token}` }, minted: minted.json<{ sessionId: string; expiresAt: string; url: string }>(), exchanged: exchanged.json<{ expiresAt: string }>() };
  };
  const rowsOf = async (headers: Record<string, string>, publicId: string, widgetId: string) => {
    const res = await call('POST', `/api/v1/embed/dashboard/${publicId}/widgets/${widgetId}/data`, headers, {});
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: unknown[][] }>().rows;
  };

  beforeAll(async () => {
    app = t().app;
    // The demo's row policy: every viewer reads its own tenant's orders.
    const views: SemanticView[] = structuredClone(DEMO_SEMANTIC_VIEWS).map((view) => (view.name !== 'orders' ? view : {
      ...view, preAggregations: undefined,
      accessPolicy: [{ group: '*', rowLevel: { filters: [{ member: 'orders.tenant', operator: 'equals', values: ['{securityContext.tenant}'] }] } }],
    }));
    s = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }], deployments: [{ ref: 'prod', name: 'Prod', semanticViews: views }] });
    other = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Theirs', semanticViews: views }] });
    for (const name of ['customer-a', 'customer-b']) expect((await call('POST', '/api/v1/embed/tenants', admin(), { name })).statusCode).toBe(201);
    await make(s, dashboard(ids.shown, 'total'), true);
    await make(s, dashboard(ids.neighbour, 'total'), true);
    await make(s, dashboard(ids.fresh, 'total'), false);
    await make(other, dashboard(ids.theirs, 'total'), true);
  });

  it("shows each tenant its own rows through the viewer's policy step, and adds no embed user", async () => {
    const usersBefore = (await call('GET', '/api/v1/embed/users', admin())).json<{ users: unknown[] }>().users.length;
    const a = await viewAs(ids.shown, { embedTenantName: 'customer-a', securityContext: { tenant: 'customer-a' } });
    const b = await viewAs(ids.shown, { embedTenantName: 'customer-b', securityContext: { tenant: 'customer-b' } });
    const { ordersOf } = demoRows();
    expect(ordersOf('customer-a').length).not.toBe(ordersOf('customer-b').length);
    expect(Number((await rowsOf(a.headers, ids.shown, 'total'))[0]![0])).toBe(ordersOf('customer-a').length);
    expect(Number((await rowsOf(b.headers, ids.shown, 'total'))[0]![0])).toBe(ordersOf('customer-b').length);
    const session = (await call('GET', '/api/v1/embed/session', a.headers)).json<{ session: { embedTenant: string | null; embedUserId: number | null; userId: number | null } }>().session;
    expect(session).toMatchObject({ embedTenant: 'customer-a', embedUserId: null, userId: null });
    expect((await call('GET', '/api/v1/embed/users', admin())).json<{ users: unknown[] }>().users.length).toBe(usersBefore);
    const audit = (await call('GET', '/api/v1/audit', admin())).json<{ items: Array<{ action: string; target: { id: string }; detail: Record<string, unknown> }> }>().items;
    expect(audit.find((e) => e.action === 'dashboard.preview' && e.target.id === ids.shown)?.detail).toMatchObject({ securityContextKeys: ['tenant'] });
  });

  it('opens that dashboard only, once, for an hour at most, and writes no comment', async () => {
    const minted = await preview(ids.shown, { securityContext: { tenant: 'customer-a' } });
    expect(minted.statusCode).toBe(201);
    const { sessionId, expiresAt, url } = minted.json<{ sessionId: string; expiresAt: string; url: string }>();
    expect(url).toBe(`/embed/dashboard/${ids.shown}`);
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(5 * 60_000 + 1000);
    const exchanged = await call('POST', '/api/v1/embed/session/token', {}, { sessionId });
    expect(exchanged.statusCode).toBe(200);
    expect(Date.parse(exchanged.json<{ expiresAt: string }>().expiresAt) - Date.now()).toBeLessThanOrEqual(PREVIEW_TOKEN_TTL_MS + 1000);
    expect((await call('POST', '/api/v1/embed/session/token', {}, { sessionId })).statusCode).toBe(401);
    const headers = { authorization: `Embed-Token ${exchanged.json<{ token: string }>().token}` };
    expect((await call('GET', `/api/v1/embed/dashboard/${ids.shown}`, headers)).statusCode).toBe(200);
    const neighbour = await call('GET', `/api/v1/embed/dashboard/${ids.neighbour}`, headers);
    expect(neighbour.statusCode).toBe(403);
    expect((await call('POST', `/api/v1/embed/dashboard/${ids.neighbour}/widgets/total/data`, headers, {})).statusCode).toBe(403);
    expect((await call('GET', `/api/v1/embed/dashboard/${ids.theirs}`, headers)).statusCode).toBe(404);
    const comment = await call('POST', `/api/v1/embed/dashboard/${ids.shown}/comments`, headers, { body: 'as someone else' });
    expect(comment.statusCode).toBe(403);
    expect(comment.json().error.message).toContain('preview');
  });

  it('shows the draft with draft: true, the published version without, and a never-published dashboard only as a draft', async () => {
    const current = (await call('GET', `/api/v1/dashboards/${ids.shown}`, admin())).json<{ draftRevision: number }>();
    const saved = await call('PUT', `/api/v1/dashboards/${ids.shown}/draft`, { ...admin(), 'if-match': `"draft-${current.draftRevision}"` }, { ...dashboard(ids.shown, 'by-status', true), publicId: undefined });
    expect(saved.statusCode, saved.body).toBe(200);
    const context = { embedTenantName: 'customer-a', securityContext: { tenant: 'customer-a' } };
    const drafted = await viewAs(ids.shown, { ...context, draft: true });
    const shown = (await call('GET', `/api/v1/embed/dashboard/${ids.shown}`, drafted.headers)).json<{ title: string; config: { widgets: Array<{ id: string }> } }>();
    expect(shown.title).toBe('Orders by-status');
    expect(shown.config.widgets.map((w) => w.id)).toEqual(['by-status']);
    const byStatus = await rowsOf(drafted.headers, ids.shown, 'by-status');
    expect(byStatus.length).toBeGreaterThan(1);
    expect(byStatus.reduce((sum, row) => sum + Number(row[1]), 0)).toBe(demoRows().ordersOf('customer-a').length);

    const published = await viewAs(ids.shown, context);
    expect((await call('GET', `/api/v1/embed/dashboard/${ids.shown}`, published.headers)).json<{ title: string }>().title).toBe('Orders total');
    expect((await call('POST', `/api/v1/embed/dashboard/${ids.shown}/widgets/by-status/data`, published.headers, {})).statusCode).toBe(404);
    // A viewer's own session never reads the draft.
    const viewer = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: 'customer-a', securityContext: { tenant: 'customer-a' } });
    expect((await call('GET', `/api/v1/embed/dashboard/${ids.shown}`, viewer.headers)).json<{ title: string }>().title).toBe('Orders total');

    const never = await preview(ids.fresh, context);
    expect(never.statusCode).toBe(409);
    expect(never.json().error.field).toBe('draft');
    const fresh = await viewAs(ids.fresh, { ...context, draft: true });
    expect(Number((await rowsOf(fresh.headers, ids.fresh, 'total'))[0]![0])).toBe(demoRows().ordersOf('customer-a').length);
  });

  it("refuses a member (403), another account's dashboard (404), and a bad body with the field named", async () => {
    const member = await preview(ids.shown, {}, bearer(s.keys.bob!));
    expect(member.statusCode).toBe(403);
    expect(member.json().error.field).toBe('Authorization');
    const foreign = await preview(ids.theirs, {});
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.field).toBe('publicId');
    const cases: Array<[unknown, number, string]> = [
      [{ tenant: 'customer-a' }, 400, 'tenant'],
      [{ embedTenantName: 'Not A Name' }, 400, 'embedTenantName'],
      [{ securityContext: ['tenant'] }, 400, 'securityContext'],
      [{ groups: 'Analysts' }, 400, 'groups'],
      [{ draft: 'yes' }, 400, 'draft'],
      [{ securityContext: { big: 'x'.repeat(9000) } }, 400, 'securityContext'],
      [{ embedTenantName: 'customer-z' }, 404, 'embedTenantName'],
    ];
    for (const [body, status, field] of cases) {
      const res = await preview(ids.shown, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json().error.field, JSON.stringify(body)).toBe(field);
    }
    expect((await call('POST', `/api/v1/dashboards/${ids.shown}/preview-sessions`, {}, {})).statusCode).toBe(401);
  });

  it("lets svc's own origin frame a preview session's page, and only such a page", async () => {
    const { sessionId } = (await preview(ids.shown, { securityContext: { tenant: 'customer-a' } })).json<{ sessionId: string }>();
    const page = await call('GET', `/embed/dashboard/${ids.shown}?session=${sessionId}`, {});
    expect(page.statusCode).toBe(200);
    expect(String(page.headers['content-security-policy'])).toMatch(/frame-ancestors 'self'$/);
    expect(page.body).toContain('<script id="svc-embed-config" type="application/json">{"allowedOrigins":[],"preview":true}</script>');
    // The page did not redeem the id: the frame's own exchange still can.
    expect((await call('POST', '/api/v1/embed/session/token', {}, { sessionId })).statusCode).toBe(200);

    const minted = await call('POST', '/api/v1/embed/generate-session', admin(), { deploymentId: s.refs.prod, externalId: `v-${suffix}` });
    const viewerPage = await call('GET', `/embed/dashboard/${ids.shown}?session=${minted.json<{ sessionId: string }>().sessionId}`, {});
    expect(String(viewerPage.headers['content-security-policy'])).toMatch(/frame-ancestors 'none'$/);
    expect(viewerPage.body).not.toContain('"preview"');
    expect(String((await call('GET', `/embed/dashboard/${ids.shown}`, {})).headers['content-security-policy'])).not.toContain("frame-ancestors 'self'");
  });
});
