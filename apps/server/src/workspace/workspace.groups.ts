import type { ServiceContext } from '../db/db.context.js';
import { AppError } from '../core/core.errors.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { recordChange } from '../audit/audit.store.js';
import { requireAdmin } from '../accounts/accounts.policy.js';
import { bumpAccountDataVersion, selectUserIdsIn } from '../accounts/accounts.store.js';
import type { CreateGroupBody, Group, UpdateGroupBody } from './workspace.groups.schema.js';
import {
  deleteGroup, findGroup, findGroupNamed, insertGroup, renameGroup, replaceGroupMembers, selectGroupMembers, selectGroups, selectMemberships,
} from './workspace.store.js';

// Issue 33 part 4: an account's groups of platform users, for its admins (docs/authoring.md "Users, groups and API
// keys"). A group is what grants name; a change to one changes what its members reach, so it moves the account's
// data version and every cached listing of the account is dropped.

type Db = ServiceContext['db'];

export async function listGroups(ctx: ServiceContext, principal: PlatformUserPrincipal): Promise<{ items: Group[] }> {
  requireAdmin(principal);
  const [groups, memberships] = await Promise.all([selectGroups(ctx.db, principal.accountId), selectMemberships(ctx.db, principal.accountId)]);
  return { items: groups.map((group) => ({ ...group, memberIds: memberships.filter((m) => m.group_id === group.id).map((m) => m.user_id).sort((x, y) => x - y) })) };
}

export async function getGroup(ctx: ServiceContext, principal: PlatformUserPrincipal, groupId: number): Promise<Group> {
  requireAdmin(principal);
  return readGroup(ctx.db, principal, groupId);
}

async function readGroup(db: Db, principal: PlatformUserPrincipal, groupId: number): Promise<Group> {
  const group = await findGroup(db, principal.accountId, groupId);
  if (group === undefined) throw new AppError('not_found', `group ${groupId} not found`, 'groupId');
  return { ...group, memberIds: await selectGroupMembers(db, principal.accountId, groupId) };
}

/** Every id must name a user of this account: another account's user is as unknown as a made-up id. */
async function checkMembers(db: Db, accountId: number, memberIds: readonly number[]): Promise<void> {
  const known = new Set(await selectUserIdsIn(db, accountId, memberIds));
  const at = memberIds.findIndex((id) => !known.has(id));
  if (at >= 0) throw AppError.at('invalid_body', `memberIds[${at}]`, `names no user of this account (${memberIds[at]})`);
}

async function checkNameFree(db: Db, accountId: number, name: string, exceptId?: number): Promise<void> {
  if ((await findGroupNamed(db, accountId, name, exceptId)) !== undefined) throw AppError.at('conflict', 'name', `the account already has a group named "${name}"`);
}

export async function createGroup(ctx: ServiceContext, principal: PlatformUserPrincipal, body: CreateGroupBody): Promise<Group> {
  requireAdmin(principal);
  const at = ctx.now().toISOString();
  return ctx.db.transaction().execute(async (trx) => {
    await checkNameFree(trx, principal.accountId, body.name);
    await checkMembers(trx, principal.accountId, body.memberIds ?? []);
    const groupId = await insertGroup(trx, principal.accountId, body.name);
    await replaceGroupMembers(trx, principal.accountId, groupId, body.memberIds ?? []);
    await bumpAccountDataVersion(trx, principal.accountId);
    await recordChange(trx, principal, at, { action: 'group.create', targetType: 'group', targetId: groupId, detail: { name: body.name, memberIds: body.memberIds ?? [] } });
    return readGroup(trx, principal, groupId);
  });
}

/** Renames a group and/or replaces its members (`memberIds` is the whole new membership). */
export async function changeGroup(ctx: ServiceContext, principal: PlatformUserPrincipal, groupId: number, body: UpdateGroupBody): Promise<Group> {
  requireAdmin(principal);
  const at = ctx.now().toISOString();
  return ctx.db.transaction().execute(async (trx) => {
    const before = await readGroup(trx, principal, groupId);
    if (body.name !== undefined) {
      await checkNameFree(trx, principal.accountId, body.name, groupId);
      await renameGroup(trx, principal.accountId, groupId, body.name);
    }
    if (body.memberIds !== undefined) {
      await checkMembers(trx, principal.accountId, body.memberIds);
      await replaceGroupMembers(trx, principal.accountId, groupId, body.memberIds);
    }
    await bumpAccountDataVersion(trx, principal.accountId);
    await recordChange(trx, principal, at, {
      action: 'group.update', targetType: 'group', targetId: groupId,
      detail: { ...(body.name !== undefined && { name: { from: before.name, to: body.name } }), ...(body.memberIds !== undefined && { memberIds: { from: before.memberIds, to: body.memberIds } }) },
    });
    return readGroup(trx, principal, groupId);
  });
}

/** Deletes a group: its members lose what was granted to the group (its grants go with it). */
export async function removeGroup(ctx: ServiceContext, principal: PlatformUserPrincipal, groupId: number): Promise<void> {
  requireAdmin(principal);
  const at = ctx.now().toISOString();
  await ctx.db.transaction().execute(async (trx) => {
    const before = await readGroup(trx, principal, groupId);
    await deleteGroup(trx, principal.accountId, groupId);
    await bumpAccountDataVersion(trx, principal.accountId);
    await recordChange(trx, principal, at, { action: 'group.delete', targetType: 'group', targetId: groupId, detail: { name: before.name, memberIds: before.memberIds } });
  });
}
