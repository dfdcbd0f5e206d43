import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

interface Item { id: number; name: string; type: string; folderId: number | null; folderPath: Array<{ id: number; name: string }>; createdBy?: number }

/**
 * Issue 34 (the console), folders through the API (docs/authoring.md "Folders"): a folder made, an item renamed and
 * moved, by the edit rule of issue 33 (admins anywhere; a member at the root, or in what they created or below an
 * editor grant). Each change is on the very next listing, cached pages included; each refusal (400 naming the
 * field, 403, 404) writes nothing, audit log included.
 */
describeEachDialect('folders and items through the API', (t) => {
  let s: SeededAccount;
  let other: SeededAccount;
  const suffix = uniqueSuffix();

  beforeAll(async () => {
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'ed', role: 'member' }, { ref: 'vic', role: 'member' }],
      deployments: [
        {
          ref: 'prod', name: 'Prod', items: [
            {
              ref: 'team', type: 'FOLDER', name: `Team ${suffix}`, createdBy: 'alice', grants: [{ user: 'ed', role: 'editor' }, { user: 'vic' }],
              children: [
                { ref: 'wb', type: 'WORKBOOK', name: 'Revenue', createdBy: 'alice' },
                { ref: 'inner', type: 'FOLDER', name: 'Inner', createdBy: 'alice', children: [{ ref: 'deep', type: 'REPORT', name: `Deep ${suffix}`, createdBy: 'alice' }] },
              ],
            },
            { ref: 'closed', type: 'FOLDER', name: 'Closed', createdBy: 'alice', grants: [{ user: 'ed' }] },
            { ref: 'rootReport', type: 'REPORT', name: 'Root report', createdBy: 'alice' },
          ],
        },
        { ref: 'stage', name: 'Stage', items: [{ ref: 'stageFolder', type: 'FOLDER', name: 'Stage folder', createdBy: 'alice' }] },
      ],
    });
    other = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Theirs', items: [{ ref: 'folder', type: 'FOLDER', name: 'Theirs', createdBy: 'admin' }] }],
    });
  });

  const as = (user: string) => bearer(s.keys[user]!);
  const base = (deployment = s.refs.prod!) => `/api/v1/deployments/${deployment}/workspace`;
  const json = { 'content-type': 'application/json' };
  const create = (body: unknown, user = 'alice', deployment = s.refs.prod!) =>
    t().app.inject({ method: 'POST', url: `${base(deployment)}/folders`, headers: { ...as(user), ...json }, payload: JSON.stringify(body) });
  const patch = (itemId: number, body: unknown, user = 'alice', deployment = s.refs.prod!) =>
    t().app.inject({ method: 'PATCH', url: `${base(deployment)}/${itemId}`, headers: { ...as(user), ...json }, payload: JSON.stringify(body) });
  const list = async (user: string, query = '') => {
    const res = await t().app.inject({ url: `${base()}${query}`, headers: as(user) });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { items: Item[] }).items;
  };
  const auditOf = async () => ((await t().app.inject({ url: '/api/v1/audit?first=200', headers: as('alice') })).json() as {
    items: Array<{ action: string; target: { type: string; id: string }; actor: { userId: number }; detail: Record<string, unknown> }>;
  }).items;

  it('makes a folder at the root and in a folder, answered as the listing shows it, and on the very next (cached) listing', async () => {
    const before = await list('alice');
    expect(before.map((i) => i.name)).not.toContain(`Made ${suffix}`);
    const made = await create({ name: `  Made ${suffix}  ` });
    expect(made.statusCode, made.body).toBe(201);
    const folder = made.json() as Item;
    expect(folder).toMatchObject({ name: `Made ${suffix}`, type: 'FOLDER', folderId: null, folderPath: [], createdBy: s.refs.alice, deploymentId: s.refs.prod, isFavorite: false });
    expect((await list('alice')).find((i) => i.id === folder.id)).toEqual(folder);

    const inner = await create({ name: 'Quarterly', parentId: folder.id });
    expect(inner.statusCode, inner.body).toBe(201);
    expect(inner.json()).toMatchObject({ folderId: folder.id, folderPath: [{ id: folder.id, name: `Made ${suffix}` }] });
    expect((await list('alice', `?folderId=${folder.id}`)).map((i) => i.name)).toEqual(['Quarterly']);

    const entry = (await auditOf()).find((e) => e.action === 'folder.create' && e.target.id === String(folder.id));
    expect(entry).toMatchObject({ target: { type: 'item' }, actor: { userId: s.refs.alice }, detail: { deploymentId: s.refs.prod, name: `Made ${suffix}`, parentId: null } });
  });

  it('renames an item, on the very next (cached) listing and in a search', async () => {
    const folder = (await create({ name: `Rename me ${suffix}` })).json() as Item;
    expect((await list('alice')).map((i) => i.name)).toContain(`Rename me ${suffix}`);
    const renamed = await patch(folder.id, { name: `Renamed ${suffix}` });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ id: folder.id, name: `Renamed ${suffix}` });
    const names = (await list('alice')).map((i) => i.name);
    expect(names).toContain(`Renamed ${suffix}`);
    expect(names).not.toContain(`Rename me ${suffix}`);
    expect((await list('alice', `?search=${encodeURIComponent(`renamed ${suffix}`)}`)).map((i) => i.id)).toEqual([folder.id]);
    expect(await list('alice', `?search=${encodeURIComponent(`rename me ${suffix}`)}`)).toEqual([]);
    const entry = (await auditOf()).find((e) => e.action === 'item.rename' && e.target.id === String(folder.id));
    expect(entry).toMatchObject({ detail: { from: `Rename me ${suffix}`, to: `Renamed ${suffix}`, type: 'FOLDER' } });
  });

  it('moves an item with everything below it: folderPath, depth, the listings and what grants reach follow', async () => {
    const target = (await create({ name: `Target ${suffix}` })).json() as Item;
    const moved = await patch(s.refs.inner!, { parentId: target.id });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ id: s.refs.inner, folderId: target.id, folderPath: [{ id: target.id, name: `Target ${suffix}` }] });
    expect((await list('alice', `?folderId=${s.refs.team}`)).map((i) => i.name)).toEqual(['Revenue']);
    const found = await list('alice', `?search=${encodeURIComponent(`deep ${suffix}`)}`);
    expect(found.map((i) => i.folderPath.map((f) => f.name))).toEqual([[`Target ${suffix}`, 'Inner']]);
    // Vic reached Deep through his grant on Team; below Target (no grant of his), he no longer does.
    expect(await list('vic', `?search=${encodeURIComponent(`deep ${suffix}`)}`)).toEqual([]);
    const rows = await t().db.kysely.selectFrom('workspace_items').select(['id', 'depth']).where('id', 'in', [s.refs.inner!, s.refs.deep!]).orderBy('depth').execute();
    expect(rows.map((r) => r.depth)).toEqual([1, 2]);

    // And back, then to the root: the closure rows stay whole each time.
    expect((await patch(s.refs.inner!, { parentId: s.refs.team })).statusCode).toBe(200);
    expect((await list('vic', `?search=${encodeURIComponent(`deep ${suffix}`)}`)).map((i) => i.folderPath.map((f) => f.name))).toEqual([[`Team ${suffix}`, 'Inner']]);
    const toRoot = await patch(s.refs.inner!, { parentId: null, name: 'Inner at the root' });
    expect(toRoot.statusCode, toRoot.body).toBe(200);
    expect(toRoot.json()).toMatchObject({ folderId: null, folderPath: [], name: 'Inner at the root' });
    const closure = await t().db.kysely.selectFrom('item_ancestors').select(['ancestor_id', 'distance']).where('item_id', '=', s.refs.deep!).orderBy('distance').execute();
    expect(closure).toEqual([{ ancestor_id: s.refs.deep, distance: 0 }, { ancestor_id: s.refs.inner, distance: 1 }]);
    expect((await patch(s.refs.inner!, { parentId: s.refs.team, name: 'Inner' })).statusCode).toBe(200);

    const moves = (await auditOf()).filter((e) => e.action === 'item.move' && e.target.id === String(s.refs.inner));
    expect(moves[0]).toMatchObject({ detail: { from: null, to: s.refs.team } });
    expect(moves.length).toBe(4);
  });

  it('lets a member make and change folders at the root, in what they made and below an editor grant, and nowhere else', async () => {
    const own = await create({ name: `Ed's ${suffix}` }, 'ed');
    expect(own.statusCode, own.body).toBe(201);
    const ownId = (own.json() as Item).id;
    expect((await create({ name: 'Inside his own', parentId: ownId }, 'ed')).statusCode).toBe(201);
    expect((await create({ name: 'Under his editor grant', parentId: s.refs.team }, 'ed')).statusCode).toBe(201);
    expect((await patch(s.refs.wb!, { name: 'Revenue (ed)' }, 'ed')).statusCode).toBe(200);
    expect((await patch(s.refs.wb!, { name: 'Revenue' }, 'ed')).statusCode).toBe(200);
    expect((await patch(ownId, { parentId: s.refs.team }, 'ed')).statusCode).toBe(200);

    const refusals: Array<[string, () => ReturnType<typeof create>, string]> = [
      ['a folder in a folder of his viewer grant', () => create({ name: 'x', parentId: s.refs.closed }, 'ed'), 'parentId'],
      ['a folder in a folder he was not granted', () => create({ name: 'x', parentId: s.refs.team }, 'vic'), 'parentId'],
      ['renaming what his viewer grant reaches', () => patch(s.refs.wb!, { name: 'x' }, 'vic'), 'itemId'],
      ['renaming an admin\'s item at the root', () => patch(s.refs.rootReport!, { name: 'x' }, 'ed'), 'itemId'],
      ['moving his folder into one of his viewer grant', () => patch(ownId, { parentId: s.refs.closed }, 'ed'), 'parentId'],
      ['moving what he may not change', () => patch(s.refs.closed!, { parentId: s.refs.team }, 'ed'), 'itemId'],
    ];
    const entries = (await auditOf()).length;
    for (const [what, run, field] of refusals) {
      const res = await run();
      expect(res.statusCode, `${what}: ${res.body}`).toBe(403);
      expect(res.json().error.field, what).toBe(field);
    }
    expect((await auditOf()).length).toBe(entries);
  });

  it('refuses bad input with a 400 naming the field, another account\'s deployment or item with a 404, and writes nothing', async () => {
    const folder = (await create({ name: `Checked ${suffix}` })).json() as Item;
    const child = (await create({ name: 'Child', parentId: folder.id })).json() as Item;
    const entries = (await auditOf()).length;
    const names = async () => (await list('alice')).map((i) => i.name).sort();
    const listed = await names();
    const bad: Array<[string, () => ReturnType<typeof create>, string]> = [
      ['an empty name', () => create({ name: '' }), 'name'],
      ['a name of spaces', () => create({ name: '   ' }), 'name'],
      ['a name too long', () => create({ name: 'x'.repeat(256) }), 'name'],
      ['a name not a string', () => create({ name: 7 }), 'name'],
      ['no name', () => create({ parentId: folder.id }), 'name'],
      ['an unknown field', () => create({ name: 'x', colour: 'red' }), 'colour'],
      ['a parent that is a workbook', () => create({ name: 'x', parentId: s.refs.wb }), 'parentId'],
      ['a parent of another deployment', () => create({ name: 'x', parentId: s.refs.stageFolder }), 'parentId'],
      ["a parent of another account", () => create({ name: 'x', parentId: other.refs.folder }), 'parentId'],
      ['a parent that is no id', () => create({ name: 'x', parentId: 'root' }), 'parentId'],
      ['a rename to spaces', () => patch(folder.id, { name: ' ' }), 'name'],
      ['a change of nothing', () => patch(folder.id, {}), ''],
      ['a folder into itself', () => patch(folder.id, { parentId: folder.id }), 'parentId'],
      ['a folder into its child', () => patch(folder.id, { parentId: child.id }), 'parentId'],
      ['a move into a workbook', () => patch(folder.id, { parentId: s.refs.wb }), 'parentId'],
    ];
    for (const [what, run, field] of bad) {
      const res = await run();
      expect(res.statusCode, `${what}: ${res.body}`).toBe(400);
      if (field !== '') expect(res.json().error.field, what).toBe(field);
    }
    const missing: Array<[string, () => ReturnType<typeof create>, string]> = [
      ["another account's deployment", () => create({ name: 'x' }, 'alice', other.refs.prod!), 'deploymentId'],
      ["another account's item", () => patch(other.refs.folder!, { name: 'x' }), 'itemId'],
      ["another account's item through its deployment", () => patch(other.refs.folder!, { name: 'x' }, 'alice', other.refs.prod!), 'deploymentId'],
      ['an item of another deployment', () => patch(s.refs.stageFolder!, { name: 'x' }), 'itemId'],
    ];
    for (const [what, run, field] of missing) {
      const res = await run();
      expect(res.statusCode, `${what}: ${res.body}`).toBe(404);
      expect(res.json().error.field, what).toBe(field);
    }
    expect((await auditOf()).length).toBe(entries);
    expect(await names()).toEqual(listed);
  });

  it('keeps two opposite moves at once from putting two folders inside each other', async () => {
    for (let round = 0; round < 5; round++) {
      const one = (await create({ name: `One ${round} ${suffix}` })).json() as Item;
      const two = (await create({ name: `Two ${round} ${suffix}` })).json() as Item;
      const answers = await Promise.all([patch(one.id, { parentId: two.id }), patch(two.id, { parentId: one.id })]);
      expect(answers.map((res) => res.statusCode).sort()).toEqual([200, 400]);
      const loop = await t().db.kysely.selectFrom('item_ancestors').select('item_id').where('item_id', '=', one.id).where('ancestor_id', '=', two.id)
        .union(t().db.kysely.selectFrom('item_ancestors').select('item_id').where('item_id', '=', two.id).where('ancestor_id', '=', one.id)).execute();
      expect(loop.length).toBe(1);
    }
  });

  it('keeps what is made in a folder that moves at the same time under the folder\'s new place: its ancestor rows are its folder chain', async () => {
    const target = (await create({ name: `Target ${suffix}` })).json() as Item;
    const db = t().db.kysely;
    /** The item's ancestors as the closure table says, and as its chain of folders says. */
    const ancestry = async (itemId: number) => {
      const rows = await db.selectFrom('item_ancestors').select(['ancestor_id', 'distance']).where('item_id', '=', itemId).where('distance', '>', 0).orderBy('distance').execute();
      const chain: number[] = [];
      let at = (await db.selectFrom('workspace_items').select('folder_id').where('id', '=', itemId).executeTakeFirstOrThrow()).folder_id;
      while (at !== null) {
        chain.push(at);
        at = (await db.selectFrom('workspace_items').select('folder_id').where('id', '=', at).executeTakeFirstOrThrow()).folder_id;
      }
      return { closure: rows.map((row) => row.ancestor_id), chain };
    };
    for (let round = 0; round < 5; round++) {
      const moving = (await create({ name: `Moving ${round} ${suffix}` })).json() as Item;
      const [moved, made, inner] = await Promise.all([
        patch(moving.id, { parentId: target.id }),
        t().app.inject({ method: 'POST', url: `/api/v1/deployments/${s.refs.prod}/dashboards`, headers: { ...as('alice'), ...json }, payload: JSON.stringify({ title: `Made ${round} ${suffix}`, config: { widgets: [] }, folderId: moving.id }) }),
        create({ name: `Inner ${round} ${suffix}`, parentId: moving.id }),
      ]);
      expect([moved.statusCode, made.statusCode, inner.statusCode], `${moved.body} ${made.body} ${inner.body}`).toEqual([200, 201, 201]);
      for (const itemId of [(made.json() as { workbookId: number }).workbookId, (inner.json() as Item).id]) {
        const { closure, chain } = await ancestry(itemId);
        expect(closure).toEqual(chain);
        expect(chain).toEqual([moving.id, target.id]);
      }
    }
  });
});
