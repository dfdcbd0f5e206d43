import { AppError } from '../core/core.errors.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import type { ServiceContext } from '../db/db.context.js';
import { findDeploymentInAccount } from '../accounts/accounts.store.js';
import { accessFactsOf, accessViewerOf, canAccessItem, canChangeItem, canPlaceIn } from './workspace.policy.js';
import type { EditorReach } from './workspace.policy.js';
import { findFolder, hasEditorGrant, selectAncestorChain, selectGrantedItemIds, selectItemRows } from './workspace.store.js';
import type { WorkspacePermissions, WorkspacePermissionsQuery } from './workspace.permissions.schema.js';

// What the caller may do with the items a listing page showed them (issue 34, the console; docs/decisions.md "what
// the console may offer"): whether each item is theirs to change (rename, move, edit its dashboard: issue 33's edit
// rule, workspace.policy.ts), whether they may make things in the folder shown, and the dashboard a workbook opens.
// SPEC A's listing keeps its shape; this route answers the caller's side of it.

/**
 * `GET /api/v1/deployments/{id}/workspace/permissions?itemId=..&folderId=..`. An id naming nothing the caller can
 * access (unknown, another deployment's or account's, not granted) is left out of the answer, as the listing leaves
 * it out. A workbook's `dashboardPublicId` is its dashboard's when published (the listing's `publishedDashboard`
 * names it already), and otherwise only for whoever may change it: a draft is its authors'.
 */
export async function readPermissions(ctx: ServiceContext, principal: PlatformUserPrincipal, deploymentId: number, query: WorkspacePermissionsQuery): Promise<WorkspacePermissions> {
  const { accountId, userId } = principal;
  const itemIds = [...new Set(query.itemId ?? [])];
  const [deployment, granted, rows] = await Promise.all([
    findDeploymentInAccount(ctx.db, accountId, deploymentId),
    selectGrantedItemIds(ctx.db, accountId, userId),
    selectItemRows(ctx.db, accountId, userId, itemIds),
  ]);
  if (deployment === undefined) throw new AppError('not_found', `deployment ${deploymentId} not found`, 'deploymentId');
  const viewer = accessViewerOf(principal, granted);
  /** Whether `rule` allows the caller on `itemId`: the editor grants are read only when the rule without them says no. */
  const allowed = async (itemId: number, rule: (reach: EditorReach) => boolean): Promise<boolean> =>
    rule({ editorGrant: false }) || rule({ editorGrant: await hasEditorGrant(ctx.db, accountId, userId, itemId) });

  let canCreate = true;
  if (query.folderId !== undefined) {
    const folder = await findFolder(ctx.db, accountId, deploymentId, query.folderId);
    if (folder === undefined) throw new AppError('not_found', `folder ${query.folderId} not found in deployment ${deploymentId}`, 'folderId');
    canCreate = await allowed(folder.id, (reach) => canPlaceIn(principal, folder, reach));
  }

  const items = await Promise.all(rows.filter((row) => row.deployment_id === deploymentId).map(async (row) => {
    if (!viewer.admin && !canAccessItem(viewer, accessFactsOf(await selectAncestorChain(ctx.db, accountId, row.id)))) return null;
    const canEdit = await allowed(row.id, (reach) => canChangeItem(principal, row, reach));
    const publicId = row.dashboard_public_id;
    const dashboardPublicId = publicId !== null && (row.dashboard_status === 'published' || canEdit) ? publicId : null;
    return { id: row.id, canEdit, dashboardPublicId };
  }));
  return { folder: { id: query.folderId ?? null, canCreate }, items: items.filter((item) => item !== null) };
}
