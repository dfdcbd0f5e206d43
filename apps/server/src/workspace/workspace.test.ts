import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import type { ImportItem } from '../import/import.js';

interface Listed {
  id: number;
  name: string;
  type: string;
  [key: string]: unknown;
}
interface ListingBody {
  items: Listed[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor?: string | null; endCursor?: string | null };
}

const at = (day: number) => `2026-02-${String(day).padStart(2, '0')}T10:00:00Z`;

/** The shared fixture: an admin, a member in a group, a member without groups, and a small tree. */
function fixtureItems(): ImportItem[] {
  return [
    {
      ref: 'f-sales', type: 'FOLDER', name: 'Sales', createdBy: 'alice', createdAt: at(1), updatedAt: at(1),
      grants: [{ group: 'sales' }],
      children: [
        {
          ref: 'wb-q1', type: 'WORKBOOK', name: 'Q1 review', createdBy: 'alice', createdAt: at(2), updatedAt: at(20),
          dashboard: {
            publicId: 'q1-review', status: 'published', allowEmbed: true, title: 'Q1 review',
            config: { kind: 'CLASSIC', title: 'Q1 review' }, draftConfig: { kind: 'CLASSIC', title: 'Q1 review (draft)' },
            reportSnapshots: [{ report: 'rp-pipeline', name: 'Pipeline', kind: 'table' }],
          },
        },
        { ref: 'rp-pipeline', type: 'REPORT', name: 'Pipeline', createdBy: 'bob', createdAt: at(3), updatedAt: at(4) },
        {
          ref: 'f-regions', type: 'FOLDER', name: 'Regions', createdBy: 'alice', createdAt: at(1),
          children: [{ ref: 'rp-emea', type: 'REPORT', name: 'EMEA 100%_done', createdBy: 'alice', createdAt: at(5), updatedAt: at(5) }],
        },
      ],
    },
    {
      ref: 'f-finance', type: 'FOLDER', name: 'finance', createdBy: 'alice', createdAt: at(1),
      children: [
        {
          ref: 'wb-budget', type: 'WORKBOOK', name: 'Budget', createdBy: 'alice', createdAt: at(6), updatedAt: at(6), grants: [{ user: 'carol' }],
          dashboard: { publicId: 'budget', status: 'draft', allowEmbed: false, config: { title: 'Budget' } },
        },
      ],
    },
    { ref: 'f-archive', type: 'FOLDER', name: 'Archive', createdBy: 'alice', createdAt: at(1) },
    { ref: 'wb-overview', type: 'WORKBOOK', name: 'Overview', createdBy: 'alice', createdAt: at(7), updatedAt: at(18) },
    { ref: 'rp-bob', type: 'REPORT', name: 'bob scratch', createdBy: 'bob', createdAt: at(8), updatedAt: at(9) },
    { ref: 'rp-carol', type: 'REPORT', name: 'Carol notes', createdBy: 'carol', createdAt: at(10), updatedAt: at(11) },
    { ref: 'rp-percent', type: 'REPORT', name: 'Growth 50% plan', createdBy: 'alice', createdAt: at(12), updatedAt: at(12) },
    { ref: 'rp-under', type: 'REPORT', name: 'under_score', createdBy: 'alice', createdAt: at(13), updatedAt: at(13) },
    { ref: 'rp-underx', type: 'REPORT', name: 'underXscore', createdBy: 'alice', createdAt: at(14), updatedAt: at(14) },
  ];
}

async function seedFixture(app: FastifyInstance, db: Parameters<typeof seedAccount>[0]): Promise<SeededAccount> {
  void app;
  return seedAccount(db, {
    users: [
      { ref: 'alice', role: 'admin', firstName: 'Alice' },
      { ref: 'bob', role: 'member' },
      { ref: 'carol', role: 'member' },
    ],
    groups: [{ ref: 'sales', name: 'Sales', members: ['bob'] }],
    deployments: [
      {
        ref: 'prod', name: 'Production', items: fixtureItems(),
        views: [
          { user: 'alice', item: 'rp-bob', at: '2026-03-01T10:00:00Z' },
          { user: 'alice', item: 'wb-overview', at: '2026-03-05T10:00:00Z' },
          { user: 'bob', item: 'rp-percent', at: '2026-03-07T10:00:00Z' },
        ],
        favorites: [{ user: 'alice', item: 'wb-overview' }],
      },
      { ref: 'staging', name: 'Staging', items: [{ ref: 'stg-item', type: 'REPORT', name: 'Staging report', createdBy: 'alice' }] },
    ],
  });
}

describeEachDialect('workspace listing', (t) => {
  let s: SeededAccount;
  let other: SeededAccount;
  const list = async (user: string, query = '', deployment = s.refs.prod) =>
    t().app.inject({ url: `/api/v1/deployments/${deployment}/workspace${query ? `?${query}` : ''}`, headers: bearer(s.keys[user]!) });
  const names = async (user: string, query = '') => {
    const res = await list(user, query);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as ListingBody).items.map((i) => i.name);
  };

  beforeAll(async () => {
    s = await seedFixture(t().app, t().db.kysely);
    other = await seedAccount(t().db.kysely, {
      users: [{ ref: 'mallory', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Other', items: [{ type: 'REPORT', name: 'Other account report', createdBy: 'mallory' }] }],
    });
  });

  describe('authentication and scoping', () => {
    it('answers 401 with the error body when no Authorization header is sent', async () => {
      const res = await t().app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace` });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ error: { status: 401, code: 'unauthorized' } });
      expect(res.json().error.message).toContain('Authorization');
    });

    it('answers 401 for an unknown API key and for a scheme in the wrong case', async () => {
      const unknown = await t().app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: bearer('svc_not_a_real_key_000') });
      expect(unknown.statusCode).toBe(401);
      const lower = await t().app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: { authorization: `bearer ${s.keys.alice}` } });
      expect(lower.statusCode).toBe(401);
    });

    it('accepts the Api-Key scheme as well as Bearer', async () => {
      const res = await t().app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: { authorization: `Api-Key ${s.keys.alice}` } });
      expect(res.statusCode).toBe(200);
    });

    it('answers 404 for a deployment of another account and for one that does not exist', async () => {
      const foreign = await list('alice', '', other.refs.prod);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toMatchObject({ error: { status: 404, code: 'not_found', field: 'deploymentId' } });
      expect(foreign.body).not.toContain('Other account report');
      expect((await list('alice', '', 2147483000)).statusCode).toBe(404);
    });

    it('lists only the items of the deployment asked for', async () => {
      expect(await names('alice', 'search=report')).not.toContain('Staging report');
      expect(await names('alice', '', )).not.toContain('Staging report');
      const staging = await list('alice', '', s.refs.staging);
      expect((staging.json() as ListingBody).items.map((i) => i.name)).toEqual(['Staging report']);
    });
  });

  describe('SPEC A rules 1 and 2: root, folders first, order', () => {
    it('returns the root items without folderId, folders first by name (case-insensitive), then updated_at DESC', async () => {
      expect(await names('alice')).toEqual([
        'Archive', 'finance', 'Sales',
        'Overview', 'underXscore', 'under_score', 'Growth 50% plan', 'Carol notes', 'bob scratch',
      ]);
    });

    it('lists the contents of a folder with folderId', async () => {
      expect(await names('alice', `folderId=${s.refs['f-sales']}`)).toEqual(['Regions', 'Q1 review', 'Pipeline']);
      expect(await names('alice', `folderId=${s.refs['f-regions']}`)).toEqual(['EMEA 100%_done']);
      expect(await names('alice', `folderId=${s.refs['f-archive']}`)).toEqual([]);
    });

    it('orders the non-folders by created_at, both directions, folders staying first', async () => {
      expect(await names('alice', 'orderByField=created_at&orderByDirection=ASC')).toEqual([
        'Archive', 'finance', 'Sales', 'Overview', 'bob scratch', 'Carol notes', 'Growth 50% plan', 'under_score', 'underXscore',
      ]);
      expect(await names('alice', 'orderByField=created_at&orderByDirection=DESC')).toEqual([
        'Archive', 'finance', 'Sales', 'underXscore', 'under_score', 'Growth 50% plan', 'Carol notes', 'bob scratch', 'Overview',
      ]);
    });

    it('orders the non-folders by updated_at ASC', async () => {
      expect(await names('alice', 'orderByField=updated_at&orderByDirection=ASC')).toEqual([
        'Archive', 'finance', 'Sales', 'bob scratch', 'Carol notes', 'Growth 50% plan', 'under_score', 'underXscore', 'Overview',
      ]);
    });

    it('orders the non-folders by name, case-insensitively, in both directions; folders stay first by name', async () => {
      expect(await names('alice', 'orderByField=name&orderByDirection=ASC')).toEqual([
        'Archive', 'finance', 'Sales', 'bob scratch', 'Carol notes', 'Growth 50% plan', 'Overview', 'under_score', 'underXscore',
      ]);
      expect(await names('alice', 'orderByField=name&orderByDirection=DESC')).toEqual([
        'Archive', 'finance', 'Sales', 'underXscore', 'under_score', 'Overview', 'Growth 50% plan', 'Carol notes', 'bob scratch',
      ]);
    });

    it('orders by the caller\'s own last view, never-viewed items last in both directions', async () => {
      const desc = await names('alice', 'orderByField=viewer_last_viewed_at&orderByDirection=DESC');
      expect(desc.slice(0, 5)).toEqual(['Archive', 'finance', 'Sales', 'Overview', 'bob scratch']);
      const asc = await names('alice', 'orderByField=viewer_last_viewed_at&orderByDirection=ASC');
      expect(asc.slice(0, 5)).toEqual(['Archive', 'finance', 'Sales', 'bob scratch', 'Overview']);
      expect(new Set(desc.slice(5))).toEqual(new Set(['underXscore', 'under_score', 'Growth 50% plan', 'Carol notes']));
      expect(new Set(asc.slice(5))).toEqual(new Set(desc.slice(5)));
      // Bob's view of another item does not move anything for Alice.
      expect(desc.indexOf('Growth 50% plan')).toBeGreaterThan(4);
    });

    it('restricts item types with a repeated types parameter, and with a single one', async () => {
      expect(await names('alice', 'types=FOLDER')).toEqual(['Archive', 'finance', 'Sales']);
      expect(await names('alice', 'types=WORKBOOK&types=FOLDER')).toEqual(['Archive', 'finance', 'Sales', 'Overview']);
      expect(await names('alice', 'types=REPORT&orderByField=name&orderByDirection=ASC')).toEqual([
        'bob scratch', 'Carol notes', 'Growth 50% plan', 'under_score', 'underXscore',
      ]);
    });
  });

  describe('search', () => {
    it('matches a case-insensitive substring of names across all folders', async () => {
      expect(await names('alice', 'search=REVIEW')).toEqual(['Q1 review']);
      expect(await names('alice', 'search=e')).toContain('EMEA 100%_done');
      expect(await names('alice', 'search=cH')).toEqual(['Archive', 'bob scratch']);
    });

    it('treats % and _ literally', async () => {
      expect(await names('alice', `search=${encodeURIComponent('50%')}`)).toEqual(['Growth 50% plan']);
      expect(await names('alice', `search=${encodeURIComponent('%')}`)).toEqual(['Growth 50% plan', 'EMEA 100%_done']);
      expect(await names('alice', 'search=under_')).toEqual(['under_score']);
      expect(await names('alice', 'search=_')).toEqual(['under_score', 'EMEA 100%_done']);
    });

    it('searches the subtree of folderId when both are given, folders first', async () => {
      expect(await names('alice', `search=e&folderId=${s.refs['f-sales']}`)).toEqual(['Regions', 'Q1 review', 'EMEA 100%_done', 'Pipeline']);
    });

    it('applies access to search results', async () => {
      expect(await names('carol', 'search=e')).toEqual(['Carol notes', 'Budget']);
    });

    it('is served by trigram indexes; on PostgreSQL their pending lists stay at 64 kB, so no search reads megabytes of them', async () => {
      const { db, dialect } = t();
      if (dialect === 'sqlite') {
        const tables = await sql<{ name: string }>`select name from sqlite_master where name in ('workspace_fts_folders', 'workspace_fts_others') order by name`.execute(db.kysely);
        expect(tables.rows.map((r) => r.name)).toEqual(['workspace_fts_folders', 'workspace_fts_others']);
        return;
      }
      const indexes = await sql<{ name: string; options: string[] | null }>`select c.relname as name, c.reloptions as options from pg_class c
        where c.relname in ('workspace_fts_folders_trgm_ix', 'workspace_fts_others_trgm_ix', 'embed_users_username_trgm_ix', 'embed_users_email_trgm_ix')
        order by c.relname`.execute(db.kysely);
      expect(indexes.rows.map((r) => r.name)).toEqual(['embed_users_email_trgm_ix', 'embed_users_username_trgm_ix', 'workspace_fts_folders_trgm_ix', 'workspace_fts_others_trgm_ix']);
      for (const index of indexes.rows) expect(index.options).toContain('gin_pending_list_limit=64');
    });
  });

  describe('SPEC A rule 3: access', () => {
    it('shows an admin every item', async () => {
      expect(await names('alice')).toHaveLength(9);
    });

    it('shows a member what they created and what a grant to their group reaches, through folders', async () => {
      expect(await names('bob')).toEqual(['Sales', 'bob scratch']);
      expect(await names('bob', `folderId=${s.refs['f-sales']}`)).toEqual(['Regions', 'Q1 review', 'Pipeline']);
      expect(await names('bob', `folderId=${s.refs['f-regions']}`)).toEqual(['EMEA 100%_done']);
    });

    it('shows a member an item granted to them directly, and only that inside a folder they cannot see', async () => {
      expect(await names('carol')).toEqual(['Carol notes']);
      expect(await names('carol', `folderId=${s.refs['f-finance']}`)).toEqual(['Budget']);
      expect(await names('carol', `folderId=${s.refs['f-sales']}`)).toEqual([]);
    });
  });

  describe('item fields', () => {
    it('carries every required Workbook field and the per-viewer fields', async () => {
      const res = await list('alice', `folderId=${s.refs['f-sales']}`);
      const body = res.json() as ListingBody;
      const q1 = body.items.find((i) => i.name === 'Q1 review')!;
      expect(q1).toMatchObject({
        id: s.refs['wb-q1'], deploymentId: s.refs.prod, type: 'WORKBOOK', meta: {}, calculatedFields: {},
        createdAt: '2026-02-02T10:00:00.000Z', updatedAt: '2026-02-20T10:00:00.000Z',
        createdBy: s.refs.alice, userId: s.refs.alice, folderId: s.refs['f-sales'],
        folderPath: [{ id: s.refs['f-sales'], name: 'Sales' }], isFavorite: false,
        user: { id: s.refs.alice, firstName: 'Alice' },
        dashboardDraft: { kind: 'CLASSIC', title: 'Q1 review (draft)' },
        dashboardPublished: { kind: 'CLASSIC', title: 'Q1 review' },
        publishedDashboard: {
          publicId: 'q1-review', workbookId: s.refs['wb-q1'], deploymentId: s.refs.prod, status: 'published', allowEmbed: true,
          versionNumber: 1, reportSnapshots: [{ reportId: s.refs['rp-pipeline'], name: 'Pipeline', kind: 'table', versionNumber: 1 }],
        },
      });
      expect(typeof (q1.user as { email: string }).email).toBe('string');
      const emea = (await list('alice', `folderId=${s.refs['f-regions']}`)).json() as ListingBody;
      expect(emea.items[0]!.folderPath).toEqual([{ id: s.refs['f-sales'], name: 'Sales' }, { id: s.refs['f-regions'], name: 'Regions' }]);
    });

    it('gives folderPath [] at the root, isFavorite per caller, and no publishedDashboard for a draft', async () => {
      const root = (await list('alice')).json() as ListingBody;
      const overview = root.items.find((i) => i.name === 'Overview')!;
      expect(overview).toMatchObject({ folderPath: [], folderId: null, isFavorite: true, publishedDashboard: null, dashboardDraft: null });
      const bobs = (await list('bob')).json() as ListingBody;
      expect(bobs.items.every((i) => i.isFavorite === false)).toBe(true);
      const finance = (await list('alice', `folderId=${s.refs['f-finance']}`)).json() as ListingBody;
      expect(finance.items[0]).toMatchObject({ name: 'Budget', dashboardDraft: { title: 'Budget' }, dashboardPublished: null, publishedDashboard: null });
    });
  });

  describe('SPEC A rule 4: cursor pagination', () => {
    for (const size of [1, 2, 7]) {
      it(`walks every item exactly once, in the listing's order, at page size ${size}`, async () => {
        for (const query of ['', 'orderByField=name&orderByDirection=ASC', 'orderByField=viewer_last_viewed_at&orderByDirection=ASC', 'search=e']) {
          const whole = await names('alice', query);
          const seen: string[] = [];
          let after: string | undefined;
          let pages = 0;
          for (;;) {
            const res = await list('alice', [query, `first=${size}`, after ? `after=${after}` : ''].filter(Boolean).join('&'));
            expect(res.statusCode, res.body).toBe(200);
            const body = res.json() as ListingBody;
            expect(body.items.length).toBeLessThanOrEqual(size);
            expect(body.pageInfo.hasPreviousPage).toBe(pages > 0);
            seen.push(...body.items.map((i) => i.name));
            pages++;
            if (!body.pageInfo.hasNextPage) break;
            expect(body.items).toHaveLength(size);
            after = body.pageInfo.endCursor!;
          }
          expect(seen).toEqual(whole);
          expect(pages).toBe(Math.max(1, Math.ceil(whole.length / size)));
        }
      });
    }

    it('gives null cursors and no next page on an empty page', async () => {
      const res = await list('alice', `folderId=${s.refs['f-archive']}`);
      expect(res.json()).toEqual({ items: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } });
    });

    it('refuses a cursor reused with other filters, another order or by another user', async () => {
      const first = (await list('alice', 'first=2')).json() as ListingBody;
      const cursor = first.pageInfo.endCursor!;
      for (const query of [`types=REPORT&after=${cursor}`, `orderByField=name&after=${cursor}`, `search=e&after=${cursor}`,
        `folderId=${s.refs['f-sales']}&after=${cursor}`, `orderByDirection=ASC&after=${cursor}`]) {
        const res = await list('alice', query);
        expect(res.statusCode, query).toBe(400);
        expect(res.json()).toMatchObject({ error: { code: 'invalid_parameter', field: 'after' } });
      }
      expect((await list('bob', `after=${cursor}`)).statusCode).toBe(400);
      expect((await list('alice', `after=${cursor}`)).statusCode).toBe(200);
    });

    it('refuses bogus cursors, including a null sent back as text', async () => {
      for (const after of ['null', 'undefined', 'abc', '', '%00', Buffer.from('[1,"x",0,null,1]').toString('base64url')]) {
        const res = await list('alice', `after=${after}`);
        expect(res.statusCode, after).toBe(400);
        expect(res.json().error.field).toBe('after');
      }
    });
  });

  describe('bad input', () => {
    it.each([
      ['first=0', 'first'], ['first=-1', 'first'], ['first=abc', 'first'], ['first=1.5', 'first'],
      ['folderId=abc', 'folderId'], ['folderId=-3', 'folderId'], ['types=DASHBOARD', 'types.0'], ['orderByField=size', 'orderByField'],
      ['orderByDirection=up', 'orderByDirection'], [`search=${'x'.repeat(256)}`, 'search'],
    ])('answers 400 naming the field for %s', async (query, field) => {
      const res = await list('alice', query);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: { status: 400, code: 'invalid_parameter', field } });
      expect(res.json().error.message).toContain(field.split('.')[0]);
    });

    it('answers 400 for a non-integer deploymentId', async () => {
      const res = await t().app.inject({ url: '/api/v1/deployments/abc/workspace', headers: bearer(s.keys.alice!) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: { field: 'deploymentId' } });
    });

    it('answers 400 naming search for a NUL character, which no name can hold', async () => {
      const res = await list('alice', 'search=%00abc');
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: { code: 'invalid_parameter', field: 'search' } });
    });

    it('answers with the error body for a path parameter over the router limit (414) and a URL that does not decode (400)', async () => {
      const long = await t().app.inject({ url: `/api/v1/deployments/${'9'.repeat(300)}/workspace`, headers: bearer(s.keys.alice!) });
      expect(long.statusCode).toBe(414);
      expect(long.json()).toMatchObject({ error: { status: 414, code: 'uri_too_long' } });
      const bad = await t().app.inject({ url: '/api/v1/deployments/%E0%A4%A/workspace', headers: bearer(s.keys.alice!) });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ error: { status: 400, code: 'invalid_parameter' } });
    });

    it('accepts a search of exactly 255 characters', async () => {
      expect((await list('alice', `search=${'x'.repeat(255)}`)).statusCode).toBe(200);
    });

    it('answers 404 for a folderId that is not a folder of this deployment', async () => {
      for (const id of [s.refs['wb-q1'], s.refs['stg-item'], 2147483000]) {
        const res = await list('alice', `folderId=${id}`);
        expect(res.statusCode).toBe(404);
        expect(res.json()).toMatchObject({ error: { code: 'not_found', field: 'folderId' } });
      }
    });

    it('ignores unknown query parameters', async () => {
      expect(await names('alice', 'colour=blue&first=50')).toEqual(await names('alice'));
    });
  });

  describe('views and favorites', () => {
    it('records a view that moves the item to the front of viewer_last_viewed_at DESC', async () => {
      const res = await t().app.inject({ method: 'POST', url: `/api/v1/deployments/${s.refs.prod}/workspace/${s.refs['rp-pipeline']}/view`, headers: bearer(s.keys.bob!) });
      expect(res.statusCode).toBe(204);
      const after = await names('bob', `folderId=${s.refs['f-sales']}&orderByField=viewer_last_viewed_at`);
      expect(after).toEqual(['Regions', 'Pipeline', 'Q1 review']);
    });

    it('sets and clears a favorite, idempotently', async () => {
      const url = `/api/v1/deployments/${s.refs.prod}/workspace/${s.refs['rp-bob']}/favorite`;
      const headers = bearer(s.keys.bob!);
      const isFavorite = async () => ((await list('bob')).json() as ListingBody).items.find((i) => i.name === 'bob scratch')!.isFavorite;
      expect((await t().app.inject({ method: 'PUT', url, headers })).statusCode).toBe(204);
      expect((await t().app.inject({ method: 'PUT', url, headers })).statusCode).toBe(204);
      expect(await isFavorite()).toBe(true);
      expect((await t().app.inject({ method: 'DELETE', url, headers })).statusCode).toBe(204);
      expect((await t().app.inject({ method: 'DELETE', url, headers })).statusCode).toBe(204);
      expect(await isFavorite()).toBe(false);
    });

    it('answers 403 for an item the caller cannot access and 404 for one that does not exist', async () => {
      const forbidden = await t().app.inject({ method: 'PUT', url: `/api/v1/deployments/${s.refs.prod}/workspace/${s.refs['rp-carol']}/favorite`, headers: bearer(s.keys.bob!) });
      expect(forbidden.statusCode).toBe(403);
      expect(forbidden.json()).toMatchObject({ error: { code: 'forbidden' } });
      const missing = await t().app.inject({ method: 'POST', url: `/api/v1/deployments/${s.refs.prod}/workspace/${s.refs['stg-item']}/view`, headers: bearer(s.keys.bob!) });
      expect(missing.statusCode).toBe(404);
    });
  });
});

describeEachDialect('workspace page size', (t) => {
  it('defaults to 50 and clamps first above 200 to 200, keeping hasNextPage true', async () => {
    const items: ImportItem[] = Array.from({ length: 230 }, (_, i) => ({ type: 'REPORT', name: `Report ${String(i).padStart(3, '0')}`, createdBy: 'admin' }));
    const s = await seedAccount(t().db.kysely, { users: [{ ref: 'admin', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P', items }] });
    const get = (query: string) => t().app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace?${query}`, headers: bearer(s.keys.admin!) });
    const byDefault = (await get('')).json() as ListingBody;
    expect(byDefault.items).toHaveLength(50);
    expect(byDefault.pageInfo.hasNextPage).toBe(true);
    const clamped = (await get('first=1000')).json() as ListingBody;
    expect(clamped.items).toHaveLength(200);
    expect(clamped.pageInfo.hasNextPage).toBe(true);
    // However large: clamped, not refused (beyond 32 bits too).
    const huge = (await get('first=99999999999')).json() as ListingBody;
    expect(huge.items.map((i) => i.id)).toEqual(clamped.items.map((i) => i.id));
    const rest = (await get(`first=1000&after=${clamped.pageInfo.endCursor}`)).json() as ListingBody;
    expect(rest.items).toHaveLength(30);
    expect(rest.pageInfo.hasNextPage).toBe(false);
  });
});
