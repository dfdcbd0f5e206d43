import type { FastifyInstance, InjectOptions } from 'fastify';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { expectErrorBody } from '../../test/errors.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

interface TenantJson { id: number; name: string; userCount: number; createdAt: string }
interface EmbedUserJson { id: number; externalId: string; embedTenantName: string; username: string; email: string | null; firstName: string | null; groups: string[]; userAttributes: Record<string, unknown> }

/**
 * Issue 33 part 4 (docs/authoring.md "Embed tenants and users"): an account's admins create, read, rename and delete
 * its embed tenants, and create, read and change single embed users. Renaming a tenant revokes its live sessions
 * (their tokens carry the old name); deleting it removes its viewers, their sessions and its threads. Another
 * account's tenant or user is a 404; a member gets 403; bad input is a 400 naming the field; each change is audited.
 */
describeEachDialect('embed tenants and users through the API', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  let publicId: string;
  const admin = () => bearer(s.keys.alice!);
  const call = (method: InjectOptions['method'], url: string, payload?: unknown, headers: Record<string, string> = admin()) =>
    app.inject({ method, url, headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' }, ...(payload !== undefined && { payload: JSON.stringify(payload) }) });
  const expectError = (res: { statusCode: number; body: string }, status: number, field?: string) => expectErrorBody({ status: res.statusCode, text: res.body }, status, field);
  const alive = async (headers: Record<string, string>) => (await app.inject({ url: '/api/v1/embed/session', headers })).json().session !== null;
  const actions = async () => (await call('GET', '/api/v1/audit?first=200')).json<{ items: Array<{ action: string; target: { id: string }; detail: Record<string, unknown> }> }>().items;

  beforeAll(async () => {
    app = t().app;
    publicId = `tenants-${uniqueSuffix()}`;
    s = await seedAccount(t().db.kysely, {
      settings: { allowEmbedComments: true },
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }],
      deployments: [{
        ref: 'prod', name: 'Prod',
        items: [{ ref: 'wb', type: 'WORKBOOK', name: 'Board', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true, config: {}, reportSnapshots: [] } }],
      }],
    });
    other = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Theirs' }] });
  });

  it('creates a tenant, lists it with its viewer count, reads it, and refuses a taken or malformed name', async () => {
    const name = `acme-${uniqueSuffix()}`;
    const created = await call('POST', '/api/v1/embed/tenants', { name });
    expect(created.statusCode, created.body).toBe(201);
    const tenant = created.json<TenantJson>();
    expect(tenant).toMatchObject({ name, userCount: 0 });
    await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: name });
    expect((await call('GET', '/api/v1/embed/tenants')).json<{ items: TenantJson[] }>().items.find((x) => x.id === tenant.id)?.userCount).toBe(1);
    expect((await call('GET', `/api/v1/embed/tenants/${tenant.id}`)).json<TenantJson>()).toMatchObject({ name, userCount: 1 });
    expectError(await call('POST', '/api/v1/embed/tenants', { name }), 409, 'name');
    expectError(await call('POST', '/api/v1/embed/tenants', { name: 'Not A Name' }), 400, 'name');
    expect((await actions()).find((e) => e.action === 'embed_tenant.create' && e.target.id === String(tenant.id))?.detail).toEqual({ name });
  });

  it('renames a tenant: its threads stay, its live sessions are revoked, and a session minted with the new name sees the threads', async () => {
    const name = `beta-${uniqueSuffix()}`;
    const viewer = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: name, externalId: 'ann' });
    const posted = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/comments`, headers: viewer.headers, payload: { body: 'kept across the rename' } });
    expect(posted.statusCode, posted.body).toBe(201);
    const tenant = (await call('GET', '/api/v1/embed/tenants')).json<{ items: TenantJson[] }>().items.find((x) => x.name === name)!;
    const renamed = await call('PATCH', `/api/v1/embed/tenants/${tenant.id}`, { name: `${name}-eu` });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json<TenantJson>().name).toBe(`${name}-eu`);
    expect(await alive(viewer.headers)).toBe(false);
    const again = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: `${name}-eu`, externalId: 'ann' });
    expect(again.embedUserId).toBe(viewer.embedUserId);
    const threads = await app.inject({ url: `/api/v1/embed/dashboard/${publicId}/comments`, headers: again.headers });
    expect(threads.body).toContain('kept across the rename');
    const taken = (await call('POST', '/api/v1/embed/tenants', { name: `gamma-${uniqueSuffix()}` })).json<TenantJson>();
    expectError(await call('PATCH', `/api/v1/embed/tenants/${taken.id}`, { name: `${name}-eu` }), 409, 'name');
  });

  it("deletes a tenant with its viewers, their sessions and its threads, and leaves other tenants' threads alone", async () => {
    const gone = `gone-${uniqueSuffix()}`;
    const kept = `kept-${uniqueSuffix()}`;
    const leaving = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: gone });
    const staying = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: kept });
    for (const [viewer, body] of [[leaving, 'leaving thread'], [staying, 'staying thread']] as const) {
      expect((await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/comments`, headers: viewer.headers, payload: { body } })).statusCode).toBe(201);
    }
    const tenant = (await call('GET', '/api/v1/embed/tenants')).json<{ items: TenantJson[] }>().items.find((x) => x.name === gone)!;
    expect((await call('DELETE', `/api/v1/embed/tenants/${tenant.id}`)).statusCode).toBe(204);
    expect(await alive(leaving.headers)).toBe(false);
    expectError(await call('GET', `/api/v1/embed/users/${leaving.embedUserId}`), 404, 'id');
    const comments = await t().db.kysely.selectFrom('comments as c').innerJoin('dashboards as d', 'd.id', 'c.dashboard_id').select('c.body').where('d.public_id', '=', publicId).execute();
    expect(comments.map((c) => c.body)).toContain('staying thread');
    expect(comments.map((c) => c.body)).not.toContain('leaving thread');
    expect(await alive(staying.headers)).toBe(true);
    expectError(await call('DELETE', `/api/v1/embed/tenants/${tenant.id}`), 404, 'tenantId');
    expect((await actions()).find((e) => e.action === 'embed_tenant.delete' && e.target.id === String(tenant.id))?.detail).toEqual({ name: gone, embedUsers: 1 });
  });

  it('tells webhooks whom a rename and an offboarding signed out: one embed_session.revoked per viewer, with the reason', async () => {
    const hook = await call('POST', '/api/v1/webhooks/endpoints', { url: `https://93.184.215.14/${uniqueSuffix()}`, eventTypes: ['embed_session.revoked'] });
    expect(hook.statusCode, hook.body).toBe(201);
    const name = `hooked-${uniqueSuffix()}`;
    await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: name, externalId: 'vic' });
    await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: name, externalId: 'vic' });
    await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: name, externalId: 'wes' });
    const tenant = (await call('GET', '/api/v1/embed/tenants')).json<{ items: TenantJson[] }>().items.find((x) => x.name === name)!;
    expect((await call('PATCH', `/api/v1/embed/tenants/${tenant.id}`, { name: `${name}-2` })).statusCode).toBe(200);
    await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: `${name}-2`, externalId: 'wes' });
    expect((await call('DELETE', `/api/v1/embed/tenants/${tenant.id}`)).statusCode).toBe(204);
    const deliveries = (await call('GET', `/api/v1/webhooks/endpoints/${hook.json().id}/deliveries`)).json<{ items: Array<{ payload: { data: Record<string, unknown> } }> }>().items;
    const seen = deliveries.map((d) => [d.payload.data.reason, d.payload.data.embedTenant, d.payload.data.externalId, d.payload.data.sessions]).sort();
    expect(seen).toEqual([
      ['embed_tenant_deleted', `${name}-2`, 'wes', 1],
      ['embed_tenant_renamed', name, 'vic', 2],
      ['embed_tenant_renamed', name, 'wes', 1],
    ]);
    await call('DELETE', `/api/v1/webhooks/endpoints/${hook.json().id}`);
  });

  it('creates an embed user ahead of their first session, reads and changes them; a session then finds the same user', async () => {
    const name = `delta-${uniqueSuffix()}`;
    const created = await call('POST', '/api/v1/embed/users', { embedTenantName: name, externalId: '  Cust-42 ', username: 'Ann B', email: 'Ann@Delta.test', groups: ['eu'], userAttributes: { region: 'EU' } });
    expect(created.statusCode, created.body).toBe(201);
    const user = created.json<EmbedUserJson>();
    expect(user).toMatchObject({ externalId: 'cust-42', embedTenantName: name, username: 'Ann B', email: 'ann@delta.test', groups: ['eu'], userAttributes: { region: 'EU' } });
    expectError(await call('POST', '/api/v1/embed/users', { embedTenantName: name, externalId: 'CUST-42' }), 409, 'externalId');
    expectError(await call('POST', '/api/v1/embed/users', { embedTenantName: name, externalId: '   ' }), 400, 'externalId');
    expectError(await call('POST', '/api/v1/embed/users', { embedTenantName: name }), 400, 'externalId');

    const changed = await call('PATCH', `/api/v1/embed/users/${user.id}`, { firstName: 'Ann', email: null, groups: [] });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json<EmbedUserJson>()).toMatchObject({ firstName: 'Ann', email: null, groups: [], username: 'Ann B' });
    expect((await call('GET', `/api/v1/embed/users/${user.id}`)).json<EmbedUserJson>().firstName).toBe('Ann');
    const viewer = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: name, externalId: 'cust-42' });
    expect(viewer.embedUserId).toBe(user.id);
    expectError(await call('PATCH', `/api/v1/embed/users/${user.id}`, { nickname: 'x' }), 400);
  });

  it("never reaches another account's tenant or embed user (404), and refuses members (403) and anonymous callers (401)", async () => {
    const theirName = `theirs-${uniqueSuffix()}`;
    const theirs = (await call('POST', '/api/v1/embed/tenants', { name: theirName }, bearer(other.keys.alice!))).json<TenantJson>();
    const theirUser = (await call('POST', '/api/v1/embed/users', { embedTenantName: theirName, externalId: 'x' }, bearer(other.keys.alice!))).json<EmbedUserJson>();
    expectError(await call('GET', `/api/v1/embed/tenants/${theirs.id}`), 404, 'tenantId');
    expectError(await call('PATCH', `/api/v1/embed/tenants/${theirs.id}`, { name: `mine-${uniqueSuffix()}` }), 404, 'tenantId');
    expectError(await call('DELETE', `/api/v1/embed/tenants/${theirs.id}`), 404, 'tenantId');
    expectError(await call('GET', `/api/v1/embed/users/${theirUser.id}`), 404, 'id');
    expectError(await call('PATCH', `/api/v1/embed/users/${theirUser.id}`, { firstName: 'Mallory' }), 404, 'id');
    expect((await call('GET', `/api/v1/embed/users/${theirUser.id}`, undefined, bearer(other.keys.alice!))).json<EmbedUserJson>().firstName).toBeNull();
    expect((await call('GET', `/api/v1/embed/tenants/${theirs.id}`, undefined, bearer(other.keys.alice!))).json<TenantJson>().name).toBe(theirName);

    const member = bearer(s.keys.bob!);
    for (const [method, url, body] of [
      ['GET', '/api/v1/embed/tenants'], ['POST', '/api/v1/embed/tenants', { name: 'm-tenant' }], ['GET', '/api/v1/embed/tenants/1'],
      ['PATCH', '/api/v1/embed/tenants/1', { name: 'm-tenant' }], ['DELETE', '/api/v1/embed/tenants/1'],
      ['POST', '/api/v1/embed/users', { embedTenantName: 'm-tenant', externalId: 'm' }], ['GET', '/api/v1/embed/users/1'], ['PATCH', '/api/v1/embed/users/1', { firstName: 'm' }],
    ] as Array<[InjectOptions['method'], string, unknown?]>) {
      expectError(await call(method, url, body, member), 403, 'Authorization');
      expectError(await call(method, url, body, {}), 401);
    }
    expect((await call('GET', '/api/v1/embed/tenants')).json<{ items: TenantJson[] }>().items.some((x) => x.name === 'm-tenant')).toBe(false);
  });
});
