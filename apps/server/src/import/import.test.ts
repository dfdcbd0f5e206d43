import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { uniqueSuffix } from '../../test/factory.js';
import type { Database } from '../db/db.schema.js';
import { digestSecret } from '../core/core.digest.js';
import { verifyPassword } from '../accounts/accounts.passwords.js';
import { ImportError, importFile } from './import.js';
import type { ImportAccount, ImportFile } from './import.js';

/**
 * Every tenant name this file imports starts with this prefix. The PostgreSQL database is shared by every test
 * file of the run, so "nothing was written" is counted over the accounts of this file only: every row an import
 * can write carries the account_id of one of the file's accounts, whose tenantName always has this prefix.
 */
const NAMESPACE = `i${uniqueSuffix()}`;
const NOW = new Date('2026-04-01T08:30:00.000Z');

const TABLES = [
  'accounts', 'users', 'groups', 'group_members', 'api_keys', 'deployments', 'workspace_items', 'item_ancestors', 'item_grants',
  'item_views', 'item_favorites', 'dashboards', 'report_snapshots', 'embed_tenants', 'embed_users',
] as const;
type Table = (typeof TABLES)[number];
type Counts = Record<Table, number>;

const tenant = (s: string, account = 'acme') => `${NAMESPACE}-${account}-${s}`;

/** The example of DESIGN.md "The import file", verbatim but for the names that must be unique in the database. */
function designExample(s: string): ImportFile {
  return {
    accounts: [{
      ref: 'acme', name: 'Acme', tenantName: tenant(s),
      settings: { allowEmbedComments: true, allowedEmbedOrigins: ['http://localhost:5173'] },
      users: [
        {
          ref: 'alice', email: 'alice@acme.test', firstName: 'Alice', role: 'admin',
          password: 'optional, for the console', apiKeys: [`svc_alice_test_key_0001_${s}`],
        },
        { ref: 'bob', email: 'bob@acme.test', role: 'member', apiKeys: [`svc_bob_test_key_0001_${s}`] },
      ],
      groups: [{ ref: 'sales', name: 'Sales', members: ['bob'] }],
      deployments: [{
        ref: 'prod', name: 'Production',
        items: [
          {
            ref: 'f-sales', type: 'FOLDER', name: 'Sales', createdBy: 'alice',
            grants: [{ group: 'sales' }],
            children: [
              {
                ref: 'wb-q1', type: 'WORKBOOK', name: 'Q1 review', createdBy: 'alice',
                createdAt: '2026-01-05T10:00:00Z', updatedAt: '2026-02-01T09:00:00Z',
                dashboard: {
                  publicId: `q1-review-${s}`, status: 'published', allowEmbed: true,
                  title: 'Q1 review', config: {}, reportSnapshots: [],
                },
              },
              { ref: 'rp-1', type: 'REPORT', name: 'Pipeline', createdBy: 'bob' },
            ],
          },
        ],
        views: [{ user: 'bob', item: 'wb-q1', at: '2026-03-01T12:00:00Z' }],
        favorites: [{ user: 'bob', item: 'rp-1' }],
      }],
      embedTenants: [{
        name: 'customer-a',
        users: [{ ref: 'ann', externalId: 'ann-1', username: 'ann', email: 'ann@a.test', firstName: 'Ann' }],
      }],
    }],
  };
}

/** A second, independent account for files of two accounts (its refs do not collide with the example's). */
function secondAccount(s: string): ImportAccount {
  return {
    ref: 'beta', name: 'Beta', tenantName: tenant(s, 'beta'),
    users: [{ ref: 'bea', email: 'bea@beta.test', role: 'admin', apiKeys: [`svc_bea_test_key_0001_${s}`] }],
    deployments: [{
      ref: 'beta-prod', name: 'Production',
      items: [{
        ref: 'beta-wb', type: 'WORKBOOK', name: 'Overview', createdBy: 'bea',
        dashboard: { publicId: `beta-overview-${s}`, status: 'published', allowEmbed: true, config: {} },
      }],
    }],
  };
}

/** `$.accounts[0].users[1].role` -> ['accounts', 0, 'users', 1, 'role']. */
function pathSegments(path: string): Array<string | number> {
  return [...path.matchAll(/\.([A-Za-z]+)|\[(\d+)\]/g)].map((m) => (m[2] === undefined ? m[1]! : Number(m[2])));
}

/** Sets (or, with undefined, removes) the value at a JSON path of a file: how a test makes a file invalid. */
function put(file: unknown, path: string, value: unknown): void {
  const segments = pathSegments(path);
  const last = segments.pop()!;
  let node = file as Record<string | number, unknown>;
  for (const segment of segments) {
    const next = node[segment];
    if (typeof next !== 'object' || next === null) throw new Error(`test fixture has no ${path}`);
    node = next as Record<string | number, unknown>;
  }
  if (value === undefined) delete node[last];
  else node[last] = value;
}

async function countRows(db: Kysely<Database>): Promise<Counts> {
  const pattern = `${NAMESPACE}-%`;
  const counts = {} as Counts;
  for (const table of TABLES) {
    const scope = table === 'accounts'
      ? sql`tenant_name like ${pattern}`
      : sql`account_id in (select id from accounts where tenant_name like ${pattern})`;
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where ${scope}`.execute(db);
    counts[table] = Number(rows[0]?.n);
  }
  return counts;
}

async function tenantExists(db: Kysely<Database>, tenantName: string): Promise<boolean> {
  return (await db.selectFrom('accounts').select('id').where('tenant_name', '=', tenantName).executeTakeFirst()) !== undefined;
}

/** Runs an import that must fail; returns what was thrown and the row counts before and after. */
async function importRejected(db: Kysely<Database>, file: unknown): Promise<{ error: unknown; before: Counts; after: Counts }> {
  const before = await countRows(db);
  const error = await importFile(db, file, NOW).then(
    () => new Error('the import was accepted'),
    (thrown: unknown) => thrown,
  );
  return { error, before, after: await countRows(db) };
}

/** The rule of DESIGN.md: an error names the JSON path of the first bad entry, and nothing is written. */
async function expectRejectedAt(db: Kysely<Database>, file: unknown, path: string): Promise<void> {
  const { error, before, after } = await importRejected(db, file);
  expect(error).toBeInstanceOf(ImportError);
  expect((error as ImportError).path).toBe(path);
  expect((error as ImportError).message.startsWith(`${path}: `)).toBe(true);
  expect(after).toEqual(before);
}

function refOf(refs: Record<string, number>, ref: string): number {
  const id = refs[ref];
  if (id === undefined) throw new Error(`the import returned no id for ref "${ref}"`);
  return id;
}

describeEachDialect('import file', (t) => {
  const db = () => t().db.kysely;

  describe('the example of DESIGN.md', () => {
    it('imports and returns a positive integer id for every ref of the file, and nothing else', async () => {
      const { refs } = await importFile(db(), designExample(uniqueSuffix()), NOW);
      expect(Object.keys(refs).sort()).toEqual(['acme', 'alice', 'ann', 'bob', 'f-sales', 'prod', 'rp-1', 'sales', 'wb-q1'].sort());
      for (const id of Object.values(refs)) expect(Number.isInteger(id) && id > 0).toBe(true);
    });

    it('adds exactly the rows of the file to every table', async () => {
      const before = await countRows(db());
      await importFile(db(), designExample(uniqueSuffix()), NOW);
      const after = await countRows(db());
      const added = Object.fromEntries(TABLES.map((table) => [table, after[table] - before[table]]));
      expect(added).toEqual({
        accounts: 1, users: 2, groups: 1, group_members: 1, api_keys: 2, deployments: 1,
        // three items; the closure table holds each item itself plus, for the two children, the folder above
        workspace_items: 3, item_ancestors: 5, item_grants: 1, item_views: 1, item_favorites: 1,
        dashboards: 1, report_snapshots: 0, embed_tenants: 1, embed_users: 1,
      });
    });
  });

  describe('every field of the example is stored', () => {
    // The DESIGN.md example, plus what it leaves out but the rules name: a mixed-case email, a grant to a user,
    // a report snapshot naming a REPORT, a folder inside a folder, an externalId to be trimmed and lower-cased.
    const s = uniqueSuffix();
    const file = designExample(s);
    const account = file.accounts[0]!;
    account.users![0]!.email = 'Alice@Acme.TEST';
    const folder = account.deployments![0]!.items![0]!;
    const workbook = folder.children![0]!;
    workbook.grants = [{ user: 'bob', role: 'editor' }];
    workbook.dashboard!.reportSnapshots = [{ report: 'rp-1', name: 'Pipeline', kind: 'table' }];
    folder.children!.push({
      ref: 'f-regions', type: 'FOLDER', name: 'Regions', createdBy: 'alice', createdAt: '2026-01-03T08:00:00+02:00',
      children: [{ ref: 'rp-emea', type: 'REPORT', name: 'EMEA', createdBy: 'alice', createdAt: '2026-01-04' }],
    });
    account.embedTenants![0]!.users![0]!.externalId = '  Ann-1 ';
    const secrets = [account.users![0]!.password!, ...account.users!.flatMap((u) => u.apiKeys ?? [])];

    let refs: Record<string, number>;
    const ref = (name: string) => refOf(refs, name);
    beforeAll(async () => {
      refs = (await importFile(db(), file, NOW)).refs;
    });

    it('stores the account with its name, tenantName and settings', async () => {
      const row = await db().selectFrom('accounts').selectAll().where('id', '=', ref('acme')).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ name: 'Acme', tenant_name: tenant(s), created_at: NOW.toISOString() });
      expect(JSON.parse(row.settings)).toEqual({ allowEmbedComments: true, allowedEmbedOrigins: ['http://localhost:5173'] });
    });

    it('stores users with a lower-cased email, firstName and role in the account', async () => {
      const users = await db().selectFrom('users').select(['id', 'account_id', 'email', 'first_name', 'role'])
        .where('account_id', '=', ref('acme')).orderBy('id').execute();
      expect(users).toEqual([
        { id: ref('alice'), account_id: ref('acme'), email: 'alice@acme.test', first_name: 'Alice', role: 'admin' },
        { id: ref('bob'), account_id: ref('acme'), email: 'bob@acme.test', first_name: null, role: 'member' },
      ]);
    });

    it('stores a password as a scrypt digest that verifies it, and no digest for a user without one', async () => {
      const rows = await db().selectFrom('users').select(['id', 'password_digest']).where('account_id', '=', ref('acme')).orderBy('id').execute();
      const alice = rows.find((r) => r.id === ref('alice'))!.password_digest;
      expect(alice).toMatch(/^scrypt\$/);
      expect(await verifyPassword('optional, for the console', alice!)).toBe(true);
      expect(await verifyPassword('not the password', alice!)).toBe(false);
      expect(rows.find((r) => r.id === ref('bob'))!.password_digest).toBeNull();
    });

    it('stores each API key only as its SHA-256 digest, owned by its user', async () => {
      const keys = await db().selectFrom('api_keys').select(['user_id', 'account_id', 'digest']).where('account_id', '=', ref('acme')).orderBy('id').execute();
      expect(keys).toEqual([
        { user_id: ref('alice'), account_id: ref('acme'), digest: digestSecret(`svc_alice_test_key_0001_${s}`) },
        { user_id: ref('bob'), account_id: ref('acme'), digest: digestSecret(`svc_bob_test_key_0001_${s}`) },
      ]);
      expect(keys[0]!.digest).toMatch(/^[0-9a-f]{64}$/);
    });

    it('keeps no password and no API key in plain text in any table', async () => {
      for (const table of TABLES) {
        const rows = table === 'accounts'
          ? await db().selectFrom('accounts').selectAll().where('id', '=', ref('acme')).execute()
          : await sql`select * from ${sql.table(table)} where account_id = ${ref('acme')}`.execute(db()).then((r) => r.rows);
        const dump = JSON.stringify(rows);
        for (const secret of secrets) expect(dump, `${table} holds a secret`).not.toContain(secret);
      }
    });

    it('stores groups with their members', async () => {
      const group = await db().selectFrom('groups').selectAll().where('id', '=', ref('sales')).executeTakeFirstOrThrow();
      expect(group).toMatchObject({ account_id: ref('acme'), name: 'Sales' });
      const members = await db().selectFrom('group_members').selectAll().where('group_id', '=', ref('sales')).execute();
      expect(members).toEqual([{ account_id: ref('acme'), group_id: ref('sales'), user_id: ref('bob') }]);
    });

    it('stores the deployment in the account', async () => {
      const row = await db().selectFrom('deployments').selectAll().where('id', '=', ref('prod')).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ account_id: ref('acme'), name: 'Production' });
    });

    it('stores items with type, name, folder, depth, createdBy, and timestamps as ISO ...000Z (now when absent)', async () => {
      const items = await db().selectFrom('workspace_items')
        .select(['id', 'account_id', 'deployment_id', 'type', 'is_folder', 'name', 'folder_id', 'depth', 'created_by', 'created_at', 'updated_at'])
        .where('deployment_id', '=', ref('prod')).orderBy('id').execute();
      const now = NOW.toISOString();
      const common = { account_id: ref('acme'), deployment_id: ref('prod') };
      expect(items).toEqual([
        {
          ...common, id: ref('f-sales'), type: 'FOLDER', is_folder: 1, name: 'Sales', folder_id: null, depth: 0,
          created_by: ref('alice'), created_at: now, updated_at: now,
        },
        {
          ...common, id: ref('wb-q1'), type: 'WORKBOOK', is_folder: 0, name: 'Q1 review', folder_id: ref('f-sales'), depth: 1,
          created_by: ref('alice'), created_at: '2026-01-05T10:00:00.000Z', updated_at: '2026-02-01T09:00:00.000Z',
        },
        {
          ...common, id: ref('rp-1'), type: 'REPORT', is_folder: 0, name: 'Pipeline', folder_id: ref('f-sales'), depth: 1,
          created_by: ref('bob'), created_at: now, updated_at: now,
        },
        {
          ...common, id: ref('f-regions'), type: 'FOLDER', is_folder: 1, name: 'Regions', folder_id: ref('f-sales'), depth: 1,
          created_by: ref('alice'), created_at: '2026-01-03T06:00:00.000Z', updated_at: '2026-01-03T06:00:00.000Z',
        },
        {
          ...common, id: ref('rp-emea'), type: 'REPORT', is_folder: 0, name: 'EMEA', folder_id: ref('f-regions'), depth: 2,
          created_by: ref('alice'), created_at: '2026-01-04T00:00:00.000Z', updated_at: '2026-01-04T00:00:00.000Z',
        },
      ]);
    });

    it('records every item with each folder above it, at its distance', async () => {
      const rows = await db().selectFrom('item_ancestors').select(['item_id', 'ancestor_id', 'distance'])
        .where('account_id', '=', ref('acme')).execute();
      const pairs = rows.map((r) => `${r.item_id}<${r.ancestor_id}@${r.distance}`).sort();
      const pair = (item: string, ancestor: string, distance: number) => `${ref(item)}<${ref(ancestor)}@${distance}`;
      expect(pairs).toEqual([
        pair('f-sales', 'f-sales', 0),
        pair('wb-q1', 'wb-q1', 0), pair('wb-q1', 'f-sales', 1),
        pair('rp-1', 'rp-1', 0), pair('rp-1', 'f-sales', 1),
        pair('f-regions', 'f-regions', 0), pair('f-regions', 'f-sales', 1),
        pair('rp-emea', 'rp-emea', 0), pair('rp-emea', 'f-regions', 1), pair('rp-emea', 'f-sales', 2),
      ].sort());
    });

    it('stores grants to a group and to a user on their items', async () => {
      const grants = await db().selectFrom('item_grants').select(['item_id', 'user_id', 'group_id', 'role'])
        .where('account_id', '=', ref('acme')).orderBy('item_id').execute();
      // A grant without a role stays a viewer; `"role": "editor"` is kept.
      expect(grants).toEqual([
        { item_id: ref('f-sales'), user_id: null, group_id: ref('sales'), role: 'viewer' },
        { item_id: ref('wb-q1'), user_id: ref('bob'), group_id: null, role: 'editor' },
      ]);
    });

    it('stores the dashboard of the workbook with publicId, status, allowEmbed, title, config, creator and times', async () => {
      const row = await db().selectFrom('dashboards').selectAll().where('workbook_id', '=', ref('wb-q1')).executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        account_id: ref('acme'), deployment_id: ref('prod'), public_id: `q1-review-${s}`, status: 'published', allow_embed: 1,
        title: 'Q1 review', created_by: ref('alice'), created_at: '2026-01-05T10:00:00.000Z', updated_at: '2026-02-01T09:00:00.000Z',
      });
      expect(JSON.parse(row.config)).toEqual({});
      const all = await db().selectFrom('dashboards').select('id').where('account_id', '=', ref('acme')).execute();
      expect(all).toHaveLength(1);
    });

    it('stores the report snapshot of the dashboard pointing at the REPORT ref', async () => {
      const dashboard = await db().selectFrom('dashboards').select('id').where('workbook_id', '=', ref('wb-q1')).executeTakeFirstOrThrow();
      const snapshots = await db().selectFrom('report_snapshots').select(['account_id', 'dashboard_id', 'report_id', 'position', 'name', 'kind'])
        .where('account_id', '=', ref('acme')).execute();
      expect(snapshots).toEqual([{ account_id: ref('acme'), dashboard_id: dashboard.id, report_id: ref('rp-1'), position: 0, name: 'Pipeline', kind: 'table' }]);
    });

    it('stores the view with its time as ISO ...000Z and the favorite, for their user', async () => {
      const views = await db().selectFrom('item_views').selectAll().where('account_id', '=', ref('acme')).execute();
      expect(views).toEqual([{ account_id: ref('acme'), user_id: ref('bob'), item_id: ref('wb-q1'), viewed_at: '2026-03-01T12:00:00.000Z' }]);
      const favorites = await db().selectFrom('item_favorites').select(['account_id', 'user_id', 'item_id']).where('account_id', '=', ref('acme')).execute();
      expect(favorites).toEqual([{ account_id: ref('acme'), user_id: ref('bob'), item_id: ref('rp-1') }]);
    });

    it('stores embed tenants and embed users with externalId trimmed and lower-cased', async () => {
      const tenants = await db().selectFrom('embed_tenants').select(['id', 'name']).where('account_id', '=', ref('acme')).execute();
      expect(tenants.map((row) => row.name)).toEqual(['customer-a']);
      const users = await db().selectFrom('embed_users')
        .select(['id', 'embed_tenant_id', 'external_id', 'username', 'email', 'first_name'])
        .where('account_id', '=', ref('acme')).execute();
      expect(users).toEqual([
        { id: ref('ann'), embed_tenant_id: tenants[0]!.id, external_id: 'ann-1', username: 'ann', email: 'ann@a.test', first_name: 'Ann' },
      ]);
    });
  });

  describe('optional fields beyond the example', () => {
    it('stores item meta, calculatedFields and slug, user picture, and every dashboard and snapshot field', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      const account = file.accounts[0]!;
      account.users![1]!.picture = 'https://img.test/bob.png';
      const folder = account.deployments![0]!.items![0]!;
      const workbook = folder.children![0]!;
      Object.assign(workbook, { meta: { color: 'blue' }, calculatedFields: { margin: 'revenue - cost' }, slug: 'q1-review' });
      const snapshot = {
        report: 'rp-1', versionNumber: 3, name: 'Pipeline', title: 'Pipeline by stage', description: 'weekly', kind: 'vega' as const,
        isSourceReport: true, meta: { a: 1 }, spec: { mark: 'bar' }, sqlQuery: 'select 1', pythonCode: 'print(1)',
        fillMissingRows: { member: 'orders.day', excludedDimensions: ['orders.region'] },
        periodComparisons: [{ measure: 'orders.count', timeDimension: 'orders.day', offset: { amount: 1, unit: 'year' }, outputs: ['delta'] }],
        preferences: { legend: false },
      };
      workbook.dashboard = {
        publicId: `q1-review-${s}`, status: 'archived', allowEmbed: false, title: 'Q1', description: 'the quarter',
        config: { kind: 'CLASSIC' }, draftConfig: { kind: 'CLASSIC', title: 'draft' }, versionNumber: 4,
        fromSharedWorkspace: true, restrictDataDownload: false, useBoardDashboards: null, reportSnapshots: [snapshot],
      };
      const { refs } = await importFile(db(), file, NOW);

      const item = await db().selectFrom('workspace_items').select(['meta', 'calculated_fields', 'slug'])
        .where('id', '=', refOf(refs, 'wb-q1')).executeTakeFirstOrThrow();
      expect({ ...item, meta: JSON.parse(item.meta), calculated_fields: JSON.parse(item.calculated_fields) })
        .toEqual({ meta: { color: 'blue' }, calculated_fields: { margin: 'revenue - cost' }, slug: 'q1-review' });
      const bob = await db().selectFrom('users').select('picture').where('id', '=', refOf(refs, 'bob')).executeTakeFirstOrThrow();
      expect(bob.picture).toBe('https://img.test/bob.png');

      const dashboard = await db().selectFrom('dashboards').selectAll().where('workbook_id', '=', refOf(refs, 'wb-q1')).executeTakeFirstOrThrow();
      expect(dashboard).toMatchObject({
        status: 'archived', allow_embed: 0, title: 'Q1', description: 'the quarter', version_number: 4,
        from_shared_workspace: 1, restrict_data_download: 0, use_board_dashboards: null,
      });
      expect(JSON.parse(dashboard.config)).toEqual({ kind: 'CLASSIC' });
      expect(JSON.parse(dashboard.draft_config!)).toEqual({ kind: 'CLASSIC', title: 'draft' });

      const row = await db().selectFrom('report_snapshots').selectAll().where('dashboard_id', '=', dashboard.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        report_id: refOf(refs, 'rp-1'), position: 0, version_number: 3, name: 'Pipeline', title: 'Pipeline by stage', description: 'weekly',
        kind: 'vega', is_source_report: 1, sql_query: 'select 1', python_code: 'print(1)',
      });
      expect({
        meta: JSON.parse(row.meta!), spec: JSON.parse(row.spec!), fillMissingRows: JSON.parse(row.fill_missing_rows!),
        periodComparisons: JSON.parse(row.period_comparisons!), preferences: JSON.parse(row.preferences!),
      }).toEqual({
        meta: snapshot.meta, spec: snapshot.spec, fillMissingRows: snapshot.fillMissingRows,
        periodComparisons: snapshot.periodComparisons, preferences: snapshot.preferences,
      });
    });

    it('stores a DuckDB data source as given: a database file, Parquet and CSV files, globs, relative paths', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      const dataSource = { type: 'duckdb' as const, path: 'warehouse/shop.duckdb', files: { events: '/srv/events/*.parquet', Targets: 'targets.CSV' } };
      file.accounts[0]!.deployments![0]!.dataSource = dataSource;
      const { refs } = await importFile(db(), file, NOW);
      const row = await db().selectFrom('deployments').select('data_source').where('id', '=', refOf(refs, 'prod')).executeTakeFirstOrThrow();
      expect(JSON.parse(row.data_source!)).toEqual(dataSource);
    });

    it('imports a dashboard without status or allowEmbed as a draft not allowed in embeds', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      file.accounts[0]!.deployments![0]!.items![0]!.children![0]!.dashboard = { publicId: `q1-review-${s}` };
      const { refs } = await importFile(db(), file, NOW);
      const row = await db().selectFrom('dashboards').select(['status', 'allow_embed']).where('workbook_id', '=', refOf(refs, 'wb-q1')).executeTakeFirstOrThrow();
      expect(row).toEqual({ status: 'draft', allow_embed: 0 });
    });
  });

  describe('a bad file names the JSON path of its first bad entry and writes nothing', () => {
    const items = '$.accounts[0].deployments[0].items';
    const dataSource = '$.accounts[0].deployments[0].dataSource';
    const cases: Array<{ rule: string; edit: (file: ImportFile, s: string) => void; path: string }> = [
      { rule: 'a missing required field', edit: (f) => put(f, '$.accounts[0].users[1].role', undefined), path: '$.accounts[0].users[1].role' },
      { rule: 'a missing account name', edit: (f) => put(f, '$.accounts[0].name', undefined), path: '$.accounts[0].name' },
      { rule: 'a file without accounts', edit: (f) => put(f, '$.accounts', undefined), path: '$.accounts' },
      { rule: 'an unknown field', edit: (f) => put(f, '$.accounts[0].groups[0].colour', 'red'), path: '$.accounts[0].groups[0].colour' },
      {
        rule: 'an unknown field in a nested item',
        edit: (f) => put(f, `${items}[0].children[1].colour`, 'red'),
        path: `${items}[0].children[1].colour`,
      },
      { rule: 'a role outside its enum', edit: (f) => put(f, '$.accounts[0].users[0].role', 'owner'), path: '$.accounts[0].users[0].role' },
      { rule: 'an item type outside its enum', edit: (f) => put(f, `${items}[0].children[1].type`, 'DASHBOARD'), path: `${items}[0].children[1].type` },
      { rule: 'a tenantName against its pattern', edit: (f) => put(f, '$.accounts[0].tenantName', 'Acme_Corp'), path: '$.accounts[0].tenantName' },
      {
        rule: 'an embed tenant name against its pattern',
        edit: (f) => put(f, '$.accounts[0].embedTenants[0].name', 'Customer A'),
        path: '$.accounts[0].embedTenants[0].name',
      },
      {
        rule: 'an API key without the svc_ prefix',
        edit: (f) => put(f, '$.accounts[0].users[1].apiKeys[0]', 'key_bob_0001'),
        path: '$.accounts[0].users[1].apiKeys[0]',
      },
      {
        rule: 'an allowed embed origin that is not an origin',
        edit: (f) => put(f, '$.accounts[0].settings.allowedEmbedOrigins[0]', 'localhost:5173/app'),
        path: '$.accounts[0].settings.allowedEmbedOrigins[0]',
      },
      { rule: 'a ref used twice', edit: (f) => put(f, '$.accounts[0].groups[0].ref', 'alice'), path: '$.accounts[0].groups[0].ref' },
      { rule: 'an item ref used twice', edit: (f) => put(f, `${items}[0].children[1].ref`, 'wb-q1'), path: `${items}[0].children[1].ref` },
      {
        rule: 'an email used twice in an account, whatever its case',
        edit: (f) => put(f, '$.accounts[0].users[1].email', 'ALICE@acme.test'),
        path: '$.accounts[0].users[1].email',
      },
      {
        rule: 'an API key given twice',
        edit: (f, s) => put(f, '$.accounts[0].users[1].apiKeys[0]', `svc_alice_test_key_0001_${s}`),
        path: '$.accounts[0].users[1].apiKeys[0]',
      },
      { rule: 'a createdBy naming no user', edit: (f) => put(f, `${items}[0].children[1].createdBy`, 'carol'), path: `${items}[0].children[1].createdBy` },
      { rule: 'a createdBy naming a group', edit: (f) => put(f, `${items}[0].createdBy`, 'sales'), path: `${items}[0].createdBy` },
      { rule: 'a group member naming no user', edit: (f) => put(f, '$.accounts[0].groups[0].members[0]', 'ann'), path: '$.accounts[0].groups[0].members[0]' },
      { rule: 'a grant naming no group', edit: (f) => put(f, `${items}[0].grants[0].group`, 'marketing'), path: `${items}[0].grants[0].group` },
      { rule: 'a grant naming no user', edit: (f) => put(f, `${items}[0].grants[0]`, { user: 'sales' }), path: `${items}[0].grants[0].user` },
      { rule: 'a grant to a group and a user at once', edit: (f) => put(f, `${items}[0].grants[0].user`, 'bob'), path: `${items}[0].grants[0]` },
      { rule: 'a grant of an unknown role', edit: (f) => put(f, `${items}[0].grants[0].role`, 'owner'), path: `${items}[0].grants[0].role` },
      { rule: 'a grant with a role and nobody', edit: (f) => put(f, `${items}[0].grants[0]`, { role: 'editor' }), path: `${items}[0].grants[0].group` },
      {
        rule: 'children on a non-folder',
        edit: (f) => put(f, `${items}[0].children[0].children`, [{ type: 'REPORT', name: 'Inside a workbook' }]),
        path: `${items}[0].children[0].children`,
      },
      {
        rule: 'a dashboard on a non-workbook',
        edit: (f, s) => put(f, `${items}[0].children[1].dashboard`, { publicId: `pipeline-${s}` }),
        path: `${items}[0].children[1].dashboard`,
      },
      {
        rule: 'a dashboard publicId used twice in the file',
        edit: (f, s) => put(f, `${items}[1]`, { type: 'WORKBOOK', name: 'Copy', dashboard: { publicId: `q1-review-${s}` } }),
        path: `${items}[1].dashboard.publicId`,
      },
      {
        rule: 'a report snapshot naming a non-REPORT',
        edit: (f) => put(f, `${items}[0].children[0].dashboard.reportSnapshots`, [{ report: 'wb-q1' }]),
        path: `${items}[0].children[0].dashboard.reportSnapshots[0].report`,
      },
      {
        rule: 'a report snapshot naming no item',
        edit: (f) => put(f, `${items}[0].children[0].dashboard.reportSnapshots`, [{ report: 'rp-nowhere' }]),
        path: `${items}[0].children[0].dashboard.reportSnapshots[0].report`,
      },
      {
        rule: 'a report snapshot naming no report at all',
        edit: (f) => put(f, `${items}[0].children[0].dashboard.reportSnapshots`, [{ name: 'orphan' }]),
        path: `${items}[0].children[0].dashboard.reportSnapshots[0].report`,
      },
      {
        rule: 'a view naming an unknown item',
        edit: (f) => put(f, '$.accounts[0].deployments[0].views[0].item', 'wb-q2'),
        path: '$.accounts[0].deployments[0].views[0].item',
      },
      {
        rule: 'a view naming no user',
        edit: (f) => put(f, '$.accounts[0].deployments[0].views[0].user', 'ann'),
        path: '$.accounts[0].deployments[0].views[0].user',
      },
      {
        rule: 'a favorite naming an unknown item',
        edit: (f) => put(f, '$.accounts[0].deployments[0].favorites[0].item', 'sales'),
        path: '$.accounts[0].deployments[0].favorites[0].item',
      },
      {
        rule: 'an invalid createdAt',
        edit: (f) => put(f, `${items}[0].children[0].createdAt`, '2026-13-45T10:00:00Z'),
        path: `${items}[0].children[0].createdAt`,
      },
      {
        rule: 'an updatedAt that is not a date',
        edit: (f) => put(f, `${items}[0].children[0].updatedAt`, 'first of February'),
        path: `${items}[0].children[0].updatedAt`,
      },
      {
        rule: 'an invalid view time',
        edit: (f) => put(f, '$.accounts[0].deployments[0].views[0].at', '2026-03-01T25:61:00Z'),
        path: '$.accounts[0].deployments[0].views[0].at',
      },
      {
        rule: 'an externalId used twice in an embed tenant once trimmed and lower-cased',
        edit: (f) => put(f, '$.accounts[0].embedTenants[0].users[1]', { externalId: ' ANN-1 ' }),
        path: '$.accounts[0].embedTenants[0].users[1].externalId',
      },
      {
        rule: 'an externalId of blanks only',
        edit: (f) => put(f, '$.accounts[0].embedTenants[0].users[0].externalId', '   '),
        path: '$.accounts[0].embedTenants[0].users[0].externalId',
      },
      {
        rule: 'an embed tenant named twice in an account',
        edit: (f) => put(f, '$.accounts[0].embedTenants[1]', { name: 'customer-a' }),
        path: '$.accounts[0].embedTenants[1].name',
      },
      // The data source: its type picks the form whose fields are checked (issue 21: DuckDB).
      { rule: 'an unknown data source type', edit: (f) => put(f, dataSource, { type: 'mysql', url: 'mysql://x' }), path: `${dataSource}.type` },
      { rule: 'a sqlite data source without path', edit: (f) => put(f, dataSource, { type: 'sqlite' }), path: `${dataSource}.path` },
      { rule: 'a field of another data source type', edit: (f) => put(f, dataSource, { type: 'sqlite', path: 'w.db', files: {} }), path: `${dataSource}.files` },
      { rule: 'a duckdb data source with neither path nor files', edit: (f) => put(f, dataSource, { type: 'duckdb' }), path: dataSource },
      { rule: 'a duckdb data source with no file', edit: (f) => put(f, dataSource, { type: 'duckdb', files: {} }), path: dataSource },
      { rule: 'an unknown field of a duckdb data source', edit: (f) => put(f, dataSource, { type: 'duckdb', path: 'w.duckdb', readOnly: false }), path: `${dataSource}.readOnly` },
      { rule: 'a duckdb file that is not a path', edit: (f) => put(f, dataSource, { type: 'duckdb', files: { orders: 3 } }), path: `${dataSource}.files.orders` },
      { rule: 'a duckdb table name that is not an identifier', edit: (f) => put(f, dataSource, { type: 'duckdb', files: { 'order-lines': 'lines.parquet' } }), path: `${dataSource}.files.order-lines` },
      { rule: 'a duckdb table named twice, in two cases', edit: (f) => put(f, dataSource, { type: 'duckdb', files: { Orders: 'a.csv', orders: 'b.csv' } }), path: `${dataSource}.files.orders` },
      { rule: 'a duckdb file neither .parquet nor .csv', edit: (f) => put(f, dataSource, { type: 'duckdb', path: 'w.duckdb', files: { events: 'events/*.json' } }), path: `${dataSource}.files.events` },
      // Translated content (issue 38), checked as the authoring API checks it, at the path of the file.
      {
        rule: 'a translation locale in another spelling',
        edit: (f) => put(f, '$.accounts[0].deployments[0].items[0].children[0].dashboard.config', { translations: { 'pt-br': { title: 'Receita' } } }),
        path: '$.accounts[0].deployments[0].items[0].children[0].dashboard.config.translations.pt-br',
      },
      {
        rule: 'a translation of a widget the draft lacks',
        edit: (f) => put(f, '$.accounts[0].deployments[0].items[0].children[0].dashboard.draftConfig', { widgets: [], translations: { ja: { 'widgets.w1.title': '売上' } } }),
        path: '$.accounts[0].deployments[0].items[0].children[0].dashboard.draftConfig.translations.ja.widgets.w1.title',
      },
      {
        rule: 'a tenantName used twice in the file',
        edit: (f, s) => put(f, '$.accounts[1]', { ...secondAccount(s), tenantName: tenant(s) }),
        path: '$.accounts[1].tenantName',
      },
    ];

    for (const { rule, edit, path } of cases) {
      it(`refuses ${rule} at ${path}`, async () => {
        const s = uniqueSuffix();
        const file = designExample(s);
        edit(file, s);
        await expectRejectedAt(db(), file, path);
        expect(await tenantExists(db(), tenant(s))).toBe(false);
      });
    }

    it('names the first bad entry when several are bad', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      put(file, '$.accounts[0].users[0].role', 'owner');
      put(file, '$.accounts[0].users[1].role', 'guest');
      await expectRejectedAt(db(), file, '$.accounts[0].users[0].role');
    });

    it('refuses a file that is not an object of accounts at $', async () => {
      await expectRejectedAt(db(), [designExample(uniqueSuffix())], '$');
      await expectRejectedAt(db(), null, '$');
    });
  });

  describe('a failure in the second account leaves the first unwritten', () => {
    it('refuses a shape error in the second account and writes neither account', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      const second = secondAccount(s);
      put(second, '$.users[0].role', undefined);
      file.accounts.push(second);
      await expectRejectedAt(db(), file, '$.accounts[1].users[0].role');
      expect(await tenantExists(db(), tenant(s))).toBe(false);
    });

    it('refuses a reference to a user of the first account from the second and writes neither account', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      const second = secondAccount(s);
      second.deployments![0]!.items![0]!.createdBy = 'alice';
      file.accounts.push(second);
      await expectRejectedAt(db(), file, '$.accounts[1].deployments[0].items[0].createdBy');
      expect(await tenantExists(db(), tenant(s))).toBe(false);
    });

    it('refuses an API key shared by the two accounts and writes neither', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      const second = secondAccount(s);
      second.users![0]!.apiKeys = [`svc_bob_test_key_0001_${s}`];
      file.accounts.push(second);
      await expectRejectedAt(db(), file, '$.accounts[1].users[0].apiKeys[0]');
      expect(await tenantExists(db(), tenant(s))).toBe(false);
    });
  });

  describe('what already exists in the database is refused inside the transaction', () => {
    /** An account already in the database, then a file of a fresh account followed by one that collides with it. */
    async function collidingFile(collide: (second: ImportAccount, existing: string) => void): Promise<{ file: ImportFile; fresh: string }> {
      const existing = uniqueSuffix();
      await importFile(db(), designExample(existing), NOW);
      const s = uniqueSuffix();
      const file = designExample(s);
      const second = secondAccount(s);
      collide(second, existing);
      file.accounts.push(second);
      return { file, fresh: tenant(s) };
    }

    it('refuses a tenantName that exists and writes nothing of the file, not even the account before it', async () => {
      const { file, fresh } = await collidingFile((second, existing) => {
        second.tenantName = tenant(existing);
      });
      await expectRejectedAt(db(), file, '$.accounts[1].tenantName');
      expect(await tenantExists(db(), fresh)).toBe(false);
    });

    it('refuses a dashboard publicId that exists and writes nothing of the file', async () => {
      const { file, fresh } = await collidingFile((second, existing) => {
        second.deployments![0]!.items![0]!.dashboard!.publicId = `q1-review-${existing}`;
      });
      await expectRejectedAt(db(), file, '$.accounts[1].deployments[0].items[0].dashboard.publicId');
      expect(await tenantExists(db(), fresh)).toBe(false);
    });

    it('refuses an API key that exists and writes nothing of the file', async () => {
      const { file, fresh } = await collidingFile((second, existing) => {
        second.users![0]!.apiKeys = [`svc_test_fresh_${uniqueSuffix()}`, `svc_alice_test_key_0001_${existing}`];
      });
      await expectRejectedAt(db(), file, '$.accounts[1].users[0].apiKeys[1]');
      expect(await tenantExists(db(), fresh)).toBe(false);
    });

    it('leaves the existing account untouched by the refused file', async () => {
      const existing = uniqueSuffix();
      const { refs } = await importFile(db(), designExample(existing), NOW);
      const before = await countRows(db());
      const file = designExample(existing);
      await expectRejectedAt(db(), file, '$.accounts[0].tenantName');
      expect(await countRows(db())).toEqual(before);
      const users = await db().selectFrom('users').select('id').where('account_id', '=', refOf(refs, 'acme')).execute();
      expect(users).toHaveLength(2);
    });
  });

  // Failed on PostgreSQL when written (a bug, reported with the tests): the loser gets the raw unique-constraint
  // error of the database instead of an ImportError naming the path.
  describe('two imports at once', () => {
    it('lets one of two concurrent files claiming the same tenantName win; the other is an ImportError that wrote nothing', async () => {
      const contested = tenant(uniqueSuffix(), 'race');
      // Both files check the database first; the password hashes of the first account (scrypt, tens of ms each)
      // keep both transactions open long after both checks, so that both get past them before either commits.
      const fileOf = (s: string): ImportFile => {
        const file = designExample(s);
        for (const n of [1, 2, 3, 4, 5]) {
          file.accounts[0]!.users!.push({ email: `extra${n}@acme.test`, role: 'member', password: 'a slow password hash' });
        }
        file.accounts.push({ ...secondAccount(s), tenantName: contested });
        return file;
      };
      const [a, b] = [uniqueSuffix(), uniqueSuffix()];
      const before = await countRows(db());
      const outcomes = await Promise.allSettled([importFile(db(), fileOf(a), NOW), importFile(db(), fileOf(b), NOW)]);
      const after = await countRows(db());

      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
      expect(won).toHaveLength(1);
      // the loser's first account must not survive its failure, whichever file lost
      const winner = outcomes[0]!.status === 'fulfilled' ? a : b;
      const loser = winner === a ? b : a;
      expect(await tenantExists(db(), tenant(loser))).toBe(false);
      expect(after.accounts - before.accounts).toBe(2);
      expect(lost).toHaveLength(1);
      expect(lost[0]).toBeInstanceOf(ImportError);
      expect((lost[0] as ImportError).path).toBe('$.accounts[1].tenantName');
    });
  });

  describe('values the database cannot hold, or must not hold', () => {
    // Impossible dates are refused, not rolled over; an offset-less time is UTC on every machine; a snapshot names
    // its report by ref only; integers beyond the 32-bit columns are refused at their path on both databases.
    it('refuses a NUL character (PostgreSQL text cannot hold it) at its path, on both databases', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      const path = '$.accounts[0].deployments[0].items[0].children[0].name';
      put(file, path, 'Q1\u0000review');
      await expectRejectedAt(db(), file, path);
    });

    it('refuses an impossible calendar date (2026-02-30) instead of rolling it over to March', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      const path = '$.accounts[0].deployments[0].items[0].children[0].createdAt';
      put(file, path, '2026-02-30T10:00:00Z');
      await expectRejectedAt(db(), file, path);
    });

    it('reads a date-time without an offset as UTC, whatever the server time zone', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      const path = '$.accounts[0].deployments[0].items[0].children[0].createdAt';
      put(file, path, '2026-01-05T10:00:00');
      const zone = process.env.TZ;
      process.env.TZ = 'Asia/Tokyo';
      let outcome: string;
      try {
        const { refs } = await importFile(db(), file, NOW);
        const row = await db().selectFrom('workspace_items').select('created_at').where('id', '=', refOf(refs, 'wb-q1')).executeTakeFirstOrThrow();
        outcome = `stored ${row.created_at}`;
      } catch (error) {
        outcome = error instanceof ImportError ? `refused at ${error.path}` : `failed: ${String(error)}`;
      } finally {
        if (zone === undefined) delete process.env.TZ;
        else process.env.TZ = zone;
      }
      expect(outcome).toBe('stored 2026-01-05T10:00:00.000Z');
    });

    it('refuses a numeric reportId (one that could name a REPORT of another account): a snapshot names its report by ref', async () => {
      const { refs: other } = await importFile(db(), designExample(uniqueSuffix()), NOW);
      const s = uniqueSuffix();
      const file = designExample(s);
      const path = '$.accounts[0].deployments[0].items[0].children[0].dashboard.reportSnapshots[0]';
      put(file, path, { reportId: refOf(other, 'rp-1'), name: 'Somebody else\'s pipeline' });
      await expectRejectedAt(db(), file, `${path}.report`);
    });

    it('refuses a versionNumber beyond 32 bits in the second account, naming its path, and writes neither account', async () => {
      const s = uniqueSuffix();
      const file = designExample(s);
      const second = secondAccount(s);
      second.deployments![0]!.items![0]!.dashboard!.versionNumber = 99_999_999_999;
      file.accounts.push(second);
      const { error, before, after } = await importRejected(db(), file);
      expect(after, 'rows were written').toEqual(before);
      expect(error).toBeInstanceOf(ImportError);
      expect((error as ImportError).path).toBe('$.accounts[1].deployments[0].items[0].dashboard.versionNumber');
    });
  });
});
