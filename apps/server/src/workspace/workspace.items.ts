import { bumpAccountDataVersion, findDeploymentInAccount } from '../accounts/accounts.store.js';
import { recordChange } from '../audit/audit.store.js';
import { AppError } from '../core/core.errors.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import type { Database } from '../db/db.schema.js';
import type { Kysely } from 'kysely';
import type { CreateFolderBody, UpdateItemBody } from './workspace.items.schema.js';
import { canChangeItem, canPlaceIn } from './workspace.policy.js';
import type { EditorReach } from './workspace.policy.js';
import { presentItem } from './workspace.service.js';
import type { ListingContext } from './workspace.service.js';
import type { WorkspaceItem } from './workspace.schema.js';
import {
  findPlacedItem, hasEditorGrant, insertWorkspaceItem, isAtOrBelow, lockDeploymentTree, moveItem, renameItem, subtreeHeight,
} from './workspace.store.js';
import type { PlacedItemRow } from './workspace.store.js';

// Folders through the authoring API (issue 34, the console; docs/authoring.md "Folders"): a folder made, an item
// renamed or moved. Who may is issue 33's edit rule (workspace.policy.ts): admins anywhere; a member changes the
// items they created or that sit below an editor grant, and puts things at the root or in a folder they may change.
// Each change is one transaction with its audit entry and the account's data version, so the next listing (cached
// or not, in any process) shows it.

/** Folders nest at most this deep, as the import file's (import.check.ts). */
const MAX_DEPTH = 64;

type Db = Kysely<Database>;

/** The name as stored: trimmed, and not empty once trimmed (400 at `name`). */
function itemName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw AppError.at('invalid_body', 'name', 'must not be empty or only spaces');
  return trimmed;
}

async function requireDeployment(db: Db, principal: PlatformUserPrincipal, deploymentId: number): Promise<void> {
  if ((await findDeploymentInAccount(db, principal.accountId, deploymentId)) === undefined) {
    throw new AppError('not_found', `deployment ${deploymentId} not found`, 'deploymentId');
  }
}

/** Whether `rule` allows the caller on `itemId`: its editor grants are looked up only when the rule without them says no. */
const allowed = async (db: Db, principal: PlatformUserPrincipal, itemId: number, rule: (reach: EditorReach) => boolean): Promise<boolean> =>
  rule({ editorGrant: false }) || rule({ editorGrant: await hasEditorGrant(db, principal.accountId, principal.userId, itemId) });

/**
 * The folder `parentId` names, when the caller may put things in it: a FOLDER of the deployment (400 at `parentId`
 * otherwise, another account's included), which the caller may change (403 at `parentId`). null is the root.
 */
async function requireDestination(db: Db, principal: PlatformUserPrincipal, deploymentId: number, parentId: number | null | undefined): Promise<PlacedItemRow | null> {
  if (parentId === undefined || parentId === null) return null;
  const folder = await findPlacedItem(db, principal.accountId, deploymentId, parentId);
  if (folder === undefined || folder.type !== 'FOLDER') throw AppError.at('invalid_body', 'parentId', `names no folder of deployment ${deploymentId} (${parentId})`);
  if (!(await allowed(db, principal, folder.id, (reach) => canPlaceIn(principal, folder, reach)))) {
    throw new AppError('forbidden', `folder ${parentId} is not one you may change: a member puts things in folders they created or below an editor grant, or at the root`, 'parentId');
  }
  return folder;
}

/** `POST /api/v1/deployments/{id}/workspace/folders`: a folder at the root or in `parentId`; 201 with the folder as the listing shows it. */
export async function createFolder(ctx: ListingContext, principal: PlatformUserPrincipal, deploymentId: number, body: CreateFolderBody): Promise<WorkspaceItem> {
  await requireDeployment(ctx.db, principal, deploymentId);
  const name = itemName(body.name);
  const at = ctx.now().toISOString();
  const folderId = await ctx.db.transaction().execute(async (trx) => {
    await lockDeploymentTree(trx, ctx.dialect, deploymentId);
    const parent = await requireDestination(trx, principal, deploymentId, body.parentId);
    if (parent !== null && parent.depth + 1 >= MAX_DEPTH) throw AppError.at('invalid_body', 'parentId', `folders nest at most ${MAX_DEPTH} levels deep`);
    const id = await insertWorkspaceItem(trx, { accountId: principal.accountId, deploymentId, type: 'FOLDER', name, folder: parent, createdBy: principal.userId, at, dialect: ctx.dialect });
    await bumpAccountDataVersion(trx, principal.accountId);
    await recordChange(trx, principal, at, { action: 'folder.create', targetType: 'item', targetId: id, detail: { deploymentId, name, parentId: parent?.id ?? null } });
    return id;
  });
  return presentItem(ctx, principal, folderId);
}

/**
 * `PATCH /api/v1/deployments/{id}/workspace/{itemId}`: renames the item (`name`) and/or moves it, with everything
 * below it, into another folder (`parentId`, null: the root). The caller must be able to change the item, and to
 * put things in the destination; a folder never goes inside itself. One transaction, an audit entry per change.
 */
export async function changeItem(ctx: ListingContext, principal: PlatformUserPrincipal, deploymentId: number, itemId: number, body: UpdateItemBody): Promise<WorkspaceItem> {
  await requireDeployment(ctx.db, principal, deploymentId);
  const name = body.name === undefined ? undefined : itemName(body.name);
  const at = ctx.now().toISOString();
  await ctx.db.transaction().execute(async (trx) => {
    if (body.parentId !== undefined) await lockDeploymentTree(trx, ctx.dialect, deploymentId);
    const item = await findPlacedItem(trx, principal.accountId, deploymentId, itemId);
    if (item === undefined) throw new AppError('not_found', `item ${itemId} not found in deployment ${deploymentId}`, 'itemId');
    if (!(await allowed(trx, principal, item.id, (reach) => canChangeItem(principal, item, reach)))) {
      throw new AppError('forbidden', `item ${itemId} is not yours to change: a member changes the items they created, or those below an editor grant`, 'itemId');
    }
    if (name !== undefined && name !== item.name) {
      await renameItem(trx, principal.accountId, item.id, name, at);
      await recordChange(trx, principal, at, { action: 'item.rename', targetType: 'item', targetId: item.id, detail: { deploymentId, type: item.type, from: item.name, to: name } });
    }
    if (body.parentId !== undefined && body.parentId !== item.folder_id) {
      const parent = await requireDestination(trx, principal, deploymentId, body.parentId);
      if (parent !== null && (await isAtOrBelow(trx, principal.accountId, parent.id, item.id))) {
        throw AppError.at('invalid_body', 'parentId', `a folder cannot go inside itself: folder ${parent.id} is ${parent.id === item.id ? 'the item' : `below item ${item.id}`}`);
      }
      const depth = parent === null ? 0 : parent.depth + 1;
      if (depth + (await subtreeHeight(trx, principal.accountId, item.id)) >= MAX_DEPTH) throw AppError.at('invalid_body', 'parentId', `folders nest at most ${MAX_DEPTH} levels deep`);
      await moveItem(trx, principal.accountId, item, parent, at);
      await recordChange(trx, principal, at, { action: 'item.move', targetType: 'item', targetId: item.id, detail: { deploymentId, type: item.type, from: item.folder_id, to: parent?.id ?? null } });
    }
    await bumpAccountDataVersion(trx, principal.accountId);
  });
  return presentItem(ctx, principal, itemId);
}
