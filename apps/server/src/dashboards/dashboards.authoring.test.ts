import type { FastifyInstance } from 'fastify';
import { beforeAll, expect, it } from 'vitest';
import { testConfig } from '../../test/config.js';
import { describeEachDialect } from '../../test/dialects.js';
import { buildApp } from '../app.js';
import { openDatabase } from '../db/db.database.js';
import { mintViewer } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

/**
 * Issue 33 part 2, dashboards through the API (docs/authoring.md "Dashboards"): created with a draft that viewers
 * never see, published atomically as the next version, versions listed and restored into the draft, archived.
 * Each answer of the "Bad input" (400 at the JSON path, 404, 409, 412, 428) and each role's permission.
 */
describeEachDialect('dashboards through the authoring API', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  let viewer: Record<string, string>;
  /** An account of editor and viewer grants: ed (editor on Team), vic (viewer on Team), gina (editor through her group on Group). */
  let g: SeededAccount;
  const suffix = uniqueSuffix();
  const admin = () => bearer(s.keys.alice!);
  const member = () => bearer(s.keys.bob!);

  /** Revenue by month in 2025: one CHART widget and its snapshot. */
  const revenueByMonth = (title = 'Revenue by month') => ({
    title,
    config: { widgets: [{ id: 'revenue', type: 'CHART' as const, position: { x: 0, y: 0, w: 12, h: 4 } }] },
    reportSnapshots: [{
      name: title, title, kind: 'table' as const,
      meta: { query: { measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-01-01', '2025-12-31'] }] } },
    }],
  });

  beforeAll(async () => {
    app = t().app;
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [{ ref: 'folder', type: 'FOLDER', name: 'Shared', createdBy: 'alice' }, { ref: 'wb-old', type: 'WORKBOOK', name: 'Old', createdBy: 'alice' }] }],
    });
    other = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Theirs' }] });
    viewer = (await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod! })).headers;
    g = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'ed', role: 'member' }, { ref: 'vic', role: 'member' }, { ref: 'gina', role: 'member' }],
      groups: [{ ref: 'editors', name: 'Editors', members: ['gina'] }],
      deployments: [{
        ref: 'prod', name: 'Prod', items: [
          {
            ref: 'team', type: 'FOLDER', name: 'Team', createdBy: 'alice', grants: [{ user: 'ed', role: 'editor' }, { user: 'vic' }],
            children: [{ ref: 'sub', type: 'FOLDER', name: 'Below', createdBy: 'alice' }],
          },
          { ref: 'group', type: 'FOLDER', name: 'Group', createdBy: 'alice', grants: [{ group: 'editors', role: 'editor' }, { user: 'vic', role: 'viewer' }] },
        ],
      }],
    });
  });

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Record<string, string>, body?: unknown) =>
    app.inject({ method, url, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
  const create = (body: Record<string, unknown>, headers = admin()) => call('POST', `/api/v1/deployments/${s.refs.prod}/dashboards`, headers, body);
  const embedGet = (publicId: string) => call('GET', `/api/v1/embed/dashboard/${publicId}`, viewer);
  const widgetData = async (publicId: string) => {
    const res = await call('POST', `/api/v1/embed/dashboard/${publicId}/widgets/revenue/data`, viewer, {});
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: unknown[][] }>().rows;
  };

  it('creates a draft that viewers never see, publishes it atomically, and the embed shows its figures', async () => {
    const publicId = `authored-${suffix}`;
    const created = await create({ ...revenueByMonth(), publicId });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.headers.etag).toBe('"draft-1"');
    expect(created.json()).toMatchObject({ publicId, status: 'draft', published: null, draft: { title: 'Revenue by month' }, draftRevision: 1 });
    expect((await embedGet(publicId)).statusCode).toBe(403);

    const published = await call('POST', `/api/v1/dashboards/${publicId}/publish`, admin());
    expect(published.statusCode, published.body).toBe(200);
    expect(published.json()).toMatchObject({ status: 'published', draft: null, published: { versionNumber: 1, title: 'Revenue by month' } });
    // The chart's snapshot got a REPORT of its own beside the workbook.
    const reportId = published.json<{ published: { reportSnapshots: Array<{ reportId: number }> } }>().published.reportSnapshots[0]!.reportId;
    const listing = (await call('GET', `/api/v1/deployments/${s.refs.prod}/workspace?types=REPORT&first=200`, admin())).json<{ items: Array<{ id: number; name: string }> }>();
    expect(listing.items.find((i) => i.id === reportId)?.name).toBe('Revenue by month');

    expect((await embedGet(publicId)).json()).toMatchObject({ publicId, status: 'published', versionNumber: 1 });
    expect((await widgetData(publicId)).length).toBe(12);
  });

  it('keeps translated content (issue 38) through the draft, the publish and the embed\'s read', async () => {
    const publicId = `translated-${suffix}`;
    const translations = { ja: { title: '月別売上', 'widgets.revenue.title': '売上' }, 'pt-BR': { title: 'Receita por mês' } };
    const body = revenueByMonth();
    const created = await create({ ...body, publicId, config: { ...body.config, translations } });
    expect(created.statusCode, created.body).toBe(201);
    expect((await call('POST', `/api/v1/dashboards/${publicId}/publish`, admin())).statusCode).toBe(200);
    expect((await embedGet(publicId)).json()).toMatchObject({ publicId, title: 'Revenue by month', config: { translations } });
  });

  it('keeps a changed draft from viewers until the next publish, lists the versions and restores one into the draft', async () => {
    const publicId = `versions-${suffix}`;
    await create({ ...revenueByMonth('First'), publicId });
    await call('POST', `/api/v1/dashboards/${publicId}/publish`, admin());
    const read = await call('GET', `/api/v1/dashboards/${publicId}`, admin());
    const changed = await call('PUT', `/api/v1/dashboards/${publicId}/draft`, { ...admin(), 'if-match': read.headers.etag as string }, revenueByMonth('Second'));
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ draft: { title: 'Second' }, published: { title: 'First', versionNumber: 1 } });
    expect((await embedGet(publicId)).json()).toMatchObject({ title: 'First', versionNumber: 1 });
    await call('POST', `/api/v1/dashboards/${publicId}/publish`, admin());
    expect((await embedGet(publicId)).json()).toMatchObject({ title: 'Second', versionNumber: 2 });

    const versions = (await call('GET', `/api/v1/dashboards/${publicId}/versions`, admin())).json<{ items: Array<{ versionNumber: number; title: string; current: boolean }> }>();
    expect(versions.items.map((v) => [v.versionNumber, v.title, v.current])).toEqual([[2, 'Second', true], [1, 'First', false]]);
    const restored = await call('POST', `/api/v1/dashboards/${publicId}/versions/1/restore`, admin());
    expect(restored.statusCode, restored.body).toBe(200);
    expect(restored.json()).toMatchObject({ draft: { title: 'First' }, published: { title: 'Second' } });
    await call('POST', `/api/v1/dashboards/${publicId}/publish`, admin());
    expect((await embedGet(publicId)).json()).toMatchObject({ title: 'First', versionNumber: 3 });
    expect((await call('POST', `/api/v1/dashboards/${publicId}/versions/9/restore`, admin())).statusCode).toBe(404);
    expect((await call('POST', `/api/v1/dashboards/${publicId}/publish`, admin())).statusCode).toBe(409);
  });

  it('needs If-Match on a draft: 428 without, 412 stale; nothing is written', async () => {
    const publicId = `ifmatch-${suffix}`;
    await create({ ...revenueByMonth(), publicId });
    const none = await call('PUT', `/api/v1/dashboards/${publicId}/draft`, admin(), revenueByMonth('x'));
    expect(none.statusCode).toBe(428);
    expect(none.json().error.field).toBe('If-Match');
    const stale = await call('PUT', `/api/v1/dashboards/${publicId}/draft`, { ...admin(), 'if-match': '"draft-7"' }, revenueByMonth('x'));
    expect(stale.statusCode).toBe(412);
    expect((await call('GET', `/api/v1/dashboards/${publicId}`, admin())).json()).toMatchObject({ draft: { title: 'Revenue by month' }, draftRevision: 1 });
    expect((await call('POST', `/api/v1/dashboards/${publicId}/publish`, { ...admin(), 'if-match': '"draft-2"' })).statusCode).toBe(412);
    const huge = await call('PUT', `/api/v1/dashboards/${publicId}/draft`, { ...admin(), 'if-match': '"draft-1"' }, { ...revenueByMonth(), description: 'x'.repeat(1_100_000) });
    expect(huge.statusCode).toBe(413);
  });

  it('refuses bad input at its JSON path, with 409 where it belongs, and writes nothing', async () => {
    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      ['no config', { title: 'x' }, 400, 'config'],
      ['a member the model lacks', { ...revenueByMonth(), reportSnapshots: [{ kind: 'table', meta: { query: { measures: ['orders.nope'] } } }] }, 400, 'reportSnapshots[0].meta.query.measures[0]'],
      ['a filter on no dimension', { title: 'x', config: { widgets: [{ id: 'f', type: 'FILTER', position: { x: 0, y: 0, w: 2, h: 1 }, config: { member: 'orders.gone' } }] } }, 400, 'config.widgets[0].config.member'],
      ['two widgets of one id', { title: 'x', config: { widgets: [{ id: 'a', type: 'TEXT', position: { x: 0, y: 0, w: 1, h: 1 } }, { id: 'a', type: 'TEXT', position: { x: 0, y: 1, w: 1, h: 1 } }] } }, 400, 'config.widgets[1].id'],
      ['a reportId that is no REPORT', { ...revenueByMonth(), reportSnapshots: [{ ...revenueByMonth().reportSnapshots[0], reportId: s.refs['wb-old'] }] }, 400, 'reportSnapshots[0].reportId'],
      // A body field naming nothing is a 400, as parentId on the folder routes (docs/decisions.md "a bad folderId").
      ['an unknown folder', { ...revenueByMonth(), folderId: 2147483000 }, 400, 'folderId'],
      ['a workbook as the folder', { ...revenueByMonth(), folderId: s.refs['wb-old'] }, 400, 'folderId'],
      ['a taken publicId', { ...revenueByMonth(), publicId: `authored-${suffix}` }, 409, 'publicId'],
      // Translated content (issue 38): canonical locales, keys that name something of this dashboard, strings.
      ['a locale in another spelling', { ...revenueByMonth(), config: { ...revenueByMonth().config, translations: { 'pt-br': { title: 'Receita' } } } }, 400, 'config.translations.pt-br'],
      ['a locale that is none', { ...revenueByMonth(), config: { ...revenueByMonth().config, translations: { 'not a locale!': { title: 'x' } } } }, 400, 'config.translations.not a locale!'],
      ['a translated widget that is not there', { ...revenueByMonth(), config: { ...revenueByMonth().config, translations: { ja: { 'widgets.gone.title': '売上' } } } }, 400, 'config.translations.ja.widgets.gone.title'],
      ['markdown of a CHART', { ...revenueByMonth(), config: { ...revenueByMonth().config, translations: { ja: { 'widgets.revenue.markdown': '# x' } } } }, 400, 'config.translations.ja.widgets.revenue.markdown'],
      ['an unknown text key', { ...revenueByMonth(), config: { ...revenueByMonth().config, translations: { ja: { subtitle: 'x' } } } }, 400, 'config.translations.ja.subtitle'],
      ['a title too long', { ...revenueByMonth(), config: { ...revenueByMonth().config, translations: { ja: { title: 'x'.repeat(2001) } } } }, 400, 'config.translations.ja.title'],
    ];
    const before = await t().db.kysely.selectFrom('dashboards').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    for (const [what, body, status, field] of cases) {
      const res = await create(body);
      expect(res.statusCode, `${what}: ${res.body}`).toBe(status);
      expect(res.json().error.field, what).toBe(field);
    }
    const after = await t().db.kysely.selectFrom('dashboards').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
    expect((await call('GET', '/api/v1/dashboards/nowhere-at-all', admin())).statusCode).toBe(404);
    expect((await call('POST', `/api/v1/deployments/${other.refs.prod}/dashboards`, admin(), revenueByMonth())).statusCode).toBe(404);
  });

  it('lets a member edit what they created, not an admin\'s; never raw SQL; another account\'s is a 404', async () => {
    const own = await create({ ...revenueByMonth('Bob\'s'), publicId: `bobs-${suffix}`, folderId: s.refs.folder }, member());
    expect(own.statusCode, own.body).toBe(403); // the folder is not granted to bob
    const mine = await create({ ...revenueByMonth('Bob\'s'), publicId: `bobs-${suffix}` }, member());
    expect(mine.statusCode, mine.body).toBe(201);
    expect((await call('PUT', `/api/v1/dashboards/bobs-${suffix}/draft`, { ...member(), 'if-match': '"draft-1"' }, revenueByMonth('Bob 2'))).statusCode).toBe(200);
    expect((await call('POST', `/api/v1/dashboards/bobs-${suffix}/publish`, member())).statusCode).toBe(200);
    const admins = `authored-${suffix}`;
    expect((await call('GET', `/api/v1/dashboards/${admins}`, member())).statusCode).toBe(403);
    expect((await call('PUT', `/api/v1/dashboards/${admins}/draft`, { ...member(), 'if-match': '"draft-2"' }, revenueByMonth())).statusCode).toBe(403);
    expect((await call('DELETE', `/api/v1/dashboards/${admins}`, member())).statusCode).toBe(403);
    const sql = await call('PUT', `/api/v1/dashboards/bobs-${suffix}/draft`, { ...member(), 'if-match': '"draft-3"' }, { title: 'x', config: { widgets: [] }, reportSnapshots: [{ kind: 'table', sqlQuery: 'SELECT 1' }] });
    expect(sql.statusCode).toBe(403);
    expect(sql.json().error.field).toBe('reportSnapshots[0].sqlQuery');
    expect((await call('GET', `/api/v1/dashboards/${admins}`, bearer(other.keys.alice!))).statusCode).toBe(404);
  });

  /** A published dashboard made by g's admin in `folder`. */
  const publishedIn = async (folder: 'sub' | 'group', publicId: string) => {
    const made = await call('POST', `/api/v1/deployments/${g.refs.prod}/dashboards`, bearer(g.keys.alice!), { ...revenueByMonth('Team v1'), publicId, folderId: g.refs[folder] });
    expect(made.statusCode, made.body).toBe(201);
    expect((await call('POST', `/api/v1/dashboards/${publicId}/publish`, bearer(g.keys.alice!))).statusCode).toBe(200);
  };

  it('lets a member with an editor grant on a folder above edit, publish, restore and archive a dashboard below it, and create one in it', async () => {
    const publicId = `edited-${suffix}`;
    await publishedIn('sub', publicId);
    const ed = bearer(g.keys.ed!);
    const read = await call('GET', `/api/v1/dashboards/${publicId}`, ed);
    expect(read.statusCode, read.body).toBe(200);
    const drafted = await call('PUT', `/api/v1/dashboards/${publicId}/draft`, { ...ed, 'if-match': read.headers.etag as string }, revenueByMonth('Team v2'));
    expect(drafted.statusCode, drafted.body).toBe(200);
    const published = await call('POST', `/api/v1/dashboards/${publicId}/publish`, ed);
    expect(published.statusCode, published.body).toBe(200);
    expect(published.json()).toMatchObject({ published: { versionNumber: 2, title: 'Team v2' } });
    const restored = await call('POST', `/api/v1/dashboards/${publicId}/versions/1/restore`, ed);
    expect(restored.statusCode, restored.body).toBe(200);
    expect(restored.json()).toMatchObject({ draft: { title: 'Team v1' } });
    // Creating in the folder (or below it) is changing it: the editor grant allows it.
    const madeInG = await call('POST', `/api/v1/deployments/${g.refs.prod}/dashboards`, ed, { ...revenueByMonth('Ed\'s'), publicId: `eds-${suffix}`, folderId: g.refs.sub });
    expect(madeInG.statusCode, madeInG.body).toBe(201);
    expect((await call('DELETE', `/api/v1/dashboards/${publicId}`, ed)).statusCode).toBe(204);
    const audit = (await call('GET', '/api/v1/audit?first=200', bearer(g.keys.alice!))).json<{ items: Array<{ action: string; target: { id: string }; actor: { userId: number } }> }>();
    expect(audit.items.filter((e) => e.target.id === publicId && e.actor.userId === g.refs.ed).map((e) => e.action))
      .toEqual(['dashboard.archive', 'dashboard.restore', 'dashboard.publish', 'dashboard.draft']);
  });

  it('lets a member with a viewer grant read a dashboard but refuses each change with a 403 that writes nothing', async () => {
    const publicId = `viewed-${suffix}`;
    await publishedIn('sub', publicId);
    const vic = bearer(g.keys.vic!);
    const before = await call('GET', `/api/v1/dashboards/${publicId}`, vic);
    expect(before.statusCode, before.body).toBe(200);
    expect((await call('GET', `/api/v1/dashboards/${publicId}/versions`, vic)).statusCode).toBe(200);
    const writes: Array<[string, () => ReturnType<typeof call>]> = [
      ['draft', () => call('PUT', `/api/v1/dashboards/${publicId}/draft`, { ...vic, 'if-match': before.headers.etag as string }, revenueByMonth('Vic\'s'))],
      ['publish', () => call('POST', `/api/v1/dashboards/${publicId}/publish`, vic)],
      ['restore', () => call('POST', `/api/v1/dashboards/${publicId}/versions/1/restore`, vic)],
      ['archive', () => call('DELETE', `/api/v1/dashboards/${publicId}`, vic)],
      ['create in the folder', () => call('POST', `/api/v1/deployments/${g.refs.prod}/dashboards`, vic, { ...revenueByMonth(), publicId: `vics-${suffix}`, folderId: g.refs.sub })],
    ];
    for (const [what, write] of writes) {
      const res = await write();
      expect(res.statusCode, `${what}: ${res.body}`).toBe(403);
      expect(res.json().error.field, what).toBe(what === 'create in the folder' ? 'folderId' : 'Authorization');
    }
    const after = await call('GET', `/api/v1/dashboards/${publicId}`, bearer(g.keys.alice!));
    expect(after.json()).toMatchObject({ status: 'published', draftRevision: before.json<{ draftRevision: number }>().draftRevision, published: { versionNumber: 1 } });
    expect((await call('GET', `/api/v1/dashboards/vics-${suffix}`, bearer(g.keys.alice!))).statusCode).toBe(404);
    // At the deployment's root a member still creates (docs/decisions.md).
    expect((await call('POST', `/api/v1/deployments/${g.refs.prod}/dashboards`, vic, { ...revenueByMonth(), publicId: `vics-root-${suffix}` })).statusCode).toBe(201);
  });

  it("lets a group's editor grant edit for its members only", async () => {
    const publicId = `grouped-${suffix}`;
    await publishedIn('group', publicId);
    const read = await call('GET', `/api/v1/dashboards/${publicId}`, bearer(g.keys.gina!));
    const drafted = await call('PUT', `/api/v1/dashboards/${publicId}/draft`, { ...bearer(g.keys.gina!), 'if-match': read.headers.etag as string }, revenueByMonth('Gina\'s'));
    expect(drafted.statusCode, drafted.body).toBe(200);
    expect((await call('POST', `/api/v1/dashboards/${publicId}/publish`, bearer(g.keys.gina!))).statusCode).toBe(200);
    // vic is granted the same folder as a viewer, and is no member of the group; ed's editor grant is on another folder.
    expect((await call('GET', `/api/v1/dashboards/${publicId}`, bearer(g.keys.vic!))).statusCode).toBe(200);
    expect((await call('DELETE', `/api/v1/dashboards/${publicId}`, bearer(g.keys.vic!))).statusCode).toBe(403);
    expect((await call('DELETE', `/api/v1/dashboards/${publicId}`, bearer(g.keys.ed!))).statusCode).toBe(403);
    expect((await call('GET', `/api/v1/dashboards/${publicId}`, bearer(g.keys.alice!))).json()).toMatchObject({ status: 'published', published: { versionNumber: 2, title: 'Gina\'s' } });
  });

  it('archives: viewers no longer open it, the audit log has every change in order', async () => {
    const publicId = `archived-${suffix}`;
    await create({ ...revenueByMonth(), publicId });
    await call('POST', `/api/v1/dashboards/${publicId}/publish`, admin());
    expect((await embedGet(publicId)).statusCode).toBe(200);
    expect((await call('DELETE', `/api/v1/dashboards/${publicId}`, admin())).statusCode).toBe(204);
    expect((await call('DELETE', `/api/v1/dashboards/${publicId}`, admin())).statusCode).toBe(204);
    expect((await embedGet(publicId)).statusCode).toBe(403);
    const audit = (await call('GET', '/api/v1/audit?first=200', admin())).json<{ items: Array<{ action: string; target: { id: string }; fromVersion: number | null; toVersion: number | null }> }>();
    expect(audit.items.filter((e) => e.target.id === publicId).map((e) => [e.action, e.fromVersion, e.toVersion]))
      .toEqual([['dashboard.archive', 1, null], ['dashboard.publish', null, 1], ['dashboard.create', null, null]]);
  });

  it('is served by another process on its next request once published (its own connection, its metadata held in memory)', async () => {
    const publicId = `two-apps-${suffix}`;
    await create({ ...revenueByMonth('Before'), publicId });
    await call('POST', `/api/v1/dashboards/${publicId}/publish`, admin());
    const db = openDatabase(t().url);
    const second = await buildApp(testConfig(), { db });
    try {
      const readThere = async () => (await second.inject({ url: `/api/v1/embed/dashboard/${publicId}`, headers: viewer })).json<{ title: string; versionNumber: number }>();
      // The second process reads (and keeps) version 1, with its widget's data.
      expect(await readThere()).toMatchObject({ title: 'Before', versionNumber: 1 });
      expect((await second.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/revenue/data`, headers: { ...viewer, 'content-type': 'application/json' }, payload: '{}' })).statusCode).toBe(200);
      const read = await call('GET', `/api/v1/dashboards/${publicId}`, admin());
      await call('PUT', `/api/v1/dashboards/${publicId}/draft`, { ...admin(), 'if-match': read.headers.etag as string }, revenueByMonth('After'));
      expect((await call('POST', `/api/v1/dashboards/${publicId}/publish`, admin())).statusCode).toBe(200);
      // PostgreSQL tells the other process at commit (LISTEN/NOTIFY); SQLite's other connection sees the commit.
      await expect.poll(readThere, { timeout: 5_000, interval: 50 }).toMatchObject({ title: 'After', versionNumber: 2 });
    } finally {
      await second.close();
      await db.close();
    }
  });

  it('copies a dashboard (copyOf): the draft for who may change it, the published version for a reader; the copy gets REPORT items of its own', async () => {
    const source = `copied-${suffix}`;
    await create({ ...revenueByMonth('Source v1'), publicId: source });
    const first = (await call('POST', `/api/v1/dashboards/${source}/publish`, admin())).json<{ published: { reportSnapshots: Array<{ reportId: number }> } }>();
    const reportId = first.published.reportSnapshots[0]!.reportId;
    // Version 2 names its snapshot by reportId, in the widget too; then a draft the readers do not see.
    const v2 = revenueByMonth('Source v2');
    const named = { ...v2, config: { widgets: [{ ...v2.config.widgets[0]!, config: { reportId } }] }, reportSnapshots: [{ ...v2.reportSnapshots[0]!, reportId }] };
    expect((await call('PUT', `/api/v1/dashboards/${source}/draft`, { ...admin(), 'if-match': '*' }, named)).statusCode).toBe(200);
    expect((await call('POST', `/api/v1/dashboards/${source}/publish`, admin())).statusCode).toBe(200);
    expect((await call('PUT', `/api/v1/dashboards/${source}/draft`, { ...admin(), 'if-match': '*' }, { ...named, title: 'Source draft' })).statusCode).toBe(200);

    const copy = await create({ copyOf: source, title: 'The copy', publicId: `copy-${suffix}` });
    expect(copy.statusCode, copy.body).toBe(201);
    const made = copy.json<{ status: string; published: unknown; draft: { title: string; config: { widgets: Array<{ config: Record<string, unknown> }> }; reportSnapshots: Array<Record<string, unknown>> } }>();
    expect(made).toMatchObject({ status: 'draft', published: null, draft: { title: 'The copy' } });
    expect(made.draft.config.widgets[0]!.config).toEqual({ snapshotIndex: 0 });
    expect(made.draft.reportSnapshots[0]).not.toHaveProperty('reportId');
    expect(made.draft.reportSnapshots[0]).toMatchObject({ title: 'Source v2', meta: v2.reportSnapshots[0]!.meta });
    const published = await call('POST', `/api/v1/dashboards/copy-${suffix}/publish`, admin());
    expect(published.statusCode, published.body).toBe(200);
    const copyReport = published.json<{ published: { reportSnapshots: Array<{ reportId: number }> } }>().published.reportSnapshots[0]!.reportId;
    expect(copyReport).not.toBe(reportId);
    expect((await widgetData(`copy-${suffix}`)).length).toBe(12);
    expect((await widgetData(source)).length).toBe(12);
    const audit = (await call('GET', '/api/v1/audit?first=50', admin())).json<{ items: Array<{ action: string; target: { id: string }; detail: Record<string, unknown> }> }>();
    expect(audit.items.find((e) => e.action === 'dashboard.create' && e.target.id === `copy-${suffix}`)?.detail).toMatchObject({ copyOf: source, copied: 'draft' });

    // In g: vic reads Team (a viewer) and copies its published version to his root; ed (an editor) copies the draft.
    const team = `team-source-${suffix}`;
    await publishedIn('sub', team);
    expect((await call('PUT', `/api/v1/dashboards/${team}/draft`, { ...bearer(g.keys.alice!), 'if-match': '*' }, revenueByMonth('Team draft'))).statusCode).toBe(200);
    const copyIn = (user: string, body: Record<string, unknown>) => call('POST', `/api/v1/deployments/${g.refs.prod}/dashboards`, bearer(g.keys[user]!), body);
    const byVic = await copyIn('vic', { copyOf: team, title: "Vic's copy" });
    expect(byVic.statusCode, byVic.body).toBe(201);
    expect(byVic.json()).toMatchObject({ createdBy: g.refs.vic, draft: { title: "Vic's copy", reportSnapshots: [{ title: 'Team v1' }] } });
    const byEd = await copyIn('ed', { copyOf: team, title: "Ed's copy", folderId: g.refs.sub });
    expect(byEd.statusCode, byEd.body).toBe(201);
    expect(byEd.json()).toMatchObject({ draft: { reportSnapshots: [{ title: 'Team draft' }] } });

    const unpublished = `unpublished-${suffix}`;
    expect((await call('POST', `/api/v1/deployments/${g.refs.prod}/dashboards`, bearer(g.keys.alice!), { ...revenueByMonth('Never published'), publicId: unpublished, folderId: g.refs.sub })).statusCode).toBe(201);
    const refusals: Array<[string, Promise<Awaited<ReturnType<typeof create>>>, number, string]> = [
      ['an unknown dashboard', create({ copyOf: 'no-such-dashboard', title: 'x' }), 404, 'copyOf'],
      ["another account's dashboard", create({ copyOf: team, title: 'x' }), 404, 'copyOf'],
      ['a dashboard the member cannot read', create({ copyOf: source, title: 'x' }, member()), 403, 'copyOf'],
      ['a config besides', create({ copyOf: source, title: 'x', config: { widgets: [] } }), 400, 'config'],
      ['snapshots besides', create({ copyOf: source, title: 'x', reportSnapshots: [] }), 400, 'reportSnapshots'],
      ['no config and no copyOf', create({ title: 'x' }), 400, 'config'],
      ['nothing published, and not the reader\'s to change', copyIn('vic', { copyOf: unpublished, title: 'x' }), 409, 'copyOf'],
      ['into a folder of his viewer grant', copyIn('vic', { copyOf: team, title: 'x', folderId: g.refs.sub }), 403, 'folderId'],
    ];
    for (const [what, pending, status, field] of refusals) {
      const res = await pending;
      expect(res.statusCode, `${what}: ${res.body}`).toBe(status);
      expect(res.json().error.field, what).toBe(field);
    }
  });
});
