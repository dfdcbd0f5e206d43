import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

interface Permissions { folder: { id: number | null; canCreate: boolean }; items: Array<{ id: number; canEdit: boolean; dashboardPublicId: string | null }> }

/**
 * Issue 34 (the console): what a caller may do with the items a listing page shows (workspace.permissions.ts), and
 * `canEdit` on a dashboard. The console offers Edit, Rename, Move, New dashboard and New folder by these answers; a
 * draft's publicId goes to those who may change it only (docs/decisions.md "what the console may offer").
 */
describeEachDialect('the caller\'s permissions on workspace items', (t) => {
  let s: SeededAccount;
  let other: SeededAccount;
  const suffix = uniqueSuffix();
  let published: { publicId: string; workbookId: number };
  let draft: { publicId: string; workbookId: number };

  beforeAll(async () => {
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'ed', role: 'member' }, { ref: 'vic', role: 'member' }, { ref: 'nick', role: 'member' }],
      deployments: [
        {
          ref: 'prod', name: 'Prod', items: [
            { ref: 'team', type: 'FOLDER', name: `Team ${suffix}`, createdBy: 'alice', grants: [{ user: 'ed', role: 'editor' }, { user: 'vic' }] },
            { ref: 'closed', type: 'FOLDER', name: 'Closed', createdBy: 'alice', grants: [{ user: 'ed' }] },
          ],
        },
        { ref: 'stage', name: 'Stage', items: [{ ref: 'stageFolder', type: 'FOLDER', name: 'Stage folder', createdBy: 'alice', grants: [{ user: 'ed', role: 'editor' }] }] },
      ],
    });
    other = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Theirs', items: [{ ref: 'folder', type: 'FOLDER', name: 'Theirs', createdBy: 'admin' }] }],
    });
    const make = async (title: string, publish: boolean) => {
      const made = await t().app.inject({
        method: 'POST', url: `/api/v1/deployments/${s.refs.prod}/dashboards`, headers: bearer(s.keys.alice!),
        payload: { title, folderId: s.refs.team, config: { widgets: [] } },
      });
      expect(made.statusCode, made.body).toBe(201);
      const { publicId, workbookId } = made.json() as { publicId: string; workbookId: number };
      if (publish) expect((await t().app.inject({ method: 'POST', url: `/api/v1/dashboards/${publicId}/publish`, headers: bearer(s.keys.alice!) })).statusCode).toBe(200);
      return { publicId, workbookId };
    };
    published = await make('Published', true);
    draft = await make('Never published', false);
  });

  const ask = async (user: string, query: string, deployment = s.refs.prod!) => {
    const res = await t().app.inject({ url: `/api/v1/deployments/${deployment}/workspace/permissions${query}`, headers: bearer(s.keys[user]!) });
    return res;
  };
  const permissions = async (user: string, query: string) => {
    const res = await ask(user, query);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    return res.json() as Permissions;
  };
  const items = () => `?itemId=${s.refs.team}&itemId=${s.refs.closed}&itemId=${published.workbookId}&itemId=${draft.workbookId}`;
  const byId = (answer: Permissions) => Object.fromEntries(answer.items.map((i) => [i.id, { canEdit: i.canEdit, dashboardPublicId: i.dashboardPublicId }]));

  it('lets an admin change everything and names every dashboard, the draft included', async () => {
    const answer = await permissions('alice', `${items()}&folderId=${s.refs.team}`);
    expect(answer.folder).toEqual({ id: s.refs.team, canCreate: true });
    expect(byId(answer)).toEqual({
      [s.refs.team!]: { canEdit: true, dashboardPublicId: null },
      [s.refs.closed!]: { canEdit: true, dashboardPublicId: null },
      [published.workbookId]: { canEdit: true, dashboardPublicId: published.publicId },
      [draft.workbookId]: { canEdit: true, dashboardPublicId: draft.publicId },
    });
  });

  it('lets a member with an editor grant change what is below it only, and open its draft', async () => {
    const answer = await permissions('ed', `${items()}&folderId=${s.refs.team}`);
    expect(answer.folder.canCreate).toBe(true);
    expect(byId(answer)).toEqual({
      [s.refs.team!]: { canEdit: true, dashboardPublicId: null },
      [s.refs.closed!]: { canEdit: false, dashboardPublicId: null },
      [published.workbookId]: { canEdit: true, dashboardPublicId: published.publicId },
      [draft.workbookId]: { canEdit: true, dashboardPublicId: draft.publicId },
    });
    expect((await permissions('ed', `?folderId=${s.refs.closed}`)).folder).toEqual({ id: s.refs.closed, canCreate: false });
  });

  it('shows a member with a viewer grant the published dashboard, never the draft\'s publicId, and nothing to change', async () => {
    const answer = await permissions('vic', `${items()}&folderId=${s.refs.team}`);
    expect(answer.folder.canCreate).toBe(false);
    expect(byId(answer)).toEqual({
      [s.refs.team!]: { canEdit: false, dashboardPublicId: null },
      [published.workbookId]: { canEdit: false, dashboardPublicId: published.publicId },
      [draft.workbookId]: { canEdit: false, dashboardPublicId: null },
    });
    expect(JSON.stringify(answer)).not.toContain(draft.publicId);
    // The root is every member's.
    expect((await permissions('vic', '')).folder).toEqual({ id: null, canCreate: true });
  });

  it('leaves out what the caller cannot access, another deployment\'s items and another account\'s', async () => {
    expect((await permissions('nick', items())).items).toEqual([]);
    const mixed = await permissions('alice', `?itemId=${s.refs.stageFolder}&itemId=${other.refs.folder}&itemId=2147483000&itemId=${s.refs.team}`);
    expect(mixed.items.map((i) => i.id)).toEqual([s.refs.team]);
  });

  it('answers 404 for a folderId naming no folder of the deployment, another account\'s included, and 400 for bad ids', async () => {
    for (const folderId of [2147483000, other.refs.folder, s.refs.stageFolder, published.workbookId]) {
      const res = await ask('alice', `?folderId=${folderId}`);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().error.field).toBe('folderId');
    }
    expect((await ask('alice', '', other.refs.prod!)).statusCode).toBe(404);
    const bad = await ask('alice', '?itemId=x');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain('itemId');
    expect((await ask('alice', `?${Array.from({ length: 201 }, (_, i) => `itemId=${i + 1}`).join('&')}`)).statusCode).toBe(400);
  });

  it('says on the dashboard whether the caller may change it, as the writes decide', async () => {
    const read = async (user: string, publicId: string) => {
      const res = await t().app.inject({ url: `/api/v1/dashboards/${publicId}`, headers: bearer(s.keys[user]!) });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { canEdit: boolean; draftRevision: number; published: unknown };
    };
    expect((await read('alice', published.publicId)).canEdit).toBe(true);
    expect((await read('ed', published.publicId)).canEdit).toBe(true);
    const seen = await read('vic', published.publicId);
    expect(seen.canEdit).toBe(false);
    // And the API refuses what the console does not offer: a member without an editor grant changes nothing.
    const put = await t().app.inject({
      method: 'PUT', url: `/api/v1/dashboards/${published.publicId}/draft`, headers: { ...bearer(s.keys.vic!), 'if-match': `"draft-${seen.draftRevision}"` },
      payload: { title: 'Vic was here', config: { widgets: [] } },
    });
    expect(put.statusCode, put.body).toBe(403);
    const publish = await t().app.inject({ method: 'POST', url: `/api/v1/dashboards/${published.publicId}/publish`, headers: bearer(s.keys.vic!) });
    expect(publish.statusCode, publish.body).toBe(403);
    expect((await read('alice', published.publicId)).draftRevision).toBe(seen.draftRevision);
  });
});
