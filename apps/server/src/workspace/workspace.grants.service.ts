import { bumpAccountDataVersion, findDeploymentInAccount, findUserRole } from '../accounts/accounts.store.js';
import { recordChange } from '../audit/audit.store.js';
import { isForeignKeyViolation } from '../db/db.database.js';
import { AppError } from '../core/core.errors.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import type { ServiceContext } from '../db/db.context.js';
import type { Database } from '../db/db.schema.js';
import type { Kysely } from 'kysely';
import type { ItemGrant, ItemGrantInput } from './workspace.grants.schema.js';
import { canManageGrants } from './workspace.policy.js';
import { findItemOfDeployment, lockItem, replaceItemGrantRows, selectGroupIdsOfAccount, selectItemGrants } from './workspace.store.js';
import type { ItemGrantRow } from './workspace.store.js';

// An item's grants through the API (issue 33; docs/authoring.md "Who may do what"): admins read and replace them,
// so that editors can be made without an import file. A grant reaches the item and everything below it (DESIGN
// "Access"); its role says whether it also lets a member change the dashboards there (dashboards.policy.ts).

const presentGrant = (row: ItemGrantRow): ItemGrant => ({
  ...(row.user_id !== null ? { userId: row.user_id } : { groupId: row.group_id! }),
  role: row.role,
});

/**
 * The item, for an admin of its account: another account's deployment, or an item not in the deployment, is a 404
 * (before the role is looked at, for the deployment); a member is a 403.
 */
async function requireManagedItem(db: Kysely<Database>, principal: PlatformUserPrincipal, deploymentId: number, itemId: number): Promise<void> {
  if ((await findDeploymentInAccount(db, principal.accountId, deploymentId)) === undefined) {
    throw new AppError('not_found', `deployment ${deploymentId} not found`, 'deploymentId');
  }
  if (!canManageGrants(principal)) throw new AppError('forbidden', "an item's grants are changed by admins; this key belongs to a member", 'Authorization');
  if ((await findItemOfDeployment(db, principal.accountId, deploymentId, itemId)) === undefined) {
    throw new AppError('not_found', `item ${itemId} not found in deployment ${deploymentId}`, 'itemId');
  }
}

/** `GET .../workspace/{itemId}/grants`: the grants on the item itself (those on folders above it reach it too). */
export async function listItemGrants(ctx: ServiceContext, principal: PlatformUserPrincipal, deploymentId: number, itemId: number): Promise<ItemGrant[]> {
  await requireManagedItem(ctx.db, principal, deploymentId, itemId);
  return (await selectItemGrants(ctx.db, principal.accountId, itemId)).map(presentGrant);
}

/**
 * The grants as rows, each checked at its path: exactly one of userId and groupId, a user or group of the caller's
 * account (another account's is a 400 naming it, as one that does not exist), none given twice.
 */
async function checkGrants(db: Kysely<Database>, accountId: number, grants: readonly ItemGrantInput[]): Promise<ItemGrantRow[]> {
  const groupIds = new Set(await selectGroupIdsOfAccount(db, accountId, grants.flatMap((g) => (g.groupId === undefined ? [] : [g.groupId]))));
  const seen = new Set<string>();
  const rows: ItemGrantRow[] = [];
  for (const [i, grant] of grants.entries()) {
    if ((grant.userId === undefined) === (grant.groupId === undefined)) {
      throw AppError.at('invalid_body', `grants[${i}]`, 'a grant names exactly one of userId and groupId');
    }
    const [field, key] = grant.userId !== undefined ? ['userId', `u${grant.userId}`] : ['groupId', `g${grant.groupId}`];
    if (grant.userId !== undefined && (await findUserRole(db, accountId, grant.userId)) === undefined) {
      throw AppError.at('invalid_body', `grants[${i}].userId`, `names no user of this account (${grant.userId})`);
    }
    if (grant.groupId !== undefined && !groupIds.has(grant.groupId)) {
      throw AppError.at('invalid_body', `grants[${i}].groupId`, `names no group of this account (${grant.groupId})`);
    }
    if (seen.has(key)) throw AppError.at('invalid_body', `grants[${i}].${field}`, 'is granted twice: give each user or group one grant, with its role');
    seen.add(key);
    rows.push({ user_id: grant.userId ?? null, group_id: grant.groupId ?? null, role: grant.role ?? 'viewer' });
  }
  return rows;
}

/**
 * `PUT .../workspace/{itemId}/grants`: the item's grants replaced by these, in one transaction with the audit entry
 * (`item.grants.replace`) and the account's data version (cached listings drop, and the next request of every
 * member is decided on the new grants).
 */
export async function replaceItemGrants(
  ctx: ServiceContext, principal: PlatformUserPrincipal, deploymentId: number, itemId: number, grants: readonly ItemGrantInput[],
): Promise<ItemGrant[]> {
  await requireManagedItem(ctx.db, principal, deploymentId, itemId);
  // A user or group deleted between the check and the insert is a conflict to retry, never a 500.
  return ctx.db.transaction().execute(async (trx) => {
    await lockItem(trx, ctx.dialect, principal.accountId, itemId);
    const before = await selectItemGrants(trx, principal.accountId, itemId);
    const rows = await checkGrants(trx, principal.accountId, grants);
    await replaceItemGrantRows(trx, principal.accountId, itemId, rows);
    await bumpAccountDataVersion(trx, principal.accountId);
    await recordChange(trx, principal, ctx.now().toISOString(), {
      action: 'item.grants.replace', targetType: 'item', targetId: itemId,
      detail: { deploymentId, before: before.map(presentGrant), after: rows.map(presentGrant) },
    });
    return rows.map(presentGrant);
  }).catch((error: unknown) => {
    if (isForeignKeyViolation(error)) throw AppError.at('conflict', 'grants', 'a user or group of these grants was deleted meanwhile: read them again and retry');
    throw error;
  });
}
