import { sql } from 'kysely';
import type { Expression, ExpressionBuilder, Kysely, Selectable, SqlBool } from 'kysely';
import { AppError } from '../core/core.errors.js';
import type { Dialect } from '../db/db.database.js';
import { NAME_SEARCH_TABLES } from '../db/db.schema.js';
import type { Database, WorkspaceItemType } from '../db/db.schema.js';
import { prepare } from '../db/db.prepared.js';
import { escapeLike, foldSearchKey } from '../db/db.search-key.js';

type ItemsEb = ExpressionBuilder<Database & { i: Database['workspace_items'] }, 'i'>;

/** Who is listing, and where: every listing query is scoped by account and deployment. */
export interface ListingScope {
  accountId: number;
  deploymentId: number;
  userId: number;
  /** Admins see every item; others only what they created or were granted (on the item or a folder above it). */
  seesEverything: boolean;
  /** The items granted to the caller or their groups; with seesEverything false, access is checked against them. */
  grantedItemIds: readonly number[];
  /** The folder listed (or, with `search`, the subtree searched); null is the workspace root (or everywhere). */
  folderId: number | null;
  /** Lower-cased search term; null lists one folder level. */
  search: string | null;
}

export type SortColumn = 'name_key' | 'updated_at' | 'created_at' | 'viewed_at';

/** One contiguous run of the listing order, walked with its own keyset. */
export interface ListingPhase {
  folders: boolean;
  types: readonly WorkspaceItemType[];
  /** null: the phase is ordered by id only (never-viewed items under viewer_last_viewed_at). */
  sortColumn: SortColumn | null;
  direction: 'asc' | 'desc';
  /** Restricts to items the caller viewed, or never viewed; only with viewer_last_viewed_at. */
  viewed?: 'viewed' | 'never';
}

const DASHBOARD_COLUMNS = [
  'id', 'public_id', 'status', 'allow_embed', 'title', 'description', 'config', 'draft_config', 'version_number', 'version_id',
  'created_by', 'from_shared_workspace', 'restrict_data_download', 'use_board_dashboards', 'created_at', 'updated_at',
] as const;

type DashboardColumn = (typeof DASHBOARD_COLUMNS)[number];
/** The workbook's dashboard, joined into the listing row; every column null when there is none. */
type PrefixedDashboard = { [K in DashboardColumn as `dashboard_${K}`]: Selectable<Database['dashboards']>[K] | null };

type ItemColumns = Omit<Selectable<Database['workspace_items']>, 'account_id' | 'is_folder' | 'depth'>;

/** One row of a listing page: the item, the caller's last view, owner, favorite mark and dashboard. */
export interface ItemRow extends ItemColumns, PrefixedDashboard {
  viewed_at: string | null;
  owner_email: string | null;
  owner_first_name: string | null;
  owner_picture: string | null;
  favorite_item_id: number | null;
}

/**
 * Case-insensitive substring match on names: the one place where the dialects differ. SQLite asks the FTS5
 * trigram index of the phase's kind (folders or the others; terms of three characters or more): `ftsSearch` gives
 * the index and the phrase, and the listing joins the index's matches to the items, driven from the index. (As
 * `i.id in (select rowid ...)` SQLite first copies the matches into a temporary index: about 0.15 ms more for a
 * term that matches nothing and 0.5 ms more for 900 matches, bench/README.md.) PostgreSQL, and SQLite for shorter
 * terms, match `name_key` with LIKE: PostgreSQL's kind's partial pg_trgm GIN index serves it (the kind is a literal
 * in the query, so the planner can prove the partial index applies).
 */
function ftsSearch(dialect: Dialect, term: string, folders: boolean): { table: string; phrase: string } | null {
  if (dialect !== 'sqlite' || [...term].length < 3) return null;
  return { table: folders ? NAME_SEARCH_TABLES.folders : NAME_SEARCH_TABLES.others, phrase: `"${term.replace(/"/g, '""')}"` };
}

/**
 * SPEC A rule 3 in SQL: the item was created by the caller, or a grant to them or a group of theirs sits on the
 * item or on a folder above it (workspace.policy.ts is the rule; workspace.policy.test.ts compares the two). The one
 * place where the dialects take different paths, each the fast one there: PostgreSQL checks the item's ancestors
 * against the caller's granted ids, passed as one array parameter (joined to item_grants instead, it plans a scan
 * of every grant per candidate row); SQLite joins ancestors to grants per row through the indexes (an id list
 * passed as JSON would be parsed again for every row).
 */
function isAccessible(eb: ItemsEb, shape: PhaseShape, p: PhaseValues): Expression<SqlBool> {
  const created = eb('i.created_by', '=', p.userId);
  if (shape.dialect === 'postgres') {
    if (shape.access === 'created') return created;
    return eb.or([
      created,
      eb.exists(
        eb.selectFrom('item_ancestors as a').select(sql`1`.as('one'))
          .whereRef('a.item_id', '=', 'i.id').where(sql<SqlBool>`a.ancestor_id = any(${p.grantedItemIds}::int[])`),
      ),
    ]);
  }
  return eb.or([
    created,
    eb.exists(
      eb.selectFrom('item_ancestors as a')
        .innerJoin('item_grants as g', 'g.item_id', 'a.ancestor_id')
        .select(sql`1`.as('one'))
        .whereRef('a.item_id', '=', 'i.id')
        .where((inner) =>
          inner.or([
            inner('g.user_id', '=', p.userId),
            inner('g.group_id', 'in', inner.selectFrom('group_members as gm').select('gm.group_id').where('gm.user_id', '=', p.userId)),
          ]),
        ),
    ),
  ]);
}

/** The items that carry a grant to the user or to a group of theirs (usually folders; few per user). */
export async function selectGrantedItemIds(db: Kysely<Database>, accountId: number, userId: number): Promise<number[]> {
  return (await grantedItemIds.execute(db, { accountId, userId })).map((r) => r.item_id);
}

const grantedItemIds = prepare((db, p: { accountId: number; userId: number }) =>
  db.selectFrom('item_grants as g')
    .select('g.item_id')
    .distinct()
    .where('g.account_id', '=', p.accountId)
    .where((eb) =>
      eb.or([
        eb('g.user_id', '=', p.userId),
        eb('g.group_id', 'in', eb.selectFrom('group_members as gm').select('gm.group_id').where('gm.user_id', '=', p.userId)),
      ]),
    ));

/** The names of the user's groups, sorted (issue 20: a platform user's access policies match on them). */
export async function selectGroupNamesOfUser(db: Kysely<Database>, accountId: number, userId: number): Promise<string[]> {
  return (await groupNamesOfUser.execute(db, { accountId, userId })).map((r) => r.name);
}

const groupNamesOfUser = prepare((db, p: { accountId: number; userId: number }) =>
  db.selectFrom('group_members as gm')
    .innerJoin('groups as g', 'g.id', 'gm.group_id')
    .select('g.name')
    .where('gm.account_id', '=', p.accountId)
    .where('g.account_id', '=', p.accountId)
    .where('gm.user_id', '=', p.userId)
    .orderBy('g.name'));

/**
 * One page (at most `limit` rows) of one phase, after `after` in that phase's order. Every condition is in SQL,
 * before the limit: access, folder or subtree, search, types, viewed state and the keyset. The statement's shape
 * follows from the phase and from which conditions apply; each shape is compiled once (db.prepared.ts).
 */
export async function selectPhaseRows(
  db: Kysely<Database>,
  dialect: Dialect,
  scope: ListingScope,
  phase: ListingPhase,
  after: { key: string | null; id: number } | null,
  limit: number,
): Promise<ItemRow[]> {
  const { search } = scope;
  const fts = search === null ? null : ftsSearch(dialect, search, phase.folders);
  const shape: PhaseShape = {
    dialect, folders: phase.folders, types: phase.folders ? [] : phase.types, viewed: phase.viewed ?? null,
    sortColumn: phase.sortColumn, direction: phase.direction,
    search: search === null ? 'none' : fts === null ? 'like' : 'fts',
    inFolder: scope.folderId !== null,
    access: scope.seesEverything ? 'all' : dialect === 'postgres' && scope.grantedItemIds.length === 0 ? 'created' : 'granted',
    after: after === null ? 'none' : phase.sortColumn !== null && after.key !== null ? 'key' : 'id',
  };
  const rows = await phaseStatement(shape).execute(db, {
    accountId: scope.accountId, deploymentId: scope.deploymentId, userId: scope.userId, folderId: scope.folderId ?? 0,
    like: search === null ? '' : `%${escapeLike(search)}%`, ftsPhrase: fts?.phrase ?? '', grantedItemIds: [...scope.grantedItemIds],
    afterKey: after?.key ?? '', afterId: after?.id ?? 0, limit,
  });
  // The aliases built from DASHBOARD_COLUMNS widen to a union of column types; ItemRow states each one.
  return rows as unknown as ItemRow[];
}

/** Everything that decides the SQL text of a phase's statement (the values are bound when it runs). */
interface PhaseShape {
  dialect: Dialect;
  folders: boolean;
  types: readonly WorkspaceItemType[];
  viewed: 'viewed' | 'never' | null;
  sortColumn: SortColumn | null;
  direction: 'asc' | 'desc';
  search: 'none' | 'like' | 'fts';
  inFolder: boolean;
  /** all: no check (admin, or inside a granted folder); created: PostgreSQL with no grants; granted: the full rule. */
  access: 'all' | 'created' | 'granted';
  after: 'none' | 'key' | 'id';
}

interface PhaseValues {
  accountId: number;
  deploymentId: number;
  userId: number;
  folderId: number;
  like: string;
  ftsPhrase: string;
  grantedItemIds: number[];
  afterKey: string;
  afterId: number;
  limit: number;
}

const phaseStatements = new Map<string, ReturnType<typeof preparePhase>>();

function phaseStatement(shape: PhaseShape): ReturnType<typeof preparePhase> {
  const key = JSON.stringify(shape);
  let statement = phaseStatements.get(key);
  if (statement === undefined) {
    statement = preparePhase(shape);
    phaseStatements.set(key, statement);
  }
  return statement;
}

function preparePhase(shape: PhaseShape) {
  return prepare((db, p: PhaseValues) => {
    // The page is cut on workspace_items alone, joined to the caller's views only in the phases they order or
    // filter (a join on a false condition would still scan item_views). Owner, favorite mark and dashboard are
    // joined afterwards to the rows of the page only, so a search with thousands of matches does not pay for them.
    const ftsTable = shape.folders ? NAME_SEARCH_TABLES.folders : NAME_SEARCH_TABLES.others;
    const viewedAt = shape.viewed === null ? sql<string | null>`null` : sql<string | null>`v.viewed_at`;
    let page = db
      .selectFrom('workspace_items as i')
      .$if(shape.search === 'fts', (qb) =>
        qb.innerJoin(sql<{ rowid: number }>`${sql.table(ftsTable)}`.as('s'), (join) => join.onRef('s.rowid', '=', 'i.id'))
          .where(sql<SqlBool>`${sql.ref(`s.${ftsTable}`)} match ${p.ftsPhrase}`) as unknown as typeof qb,
      )
      .$if(shape.viewed !== null, (qb) =>
        qb.leftJoin('item_views as v', (join) => join.onRef('v.item_id', '=', 'i.id').on('v.user_id', '=', p.userId)) as unknown as typeof qb,
      )
      .select([
        'i.id', 'i.deployment_id', 'i.type', 'i.name', 'i.name_key', 'i.folder_id', 'i.created_by',
        'i.created_at', 'i.updated_at', 'i.meta', 'i.calculated_fields', 'i.slug', viewedAt.as('viewed_at'),
      ])
      .where('i.account_id', '=', p.accountId)
      .where('i.deployment_id', '=', p.deploymentId)
      // A literal, not a parameter: PostgreSQL's planner must see it to use the partial search index of the kind.
      .where('i.is_folder', '=', sql.lit(shape.folders ? 1 : 0));

    if (shape.search === 'none') {
      page = shape.inFolder ? page.where('i.folder_id', '=', p.folderId) : page.where('i.folder_id', 'is', null);
    } else {
      if (shape.search === 'like') page = page.where((eb) => sql<SqlBool>`${eb.ref('i.name_key')} like ${p.like} escape '\\'`);
      if (shape.inFolder) {
        page = page.where((eb) =>
          eb.exists(
            eb.selectFrom('item_ancestors as sa').select(sql`1`.as('one'))
              .whereRef('sa.item_id', '=', 'i.id').where('sa.ancestor_id', '=', p.folderId).where('sa.distance', '>', 0),
          ),
        );
      }
    }
    if (!shape.folders) page = page.where('i.type', 'in', shape.types);
    if (shape.access !== 'all') page = page.where((eb) => isAccessible(eb as unknown as ItemsEb, shape, p));
    if (shape.viewed === 'viewed') page = page.where(viewedAt, 'is not', null);
    if (shape.viewed === 'never') page = page.where(viewedAt, 'is', null);

    const column = shape.sortColumn === null ? null : shape.sortColumn === 'viewed_at' ? viewedAt : sql.ref<string>(`i.${shape.sortColumn}`);
    const op = shape.direction === 'asc' ? '>' : '<';
    if (shape.after === 'key' && column !== null) page = page.where((eb) => eb(eb.refTuple(column, 'i.id'), op, eb.tuple(p.afterKey, p.afterId)));
    if (shape.after === 'id') page = page.where('i.id', op, p.afterId);
    if (column !== null) page = page.orderBy(column, shape.direction);
    page = page.orderBy('i.id', shape.direction).limit(p.limit);

    let query = db
      .selectFrom(page.as('p'))
      .leftJoin('users as u', 'u.id', 'p.created_by')
      .leftJoin('item_favorites as fav', (join) => join.onRef('fav.item_id', '=', 'p.id').on('fav.user_id', '=', p.userId))
      .leftJoin('dashboards as d', 'd.workbook_id', 'p.id')
      .selectAll('p')
      .select([
        'u.email as owner_email', 'u.first_name as owner_first_name', 'u.picture as owner_picture',
        'fav.item_id as favorite_item_id',
        ...DASHBOARD_COLUMNS.map((c) => `d.${c} as dashboard_${c}` as const),
      ]);
    const outerColumn = shape.sortColumn === null ? null : shape.sortColumn === 'viewed_at' ? ('p.viewed_at' as const) : (`p.${shape.sortColumn}` as const);
    if (outerColumn !== null) query = query.orderBy(outerColumn, shape.direction);
    return query.orderBy('p.id', shape.direction);
  });
}

export interface FolderChainRow {
  id: number;
  name: string;
  type: WorkspaceItemType;
  deployment_id: number;
  created_by: number | null;
  distance: number;
}

/**
 * The item and every folder above it, nearest first (`distance` 0 is the item): one query that finds the item,
 * tells whether a grant reaches it (against the caller's granted ids) and gives the folderPath below a folder.
 */
export async function selectAncestorChain(db: Kysely<Database>, accountId: number, itemId: number): Promise<FolderChainRow[]> {
  return ancestorChain.execute(db, { accountId, itemId });
}

const ancestorChain = prepare((db, p: { accountId: number; itemId: number }) =>
  db.selectFrom('item_ancestors as a')
    .innerJoin('workspace_items as f', 'f.id', 'a.ancestor_id')
    .select(['f.id', 'f.name', 'f.type', 'f.deployment_id', 'f.created_by', 'a.distance'])
    .where('a.account_id', '=', p.accountId)
    .where('a.item_id', '=', p.itemId)
    .orderBy('a.distance'));

export interface FolderPathRow {
  item_id: number;
  distance: number;
  id: number;
  name: string;
}

/** Ancestor folders of each item (not the item itself), for folderPath; one query for a whole page. */
export async function selectFolderPaths(db: Kysely<Database>, accountId: number, itemIds: readonly number[]): Promise<FolderPathRow[]> {
  if (itemIds.length === 0) return [];
  return db
    .selectFrom('item_ancestors as a')
    .innerJoin('workspace_items as f', 'f.id', 'a.ancestor_id')
    .select(['a.item_id', 'a.distance', 'f.id', 'f.name'])
    .where('a.account_id', '=', accountId)
    .where('a.item_id', 'in', itemIds)
    .where('a.distance', '>', 0)
    .orderBy('a.item_id')
    .orderBy('a.distance', 'desc')
    .execute();
}

/** Records that the user viewed the item now (one row per user and item, the latest view wins). */
export async function upsertView(db: Kysely<Database>, accountId: number, userId: number, itemId: number, at: string): Promise<void> {
  await db
    .insertInto('item_views')
    .values({ account_id: accountId, user_id: userId, item_id: itemId, viewed_at: at })
    .onConflict((oc) => oc.columns(['user_id', 'item_id']).doUpdateSet({ viewed_at: at }))
    .execute();
}

export async function insertFavorite(db: Kysely<Database>, accountId: number, userId: number, itemId: number, at: string): Promise<void> {
  await db
    .insertInto('item_favorites')
    .values({ account_id: accountId, user_id: userId, item_id: itemId, created_at: at })
    .onConflict((oc) => oc.columns(['user_id', 'item_id']).doNothing())
    .execute();
}

export async function deleteFavorite(db: Kysely<Database>, accountId: number, userId: number, itemId: number): Promise<void> {
  await db
    .deleteFrom('item_favorites')
    .where('account_id', '=', accountId)
    .where('user_id', '=', userId)
    .where('item_id', '=', itemId)
    .execute();
}

// The authoring API's items (issue 33; dashboards.authoring.ts): a new dashboard's workbook, and a REPORT for each
// chart published without one. Written in the caller's transaction.

/** The folder of the deployment with this id in the account, or undefined. */
export async function findFolder(db: Kysely<Database>, accountId: number, deploymentId: number, folderId: number): Promise<{ id: number; depth: number; created_by: number | null } | undefined> {
  return db.selectFrom('workspace_items').select(['id', 'depth', 'created_by'])
    .where('account_id', '=', accountId).where('deployment_id', '=', deploymentId).where('id', '=', folderId).where('is_folder', '=', 1)
    .executeTakeFirst();
}

/** Which of these ids are REPORT items of the deployment in the account. */
export async function selectReportIds(db: Kysely<Database>, accountId: number, deploymentId: number, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('workspace_items').select('id')
    .where('account_id', '=', accountId).where('deployment_id', '=', deploymentId).where('type', '=', 'REPORT').where('id', 'in', [...ids]).execute();
  return rows.map((row) => row.id);
}

/** A new item in `folder` (null: the deployment's root), with its closure rows; its id. */
export async function insertWorkspaceItem(
  db: Kysely<Database>,
  item: { accountId: number; deploymentId: number; type: WorkspaceItemType; name: string; folder: { id: number; depth: number } | null; createdBy: number; at: string; dialect: Dialect },
): Promise<number> {
  // Into a folder: under the deployment's tree lock (moves take it too), with the folder's depth read inside it, so a
  // move that commits meanwhile cannot leave the new item with its folder's old ancestors (a grant above the old
  // place would then still reach it). `db` is the caller's transaction: the lock is held until it ends.
  let depth = 0;
  if (item.folder !== null) {
    await lockDeploymentTree(db, item.dialect, item.deploymentId);
    const folder = await db.selectFrom('workspace_items').select('depth').where('account_id', '=', item.accountId).where('id', '=', item.folder.id).executeTakeFirst();
    if (folder === undefined) throw new AppError('conflict', `folder ${item.folder.id} was removed meanwhile`, 'folderId');
    depth = folder.depth + 1;
  }
  const { id } = await db.insertInto('workspace_items').values({
    account_id: item.accountId, deployment_id: item.deploymentId, type: item.type, is_folder: item.type === 'FOLDER' ? 1 : 0, name: item.name, name_key: foldSearchKey(item.name),
    folder_id: item.folder?.id ?? null, depth, created_by: item.createdBy, created_at: item.at, updated_at: item.at, meta: '{}', calculated_fields: '{}', slug: null,
  }).returning('id').executeTakeFirstOrThrow();
  const above = item.folder === null ? [] : await db.selectFrom('item_ancestors').select(['ancestor_id', 'distance'])
    .where('account_id', '=', item.accountId).where('item_id', '=', item.folder.id).execute();
  await db.insertInto('item_ancestors').values([
    { account_id: item.accountId, item_id: id, ancestor_id: id, distance: 0 },
    ...above.map((row) => ({ account_id: item.accountId, item_id: id, ancestor_id: row.ancestor_id, distance: row.distance + 1 })),
  ]).execute();
  return id;
}

/** The folder an item is in (null: the deployment's root), with its depth. */
export async function findParentFolder(db: Kysely<Database>, accountId: number, itemId: number): Promise<{ id: number; depth: number } | null> {
  const row = await db.selectFrom('workspace_items as i').innerJoin('workspace_items as f', 'f.id', 'i.folder_id').select(['f.id', 'f.depth'])
    .where('i.account_id', '=', accountId).where('i.id', '=', itemId).executeTakeFirst();
  return row ?? null;
}

// The admin API of groups (issue 33 part 4, docs/authoring.md "Users, groups and API keys"): grants name groups.

/** Every membership of the account, by group. */
export async function selectMemberships(db: Kysely<Database>, accountId: number): Promise<Array<{ user_id: number; group_id: number }>> {
  return db.selectFrom('group_members').select(['user_id', 'group_id']).where('account_id', '=', accountId).orderBy('group_id').execute();
}

export interface GroupRow { id: number; name: string }

export async function selectGroups(db: Kysely<Database>, accountId: number): Promise<GroupRow[]> {
  return db.selectFrom('groups').select(['id', 'name']).where('account_id', '=', accountId).orderBy('id').execute();
}

export async function findGroup(db: Kysely<Database>, accountId: number, groupId: number): Promise<GroupRow | undefined> {
  return db.selectFrom('groups').select(['id', 'name']).where('account_id', '=', accountId).where('id', '=', groupId).executeTakeFirst();
}

/** Another group of the account with this name (`exceptId` left out), or undefined. */
export async function findGroupNamed(db: Kysely<Database>, accountId: number, name: string, exceptId?: number): Promise<GroupRow | undefined> {
  let query = db.selectFrom('groups').select(['id', 'name']).where('account_id', '=', accountId).where('name', '=', name);
  if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
  return query.executeTakeFirst();
}

/** The user ids of a group of the account. */
export async function selectGroupMembers(db: Kysely<Database>, accountId: number, groupId: number): Promise<number[]> {
  return (await db.selectFrom('group_members').select('user_id').where('account_id', '=', accountId).where('group_id', '=', groupId).orderBy('user_id').execute()).map((r) => r.user_id);
}

export async function insertGroup(db: Kysely<Database>, accountId: number, name: string): Promise<number> {
  return (await db.insertInto('groups').values({ account_id: accountId, name }).returning('id').executeTakeFirstOrThrow()).id;
}

export async function renameGroup(db: Kysely<Database>, accountId: number, groupId: number, name: string): Promise<void> {
  await db.updateTable('groups').set({ name }).where('account_id', '=', accountId).where('id', '=', groupId).execute();
}

/** Makes `userIds` (users of the account, checked by the caller) the group's whole membership. */
export async function replaceGroupMembers(db: Kysely<Database>, accountId: number, groupId: number, userIds: readonly number[]): Promise<void> {
  await db.deleteFrom('group_members').where('account_id', '=', accountId).where('group_id', '=', groupId).execute();
  if (userIds.length === 0) return;
  await db.insertInto('group_members').values(userIds.map((userId) => ({ account_id: accountId, group_id: groupId, user_id: userId }))).execute();
}

/** Deletes a group of the account (its memberships and the grants made to it go with it); how many rows went. */
export async function deleteGroup(db: Kysely<Database>, accountId: number, groupId: number): Promise<number> {
  return Number((await db.deleteFrom('groups').where('account_id', '=', accountId).where('id', '=', groupId).executeTakeFirst()).numDeletedRows);
}

// Editor grants (issue 33; docs/authoring.md "Who may do what"): who may change the dashboards below an item, and
// the admins' API that replaces an item's grants.

/**
 * Whether an editor grant to the user, or to a group of theirs, sits on the item or on any folder above it: what
 * lets a member change a dashboard they did not create (dashboards.policy.ts `canEditDashboard`), and create one in
 * a folder.
 */
export async function hasEditorGrant(db: Kysely<Database>, accountId: number, userId: number, itemId: number): Promise<boolean> {
  return (await editorGrant.first(db, { accountId, userId, itemId })) !== undefined;
}

const editorGrant = prepare((db, p: { accountId: number; userId: number; itemId: number }) =>
  db.selectFrom('item_ancestors as a')
    .innerJoin('item_grants as g', 'g.item_id', 'a.ancestor_id')
    .select('g.id')
    .where('a.account_id', '=', p.accountId)
    .where('a.item_id', '=', p.itemId)
    .where('g.account_id', '=', p.accountId)
    .where('g.role', '=', 'editor')
    .where((eb) =>
      eb.or([
        eb('g.user_id', '=', p.userId),
        eb('g.group_id', 'in', eb.selectFrom('group_members as gm').select('gm.group_id').where('gm.user_id', '=', p.userId)),
      ]),
    )
    .limit(1));

export type ItemGrantRow = Pick<Selectable<Database['item_grants']>, 'user_id' | 'group_id' | 'role'>;

/** The item of the deployment with this id in the account (any type), or undefined. */
export async function findItemOfDeployment(db: Kysely<Database>, accountId: number, deploymentId: number, itemId: number): Promise<{ id: number } | undefined> {
  return db.selectFrom('workspace_items').select('id')
    .where('account_id', '=', accountId).where('deployment_id', '=', deploymentId).where('id', '=', itemId)
    .executeTakeFirst();
}

/** The grants on the item itself (not those above it), in the order they were made. */
export async function selectItemGrants(db: Kysely<Database>, accountId: number, itemId: number): Promise<ItemGrantRow[]> {
  return db.selectFrom('item_grants').select(['user_id', 'group_id', 'role'])
    .where('account_id', '=', accountId).where('item_id', '=', itemId).orderBy('id').execute();
}

/**
 * Takes the item's row lock for the rest of the caller's transaction (PostgreSQL; SQLite runs one write transaction
 * at a time already), so that two replacements of its grants run one after the other: without it, each would delete
 * only the rows it saw and both lists would stay.
 */
export async function lockItem(db: Kysely<Database>, dialect: Dialect, accountId: number, itemId: number): Promise<void> {
  if (dialect !== 'postgres') return;
  await db.selectFrom('workspace_items').select('id').where('account_id', '=', accountId).where('id', '=', itemId).forUpdate().execute();
}

/** Replaces the item's grants with these, in the caller's transaction. */
export async function replaceItemGrantRows(db: Kysely<Database>, accountId: number, itemId: number, grants: readonly ItemGrantRow[]): Promise<void> {
  await db.deleteFrom('item_grants').where('account_id', '=', accountId).where('item_id', '=', itemId).execute();
  if (grants.length === 0) return;
  await db.insertInto('item_grants').values(grants.map((g) => ({ account_id: accountId, item_id: itemId, user_id: g.user_id, group_id: g.group_id, role: g.role }))).execute();
}

/** Which of these ids are groups of the account. */
export async function selectGroupIdsOfAccount(db: Kysely<Database>, accountId: number, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  return (await db.selectFrom('groups').select('id').where('account_id', '=', accountId).where('id', 'in', [...ids]).execute()).map((row) => row.id);
}

// Folders and items through the authoring API (issue 34, the console; docs/authoring.md "Folders"): a folder made,
// an item renamed or moved. Written in the caller's transaction, which also raises the account's data version.

export interface PlacedItemRow {
  id: number;
  type: WorkspaceItemType;
  name: string;
  created_by: number | null;
  folder_id: number | null;
  depth: number;
}

/** The item of the deployment with this id in the account, with what renaming and moving it needs; or undefined. */
export async function findPlacedItem(db: Kysely<Database>, accountId: number, deploymentId: number, itemId: number): Promise<PlacedItemRow | undefined> {
  return db.selectFrom('workspace_items').select(['id', 'type', 'name', 'created_by', 'folder_id', 'depth'])
    .where('account_id', '=', accountId).where('deployment_id', '=', deploymentId).where('id', '=', itemId)
    .executeTakeFirst();
}

/** Whether `itemId` is `ancestorId` or sits anywhere below it. */
export async function isAtOrBelow(db: Kysely<Database>, accountId: number, itemId: number, ancestorId: number): Promise<boolean> {
  return (await db.selectFrom('item_ancestors').select('item_id')
    .where('account_id', '=', accountId).where('item_id', '=', itemId).where('ancestor_id', '=', ancestorId)
    .executeTakeFirst()) !== undefined;
}

/** How many levels the deepest item below `itemId` sits under it (0: nothing below it). */
export async function subtreeHeight(db: Kysely<Database>, accountId: number, itemId: number): Promise<number> {
  const row = await db.selectFrom('item_ancestors').select((eb) => eb.fn.max('distance').as('height'))
    .where('account_id', '=', accountId).where('ancestor_id', '=', itemId)
    .executeTakeFirst();
  return Number(row?.height ?? 0);
}

/** Renames an item (its name key follows, and with it the name search index's triggers). */
export async function renameItem(db: Kysely<Database>, accountId: number, itemId: number, name: string, at: string): Promise<void> {
  await db.updateTable('workspace_items').set({ name, name_key: foldSearchKey(name), updated_at: at })
    .where('account_id', '=', accountId).where('id', '=', itemId).execute();
}

/**
 * Moves an item, and everything below it, into `parent` (null: the deployment's root): the closure rows that tied the
 * subtree to the folders above the item go, rows to the new folders above come, and every depth in the subtree moves
 * by the difference. The caller has checked that `parent` is not in the subtree.
 */
export async function moveItem(db: Kysely<Database>, accountId: number, item: PlacedItemRow, parent: { id: number; depth: number } | null, at: string): Promise<void> {
  const subtree = db.selectFrom('item_ancestors').select('item_id').where('account_id', '=', accountId).where('ancestor_id', '=', item.id);
  const above = db.selectFrom('item_ancestors').select('ancestor_id').where('account_id', '=', accountId).where('item_id', '=', item.id).where('distance', '>', 0);
  await db.deleteFrom('item_ancestors')
    .where('account_id', '=', accountId).where('item_id', 'in', subtree).where('ancestor_id', 'in', above)
    .execute();
  if (parent !== null) {
    await db.insertInto('item_ancestors').columns(['account_id', 'item_id', 'ancestor_id', 'distance'])
      .expression(
        db.selectFrom('item_ancestors as s').innerJoin('item_ancestors as p', (join) => join.on('p.account_id', '=', accountId).on('p.item_id', '=', parent.id))
          .select([sql.lit(accountId).as('account_id'), 's.item_id', 'p.ancestor_id', sql<number>`s.distance + p.distance + 1`.as('distance')])
          .where('s.account_id', '=', accountId).where('s.ancestor_id', '=', item.id),
      )
      .execute();
  }
  const shift = (parent === null ? 0 : parent.depth + 1) - item.depth;
  if (shift !== 0) {
    await db.updateTable('workspace_items').set((eb) => ({ depth: eb('depth', '+', shift) }))
      .where('account_id', '=', accountId).where('id', 'in', db.selectFrom('item_ancestors').select('item_id').where('account_id', '=', accountId).where('ancestor_id', '=', item.id))
      .execute();
  }
  await db.updateTable('workspace_items').set({ folder_id: parent?.id ?? null, updated_at: at })
    .where('account_id', '=', accountId).where('id', '=', item.id).execute();
}

/**
 * Makes the moves and folder creations of one deployment run one after the other (PostgreSQL: a transaction advisory
 * lock; SQLite runs one write transaction at a time already): two moves checked at once could otherwise each pass the
 * cycle check and together put two folders inside each other.
 */
export async function lockDeploymentTree(db: Kysely<Database>, dialect: Dialect, deploymentId: number): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${`svc:item-tree:${deploymentId}`}, 0))`.execute(db);
}

/** Items as the listing's rows (owner, the user's favorite mark and last view, dashboard), for answering one item. */
export async function selectItemRows(db: Kysely<Database>, accountId: number, userId: number, itemIds: readonly number[]): Promise<ItemRow[]> {
  if (itemIds.length === 0) return [];
  const rows = await db.selectFrom('workspace_items as p')
    .leftJoin('item_views as v', (join) => join.onRef('v.item_id', '=', 'p.id').on('v.user_id', '=', userId))
    .leftJoin('users as u', 'u.id', 'p.created_by')
    .leftJoin('item_favorites as fav', (join) => join.onRef('fav.item_id', '=', 'p.id').on('fav.user_id', '=', userId))
    .leftJoin('dashboards as d', 'd.workbook_id', 'p.id')
    .select([
      'p.id', 'p.deployment_id', 'p.type', 'p.name', 'p.name_key', 'p.folder_id', 'p.created_by',
      'p.created_at', 'p.updated_at', 'p.meta', 'p.calculated_fields', 'p.slug', 'v.viewed_at',
      'u.email as owner_email', 'u.first_name as owner_first_name', 'u.picture as owner_picture',
      'fav.item_id as favorite_item_id',
      ...DASHBOARD_COLUMNS.map((c) => `d.${c} as dashboard_${c}` as const),
    ])
    .where('p.account_id', '=', accountId).where('p.id', 'in', [...itemIds])
    .orderBy('p.id')
    .execute();
  return rows as unknown as ItemRow[];
}
