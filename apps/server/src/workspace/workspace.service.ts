import { isAdmin } from '../accounts/accounts.principal.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { bumpPersonalVersion, findDeploymentInAccount } from '../accounts/accounts.store.js';
import type { Kysely, Selectable } from 'kysely';
import type { Database, WorkspaceItemType } from '../db/db.schema.js';
import { AppError } from '../core/core.errors.js';
import { isoTimestamp } from '../core/core.time.js';
import type { ServiceContext } from '../db/db.context.js';
import { decodeCursor, encodeCursor, fingerprintQuery, invalidCursor, isCursorId, pageInfoOf } from '../core/core.cursor.js';
import type { DashboardConfig } from './workspace.dashboard-schema.js';
import { accessFactsOf, accessViewerOf, canAccessItem, reachesSubtree } from './workspace.policy.js';
import { draftConfigOf, parseJson, presentDashboard } from './workspace.presenter.js';
import type { DashboardRow } from './workspace.presenter.js';
import type { AccessViewer } from './workspace.policy.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, WORKSPACE_ITEM_TYPES } from './workspace.schema.js';
import type { WorkspaceConnectionResponse, WorkspaceItem, WorkspaceQuery } from './workspace.schema.js';
import {
  deleteFavorite,
  insertFavorite,
  selectAncestorChain,
  selectGrantedItemIds,
  selectFolderPaths,
  selectItemRows,
  selectPhaseRows,
  upsertView,
} from './workspace.store.js';
import type { FolderChainRow, ItemRow, ListingPhase, ListingScope, SortColumn } from './workspace.store.js';

/**
 * What the listing needs besides the database and the clock: the report snapshots of the published dashboards on a
 * page. dashboards.store owns that table, and dashboards/ imports this room (its read check needs the grants), so
 * app.ts passes the store's read in (`selectReportSnapshots`) rather than workspace/ importing dashboards/.
 */
export interface ListingContext extends ServiceContext {
  selectReportSnapshots(db: Kysely<Database>, accountId: number, dashboardIds: readonly number[]): Promise<Array<Selectable<Database['report_snapshots']>>>;
}

const SORT_COLUMN_BY_FIELD: Record<NonNullable<WorkspaceQuery['orderByField']>, SortColumn> = {
  updated_at: 'updated_at',
  created_at: 'created_at',
  name: 'name_key',
  viewer_last_viewed_at: 'viewed_at',
};

/**
 * The listing order as a list of phases. SPEC A rule 2: folders always come first (DESIGN.md: by name), then the
 * non-folders in the requested order (DESIGN.md: default updated_at DESC). Under viewer_last_viewed_at, items the
 * caller never viewed come last in both directions. Ties are broken by id, in the requested direction.
 */
export function listingPhases(query: WorkspaceQuery): ListingPhase[] {
  const types = new Set<WorkspaceItemType>(query.types ?? WORKSPACE_ITEM_TYPES);
  const field = query.orderByField ?? 'updated_at';
  const direction = (query.orderByDirection ?? 'DESC') === 'ASC' ? 'asc' : 'desc';
  const nonFolderTypes = WORKSPACE_ITEM_TYPES.filter((t) => t !== 'FOLDER' && types.has(t));
  const phases: ListingPhase[] = [];
  if (types.has('FOLDER')) phases.push({ folders: true, types: ['FOLDER'], sortColumn: 'name_key', direction: 'asc' });
  if (nonFolderTypes.length > 0) {
    const sortColumn = SORT_COLUMN_BY_FIELD[field];
    if (sortColumn === 'viewed_at') {
      phases.push({ folders: false, types: nonFolderTypes, sortColumn, direction, viewed: 'viewed' });
      phases.push({ folders: false, types: nonFolderTypes, sortColumn: null, direction, viewed: 'never' });
    } else {
      phases.push({ folders: false, types: nonFolderTypes, sortColumn, direction });
    }
  }
  return phases;
}

/**
 * A keyset position in the listing: which phase of the order, the sort value of the last item seen, and its id.
 * Its cursor (DESIGN.md: bound to the query that made it) holds the three as `[phase, key, id]`.
 */
interface WorkspacePosition {
  phase: number;
  key: string | null;
  id: number;
}

/** Decodes `after` into a position of this listing; a bogus string or a cursor of another query is a 400. */
function decodePosition(after: string, fingerprint: string, phaseCount: number): WorkspacePosition {
  const [phase, key, id] = decodeCursor(after, fingerprint, 3);
  const isPhase = typeof phase === 'number' && Number.isInteger(phase) && phase >= 0 && phase < phaseCount;
  const isKey = key === null || (typeof key === 'string' && key.length <= 1024);
  if (!isPhase || !isKey || !isCursorId(id)) throw invalidCursor('malformed');
  return { phase, key, id };
}

function sortKeyOf(row: ItemRow, phase: ListingPhase): string | null {
  return phase.sortColumn === null ? null : phase.sortColumn === 'viewed_at' ? row.viewed_at : row[phase.sortColumn];
}

/**
 * The reads every workspace request starts with, run together (on PostgreSQL each is a round trip) and checked
 * in order, so a missing deployment is reported before anything about the item: the deployment, the items
 * granted to the caller or their groups, and the named item's ancestor chain (itself first).
 */
async function readAccessContext(
  ctx: ServiceContext,
  principal: PlatformUserPrincipal,
  deploymentId: number,
  itemId: number | null,
): Promise<{ viewer: AccessViewer; grantedItemIds: number[]; chain: FolderChainRow[] }> {
  const { accountId, userId } = principal;
  const [deployment, grantedItemIds, chain] = await Promise.all([
    findDeploymentInAccount(ctx.db, accountId, deploymentId),
    isAdmin(principal) ? Promise.resolve([]) : selectGrantedItemIds(ctx.db, accountId, userId),
    itemId === null ? Promise.resolve([]) : selectAncestorChain(ctx.db, accountId, itemId),
  ]);
  if (deployment === undefined) throw new AppError('not_found', `deployment ${deploymentId} not found`, 'deploymentId');
  return { viewer: accessViewerOf(principal, grantedItemIds), grantedItemIds, chain };
}

/**
 * SPEC A `workspaceObjects`: one page of the folders, workbooks and reports the caller can access.
 *
 * @example
 * const page = await listWorkspace(ctx, principal, 7, { folderId: 12, first: 20 });
 * const next = await listWorkspace(ctx, principal, 7, { folderId: 12, first: 20, after: page.pageInfo.endCursor! });
 */
export async function listWorkspace(
  ctx: ListingContext,
  principal: PlatformUserPrincipal,
  deploymentId: number,
  query: WorkspaceQuery,
): Promise<WorkspaceConnectionResponse> {
  const { accountId, userId } = principal;
  // SPEC A rule 1: without folderId, the root.
  const folderId = query.folderId ?? null;
  const { viewer, grantedItemIds, chain } = await readAccessContext(ctx, principal, deploymentId, folderId);
  let folderReached = viewer.admin;
  // The folder and the folders above it, root first: the folderPath of everything listed in it.
  let folderPath: Array<{ id: number; name: string }> = [];
  if (folderId !== null) {
    const folder = chain[0];
    if (folder === undefined || folder.type !== 'FOLDER' || folder.deployment_id !== deploymentId) {
      throw new AppError('not_found', `folder ${folderId} not found in deployment ${deploymentId}`, 'folderId');
    }
    folderReached = reachesSubtree(viewer, accessFactsOf(chain).chainIds);
    folderPath = chain.reverse().map((f) => ({ id: f.id, name: f.name }));
  }

  if (query.search?.includes('\u0000')) throw new AppError('invalid_parameter', 'query parameter search must not contain NUL characters', 'search');
  const search = query.search === undefined || query.search === '' ? null : query.search.toLowerCase();
  const phases = listingPhases(query);
  const fingerprint = fingerprintQuery([
    userId, deploymentId, folderId, [...new Set(query.types ?? WORKSPACE_ITEM_TYPES)].sort(),
    query.orderByField ?? 'updated_at', query.orderByDirection ?? 'DESC', search,
  ]);
  const start: WorkspacePosition | null = query.after === undefined ? null : decodePosition(query.after, fingerprint, phases.length);
  const pageSize = Math.min(query.first ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);

  // SPEC A rule 3, DESIGN.md access: a grant on a folder reaches everything below it, so inside a granted
  // folder (or subtree) the per-item check is skipped.
  const scope: ListingScope = {
    accountId, deploymentId, userId, folderId, search,
    seesEverything: folderReached,
    grantedItemIds,
  };

  // Phases from the cursor's on, each read for up to what the page still needs and one row (the extra row tells
  // whether the listing goes on). A later phase is read only when the earlier ones left room: a search phase
  // must find, check and sort every match before its first row is known, so a folder phase that fills the page
  // spares the costlier non-folder phase. On PostgreSQL without a search, the phases are cheap keyset walks and
  // each read is a round trip, so they are read together instead.
  const firstPhase = start?.phase ?? 0;
  const readPhase = (k: number, limit: number) =>
    selectPhaseRows(ctx.db, ctx.dialect, scope, phases[firstPhase + k]!, k === 0 && start !== null ? { key: start.key, id: start.id } : null, limit);
  const phaseCount = phases.length - firstPhase;
  const together = ctx.dialect === 'postgres' && search === null;
  const prefetched = together ? await Promise.all(Array.from({ length: phaseCount }, (_, k) => readPhase(k, pageSize + 1))) : [];
  const page: Array<{ row: ItemRow; phaseIndex: number }> = [];
  let hasNextPage = false;
  for (let k = 0; k < phaseCount; k++) {
    const remaining = pageSize - page.length;
    const rows = together ? prefetched[k]! : await readPhase(k, remaining + 1);
    for (const row of rows.slice(0, remaining)) page.push({ row, phaseIndex: firstPhase + k });
    if (rows.length > remaining) {
      hasNextPage = true;
      break;
    }
  }

  const rows = page.map((p) => p.row);
  const items = await presentItems(ctx, accountId, rows, search === null ? () => folderPath : await folderPathsOf(ctx, accountId, rows));
  const cursorOf = (entry: { row: ItemRow; phaseIndex: number }) =>
    encodeCursor(fingerprint, [entry.phaseIndex, sortKeyOf(entry.row, phases[entry.phaseIndex]!), entry.row.id]);
  return { items, pageInfo: pageInfoOf(page, hasNextPage, start !== null, cursorOf) };
}

/** folderPath of each item of a search page, whose items sit in different folders: one query for the page. */
async function folderPathsOf(ctx: ServiceContext, accountId: number, rows: readonly ItemRow[]): Promise<(row: ItemRow) => Array<{ id: number; name: string }>> {
  const paths = await selectFolderPaths(ctx.db, accountId, rows.map((r) => r.id));
  const pathByItem = new Map<number, Array<{ id: number; name: string }>>();
  for (const p of paths) {
    const list = pathByItem.get(p.item_id) ?? [];
    list.push({ id: p.id, name: p.name });
    pathByItem.set(p.item_id, list);
  }
  return (row) => pathByItem.get(row.id) ?? [];
}

/** The workbook's dashboard row, rebuilt from the columns joined into the listing row. */
function dashboardOf(accountId: number, row: ItemRow): DashboardRow | undefined {
  if (row.dashboard_id === null) return undefined;
  return {
    id: row.dashboard_id, account_id: accountId, deployment_id: row.deployment_id, workbook_id: row.id,
    public_id: row.dashboard_public_id!, status: row.dashboard_status!, allow_embed: row.dashboard_allow_embed!,
    title: row.dashboard_title, description: row.dashboard_description, config: row.dashboard_config!,
    draft_config: row.dashboard_draft_config, version_number: row.dashboard_version_number!, version_id: row.dashboard_version_id!,
    created_by: row.dashboard_created_by, from_shared_workspace: row.dashboard_from_shared_workspace,
    restrict_data_download: row.dashboard_restrict_data_download, use_board_dashboards: row.dashboard_use_board_dashboards,
    created_at: row.dashboard_created_at!, updated_at: row.dashboard_updated_at!,
  };
}

/** Turns a page of rows into workspace items; only the report snapshots of published dashboards need a query. */
async function presentItems(
  ctx: ListingContext,
  accountId: number,
  rows: readonly ItemRow[],
  folderPathOf: (row: ItemRow) => Array<{ id: number; name: string }>,
): Promise<WorkspaceItem[]> {
  const dashboards = new Map(rows.flatMap((row) => {
    const dashboard = dashboardOf(accountId, row);
    return dashboard ? [[row.id, dashboard] as const] : [];
  }));
  const published = [...dashboards.values()].filter((d) => d.status === 'published');
  const snapshots = await ctx.selectReportSnapshots(ctx.db, accountId, published.map((d) => d.id));

  return rows.map((row) => {
    const dashboard = dashboards.get(row.id);
    const isPublished = dashboard?.status === 'published';
    const item: WorkspaceItem = {
      id: row.id,
      deploymentId: row.deployment_id,
      name: row.name,
      meta: parseJson<Record<string, unknown>>(row.meta) ?? {},
      calculatedFields: parseJson<Record<string, unknown>>(row.calculated_fields) ?? {},
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      type: row.type,
      userId: row.created_by,
      user: row.created_by === null || row.owner_email === null
        ? null
        : { id: row.created_by, email: row.owner_email, firstName: row.owner_first_name, picture: row.owner_picture },
      folderId: row.folder_id,
      folderPath: folderPathOf(row),
      isFavorite: row.favorite_item_id !== null,
      slug: row.slug,
      dashboardDraft: dashboard ? draftConfigOf(dashboard) : null,
      dashboardPublished: isPublished ? (parseJson<DashboardConfig>(dashboard.config) ?? {}) : null,
      publishedDashboard: isPublished ? presentDashboard(dashboard, snapshots.filter((s) => s.dashboard_id === dashboard.id)) : null,
    };
    if (row.created_by !== null) item.createdBy = row.created_by;
    return item;
  });
}

/** One item as the listing shows it to the caller (folderPath, favorite mark, dashboard): what a write answers. */
export async function presentItem(ctx: ListingContext, principal: PlatformUserPrincipal, itemId: number): Promise<WorkspaceItem> {
  const rows = await selectItemRows(ctx.db, principal.accountId, principal.userId, [itemId]);
  const [item] = await presentItems(ctx, principal.accountId, rows, await folderPathsOf(ctx, principal.accountId, rows));
  return item!;
}

/** 404 for an item not in the deployment, 403 for one DESIGN "Access" does not let the caller reach. */
async function requireAccessibleItem(ctx: ServiceContext, principal: PlatformUserPrincipal, deploymentId: number, itemId: number): Promise<void> {
  const { viewer, chain } = await readAccessContext(ctx, principal, deploymentId, itemId);
  const item = chain[0];
  if (item === undefined || item.deployment_id !== deploymentId) {
    throw new AppError('not_found', `item ${itemId} not found in deployment ${deploymentId}`, 'itemId');
  }
  if (!canAccessItem(viewer, accessFactsOf(chain))) {
    throw new AppError('forbidden', `item ${itemId} is not accessible to this user`, 'itemId');
  }
}

/** Records that the caller viewed an item now; feeds `orderByField=viewer_last_viewed_at`. */
export async function recordView(ctx: ServiceContext, principal: PlatformUserPrincipal, deploymentId: number, itemId: number): Promise<void> {
  await requireAccessibleItem(ctx, principal, deploymentId, itemId);
  await ctx.db.transaction().execute(async (trx) => {
    await upsertView(trx, principal.accountId, principal.userId, itemId, isoTimestamp(ctx.now()));
    await bumpPersonalVersion(trx, principal.accountId, principal.userId);
  });
}

/** Marks (or, with `favorite` false, unmarks) an item as the caller's favorite; idempotent both ways. */
export async function setFavorite(
  ctx: ServiceContext,
  principal: PlatformUserPrincipal,
  deploymentId: number,
  itemId: number,
  favorite: boolean,
): Promise<void> {
  await requireAccessibleItem(ctx, principal, deploymentId, itemId);
  await ctx.db.transaction().execute(async (trx) => {
    if (favorite) await insertFavorite(trx, principal.accountId, principal.userId, itemId, isoTimestamp(ctx.now()));
    else await deleteFavorite(trx, principal.accountId, principal.userId, itemId);
    await bumpPersonalVersion(trx, principal.accountId, principal.userId);
  });
}
