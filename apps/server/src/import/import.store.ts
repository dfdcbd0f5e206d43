import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database } from '../db/db.schema.js';

// The import's SQL (DESIGN.md "The import file"). It writes a whole account, every table of it, inside the one
// transaction of `importFile`, so this store writes tables other stores own (db.ownership.test.ts names it).
// Every insert returns the new row's id where later rows point at it.

type Row<T extends keyof Database> = Insertable<Database[T]>;

// The checks against what already exists.

export async function hasAccountWithTenantName(trx: Transaction<Database>, tenantName: string): Promise<boolean> {
  return (await trx.selectFrom('accounts').select('id').where('tenant_name', '=', tenantName).executeTakeFirst()) !== undefined;
}

export async function hasApiKeyWithDigest(trx: Transaction<Database>, digest: string): Promise<boolean> {
  return (await trx.selectFrom('api_keys').select('id').where('digest', '=', digest).executeTakeFirst()) !== undefined;
}

export async function hasDashboardWithPublicId(trx: Transaction<Database>, publicId: string): Promise<boolean> {
  return (await trx.selectFrom('dashboards').select('id').where('public_id', '=', publicId).executeTakeFirst()) !== undefined;
}

/** A unique constraint refused a row, on either database. */

// The account, its users and their API keys.

export async function insertAccount(trx: Transaction<Database>, row: Row<'accounts'>): Promise<number> {
  return (await trx.insertInto('accounts').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertUser(trx: Transaction<Database>, row: Row<'users'>): Promise<number> {
  return (await trx.insertInto('users').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertApiKey(trx: Transaction<Database>, row: Row<'api_keys'>): Promise<void> {
  await trx.insertInto('api_keys').values(row).execute();
}

// Groups.

export async function insertGroup(trx: Transaction<Database>, row: Row<'groups'>): Promise<number> {
  return (await trx.insertInto('groups').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertGroupMember(trx: Transaction<Database>, row: Row<'group_members'>): Promise<void> {
  await trx.insertInto('group_members').values(row).execute();
}

// Deployments (with their data source and semantic views), workspace items, their ancestors and grants.

export async function insertDeployment(trx: Transaction<Database>, row: Row<'deployments'>): Promise<number> {
  return (await trx.insertInto('deployments').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertItem(trx: Transaction<Database>, row: Row<'workspace_items'>): Promise<number> {
  return (await trx.insertInto('workspace_items').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

/** An item's closure rows: itself at distance 0, then each folder above it. */
export async function insertItemAncestors(trx: Transaction<Database>, rows: Array<Row<'item_ancestors'>>): Promise<void> {
  await trx.insertInto('item_ancestors').values(rows).execute();
}

export async function insertItemGrant(trx: Transaction<Database>, row: Row<'item_grants'>): Promise<void> {
  await trx.insertInto('item_grants').values(row).execute();
}

/** A user's last view of an item: a second view of the same item in the file replaces the first. */
export async function upsertItemView(trx: Transaction<Database>, row: Row<'item_views'>): Promise<void> {
  await trx.insertInto('item_views').values(row)
    .onConflict((oc) => oc.columns(['user_id', 'item_id']).doUpdateSet({ viewed_at: row.viewed_at }))
    .execute();
}

/** A user's favourite; the same one twice in the file is kept once. */
export async function insertItemFavoriteIfAbsent(trx: Transaction<Database>, row: Row<'item_favorites'>): Promise<void> {
  await trx.insertInto('item_favorites').values(row)
    .onConflict((oc) => oc.columns(['user_id', 'item_id']).doNothing())
    .execute();
}

// Dashboards and their report snapshots.

export async function insertDashboard(trx: Transaction<Database>, row: Row<'dashboards'>): Promise<number> {
  return (await trx.insertInto('dashboards').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertDashboardVersion(trx: Transaction<Database>, row: Row<'dashboard_versions'>): Promise<void> {
  await trx.insertInto('dashboard_versions').values(row).execute();
}

export async function insertReportSnapshot(trx: Transaction<Database>, row: Row<'report_snapshots'>): Promise<void> {
  await trx.insertInto('report_snapshots').values(row).execute();
}

// Embed tenants and their users.

export async function insertEmbedTenant(trx: Transaction<Database>, row: Row<'embed_tenants'>): Promise<number> {
  return (await trx.insertInto('embed_tenants').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertEmbedUser(trx: Transaction<Database>, row: Row<'embed_users'>): Promise<number> {
  return (await trx.insertInto('embed_users').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

// The export's reads (import.export.ts): every row of an account that the import file carries, in id order.

export async function selectAccountsToExport(db: Kysely<Database>, tenantName?: string) {
  let query = db.selectFrom('accounts').select(['id', 'name', 'tenant_name', 'settings']).orderBy('id');
  if (tenantName !== undefined) query = query.where('tenant_name', '=', tenantName);
  return query.execute();
}

export async function selectAccountRows(db: Kysely<Database>, accountId: number) {
  const [users, groups, members, deployments, tenants, embedUsers, items, grants, dashboards, snapshots, views, favorites] = await Promise.all([
    db.selectFrom('users').select(['id', 'email', 'first_name', 'picture', 'role']).where('account_id', '=', accountId).orderBy('id').execute(),
    db.selectFrom('groups').select(['id', 'name']).where('account_id', '=', accountId).orderBy('id').execute(),
    db.selectFrom('group_members').select(['group_id', 'user_id']).where('account_id', '=', accountId).orderBy('user_id').execute(),
    db.selectFrom('deployments').select(['id', 'name', 'data_source', 'semantic_views']).where('account_id', '=', accountId).orderBy('id').execute(),
    db.selectFrom('embed_tenants').select(['id', 'name']).where('account_id', '=', accountId).orderBy('id').execute(),
    db.selectFrom('embed_users').select(['embed_tenant_id', 'external_id', 'username', 'email', 'first_name']).where('account_id', '=', accountId).orderBy('id').execute(),
    db.selectFrom('workspace_items').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    db.selectFrom('item_grants').select(['item_id', 'user_id', 'group_id', 'role']).where('account_id', '=', accountId).orderBy('id').execute(),
    db.selectFrom('dashboards').selectAll().where('account_id', '=', accountId).orderBy('id').execute(),
    db.selectFrom('report_snapshots').selectAll().where('account_id', '=', accountId).orderBy('dashboard_id').orderBy('position').execute(),
    db.selectFrom('item_views').select(['user_id', 'item_id', 'viewed_at']).where('account_id', '=', accountId).orderBy('user_id').orderBy('item_id').execute(),
    db.selectFrom('item_favorites').select(['user_id', 'item_id']).where('account_id', '=', accountId).orderBy('user_id').orderBy('item_id').execute(),
  ]);
  return { users, groups, members, deployments, tenants, embedUsers, items, grants, dashboards, snapshots, views, favorites };
}

