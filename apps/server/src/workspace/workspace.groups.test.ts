import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

/**
 * DESIGN "Access" through a group only (issue 18, an audit's finding 2): a member reaches an item granted to a group
 * of theirs, on the item or on a folder above it, on every path: the listing, recording a view, the favourite mark
 * and the dashboard read. A member of another group is the control. Each path checks grants in its own code (the
 * listing in SQL per dialect, the others from the caller's granted ids), so each is tested on its own.
 */
describeEachDialect('access through a group grant', (t) => {
  let s: SeededAccount;
  let publicIds: { inFolder: string; direct: string };

  beforeAll(async () => {
    const suffix = uniqueSuffix();
    publicIds = { inFolder: `grp-folder-${suffix}`, direct: `grp-direct-${suffix}` };
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'gina', role: 'member' }, { ref: 'otto', role: 'member' }],
      groups: [{ ref: 'analysts', name: 'Analysts', members: ['gina'] }, { ref: 'others', name: 'Others', members: ['otto'] }],
      deployments: [{
        ref: 'prod', name: 'Prod', items: [
          {
            ref: 'f-shared', type: 'FOLDER', name: 'Shared', createdBy: 'alice', grants: [{ group: 'analysts' }],
            children: [{
              ref: 'wb-in-folder', type: 'WORKBOOK', name: 'In folder', createdBy: 'alice',
              dashboard: { publicId: publicIds.inFolder, status: 'published', allowEmbed: true, title: 'In folder' },
            }],
          },
          {
            ref: 'wb-direct', type: 'WORKBOOK', name: 'Granted itself', createdBy: 'alice', grants: [{ group: 'analysts' }],
            dashboard: { publicId: publicIds.direct, status: 'published', allowEmbed: true, title: 'Granted itself' },
          },
          { ref: 'rp-hidden', type: 'REPORT', name: 'Hidden', createdBy: 'alice' },
        ],
      }],
    });
  });

  const as = (user: string) => bearer(s.keys[user]!);
  const names = async (user: string, query = '') => {
    const res = await t().app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace${query}`, headers: as(user) });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { items: Array<{ name: string }> }).items.map((i) => i.name).sort();
  };
  const write = (user: string, method: 'POST' | 'PUT' | 'DELETE', item: string, path: string) =>
    t().app.inject({ method, url: `/api/v1/deployments/${s.refs.prod}/workspace/${s.refs[item]}/${path}`, headers: as(user) });

  describe('the listing', () => {
    it('shows the group member the granted folder and item at the root, and the folder\'s contents', async () => {
      expect(await names('gina')).toEqual(['Granted itself', 'Shared']);
      expect(await names('gina', `?folderId=${s.refs['f-shared']}`)).toEqual(['In folder']);
    });

    it('shows a member of another group none of it', async () => {
      expect(await names('otto')).toEqual([]);
      expect(await names('otto', `?folderId=${s.refs['f-shared']}`)).toEqual([]);
    });
  });

  describe.each([
    ['recording a view', 'POST', 'view'],
    ['the favourite mark', 'PUT', 'favorite'],
    ['clearing the favourite mark', 'DELETE', 'favorite'],
  ] as const)('%s', (_name, method, path) => {
    it('is allowed on an item granted to the group, and on one inside a granted folder', async () => {
      for (const item of ['wb-direct', 'wb-in-folder', 'f-shared']) {
        const res = await write('gina', method, item, path);
        expect(res.statusCode, `${item}: ${res.body}`).toBe(204);
      }
    });

    it('is refused (403) to a member of another group, and to the group member on an item outside the grants', async () => {
      for (const [user, item] of [['otto', 'wb-direct'], ['otto', 'wb-in-folder'], ['gina', 'rp-hidden']] as const) {
        const res = await write(user, method, item, path);
        expect(res.statusCode, `${user} ${item}: ${res.body}`).toBe(403);
        expect(res.json()).toMatchObject({ error: { code: 'forbidden', field: 'itemId' } });
      }
    });
  });

  it('the favourite mark set through a group grant shows in the listing', async () => {
    expect((await write('gina', 'PUT', 'wb-direct', 'favorite')).statusCode).toBe(204);
    const res = await t().app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: as('gina') });
    const direct = (res.json() as { items: Array<{ name: string; isFavorite: boolean }> }).items.find((i) => i.name === 'Granted itself');
    expect(direct?.isFavorite).toBe(true);
  });

  describe('the dashboard read (platform API credential)', () => {
    const read = (user: string, publicId: string) => t().app.inject({ url: `/api/v1/embed/dashboard/${publicId}`, headers: as(user) });
    const readByWorkbook = (user: string, workbook: string) =>
      t().app.inject({ url: `/api/v1/embed/deployments/${s.refs.prod}/workbooks/${s.refs[workbook]}/dashboard`, headers: as(user) });

    it('answers the group member, for a granted workbook and one inside a granted folder', async () => {
      for (const publicId of [publicIds.direct, publicIds.inFolder]) {
        const res = await read('gina', publicId);
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ publicId });
      }
      expect((await readByWorkbook('gina', 'wb-in-folder')).statusCode).toBe(200);
    });

    it('refuses (403) a member of another group', async () => {
      for (const publicId of [publicIds.direct, publicIds.inFolder]) {
        const res = await read('otto', publicId);
        expect(res.statusCode, res.body).toBe(403);
      }
      expect((await readByWorkbook('otto', 'wb-in-folder')).statusCode).toBe(403);
    });
  });
});
