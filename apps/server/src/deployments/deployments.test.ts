import type { FastifyInstance } from 'fastify';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import type { SemanticView } from '../data/semantic/semantic.model.js';
import { DEMO_SEMANTIC_VIEWS } from '../data/warehouse/warehouse.demo.js';
import { updateModel } from '../accounts/accounts.store.js';
import { modelChanges } from './deployments.service.js';

/**
 * Issue 33 part 1, the model through the API (docs/authoring.md "The model"): the deployments of the account, one
 * with its model (its PostgreSQL password redacted) and its ETag, the meta in Cube's shape, and the model replaced
 * over the revision If-Match names: 428 without one, 412 for a stale one, 400 at the JSON path of a bad view, 409
 * listing the published widgets a change breaks (unless forced), 403 for a member, 404 for another account's. Each
 * replacement is in the audit log, written in the same transaction, and the next widget request runs on it.
 */
describeEachDialect('the model through the authoring API', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  let publicId: string;
  let viewerHeaders: Record<string, string>;
  const views = (): SemanticView[] => structuredClone(DEMO_SEMANTIC_VIEWS).map((view) => ({ ...view, preAggregations: undefined }));
  const admin = () => bearer(s.keys.alice!);

  beforeAll(async () => {
    app = t().app;
    const suffix = uniqueSuffix();
    publicId = `model-${suffix}`;
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }],
      deployments: [
        {
          ref: 'prod', name: 'Prod', semanticViews: views(),
          items: [
            { ref: 'rp-cat', type: 'REPORT', name: 'By category', createdBy: 'alice' },
            {
              ref: 'wb', type: 'WORKBOOK', name: 'Sales', createdBy: 'alice',
              dashboard: {
                publicId, status: 'published', allowEmbed: true,
                config: {
                  widgets: [
                    { id: 'by-category', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 } },
                    { id: 'region', type: 'FILTER', position: { x: 6, y: 0, w: 3, h: 1 }, config: { member: 'customers.region' } },
                  ],
                },
                reportSnapshots: [{ report: 'rp-cat', name: 'By category', kind: 'table', meta: { query: { measures: ['orders.count'], dimensions: ['products.category'] } } }],
              },
            },
          ],
        },
        { ref: 'secret', name: 'Secret', dataSource: { type: 'postgres', url: 'postgres://svc:hunter2@db.internal:5432/wh', schema: 'sales' } },
        { ref: 'plain', name: 'On the demo' },
      ],
    });
    other = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Theirs' }] });
    viewerHeaders = (await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod! })).headers;
  });

  const get = (path: string, headers = admin()) => app.inject({ url: path, headers });
  const put = (deploymentId: number, body: unknown, headers: Record<string, string> = admin(), query = '') =>
    app.inject({ method: 'PUT', url: `/api/v1/deployments/${deploymentId}/model${query}`, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const etag = async (deploymentId: number) => (await get(`/api/v1/deployments/${deploymentId}`)).headers.etag as string;
  const widgetRows = async () => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/by-category/data`, headers: { ...viewerHeaders, 'content-type': 'application/json' }, payload: '{}' });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json<{ columns: Array<{ name: string }>; rows: unknown[][] }>();
    const count = answer.columns.findIndex((c) => c.name === 'orders.count');
    return answer.rows.map((row) => Number(row[count]));
  };

  it('lists the account\'s deployments to any of its platform users, and none of another account\'s', async () => {
    for (const headers of [admin(), bearer(s.keys.bob!)]) {
      const res = await get('/api/v1/deployments', headers);
      expect(res.statusCode).toBe(200);
      expect(res.json<{ items: Array<{ id: number; name: string; modelRevision: number }> }>().items.map((d) => [d.id, d.name, d.modelRevision]))
        .toEqual([[s.refs.prod, 'Prod', 1], [s.refs.secret, 'Secret', 1], [s.refs.plain, 'On the demo', 1]]);
    }
    expect((await app.inject({ url: '/api/v1/deployments' })).statusCode).toBe(401);
  });

  it('reads a deployment with its model and ETag, its PostgreSQL password redacted; the demo model when it has none', async () => {
    const res = await get(`/api/v1/deployments/${s.refs.secret}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('"model-1"');
    expect(res.json()).toMatchObject({ id: s.refs.secret, name: 'Secret', modelRevision: 1, demoModel: true, dataSource: { type: 'postgres', url: 'postgres://svc:****@db.internal:5432/wh', schema: 'sales' } });
    expect(res.body).not.toContain('hunter2');
    const plain = (await get(`/api/v1/deployments/${s.refs.plain}`)).json<{ dataSource: unknown; semanticViews: SemanticView[] }>();
    expect(plain.dataSource).toEqual({ type: 'demo' });
    expect(plain.semanticViews.map((v) => v.name)).toEqual(['orders', 'customers', 'products']);
    // A view's SQL and the data source are the admins': a member reads the meta, not the model.
    const member = await get(`/api/v1/deployments/${s.refs.secret}`, bearer(s.keys.bob!));
    expect(member.statusCode).toBe(403);
    expect(member.json().error.field).toBe('Authorization');
  });

  it('answers 404 for another account\'s deployment and an unknown one, 400 for a malformed id', async () => {
    for (const path of [`/api/v1/deployments/${other.refs.prod}`, '/api/v1/deployments/2147483000', `/api/v1/deployments/${other.refs.prod}/meta`]) {
      const res = await get(path);
      expect(res.statusCode, path).toBe(404);
      expect(res.json()).toMatchObject({ error: { status: 404, code: 'not_found', field: 'deploymentId' } });
    }
    expect((await put(other.refs.prod!, { semanticViews: views() }, { ...admin(), 'if-match': '"model-1"' })).statusCode).toBe(404);
    const bad = await get('/api/v1/deployments/abc');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.field).toBe('deploymentId');
  });

  it('gives the meta in Cube\'s /v1/meta shape: cubes with titled, typed measures and dimensions, joins and formats', async () => {
    const res = await get(`/api/v1/deployments/${s.refs.prod}/meta`, bearer(s.keys.bob!));
    expect(res.statusCode).toBe(200);
    const meta = res.json<{ modelRevision: number; cubes: Array<{ name: string; measures: Array<Record<string, unknown>>; dimensions: Array<Record<string, unknown>>; joins: unknown[]; segments: unknown[] }> }>();
    expect(meta.cubes.map((c) => c.name)).toEqual(['orders', 'customers', 'products']);
    const orders = meta.cubes[0]!;
    expect(orders.measures.find((m) => m.name === 'orders.revenue')).toEqual({ name: 'orders.revenue', title: 'Revenue', shortTitle: 'Revenue', type: 'number', aggType: 'sum', format: 'currency', decimalPlaces: 0 });
    expect(orders.dimensions.find((d) => d.name === 'orders.created_at')).toEqual({ name: 'orders.created_at', title: 'Ordered at', shortTitle: 'Ordered at', type: 'time' });
    expect(orders.dimensions.find((d) => d.name === 'orders.id')).toMatchObject({ type: 'number', primaryKey: true });
    expect(orders.joins).toEqual([{ name: 'customers', relationship: 'many_to_one' }, { name: 'products', relationship: 'many_to_one' }]);
    expect(orders.segments).toEqual([]);
  });

  it('needs If-Match: 428 without it, 400 for one that names no model revision, 412 for a stale or weak one; nothing is written', async () => {
    const before = await etag(s.refs.plain!);
    const none = await put(s.refs.plain!, { semanticViews: views() });
    expect(none.statusCode).toBe(428);
    expect(none.json()).toMatchObject({ error: { status: 428, code: 'precondition_required', field: 'If-Match' } });
    const malformed = await put(s.refs.plain!, { semanticViews: views() }, { ...admin(), 'if-match': '"draft-1"' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error.field).toBe('If-Match');
    for (const stale of ['"model-7"', 'W/"model-1"']) {
      const res = await put(s.refs.plain!, { semanticViews: views() }, { ...admin(), 'if-match': stale });
      expect(res.statusCode, stale).toBe(412);
      expect(res.json()).toMatchObject({ error: { status: 412, code: 'precondition_failed', field: 'If-Match' } });
      expect(res.json().error.message).toContain('"model-1"');
    }
    expect(await etag(s.refs.plain!)).toBe(before);
  });

  it('refuses a bad model at the JSON path of its first problem, as the import does', async () => {
    const cases: Array<[string, (v: SemanticView[]) => unknown, string]> = [
      ['no views', () => ({}), 'semanticViews'],
      ['an unknown field', (v) => ({ semanticViews: v, extra: 1 }), 'extra'],
      ['a view name that is no identifier', (v) => ({ semanticViews: [{ ...v[0], name: 'or ders' }, ...v.slice(1)] }), 'semanticViews[0].name'],
      ['two views of one name', (v) => ({ semanticViews: [...v, { ...v[2] }] }), 'semanticViews[3].name'],
      ['a join to no view', (v) => ({ semanticViews: [{ ...v[0], joins: [{ view: 'nowhere', foreignKey: 'x' }] }, ...v.slice(1)] }), 'semanticViews[0].joins[0].view'],
      ['a PostgreSQL URL that is not one', (v) => ({ semanticViews: v, dataSource: { type: 'postgres', url: 'mysql://x' } }), 'dataSource.url'],
    ];
    const tag = await etag(s.refs.plain!);
    for (const [what, body, field] of cases) {
      const res = await put(s.refs.plain!, body(views()), { ...admin(), 'if-match': tag });
      expect(res.statusCode, what).toBe(400);
      expect(res.json().error, what).toMatchObject({ status: 400, code: 'invalid_body', field });
    }
    expect(await etag(s.refs.plain!)).toBe(tag);
  });

  it('refuses a body over the 1 MiB limit with a 413, before reading it', async () => {
    const huge = { semanticViews: views(), padding: 'x'.repeat(1_100_000) };
    const res = await put(s.refs.plain!, huge, { ...admin(), 'if-match': await etag(s.refs.plain!) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: { status: 413, code: 'payload_too_large' } });
  });

  it('lets only admins replace a model: a member\'s key is a 403, and writes nothing', async () => {
    const res = await put(s.refs.plain!, { semanticViews: views() }, { ...bearer(s.keys.bob!), 'if-match': await etag(s.refs.plain!) });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.field).toBe('Authorization');
  });

  it('refuses with a 409 a model that breaks a published widget, naming each; ?force=true replaces it and the audit log says what broke', async () => {
    const tag = await etag(s.refs.prod!);
    const broken = views();
    broken[0]!.measures = broken[0]!.measures.filter((m) => m.name !== 'count');
    broken[1]!.dimensions = broken[1]!.dimensions.filter((d) => d.name !== 'region');
    const res = await put(s.refs.prod!, { semanticViews: broken }, { ...admin(), 'if-match': tag });
    expect(res.statusCode).toBe(409);
    const error = res.json<{ error: { code: string; details: Array<Record<string, string>> } }>().error;
    expect(error.code).toBe('conflict');
    expect(error.details).toEqual([
      { publicId, widgetId: 'by-category', field: 'meta.query.measures[0]', message: expect.stringContaining('orders.count') as string },
      { publicId, widgetId: 'region', field: 'config.member', message: expect.stringContaining('customers.region') as string },
    ]);
    expect(await etag(s.refs.prod!)).toBe(tag);
    const forced = await put(s.refs.prod!, { semanticViews: broken }, { ...admin(), 'if-match': tag }, '?force=true');
    expect(forced.statusCode, forced.body).toBe(200);
    const audit = (await get('/api/v1/audit?first=1')).json<{ items: Array<{ action: string; detail: { forced?: boolean; broken?: unknown[] } }> }>().items[0]!;
    expect(audit).toMatchObject({ action: 'model.replace', detail: { forced: true } });
    expect(audit.detail.broken).toHaveLength(2);
    // Put the model back for the tests after this one.
    expect((await put(s.refs.prod!, { semanticViews: views() }, { ...admin(), 'if-match': forced.headers.etag as string })).statusCode).toBe(200);
  });

  it('checks a model as a replace would and writes nothing: its changes by view, the widgets it breaks, a 400 at the JSON path', async () => {
    const check = (deploymentId: number, body: unknown, headers: Record<string, string> = admin()) =>
      app.inject({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/model/check`, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    const tag = await etag(s.refs.prod!);
    const auditBefore = (await get('/api/v1/audit?first=1')).json<{ items: Array<{ id: number }> }>().items[0]?.id;

    // The model as it is: nothing changes, nothing breaks.
    const same = await check(s.refs.prod!, { semanticViews: views() });
    expect(same.statusCode, same.body).toBe(200);
    expect(same.json()).toEqual({ modelRevision: Number(/model-(\d+)/.exec(tag)![1]), changes: [], dataSourceChanged: false, breaks: [] });

    // A measure gone, one added, a dimension redefined, a view removed, one added.
    const next = views();
    next[0]!.measures = [...next[0]!.measures.filter((m) => m.name !== 'count'), { name: 'discounted', type: 'sum', column: 'amount', title: 'Discounted' } as SemanticView['measures'][number]];
    next[1]!.dimensions = next[1]!.dimensions.map((d) => (d.name === 'region' ? { ...d, title: 'Sales region' } : d));
    const copied = next[next.length - 1]!;
    next.push({ ...structuredClone(copied), name: 'archive' });
    const res = await check(s.refs.prod!, { semanticViews: next });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json<{ changes: Array<Record<string, unknown>>; breaks: Array<Record<string, string>> }>();
    expect(answer.changes).toEqual([
      { view: next[0]!.name, change: 'changed', membersAdded: ['discounted'], membersRemoved: ['count'], membersChanged: [] },
      { view: next[1]!.name, change: 'changed', membersAdded: [], membersRemoved: [], membersChanged: ['region'] },
      { view: 'archive', change: 'added', membersAdded: [...copied.measures, ...copied.dimensions].map((m) => m.name), membersRemoved: [], membersChanged: [] },
    ]);
    // A view removed (one no other joins, here the one just added), from the new model back to the current one.
    expect(modelChanges(next, views()).at(-1)).toEqual({ view: 'archive', change: 'removed', membersAdded: [], membersRemoved: [...copied.measures, ...copied.dimensions].map((m) => m.name), membersChanged: [] });
    // The count measure is gone: the published chart on it would break, as a replace's 409 would say.
    expect(answer.breaks).toEqual([{ publicId, widgetId: 'by-category', field: 'meta.query.measures[0]', message: expect.stringContaining('orders.count') as string }]);

    // A bad model: the replace's 400, at its JSON path.
    const bad = await check(s.refs.prod!, { semanticViews: [{ ...views()[0], name: 'or ders' }, ...views().slice(1)] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'invalid_body', field: 'semanticViews[0].name' });
    // A member, another account's deployment.
    expect((await check(s.refs.prod!, { semanticViews: views() }, bearer(s.keys.bob!))).statusCode).toBe(403);
    expect((await check(other.refs.prod!, { semanticViews: views() })).statusCode).toBe(404);
    // Nothing was written: the same revision, no audit entry.
    expect(await etag(s.refs.prod!)).toBe(tag);
    expect((await get('/api/v1/audit?first=1')).json<{ items: Array<{ id: number }> }>().items[0]?.id).toBe(auditBefore);
  });

  it('replaces the model over the revision read: a new ETag, the audit entry, and the next widget request runs on it', async () => {
    const before = await widgetRows();
    const tag = await etag(s.refs.prod!);
    const revision = Number(/model-(\d+)/.exec(tag)![1]);
    const changed = views();
    // orders.count now counts distinct customers: the chart's figures change, its query does not.
    changed[0]!.measures = changed[0]!.measures.map((m) => (m.name === 'count' ? { name: 'count', type: 'count_distinct', column: 'customer_id', title: 'Buyers' } : m));
    const res = await put(s.refs.prod!, { semanticViews: changed }, { ...admin(), 'if-match': tag });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.etag).toBe(`"model-${revision + 1}"`);
    expect(res.json()).toMatchObject({ modelRevision: revision + 1, demoModel: false });
    expect(res.json<{ semanticViews: SemanticView[] }>().semanticViews[0]!.measures.find((m) => m.name === 'count')).toMatchObject({ type: 'count_distinct' });
    const after = await widgetRows();
    expect(after.length).toBe(before.length);
    const sum = (counts: number[]) => counts.reduce((total, n) => total + n, 0);
    expect(sum(before)).toBeGreaterThan(0);
    expect(sum(after)).toBeLessThan(sum(before));
    const audit = (await get('/api/v1/audit?first=1')).json<{ items: Array<Record<string, unknown>> }>().items[0];
    expect(audit).toMatchObject({
      action: 'model.replace', target: { type: 'deployment', id: String(s.refs.prod) }, fromVersion: revision, toVersion: revision + 1,
      actor: { userId: s.refs.alice, email: expect.stringContaining('alice-') as string },
    });
    // The same If-Match again is stale now.
    expect((await put(s.refs.prod!, { semanticViews: changed }, { ...admin(), 'if-match': tag })).statusCode).toBe(412);
  });

  it('keeps a redacted password sent back as read, and refuses **** for another URL', async () => {
    const read = (await get(`/api/v1/deployments/${s.refs.secret}`)).json<{ dataSource: { url: string } }>();
    const tag = await etag(s.refs.secret!);
    const kept = await put(s.refs.secret!, { semanticViews: views(), dataSource: { type: 'postgres', url: read.dataSource.url, schema: 'sales' } }, { ...admin(), 'if-match': tag });
    expect(kept.statusCode, kept.body).toBe(200);
    const stored = await t().db.kysely.selectFrom('deployments').select('data_source').where('id', '=', s.refs.secret!).executeTakeFirstOrThrow();
    expect(stored.data_source).toContain('hunter2');
    expect(stored.data_source).not.toContain('****');
    const elsewhere = await put(s.refs.secret!, { semanticViews: views(), dataSource: { type: 'postgres', url: 'postgres://svc:****@evil.example:5432/wh' } }, { ...admin(), 'if-match': kept.headers.etag as string });
    expect(elsewhere.statusCode).toBe(400);
    expect(elsewhere.json().error.field).toBe('dataSource.url');
  });

  it('lets one of two concurrent replacements over the same revision win; the other is a 412', async () => {
    const tag = await etag(s.refs.plain!);
    const results = await Promise.all([0, 1].map(() => put(s.refs.plain!, { semanticViews: views() }, { ...admin(), 'if-match': tag })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 412]);
    const accountId = (await t().db.kysely.selectFrom('deployments').select('account_id').where('id', '=', s.refs.plain!).executeTakeFirstOrThrow()).account_id;
    const stale = Number(/model-(\d+)/.exec(tag)![1]);
    const entries = await t().db.kysely.selectFrom('audit_events').select('to_version')
      .where('account_id', '=', accountId).where('target_id', '=', String(s.refs.plain)).execute();
    expect(entries.map((e) => e.to_version)).toEqual([stale + 1]);
    // The write itself is conditional, whatever the service checked before: over a revision that is gone, nothing.
    expect(await updateModel(t().db.kysely, accountId, s.refs.plain!, stale, { semantic_views: '[]', data_source: null })).toBeUndefined();
    expect(await etag(s.refs.plain!)).toBe(`"model-${stale + 1}"`);
  });

  it('shows the audit log to admins only, newest first, a page at a time with a cursor bound to the account', async () => {
    expect((await get('/api/v1/audit', bearer(s.keys.bob!))).statusCode).toBe(403);
    const first = (await get('/api/v1/audit?first=2')).json<{ items: Array<{ id: number }>; pageInfo: { hasNextPage: boolean; endCursor: string } }>();
    expect(first.items).toHaveLength(2);
    expect(first.items[0]!.id).toBeGreaterThan(first.items[1]!.id);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const next = (await get(`/api/v1/audit?first=2&after=${first.pageInfo.endCursor}`)).json<{ items: Array<{ id: number }> }>();
    expect(next.items[0]!.id).toBeLessThan(first.items[1]!.id);
    const foreign = await get(`/api/v1/audit?after=${first.pageInfo.endCursor}`, bearer(other.keys.alice!));
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error.field).toBe('after');
    expect((await get('/api/v1/audit', bearer(other.keys.alice!))).json<{ items: unknown[] }>().items).toEqual([]);
  });
});
