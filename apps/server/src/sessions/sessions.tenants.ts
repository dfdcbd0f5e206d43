import { AppError } from '../core/core.errors.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { isUniqueViolation } from '../db/db.database.js';
import { writeAndPropagate } from '../db/db.propagation.js';
import { recordChange } from '../audit/audit.store.js';
import { requireAdmin } from '../accounts/accounts.policy.js';
import { normalizeEmail, normalizeExternalId } from '../accounts/accounts.identity.js';
import type { EmbedUser } from './sessions.schema.js';
import type { CreateEmbedUserBody, EmbedTenant, UpdateEmbedUserBody } from './sessions.tenants.schema.js';
import { presentEmbedUser } from './sessions.service.js';
import type { SessionContext } from './sessions.service.js';
import {
  deleteEmbedTenant, findEmbedTenant, findEmbedTenantIdByName, findEmbedUser, insertEmbedTenant, insertEmbedUser, renameEmbedTenant,
  revokeSessionsOfTenant, selectEmbedTenants, selectLiveSessionsOfTenant, updateEmbedUserFields,
} from './sessions.store.js';
import { AfterCommit } from '../core/core.events.js';
import type { RevocationReason } from './sessions.events.js';
import type { EmbedTenantRow } from './sessions.store.js';

// Issue 33 part 4: an account's embed tenants (its customers) and single embed users (their viewers), for its
// admins (docs/authoring.md "Embed tenants and users"). Generate Session still makes both on the fly; these routes
// let a host provision, rename and offboard a customer without minting a session.

const present = (row: EmbedTenantRow): EmbedTenant => ({ id: row.id, name: row.name, userCount: row.user_count, createdAt: row.created_at });

/**
 * One `embed_session.revoked` event per viewer of the tenant with live sessions, in `trx`, read before the change
 * (a deletion removes them): webhooks tell the host whom a rename or an offboarding signed out.
 */
async function announceRevocations(ctx: SessionContext, trx: SessionContext['db'], afterCommit: AfterCommit, principal: PlatformUserPrincipal, tenant: EmbedTenantRow, reason: RevocationReason, now: Date): Promise<void> {
  for (const viewer of await selectLiveSessionsOfTenant(trx, principal.accountId, tenant.id)) {
    await ctx.events.publish('embed_session.revoked', {
      transaction: trx, afterCommit, accountId: principal.accountId, at: now, reason, embedTenantId: tenant.id, embedUserId: viewer.embedUserId,
      userId: null, sessions: viewer.sessions, viewer: { tenantName: tenant.name, externalId: viewer.externalId },
    });
  }
}

const nameTaken = (name: string) => AppError.at('conflict', 'name', `the account already has an embed tenant named ${name}`);

export async function listEmbedTenants(ctx: SessionContext, principal: PlatformUserPrincipal): Promise<{ items: EmbedTenant[] }> {
  requireAdmin(principal);
  return { items: (await selectEmbedTenants(ctx.db, principal.accountId)).map(present) };
}

async function requireTenant(db: SessionContext['db'], principal: PlatformUserPrincipal, tenantId: number): Promise<EmbedTenantRow> {
  const row = await findEmbedTenant(db, principal.accountId, tenantId);
  if (row === undefined) throw new AppError('not_found', `embed tenant ${tenantId} not found`, 'tenantId');
  return row;
}

export async function getEmbedTenant(ctx: SessionContext, principal: PlatformUserPrincipal, tenantId: number): Promise<EmbedTenant> {
  requireAdmin(principal);
  return present(await requireTenant(ctx.db, principal, tenantId));
}

export async function createEmbedTenant(ctx: SessionContext, principal: PlatformUserPrincipal, name: string): Promise<EmbedTenant> {
  requireAdmin(principal);
  const at = ctx.now().toISOString();
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      if ((await findEmbedTenantIdByName(trx, principal.accountId, name)) !== undefined) throw nameTaken(name);
      const id = await insertEmbedTenant(trx, principal.accountId, name, at);
      await recordChange(trx, principal, at, { action: 'embed_tenant.create', targetType: 'embed_tenant', targetId: id, detail: { name } });
      return present(await requireTenant(trx, principal, id));
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(name);
    throw error;
  }
}

/**
 * Renames a tenant. Its threads and viewers stay; its live sessions are revoked, because their tokens carry the old
 * name: the host mints new ones with the new name (Generate Session with the old name would make a new, empty
 * tenant).
 */
export async function renameTenant(ctx: SessionContext, principal: PlatformUserPrincipal, tenantId: number, name: string): Promise<EmbedTenant> {
  requireAdmin(principal);
  const now = ctx.now();
  const at = now.toISOString();
  const afterCommit = new AfterCommit();
  try {
    await writeAndPropagate(ctx, principal.accountId, () => ctx.db.transaction().execute(async (trx) => {
      const before = await requireTenant(trx, principal, tenantId);
      if (before.name === name) return 0;
      const other = await findEmbedTenantIdByName(trx, principal.accountId, name);
      if (other !== undefined) throw nameTaken(name);
      await announceRevocations(ctx, trx, afterCommit, principal, before, 'embed_tenant_renamed', now);
      await renameEmbedTenant(trx, principal.accountId, tenantId, name);
      const revoked = await revokeSessionsOfTenant(trx, principal.accountId, tenantId, at);
      await recordChange(trx, principal, at, { action: 'embed_tenant.rename', targetType: 'embed_tenant', targetId: tenantId, detail: { name: { from: before.name, to: name }, sessionsRevoked: revoked } });
      return 1;
    }));
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(name);
    throw error;
  }
  afterCommit.run();
  return present(await requireTenant(ctx.db, principal, tenantId));
}

/**
 * Offboards a customer: the tenant, its embed users, their sessions (refused on their next request everywhere) and
 * the tenant's comment threads are deleted in one transaction. The audit log keeps the name and the counts.
 */
export async function removeEmbedTenant(ctx: SessionContext, principal: PlatformUserPrincipal, tenantId: number): Promise<void> {
  requireAdmin(principal);
  const now = ctx.now();
  const at = now.toISOString();
  const afterCommit = new AfterCommit();
  await writeAndPropagate(ctx, principal.accountId, () => ctx.db.transaction().execute(async (trx) => {
    const before = await requireTenant(trx, principal, tenantId);
    await announceRevocations(ctx, trx, afterCommit, principal, before, 'embed_tenant_deleted', now);
    await recordChange(trx, principal, at, { action: 'embed_tenant.delete', targetType: 'embed_tenant', targetId: tenantId, detail: { name: before.name, embedUsers: before.user_count } });
    return deleteEmbedTenant(trx, principal.accountId, tenantId);
  }));
  afterCommit.run();
}

async function requireEmbedUser(db: SessionContext['db'], principal: PlatformUserPrincipal, embedUserId: number) {
  const row = await findEmbedUser(db, principal.accountId, embedUserId);
  if (row === undefined) throw new AppError('not_found', `embed user ${embedUserId} not found`, 'id');
  return row;
}

export async function getEmbedUser(ctx: SessionContext, principal: PlatformUserPrincipal, embedUserId: number): Promise<EmbedUser> {
  requireAdmin(principal);
  return presentEmbedUser(await requireEmbedUser(ctx.db, principal, embedUserId));
}

/**
 * Makes an embed user ahead of their first session (the tenant too, if new, as Generate Session does). An
 * externalId already in the tenant is a 409: changing a viewer is PATCH's.
 */
export async function createEmbedUser(ctx: SessionContext, principal: PlatformUserPrincipal, body: CreateEmbedUserBody): Promise<EmbedUser> {
  requireAdmin(principal);
  const externalId = normalizeExternalId(body.externalId);
  if (externalId === '') throw AppError.at('invalid_body', 'externalId', 'is empty once trimmed');
  const at = ctx.now().toISOString();
  const taken = () => AppError.at('conflict', 'externalId', `embed tenant ${body.embedTenantName} already has the embed user ${externalId}`);
  try {
    const id = await ctx.db.transaction().execute(async (trx) => {
      const tenantId = (await findEmbedTenantIdByName(trx, principal.accountId, body.embedTenantName)) ?? await insertEmbedTenant(trx, principal.accountId, body.embedTenantName, at);
      const userId = await insertEmbedUser(trx, principal.accountId, tenantId, externalId, {
        username: body.username, email: body.email === undefined ? undefined : normalizeEmail(body.email), firstName: body.firstName,
        groups: body.groups, userAttributes: body.userAttributes as Record<string, unknown> | undefined,
      }, at);
      await recordChange(trx, principal, at, { action: 'embed_user.create', targetType: 'embed_user', targetId: userId, detail: { embedTenantName: body.embedTenantName, externalId } });
      return userId;
    });
    return presentEmbedUser(await requireEmbedUser(ctx.db, principal, id));
  } catch (error) {
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
}

/**
 * Changes what svc keeps of a viewer (what lists, mentions and comments show). Access policies never read the
 * stored groups and attributes: each session's are those its Generate Session call sent (fail closed), so this
 * widens no one's rows. Generate Session's own fields, when given, replace these again.
 */
export async function changeEmbedUser(ctx: SessionContext, principal: PlatformUserPrincipal, embedUserId: number, body: UpdateEmbedUserBody): Promise<EmbedUser> {
  requireAdmin(principal);
  const at = ctx.now().toISOString();
  await ctx.db.transaction().execute(async (trx) => {
    await requireEmbedUser(trx, principal, embedUserId);
    await updateEmbedUserFields(trx, principal.accountId, embedUserId, {
      ...body, userAttributes: body.userAttributes as Record<string, unknown> | undefined,
      ...(typeof body.email === 'string' && { email: normalizeEmail(body.email) }),
    }, at);
    await recordChange(trx, principal, at, { action: 'embed_user.update', targetType: 'embed_user', targetId: embedUserId, detail: { changed: Object.keys(body) } });
  });
  return presentEmbedUser(await requireEmbedUser(ctx.db, principal, embedUserId));
}
