import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import { demoRows } from '../../test/warehouse.js';
import { DEMO_SEMANTIC_VIEWS } from '../data/warehouse/warehouse.demo.js';
import { isEmbedApiRoute } from '../http/http.rate-limit.js';
import { SAVED_CHART_KINDS } from './explore.saved.schema.js';
import { findVisibleSavedChart } from './explore.saved.service.js';

// Issue 35 parts 3 and 4 (docs/explore.md "Saved charts and views"): saved charts and views over HTTP, on both
// databases: isolated by tenant, deployment, account and author (by id, by list and by guess), each explore level,
// author-only changes, validation that names the field and writes nothing, and a shared chart re-run under its
// opener's narrower policy.

/** The demo's model, its orders view under three policies: the tenant's rows; the tenant's rows of one status; no revenue. */
function policedViews() {
  const views = structuredClone(DEMO_SEMANTIC_VIEWS);
  const tenant = { member: 'orders.tenant', operator: 'equals' as const, values: ['{securityContext.tenant}'] };
  views.find((view) => view.name === 'orders')!.accessPolicy = [
    { group: 'all', rowLevel: { filters: [tenant] } },
    { group: 'by-status', rowLevel: { filters: [tenant, { member: 'orders.status', operator: 'equals', values: ['{securityContext.status}'] }] } },
    { group: 'no-revenue', memberLevel: { excludes: ['amount', 'revenue'] }, rowLevel: { filters: [tenant] } },
  ];
  return views;
}

const COUNT_BY_STATUS = { measures: ['orders.count'], dimensions: ['orders.status'], order: { 'orders.status': 'asc' } };

describe('saved chart kinds', () => {
  it("are the console builder's CHART_KINDS, which the server cannot import", () => {
    const builder = readFileSync(fileURLToPath(new URL('../../../embed/src/explore/builder.ts', import.meta.url)), 'utf8');
    const declared = /export const CHART_KINDS = \[([^\]]*)\]/.exec(builder)?.[1];
    expect(declared).toBeDefined();
    expect([...declared!.matchAll(/'([a-z]+)'/g)].map((m) => m[1])).toEqual([...SAVED_CHART_KINDS]);
  });
});

describe('saved charts and views on the embed API', () => {
  it("meet the embed API's limits per embed session and per IP (429), as comments do", () => {
    for (const route of ['/api/v1/embed/charts', '/api/v1/embed/charts/:chartId', '/api/v1/embed/dashboard/:publicId/views', '/api/v1/embed/dashboard/:publicId/views/:viewId']) {
      expect(isEmbedApiRoute(route), route).toBe(true);
    }
    expect(isEmbedApiRoute('/api/v1/embed/chartsx')).toBe(false);
  });
});

describeEachDialect('saved charts and views (issue 35)', (t) => {
  const suffix = uniqueSuffix();
  const publicId = `explore-${suffix}`;
  const otherPublicId = `explore-other-${suffix}`;
  const closedPublicId = `explore-closed-${suffix}`;
  const appPublicId = `explore-app-${suffix}`;
  let s: Awaited<ReturnType<typeof seedAccount>>;
  let foreign: Awaited<ReturnType<typeof seedAccount>>;
  let ann: ViewerSession; let ben: ViewerSession; let vic: ViewerSession; let nan: ViewerSession; let cid: ViewerSession;
  let hid: ViewerSession; let annStage: ViewerSession; let internal: ViewerSession; let outsider: ViewerSession;
  let accountId: number;
  let tenantA: number;

  const dashboard = (id: string, extra: Record<string, unknown> = {}) => ({ publicId: id, status: 'published' as const, allowEmbed: true, title: id, config: { widgets: [] }, ...extra });

  beforeAll(async () => {
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [
        {
          ref: 'prod', name: 'Production', semanticViews: policedViews(), items: [
            { ref: 'wb', type: 'WORKBOOK', name: 'Explore', dashboard: dashboard(publicId) },
            { ref: 'wb2', type: 'WORKBOOK', name: 'Other', dashboard: dashboard(otherPublicId) },
            { ref: 'wb3', type: 'WORKBOOK', name: 'Closed', dashboard: dashboard(closedPublicId, { allowEmbed: false }) },
            { ref: 'wb4', type: 'WORKBOOK', name: 'App', dashboard: dashboard(appPublicId, { config: { kind: 'APP', app: { html: '<p>app</p>' } } }) },
          ],
        },
        { ref: 'stage', name: 'Stage', semanticViews: policedViews() },
      ],
      embedTenants: [{ name: 'customer-a' }, { name: 'customer-b' }],
    });
    foreign = await seedAccount(t().db.kysely, { users: [{ ref: 'admin', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Foreign', semanticViews: policedViews() }] });
    const key = s.keys.admin!;
    const prod = s.refs.prod!;
    const viewer = (name: string, tenant: string, groups: string[], securityContext: Record<string, unknown>, explore?: string, deploymentId = prod) =>
      mintViewer(t().app, key, {
        deploymentId, externalId: `${name}-${suffix}`, embedTenantName: tenant, username: `${name}-${suffix}`, groups, securityContext,
        ...(explore !== undefined ? { settings: { explore } } : {}),
      });
    ann = await viewer('ann', 'customer-a', ['all'], { tenant: 'customer-a' }, 'create');
    ben = await viewer('ben', 'customer-a', ['by-status'], { tenant: 'customer-a', status: 'completed' }, 'create');
    vic = await viewer('vic', 'customer-a', ['all'], { tenant: 'customer-a' }, 'view');
    nan = await viewer('nan', 'customer-a', ['all'], { tenant: 'customer-a' });
    cid = await viewer('cid', 'customer-b', ['all'], { tenant: 'customer-b' }, 'create');
    hid = await viewer('hid', 'customer-a', ['no-revenue'], { tenant: 'customer-a' }, 'create');
    annStage = await viewer('ann', 'customer-a', ['all'], { tenant: 'customer-a' }, 'create', s.refs.stage!);
    internal = await mintViewer(t().app, key, { deploymentId: prod, internalId: (await t().db.kysely.selectFrom('users').select('email').where('id', '=', s.refs.admin!).executeTakeFirstOrThrow()).email, settings: { explore: 'create' } });
    outsider = await mintViewer(t().app, foreign.keys.admin!, { deploymentId: foreign.refs.prod!, externalId: `ann-${suffix}`, embedTenantName: 'customer-a', settings: { explore: 'create' } });
    const user = await t().db.kysely.selectFrom('embed_users').select(['account_id', 'embed_tenant_id']).where('id', '=', ann.embedUserId).executeTakeFirstOrThrow();
    accountId = user.account_id;
    tenantA = user.embed_tenant_id;
  });

  const charts = '/api/v1/embed/charts';
  const views = (id = publicId) => `/api/v1/embed/dashboard/${id}/views`;
  const req = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, who: { headers: Record<string, string> } | Record<string, string> | undefined, payload?: unknown) =>
    t().app.inject({ method, url, headers: who === undefined ? {} : 'headers' in who ? who.headers as Record<string, string> : who, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const saveChart = async (who: ViewerSession, body: Record<string, unknown> = {}) => {
    const res = await req('POST', charts, who, { title: `chart ${uniqueSuffix()}`, query: COUNT_BY_STATUS, kind: 'bar', ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; title: string; visibility: string; mine: boolean; author: { userId: number; username: string } };
  };
  const saveView = async (who: ViewerSession, body: Record<string, unknown> = {}, id = publicId) => {
    const res = await req('POST', views(id), who, { name: `view ${uniqueSuffix()}`, state: { filters: {} }, ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; name: string; state: Record<string, unknown>; mine: boolean };
  };
  const listedIds = async (who: ViewerSession, url = charts) => {
    const res = await req('GET', url, who);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { charts?: Array<{ id: string }>; views?: Array<{ id: string }> };
    return (body.charts ?? body.views ?? []).map((item) => item.id);
  };
  const fieldOf = (res: LightMyRequestResponse) => (res.json() as { error?: { field?: string } }).error?.field;
  const rowsOf = async (table: 'saved_charts' | 'saved_views', embedUserId: number) =>
    (await t().db.kysely.selectFrom(table).select('public_id').where('account_id', '=', accountId).where('embed_user_id', '=', embedUserId).execute()).length;

  describe('saved charts', () => {
    it('saves a private chart under an unguessable id that only its author sees, by id and by list', async () => {
      const chart = await saveChart(ann, { title: 'Orders by status', spec: { stacked: true } });
      expect(chart.id).toMatch(/^chart_[0-9A-Za-z]{16,}$/);
      expect(chart).toMatchObject({ title: 'Orders by status', visibility: 'private', mine: true, author: { userId: ann.embedUserId, username: `ann-${suffix}` } });
      const read = (await req('GET', `${charts}/${chart.id}`, ann)).json();
      expect(read).toMatchObject({ id: chart.id, query: COUNT_BY_STATUS, kind: 'bar', spec: { stacked: true } });
      expect(await listedIds(ann)).toContain(chart.id);
      for (const other of [ben, vic, cid, annStage, outsider]) {
        expect((await req('GET', `${charts}/${chart.id}`, other)).statusCode).toBe(404);
        expect(await listedIds(other)).not.toContain(chart.id);
      }
    });

    it('shows a chart shared with the tenant to its viewers with view or create, never to another tenant, deployment or account', async () => {
      const chart = await saveChart(ann, { visibility: 'tenant' });
      for (const viewer of [ann, ben, vic, hid]) {
        const res = await req('GET', `${charts}/${chart.id}`, viewer);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().mine).toBe(viewer === ann);
        expect(await listedIds(viewer)).toContain(chart.id);
      }
      for (const other of [cid, annStage, outsider]) {
        expect((await req('GET', `${charts}/${chart.id}`, other)).statusCode).toBe(404);
        expect(await listedIds(other)).not.toContain(chart.id);
        expect((await req('PATCH', `${charts}/${chart.id}`, other, { title: 'taken' })).statusCode).toBe(404);
        expect((await req('DELETE', `${charts}/${chart.id}`, other)).statusCode).toBe(404);
      }
      expect((await req('GET', `${charts}/${chart.id}`, ann)).json().title).toBe(chart.title);
    });

    it('answers a guessed or malformed id with 404, as an id of another tenant', async () => {
      for (const id of ['chart_0', `chart_${'A'.repeat(22)}`, 'chart_!x', '1', 'view_abc']) {
        const res = await req('GET', `${charts}/${encodeURIComponent(id)}`, ann);
        expect(res.statusCode, id).toBe(404);
        expect(fieldOf(res)).toBe('chartId');
      }
    });

    it('lets only the author rename, re-share or delete; others of the tenant get 403 and change nothing', async () => {
      const chart = await saveChart(ann, { visibility: 'tenant', title: 'before' });
      const renamed = await req('PATCH', `${charts}/${chart.id}`, ben, { title: 'hijacked' });
      expect(renamed.statusCode).toBe(403);
      expect(fieldOf(renamed)).toBe('chartId');
      expect((await req('DELETE', `${charts}/${chart.id}`, ben)).statusCode).toBe(403);
      expect((await req('GET', `${charts}/${chart.id}`, ann)).json().title).toBe('before');
      const mine = await req('PATCH', `${charts}/${chart.id}`, ann, { title: 'after', visibility: 'private', kind: 'line', spec: null });
      expect(mine.statusCode, mine.body).toBe(200);
      expect(mine.json()).toMatchObject({ title: 'after', visibility: 'private', kind: 'line' });
      expect(mine.json().spec).toBeUndefined();
      expect(mine.json().updatedAt >= mine.json().createdAt).toBe(true);
      expect((await req('GET', `${charts}/${chart.id}`, ben)).statusCode).toBe(404);
      expect((await req('DELETE', `${charts}/${chart.id}`, ann)).statusCode).toBe(204);
      expect((await req('GET', `${charts}/${chart.id}`, ann)).statusCode).toBe(404);
      expect((await req('DELETE', `${charts}/${chart.id}`, ann)).statusCode).toBe(404);
    });

    it('needs settings.explore view to read and create to write (403 naming settings.explore)', async () => {
      const shared = await saveChart(ann, { visibility: 'tenant' });
      const none = await req('GET', charts, nan);
      expect(none.statusCode).toBe(403);
      expect(fieldOf(none)).toBe('settings.explore');
      expect((await req('GET', `${charts}/${shared.id}`, nan)).statusCode).toBe(403);
      expect((await req('GET', `${charts}/${shared.id}`, vic)).statusCode).toBe(200);
      const before = await rowsOf('saved_charts', vic.embedUserId);
      const posted = await req('POST', charts, vic, { title: 'x', query: COUNT_BY_STATUS, kind: 'bar' });
      expect(posted.statusCode).toBe(403);
      expect(fieldOf(posted)).toBe('settings.explore');
      expect(await rowsOf('saved_charts', vic.embedUserId)).toBe(before);
      expect((await req('PATCH', `${charts}/${shared.id}`, vic, { title: 'x' })).statusCode).toBe(403);
      expect((await req('DELETE', `${charts}/${shared.id}`, vic)).statusCode).toBe(403);
    });

    it('refuses callers without an embed user as comments do: 401 without a credential, 403 for keys and internalId sessions', async () => {
      expect((await req('GET', charts, undefined)).statusCode).toBe(401);
      expect((await req('GET', charts, { authorization: 'Embed-Token nope' })).statusCode).toBe(401);
      for (const who of [bearer(s.keys.admin!), internal.headers]) {
        const res = await req('POST', charts, who, { title: 'x', query: COUNT_BY_STATUS, kind: 'bar' });
        expect(res.statusCode).toBe(403);
        expect(fieldOf(res)).toBe('Authorization');
        expect((await req('GET', charts, who)).statusCode).toBe(403);
      }
    });

    it('checks the query under the author\'s policy on save: 400 naming query… when malformed, 403 for a hidden member; nothing written', async () => {
      const before = await rowsOf('saved_charts', hid.embedUserId);
      const cases: Array<[unknown, number, RegExp]> = [
        [{ measures: ['orders.nope'] }, 400, /^query\.measures/],
        [{ measures: 'orders.count' }, 400, /^query/],
        [{ dimensions: ['nope.nope'] }, 400, /^query\.dimensions/],
        [{ measures: ['orders.revenue'] }, 403, /^query/],
      ];
      for (const [query, status, field] of cases) {
        const res = await req('POST', charts, hid, { title: 'x', query, kind: 'bar' });
        expect(res.statusCode, JSON.stringify(query) + res.body).toBe(status);
        expect(fieldOf(res)).toMatch(field);
      }
      const chart = await saveChart(hid, { query: { measures: ['orders.count'] } });
      const patched = await req('PATCH', `${charts}/${chart.id}`, hid, { query: { measures: ['orders.revenue'] } });
      expect(patched.statusCode).toBe(403);
      expect((await req('GET', `${charts}/${chart.id}`, hid)).json().query).toEqual({ measures: ['orders.count'] });
      expect(await rowsOf('saved_charts', hid.embedUserId)).toBe(before + 1);
      // The same query is fine for an author who may see revenue.
      await saveChart(ann, { query: { measures: ['orders.revenue'] } });
    });

    it('names the field of every other invalid body and writes nothing', async () => {
      const before = await rowsOf('saved_charts', ann.embedUserId);
      const base = { title: 'x', query: COUNT_BY_STATUS, kind: 'bar' };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...base, title: '' }, 'title'],
        [{ ...base, title: '   ' }, 'title'],
        [{ ...base, title: 'a\u0000b' }, 'title'],
        [{ ...base, kind: 'pie' }, 'kind'],
        [{ ...base, visibility: 'public' }, 'visibility'],
        [{ ...base, spec: { big: 'x'.repeat(40_000) } }, 'spec'],
        [{ ...base, spec: [1, 2] }, 'spec'],
      ];
      for (const [body, field] of cases) {
        const res = await req('POST', charts, ann, body);
        expect(res.statusCode, `${field}: ${res.body}`).toBe(400);
        expect(fieldOf(res)).toBe(field);
      }
      const chart = await saveChart(ann);
      expect((await req('PATCH', `${charts}/${chart.id}`, ann, {})).statusCode).toBe(400);
      expect(await rowsOf('saved_charts', ann.embedUserId)).toBe(before + 1);
    });

    it('pages the list newest first and filters it by visibility', async () => {
      const viewer = await mintViewer(t().app, s.keys.admin!, { deploymentId: s.refs.prod!, embedTenantName: 'customer-b', groups: ['all'], securityContext: { tenant: 'customer-b' }, settings: { explore: 'create' } });
      const made = [];
      for (const visibility of ['private', 'tenant', 'private']) made.push((await saveChart(viewer, { visibility })).id);
      const first = (await req('GET', `${charts}?first=2&visibility=private`, viewer)).json();
      expect(first.charts.map((c: { id: string }) => c.id)).toEqual([made[2], made[0]]);
      const all = (await req('GET', `${charts}?first=1`, viewer)).json();
      expect(all.pageInfo.hasNextPage).toBe(true);
      const next = await req('GET', `${charts}?first=1&after=${all.pageInfo.endCursor}`, viewer);
      expect(next.json().charts[0].id).not.toBe(all.charts[0].id);
      const tenant = (await req('GET', `${charts}?visibility=tenant`, cid)).json();
      expect(tenant.charts.map((c: { id: string }) => c.id)).toContain(made[1]);
      expect(tenant.charts.map((c: { id: string }) => c.id)).not.toContain(made[0]);
      // A cursor of another caller's list is refused.
      expect((await req('GET', `${charts}?after=${all.pageInfo.endCursor}`, cid)).statusCode).toBe(400);
    });

    it("re-runs a shared chart under its opener's narrower policy, never with its author's rows", async () => {
      const chart = await saveChart(ann, { visibility: 'tenant' });
      const stored = (await req('GET', `${charts}/${chart.id}`, ben)).json();
      expect(Object.keys(stored)).not.toContain('rows');
      const opener = { accountId, deploymentId: s.refs.prod!, embedTenantId: tenantA, embedUserId: ben.embedUserId };
      const found = await findVisibleSavedChart(t().db.kysely, opener, chart.id);
      expect(found).toMatchObject({ id: chart.id, visibility: 'tenant', authorId: ann.embedUserId, query: COUNT_BY_STATUS });
      // Through the widget data path's policy step (an APP dashboard's query runs a semantic query as its viewer).
      const run = async (who: ViewerSession) => {
        const res = await req('POST', `/api/v1/embed/dashboard/${appPublicId}/query`, who, { query: found!.query });
        expect(res.statusCode, res.body).toBe(200);
        return res.json().rows as Array<[string, number]>;
      };
      const mineA = demoRows().orders.filter((o) => o.tenant === 'customer-a');
      const byStatus = new Map<string, number>();
      for (const order of mineA) byStatus.set(order.status, (byStatus.get(order.status) ?? 0) + 1);
      expect(new Map((await run(ann)).map(([status, count]) => [status, Number(count)]))).toEqual(byStatus);
      expect((await run(ben)).map(([status, count]) => [status, Number(count)])).toEqual([['completed', byStatus.get('completed')]]);
      // Another tenant's viewer does not find it, nor a session without an embed user.
      expect(await findVisibleSavedChart(t().db.kysely, { ...opener, embedTenantId: tenantA + 100_000, embedUserId: cid.embedUserId }, chart.id)).toBeUndefined();
      expect(await findVisibleSavedChart(t().db.kysely, { ...opener, embedUserId: null }, chart.id)).toBeUndefined();
      const privateChart = await saveChart(ann);
      expect(await findVisibleSavedChart(t().db.kysely, opener, privateChart.id)).toBeUndefined();
    });
  });

  describe('saved views', () => {
    const state = { filters: { 'orders.status': 'completed', 'products.category': ['Books', 'Toys'], 'orders.created_at': { gte: '2025-01-01' } }, granularity: 'month', fields: { 'orders.count': 'orders.revenue' } };

    it('saves a view of a dashboard and restores its state; private to its author, shared with the tenant', async () => {
      const view = await saveView(ann, { name: 'Completed', state });
      expect(view.id).toMatch(/^view_[0-9A-Za-z]{16,}$/);
      const read = (await req('GET', `${views()}/${view.id}`, ann)).json();
      expect(read).toMatchObject({ id: view.id, publicId, name: 'Completed', state, visibility: 'private', mine: true });
      expect((await req('GET', `${views()}/${view.id}`, ben)).statusCode).toBe(404);
      expect(await listedIds(ben, views())).not.toContain(view.id);
      expect((await req('PATCH', `${views()}/${view.id}`, ann, { visibility: 'tenant' })).statusCode).toBe(200);
      expect(await listedIds(ben, views())).toContain(view.id);
      expect(await listedIds(vic, views())).toContain(view.id);
      expect((await req('GET', `${views()}/${view.id}`, cid)).statusCode).toBe(404);
      expect(await listedIds(cid, views())).not.toContain(view.id);
      expect((await req('GET', `${views()}/${view.id}`, annStage)).statusCode).toBe(403);
      expect((await req('GET', `${views()}/${view.id}`, outsider)).statusCode).toBe(404);
      // Another dashboard's path does not reach it.
      expect((await req('GET', `${views(otherPublicId)}/${view.id}`, ann)).statusCode).toBe(404);
      expect(await listedIds(ann, views(otherPublicId))).not.toContain(view.id);
    });

    it('opens only a dashboard the session may open: 404 unknown, 403 not embeddable', async () => {
      expect((await req('GET', views(`nope-${suffix}`), ann)).statusCode).toBe(404);
      const closed = await req('POST', views(closedPublicId), ann, { name: 'x', state: { filters: {} } });
      expect(closed.statusCode).toBe(403);
      expect(fieldOf(closed)).toBe('publicId');
    });

    it('lets only the author change or delete a shared view', async () => {
      const view = await saveView(ann, { visibility: 'tenant', name: 'mine' });
      expect((await req('PATCH', `${views()}/${view.id}`, ben, { name: 'theirs' })).statusCode).toBe(403);
      expect((await req('DELETE', `${views()}/${view.id}`, ben)).statusCode).toBe(403);
      expect((await req('GET', `${views()}/${view.id}`, ben)).json().name).toBe('mine');
      expect((await req('PATCH', `${views()}/${view.id}`, ann, { name: 'renamed', state: { filters: {}, granularity: 'week' } })).json()).toMatchObject({ name: 'renamed', state: { filters: {}, granularity: 'week' } });
      expect((await req('DELETE', `${views()}/${view.id}`, ann)).statusCode).toBe(204);
      expect((await req('GET', `${views()}/${view.id}`, ann)).statusCode).toBe(404);
    });

    it('needs view to read and create to write', async () => {
      expect((await req('GET', views(), nan)).statusCode).toBe(403);
      expect((await req('GET', views(), vic)).statusCode).toBe(200);
      const res = await req('POST', views(), vic, { name: 'x', state: { filters: {} } });
      expect(res.statusCode).toBe(403);
      expect(fieldOf(res)).toBe('settings.explore');
      expect((await req('POST', views(), internal, { name: 'x', state: { filters: {} } })).statusCode).toBe(403);
      expect((await req('GET', views(), undefined)).statusCode).toBe(401);
    });

    it('checks the state as the widget data request and the filter check do, naming the field; nothing written', async () => {
      const before = await rowsOf('saved_views', hid.embedUserId);
      const privateOfBen = await saveChart(ben);
      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ filters: { 'orders.nope': 'x' } }, 400, 'state.filters.orders.nope'],
        [{ filters: { 'orders.count': 1 } }, 400, 'state.filters.orders.count'],
        [{ filters: { 'orders.created_at': 'someday' } }, 400, 'state.filters.orders.created_at'],
        [{ filters: { 'orders.amount': 5 } }, 403, 'state.filters.orders.amount'],
        [{ filters: {}, granularity: 'fortnight' }, 400, 'state.granularity'],
        [{ filters: {}, fields: { 'orders.count': 'orders.status' } }, 400, 'state.fields.orders.count'],
        [{ filters: {}, fields: { 'orders.count': 'orders.revenue' } }, 403, 'state.fields.orders.count'],
        [{ filters: {}, charts: [{ chartId: privateOfBen.id, x: 0, y: 0, w: 4, h: 3 }] }, 400, 'state.charts[0].chartId'],
        [{ filters: {}, charts: [{ chartId: 'chart_nope', x: 0, y: 0, w: 0, h: 3 }] }, 400, 'state.charts.0.w'],
        [{}, 400, 'state.filters'],
      ];
      for (const [bad, status, field] of cases) {
        const res = await req('POST', views(), hid, { name: 'x', state: bad });
        expect(res.statusCode, `${field}: ${res.body}`).toBe(status);
        expect(fieldOf(res)?.replace(/\[(\d+)\]/g, '.$1')).toBe(field.replace(/\[(\d+)\]/g, '.$1'));
      }
      expect(await rowsOf('saved_views', hid.embedUserId)).toBe(before);
    });

    it("places saved charts beside the dashboard's widgets: a reader sees only the charts they may see; the dashboard is unchanged", async () => {
      const shared = await saveChart(ann, { visibility: 'tenant' });
      const privateOne = await saveChart(ann);
      const before = (await req('GET', `/api/v1/embed/dashboard/${publicId}`, ann)).body;
      const layout = [{ chartId: shared.id, x: 0, y: 0, w: 6, h: 4 }, { chartId: privateOne.id, x: 6, y: 0, w: 6, h: 4 }];
      const view = await saveView(ann, { visibility: 'tenant', state: { filters: {}, charts: layout } });
      expect((await req('GET', `${views()}/${view.id}`, ann)).json().state.charts).toEqual(layout);
      expect((await req('GET', `${views()}/${view.id}`, ben)).json().state.charts).toEqual([layout[0]]);
      expect((await req('GET', `/api/v1/embed/dashboard/${publicId}`, ann)).body).toBe(before);
      // A chart deleted since drops out of the layout.
      expect((await req('DELETE', `${charts}/${shared.id}`, ann)).statusCode).toBe(204);
      expect((await req('GET', `${views()}/${view.id}`, ann)).json().state.charts).toEqual([layout[1]]);
    });

    it('deletes what an embed user saved when the host deletes that embed user', async () => {
      const gone = await mintViewer(t().app, s.keys.admin!, { deploymentId: s.refs.prod!, embedTenantName: 'customer-a', groups: ['all'], securityContext: { tenant: 'customer-a' }, settings: { explore: 'create' } });
      const chart = await saveChart(gone, { visibility: 'tenant' });
      await saveView(gone, { visibility: 'tenant' });
      expect(await rowsOf('saved_charts', gone.embedUserId)).toBe(1);
      expect((await req('DELETE', `/api/v1/embed/users/${gone.embedUserId}`, bearer(s.keys.admin!))).statusCode).toBe(204);
      expect(await rowsOf('saved_charts', gone.embedUserId)).toBe(0);
      expect(await rowsOf('saved_views', gone.embedUserId)).toBe(0);
      expect((await req('GET', `${charts}/${chart.id}`, ann)).statusCode).toBe(404);
    });
  });
});
