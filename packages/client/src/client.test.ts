import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../apps/server/test/dialects.js';
import { mintViewer } from '../../../apps/server/test/embed.js';
import { seedAccount } from '../../../apps/server/test/factory.js';
import { buildApp } from '../../../apps/server/src/app.js';
import { testConfig } from '../../../apps/server/test/config.js';
import { SvcApiError, SvcClient } from './index.js';

describeEachDialect('@svc/client against a real server', (t) => {
  let server: FastifyInstance;
  let client: SvcClient;
  let deploymentId: number;
  let baseUrl: string;
  let adminKey: string;
  // Rollups of its own: the default directory is shared by every test file, and SQLite's fresh databases number
  // their accounts and deployments alike, so another file's build of the demo's rollups would read as built here.
  const rollupDir = mkdtempSync(join(tmpdir(), 'svc-client-rollups-'));
  const names = Array.from({ length: 23 }, (_, i) => `Report ${String(i).padStart(2, '0')}`);

  beforeAll(async () => {
    const seeded = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: names.map((name) => ({ type: 'REPORT' as const, name, createdBy: 'admin' })) }],
    });
    deploymentId = seeded.refs.prod!;
    server = await buildApp(testConfig({ data: { preAggregationDir: rollupDir } }), { db: t().db });
    await server.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/`;
    adminKey = seeded.keys.admin!;
    client = new SvcClient({ baseUrl, apiKey: adminKey });
  });

  afterAll(async () => {
    await server.close();
    rmSync(rollupDir, { recursive: true, force: true });
  });

  it('iterates every item across pages, in the listing order, following endCursor while hasNextPage', async () => {
    const seen: string[] = [];
    for await (const item of client.workspaceItems(deploymentId, { first: 5, orderByField: 'name', orderByDirection: 'ASC', types: ['REPORT'] })) seen.push(item.name);
    expect(seen).toEqual(names);
  });

  it('throws SvcApiError carrying the status, code and field of the error body', async () => {
    const failure = await client.listWorkspace(deploymentId, { first: 0 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SvcApiError);
    expect(failure).toMatchObject({ status: 400, code: 'invalid_parameter', field: 'first' });
  });

  it('authors through the API: a model read and its meta, a dashboard created, drafted over its revision, published, restored; errors carry their details', async () => {
    const [deployment] = await client.listDeployments();
    expect(deployment).toMatchObject({ id: deploymentId, modelRevision: 1 });
    const model = await client.getDeployment(deploymentId);
    expect(model.demoModel).toBe(true);
    expect((await client.getMeta(deploymentId)).cubes.map((c) => c.name)).toEqual(['orders', 'customers', 'products']);

    const chart = (title: string) => ({
      title,
      config: { widgets: [{ id: 'c', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 } }] },
      reportSnapshots: [{ title, kind: 'kpi', meta: { query: { measures: ['orders.count'] } } }],
    });
    const created = await client.createDashboard(deploymentId, { ...chart('One'), publicId: `client-${deploymentId}` });
    expect(created).toMatchObject({ status: 'draft', published: null, draftRevision: 1, canEdit: true });
    const stale = await client.replaceDraft(created.publicId, chart('Two'), { revision: 7 }).catch((e: unknown) => e);
    expect(stale).toMatchObject({ status: 412, code: 'precondition_failed', field: 'If-Match' });
    await client.publishDashboard(created.publicId);
    const drafted = await client.replaceDraft(created.publicId, chart('Two'), { revision: (await client.getDashboard(created.publicId)).draftRevision });
    expect(drafted).toMatchObject({ draft: { title: 'Two' }, published: { versionNumber: 1 } });
    await client.publishDashboard(created.publicId);
    expect((await client.listDashboardVersions(created.publicId)).map((v) => v.versionNumber)).toEqual([2, 1]);
    expect((await client.restoreDashboardVersion(created.publicId, 1)).draft).toMatchObject({ title: 'One' });

    // A model without orders.count would break the published chart: a 409 naming it in details.
    const views = model.semanticViews.map((v) => (v.name === 'orders' ? { ...v, preAggregations: [], measures: (v.measures as Array<{ name: string }>).filter((m) => m.name !== 'count') } : v));
    const checked = await client.checkModel(deploymentId, { semanticViews: views });
    expect(checked).toMatchObject({ modelRevision: model.modelRevision, changes: [{ view: 'orders', change: 'changed', membersRemoved: ['count'] }] });
    expect(checked.breaks).toEqual([{ publicId: created.publicId, widgetId: 'c', field: 'meta.query.measures[0]', message: expect.stringContaining('orders.count') as string }]);
    const breaking = await client.replaceModel(deploymentId, { semanticViews: views }, { revision: model.modelRevision }).catch((e: unknown) => e);
    expect(breaking).toBeInstanceOf(SvcApiError);
    expect((breaking as SvcApiError).details).toEqual([{ publicId: created.publicId, widgetId: 'c', field: 'meta.query.measures[0]', message: expect.stringContaining('orders.count') as string }]);
    expect((await client.replaceModel(deploymentId, { semanticViews: model.semanticViews }, { revision: model.modelRevision })).modelRevision).toBe(2);

    const preview = await client.previewQuery(deploymentId, { query: { measures: ['orders.count'] } });
    expect(preview.rows.length).toBe(1);
    // The demo deployment's rollups answer it where they are built (CI builds them), else the warehouse.
    expect(preview.statement?.on).toMatch(/^(warehouse|rollup:orders\.\w+)$/);
    expect(preview.statement?.sql.length).toBeGreaterThan(0);

    const actions: string[] = [];
    for await (const event of client.auditEvents({ first: 2 })) actions.push(event.action);
    expect(actions).toEqual(['model.replace', 'dashboard.restore', 'dashboard.publish', 'dashboard.draft', 'dashboard.publish', 'dashboard.create']);
    const copy = await client.createDashboard(deploymentId, { copyOf: created.publicId, title: 'A copy' });
    expect(copy).toMatchObject({ status: 'draft', published: null, draft: { title: 'A copy', reportSnapshots: [{ kind: 'kpi' }] } });
    await client.archiveDashboard(created.publicId);
    expect((await client.getDashboard(created.publicId)).status).toBe('archived');
  });

  it('mints a preview session (View as a customer) that the exchange redeems once, and names a bad field', async () => {
    const publicId = `client-preview-${deploymentId}`;
    await client.createDashboard(deploymentId, { title: 'Preview', publicId, config: { widgets: [] } });
    const drafted = await client.createPreviewSession(publicId, { securityContext: { tenant: 'customer-a' }, draft: true });
    expect(drafted).toMatchObject({ url: `/embed/dashboard/${publicId}`, version: 'draft', sessionId: expect.stringMatching(/^ses_/) as string });
    const base = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
    const exchange = () => fetch(`${base}/api/v1/embed/session/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId: drafted.sessionId }) });
    expect((await exchange()).status).toBe(200);
    expect((await exchange()).status).toBe(401);
    await expect(client.createPreviewSession(publicId)).rejects.toMatchObject({ status: 409, field: 'draft' });
    await expect(client.createPreviewSession(publicId, { embedTenantName: 'no-such-tenant', draft: true })).rejects.toMatchObject({ status: 404, field: 'embedTenantName' });
  });

  it("administers the account: a user and their key (shown once, refused once deleted), a group, the settings, a tenant and its viewer", async () => {
    const suffix = Math.random().toString(36).slice(2, 10);
    const user = await client.createUser({ email: `client-${suffix}@example.test`, role: 'member', firstName: 'Client' });
    expect(user).toMatchObject({ role: 'member', hasPassword: false });
    const made = await client.createApiKey(user.id, { name: 'client test' });
    expect((await client.listApiKeys(user.id)).map((k) => [k.id, k.hint])).toEqual([[made.id, made.key.slice(-4)]]);
    const asUser = new SvcClient({ baseUrl: `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`, apiKey: made.key });
    expect((await asUser.listDeployments()).length).toBeGreaterThan(0);
    await client.deleteApiKey(user.id, made.id);
    await expect(asUser.listDeployments()).rejects.toMatchObject({ status: 401 });
    expect((await client.updateUser(user.id, { firstName: null })).firstName).toBeNull();

    const group = await client.createGroup({ name: `Client ${suffix}`, memberIds: [user.id] });
    expect((await client.updateGroup(group.id, { memberIds: [] })).memberIds).toEqual([]);
    expect((await client.listGroups()).map((g) => g.id)).toContain(group.id);
    await client.deleteGroup(group.id);
    await expect(client.getGroup(group.id)).rejects.toMatchObject({ status: 404, field: 'groupId' });

    expect((await client.updateAccountSettings({ timezone: 'Europe/Paris' })).timezone).toBe('Europe/Paris');
    await expect(client.updateAccountSettings({ allowedEmbedOrigins: ['not an origin'] })).rejects.toMatchObject({ status: 400, field: 'allowedEmbedOrigins[0]' });

    const tenant = await client.createEmbedTenant(`client-${suffix}`);
    const viewer = await client.createEmbedUser({ embedTenantName: tenant.name, externalId: 'viewer-1', firstName: 'Vi' });
    expect((await client.listEmbedUsers(tenant.name)).map((u) => u.id)).toEqual([viewer.id]);
    expect((await client.updateEmbedUser(viewer.id, { groups: ['eu'] })).groups).toEqual(['eu']);
    expect((await client.renameEmbedTenant(tenant.id, `client-${suffix}-2`)).name).toBe(`client-${suffix}-2`);
    await client.deleteEmbedTenant(tenant.id);
    await expect(client.getEmbedUser(viewer.id)).rejects.toMatchObject({ status: 404 });
    await client.deleteUser(user.id);
    expect((await client.listUsers()).map((u) => u.id)).not.toContain(user.id);
  });

  it("reads and replaces an item's grants (issue 33, editor grants); a member's key is a 403", async () => {
    const seeded = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }, { ref: 'mia', role: 'member' }],
      groups: [{ ref: 'crew', name: 'Crew', members: ['mia'] }],
      deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'folder', type: 'FOLDER', name: 'Team', createdBy: 'admin', grants: [{ user: 'mia' }] }] }],
    });
    const baseUrl = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
    const admin = new SvcClient({ baseUrl, apiKey: seeded.keys.admin! });
    const { prod, folder, mia, crew } = seeded.refs as Record<string, number>;
    expect(await admin.listItemGrants(prod!, folder!)).toEqual([{ userId: mia, role: 'viewer' }]);
    expect(await admin.replaceItemGrants(prod!, folder!, [{ userId: mia!, role: 'editor' }, { groupId: crew! }]))
      .toEqual([{ userId: mia, role: 'editor' }, { groupId: crew, role: 'viewer' }]);
    expect(await admin.listItemGrants(prod!, folder!)).toEqual([{ userId: mia, role: 'editor' }, { groupId: crew, role: 'viewer' }]);
    const refused = await new SvcClient({ baseUrl, apiKey: seeded.keys.mia! }).replaceItemGrants(prod!, folder!, []).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 403, field: 'Authorization' });
    const other = await admin.listItemGrants(deploymentId, folder!).catch((e: unknown) => e);
    expect(other).toMatchObject({ status: 404, field: 'deploymentId' });
  });

  it('lists the pre-aggregations\' build status (issue 34)', async () => {
    // The demo's model: each rollup in each of its time zones, not built here, and why a build is due.
    const statuses = await client.listPreAggregations(deploymentId);
    expect(statuses.map((s) => `${s.view}.${s.name}`)).toEqual(expect.arrayContaining(['orders.monthly', 'orders.daily', 'orders.by_status']));
    for (const s of statuses) expect(s).toMatchObject({ built: false, builtAt: null, due: 'never built', partitions: [] });
    const missing = await client.listPreAggregations(2147483000).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, field: 'deploymentId' });
  });

  // Issue 36, Cube JWTs.
  it('makes, rotates and revokes a deployment\'s Cube API secret; a token signed with it reads Cube\'s API until then (issue 36)', async () => {
    const apiUrl = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/cubejs-api/v1`;
    const load = async (secret: string) => {
      const jwt = await new SignJWT({ deploymentId }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(secret));
      return (await fetch(`${apiUrl}/meta`, { headers: { authorization: jwt } })).status;
    };
    const first = await client.createCubeSecret(deploymentId);
    expect(first).toMatchObject({ deploymentId, secret: expect.any(String) as string });
    expect(await load(first.secret)).toBe(200);
    const second = await client.createCubeSecret(deploymentId);
    expect(second.secret).not.toBe(first.secret);
    expect(await load(first.secret)).toBe(401);
    expect(await load(second.secret)).toBe(200);
    await client.revokeCubeSecret(deploymentId);
    expect(await load(second.secret)).toBe(401);
    const missing = await client.createCubeSecret(2147483000).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, field: 'deploymentId' });
  });

  it('answers who is calling (issue 34)', async () => {
    const me = await client.me();
    expect(me).toMatchObject({ user: { role: 'admin' }, signedInWith: 'api-key' });
    expect(me.account.tenantName).toMatch(/^t-/);
  });

  it('makes, renames and moves folders (issue 34); a folder never goes inside itself', async () => {
    const made = await client.createFolder(deploymentId, { name: ' Client folder ' });
    expect(made).toMatchObject({ name: 'Client folder', type: 'FOLDER', folderId: null, folderPath: [] });
    const inner = await client.createFolder(deploymentId, { name: 'Inner', parentId: made.id });
    expect(inner).toMatchObject({ folderId: made.id, folderPath: [{ id: made.id, name: 'Client folder' }] });
    expect((await client.updateWorkspaceItem(deploymentId, made.id, { name: 'Renamed' })).name).toBe('Renamed');
    const loop = await client.updateWorkspaceItem(deploymentId, made.id, { parentId: inner.id }).catch((e: unknown) => e);
    expect(loop).toMatchObject({ status: 400, field: 'parentId' });
    expect(await client.updateWorkspaceItem(deploymentId, inner.id, { parentId: null })).toMatchObject({ folderId: null, folderPath: [] });
    const names = (await client.listWorkspace(deploymentId, { types: ['FOLDER'] })).items.map((i) => i.name);
    expect(names).toEqual(expect.arrayContaining(['Inner', 'Renamed']));
    const permissions = await client.workspacePermissions(deploymentId, { folderId: made.id, itemIds: [made.id, inner.id, 2147483000] });
    expect(permissions).toEqual({ folder: { id: made.id, canCreate: true }, items: [{ id: made.id, canEdit: true, dashboardPublicId: null }, { id: inner.id, canEdit: true, dashboardPublicId: null }] });
    const missing = await client.workspacePermissions(deploymentId, { folderId: 2147483000 }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, field: 'folderId' });
  });

  // Issue 35 explore.
  it('explores with an embed token: getEmbedMeta lists what the viewer\'s policies show, runExploreQuery answers as the admin\'s preview as that viewer; a view-level viewer\'s own query is a 403 naming settings.explore', async () => {
    const asViewer = { embedTenantName: 'customer-a', securityContext: { tenant: 'customer-a' } };
    const viewerClient = async (explore: 'view' | 'create') => {
      const viewer = await mintViewer(server, adminKey, { deploymentId, ...asViewer, settings: { explore } });
      return new SvcClient({ baseUrl, embedToken: viewer.token });
    };
    const creator = await viewerClient('create');
    const meta = await creator.getEmbedMeta();
    const full = await client.getMeta(deploymentId);
    expect(meta.cubes.length).toBeGreaterThan(0);
    for (const cube of meta.cubes) {
      const whole = full.cubes.find((c) => c.name === cube.name)!;
      for (const member of [...cube.measures, ...cube.dimensions]) expect([...whole.measures, ...whole.dimensions]).toContainEqual(member);
    }
    const query = { measures: ['orders.count'], dimensions: ['orders.status'] };
    const answer = await creator.runExploreQuery({ query });
    expect(answer.rows.length).toBeGreaterThan(0);
    expect(answer).not.toHaveProperty('statement');
    expect(answer.rows).toEqual((await client.previewQuery(deploymentId, { query, asViewer })).rows);
    const refused = await (await viewerClient('view')).runExploreQuery({ query }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SvcApiError);
    expect(refused).toMatchObject({ status: 403, field: 'settings.explore' });
  });
});
