import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

/**
 * Issue 33, editor grants through the API (docs/authoring.md "Who may do what"): admins read and replace an item's
 * grants; the next request of every member is decided on the new ones (the listing's cache drops too); each refusal
 * (400 naming the field, 404 for another account's or deployment's item, 403 for a member) writes nothing.
 */
describeEachDialect("an item's grants through the API", (t) => {
  let s: SeededAccount;
  let other: SeededAccount;
  const suffix = uniqueSuffix();
  const publicId = `granted-${suffix}`;

  beforeAll(async () => {
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'mia', role: 'member' }, { ref: 'gus', role: 'member' }],
      groups: [{ ref: 'crew', name: 'Crew', members: ['gus'] }],
      deployments: [
        {
          ref: 'prod', name: 'Prod', items: [{
            ref: 'team', type: 'FOLDER', name: `Team ${suffix}`, createdBy: 'alice', grants: [{ user: 'mia' }],
            children: [{
              ref: 'wb', type: 'WORKBOOK', name: 'Revenue', createdBy: 'alice',
              dashboard: { publicId, status: 'published', allowEmbed: true, title: 'Revenue', config: { widgets: [] } },
            }],
          }],
        },
        { ref: 'stage', name: 'Stage', items: [{ ref: 'stageFolder', type: 'FOLDER', name: 'Stage folder', createdBy: 'alice' }] },
      ],
    });
    other = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }, { ref: 'bo', role: 'member' }],
      groups: [{ ref: 'theirs', name: 'Theirs', members: ['bo'] }],
      deployments: [{ ref: 'prod', name: 'Theirs', items: [{ ref: 'folder', type: 'FOLDER', name: 'Theirs', createdBy: 'admin' }] }],
    });
  });

  const as = (user: string) => bearer(s.keys[user]!);
  const grantsUrl = (item = s.refs.team!, deployment = s.refs.prod!) => `/api/v1/deployments/${deployment}/workspace/${item}/grants`;
  const read = (headers = as('alice'), url = grantsUrl()) => t().app.inject({ url, headers });
  const replace = (grants: unknown[], headers = as('alice'), url = grantsUrl()) =>
    t().app.inject({ method: 'PUT', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify({ grants }) });
  const saveDraft = async (user: string) => {
    const current = await t().app.inject({ url: `/api/v1/dashboards/${publicId}`, headers: as(user) });
    if (current.statusCode !== 200) return current.statusCode;
    const res = await t().app.inject({
      method: 'PUT', url: `/api/v1/dashboards/${publicId}/draft`, headers: { ...as(user), 'if-match': current.headers.etag as string, 'content-type': 'application/json' },
      payload: JSON.stringify({ title: `Drafted by ${user}`, config: { widgets: [] } }),
    });
    return res.statusCode;
  };
  const rootNames = async (user: string) => {
    const res = await t().app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: as(user) });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { items: Array<{ name: string }> }).items.map((i) => i.name);
  };

  it('answers the grants on an item, a grant without a role as a viewer', async () => {
    const res = await read();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ grants: [{ userId: s.refs.mia, role: 'viewer' }] });
    expect((await read(as('alice'), grantsUrl(s.refs.wb))).json()).toEqual({ grants: [] });
  });

  it('replaces the grants in one write that the next request is decided on: the listing, reading and editing', async () => {
    expect(await rootNames('mia')).toEqual([`Team ${suffix}`]);
    expect(await saveDraft('mia')).toBe(403);

    const editor = await replace([{ userId: s.refs.mia, role: 'editor' }, { groupId: s.refs.crew }]);
    expect(editor.statusCode, editor.body).toBe(200);
    expect(editor.json()).toEqual({ grants: [{ userId: s.refs.mia, role: 'editor' }, { groupId: s.refs.crew, role: 'viewer' }] });
    expect((await read()).json()).toEqual(editor.json());
    expect(await saveDraft('mia')).toBe(200);
    expect(await saveDraft('gus')).toBe(403); // his group's grant is a viewer's
    expect(await rootNames('gus')).toEqual([`Team ${suffix}`]);

    expect((await replace([{ groupId: s.refs.crew, role: 'editor' }])).statusCode).toBe(200);
    expect(await saveDraft('gus')).toBe(200);
    // mia's grant is gone: the cached listing she was shown drops with it, and the dashboard is no longer hers to read.
    expect(await rootNames('mia')).toEqual([]);
    expect(await saveDraft('mia')).toBe(403);

    const audit = (await t().app.inject({ url: '/api/v1/audit?first=200', headers: as('alice') })).json() as { items: Array<{ action: string; target: { type: string; id: string }; actor: { userId: number }; detail: Record<string, unknown> }> };
    const entries = audit.items.filter((e) => e.action === 'item.grants.replace' && e.target.id === String(s.refs.team));
    expect(entries.length).toBe(2);
    expect(entries[0]).toMatchObject({ target: { type: 'item' }, actor: { userId: s.refs.alice }, detail: { deploymentId: s.refs.prod, after: [{ groupId: s.refs.crew, role: 'editor' }] } });
  });

  it('runs two replacements at once one after the other: the grants are one of the two lists, whole', async () => {
    const lists = [[{ userId: s.refs.mia, role: 'editor' }], [{ groupId: s.refs.crew, role: 'viewer' }, { userId: s.refs.gus, role: 'editor' }]];
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(lists.map((grants) => replace(grants)));
      expect(answers.map((res) => res.statusCode)).toEqual([200, 200]);
      const now = (await read()).json() as { grants: unknown[] };
      expect(lists.map((grants) => grants.length)).toContain(now.grants.length);
      expect(answers.map((res) => res.json())).toContainEqual(now);
    }
  });

  it('refuses bad input with a 400 naming the field, another account\'s or deployment\'s item with a 404, a member with a 403, and writes nothing', async () => {
    const before = (await read()).json() as unknown;
    const auditCount = async () => ((await t().app.inject({ url: '/api/v1/audit?first=200', headers: as('alice') })).json() as { items: unknown[] }).items.length;
    const entriesBefore = await auditCount();
    const bad: Array<[string, unknown[], string]> = [
      ["a user of another account", [{ userId: s.refs.mia, role: 'editor' }, { userId: other.refs.bo }], 'grants[1].userId'],
      ["a group of another account", [{ groupId: other.refs.theirs, role: 'editor' }], 'grants[0].groupId'],
      ['a user and a group in one grant', [{ userId: s.refs.mia, groupId: s.refs.crew }], 'grants[0]'],
      ['neither', [{ role: 'editor' }], 'grants[0]'],
      ['a user granted twice', [{ userId: s.refs.mia }, { userId: s.refs.mia, role: 'editor' }], 'grants[1].userId'],
    ];
    for (const [what, grants, field] of bad) {
      const res = await replace(grants);
      expect(res.statusCode, `${what}: ${res.body}`).toBe(400);
      expect(res.json().error.field, what).toBe(field);
    }
    const role = await replace([{ userId: s.refs.mia, role: 'owner' }]);
    expect(role.statusCode).toBe(400);
    expect(role.json().error.field).toMatch(/^grants.*0.*role$/);

    const missing: Array<[string, string]> = [
      ["another account's item in the caller's deployment", grantsUrl(other.refs.folder)],
      ["another account's item through its deployment", grantsUrl(other.refs.folder, other.refs.prod)],
      ['an item of another deployment of the account', grantsUrl(s.refs.stageFolder)],
    ];
    for (const [what, url] of missing) {
      expect((await read(as('alice'), url)).statusCode, what).toBe(404);
      expect((await replace([], as('alice'), url)).statusCode, what).toBe(404);
    }
    expect((await read(bearer(other.keys.admin!))).statusCode).toBe(404);
    expect((await replace([], bearer(other.keys.admin!))).statusCode).toBe(404);
    for (const member of ['mia', 'gus']) {
      const res = await replace([{ userId: s.refs[member], role: 'editor' }], as(member));
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error.field).toBe('Authorization');
      expect((await read(as(member))).statusCode).toBe(403);
    }
    expect((await read()).json()).toEqual(before);
    expect(await auditCount()).toBe(entriesBefore);
  });
});
