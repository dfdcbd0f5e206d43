import type { ChangeFeed } from '../db/db.database.js';
import type { ServiceContext } from '../db/db.context.js';
import { isUniqueViolation } from '../db/db.database.js';
import { writeAndPropagate } from '../db/db.propagation.js';
import { AppError } from '../core/core.errors.js';
import { digestSecret } from '../core/core.digest.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { recordChange } from '../audit/audit.store.js';
import { requireAdmin } from './accounts.policy.js';
import { normalizeEmail } from './accounts.identity.js';
import { hashPassword } from './accounts.passwords.js';
import { generateApiKey } from './accounts.keys.js';
import type { ApiKey, CreateApiKeyBody, CreateUserBody, NewApiKey, UpdateUserBody, User } from './accounts.admin.schema.js';
import {
  countAdmins, deleteApiKey, deleteUser, findUser, insertApiKey, insertUser, revokeConsoleSessionsOf, selectApiKeys, selectUsers, updateUser,
} from './accounts.store.js';
import type { ApiKeyRow, UserRow } from './accounts.store.js';

/** What the admin API of users needs beyond the database: the change feed, so that a removed credential is refused everywhere at once. */
export interface AccountAdminContext extends ServiceContext {
  changes: ChangeFeed;
}

// Issue 33 part 4: an account's platform users and their API keys, for its admins (docs/authoring.md "Users,
// groups and API keys"). A change that takes a credential away (a deleted user or key, a demotion, a new password)
// answers once every process has seen it, as a revoked embed session does.

const present = (row: UserRow): User => ({
  id: row.id, email: row.email, firstName: row.first_name, role: row.role, hasPassword: row.has_password, createdAt: row.created_at,
});

const presentKey = (row: ApiKeyRow): ApiKey => ({ id: row.id, name: row.name, hint: row.hint, createdAt: row.created_at });

const emailTaken = (email: string) => AppError.at('conflict', 'email', `a user of this account already has the email ${email}`);

export async function listUsers(ctx: ServiceContext, principal: PlatformUserPrincipal): Promise<{ items: User[] }> {
  requireAdmin(principal);
  return { items: (await selectUsers(ctx.db, principal.accountId)).map(present) };
}

export async function getUser(ctx: ServiceContext, principal: PlatformUserPrincipal, userId: number): Promise<User> {
  requireAdmin(principal);
  return present(await requireUser(ctx, principal, userId));
}

async function requireUser(ctx: ServiceContext, principal: PlatformUserPrincipal, userId: number): Promise<UserRow> {
  const row = await findUser(ctx.db, principal.accountId, userId);
  if (row === undefined) throw new AppError('not_found', `user ${userId} not found`, 'userId');
  return row;
}

export async function createUser(ctx: ServiceContext, principal: PlatformUserPrincipal, body: CreateUserBody): Promise<User> {
  requireAdmin(principal);
  const email = normalizeEmail(body.email);
  const passwordDigest = body.password === undefined ? null : await hashPassword(body.password);
  const at = ctx.now().toISOString();
  try {
    const id = await ctx.db.transaction().execute(async (trx) => {
      const userId = await insertUser(trx, { account_id: principal.accountId, email, first_name: body.firstName ?? null, role: body.role, password_digest: passwordDigest, created_at: at });
      await recordChange(trx, principal, at, { action: 'user.create', targetType: 'user', targetId: userId, detail: { email, role: body.role } });
      return userId;
    });
    return getUser(ctx, principal, id);
  } catch (error) {
    if (isUniqueViolation(error)) throw emailTaken(email);
    throw error;
  }
}

/**
 * Changes a user. The account keeps at least one admin: demoting the last one is a 409. A new role or password
 * takes effect on the user's next request in every process (their held credentials are dropped); a new password
 * also ends their console sessions, as a password change does everywhere.
 */
export async function changeUser(ctx: AccountAdminContext, principal: PlatformUserPrincipal, userId: number, body: UpdateUserBody): Promise<User> {
  requireAdmin(principal);
  const passwordDigest = body.password === undefined || body.password === null ? body.password : await hashPassword(body.password);
  const email = body.email === undefined ? undefined : normalizeEmail(body.email);
  const at = ctx.now().toISOString();
  try {
    await writeAndPropagate(ctx, principal.accountId, () => ctx.db.transaction().execute(async (trx) => {
      const before = await requireUser({ ...ctx, db: trx }, principal, userId);
      if (body.role === 'member' && before.role === 'admin' && (await countAdmins(trx, principal.accountId)) <= 1) {
        throw AppError.at('conflict', 'role', 'this is the account\'s last admin: make another user admin first');
      }
      await updateUser(trx, principal.accountId, userId, {
        ...(email !== undefined && { email }),
        ...(body.firstName !== undefined && { first_name: body.firstName }),
        ...(body.role !== undefined && { role: body.role }),
        ...(passwordDigest !== undefined && { password_digest: passwordDigest }),
      });
      if (passwordDigest !== undefined) await revokeConsoleSessionsOf(trx, principal.accountId, userId, at);
      const changed = Object.keys(body).filter((key) => key !== 'password');
      await recordChange(trx, principal, at, {
        action: 'user.update', targetType: 'user', targetId: userId,
        detail: { changed: passwordDigest !== undefined ? [...changed, 'password'] : changed, ...(body.role !== undefined && { role: { from: before.role, to: body.role } }) },
      });
      return 1;
    }));
  } catch (error) {
    if (email !== undefined && isUniqueViolation(error)) throw emailTaken(email);
    throw error;
  }
  return getUser(ctx, principal, userId);
}

/**
 * Deletes a user: their API keys and console sessions stop working at once, their memberships and grants go; what
 * they made stays (its creator becomes unknown), and the audit log keeps their email. The last admin stays (409).
 */
export async function removeUser(ctx: AccountAdminContext, principal: PlatformUserPrincipal, userId: number): Promise<void> {
  requireAdmin(principal);
  const at = ctx.now().toISOString();
  await writeAndPropagate(ctx, principal.accountId, () => ctx.db.transaction().execute(async (trx) => {
    const before = await requireUser({ ...ctx, db: trx }, principal, userId);
    if (before.role === 'admin' && (await countAdmins(trx, principal.accountId)) <= 1) {
      throw AppError.at('conflict', 'userId', 'this is the account\'s last admin: make another user admin first');
    }
    // The entry is written first: it names the user (actor_user_id of their own past entries becomes null with them).
    await recordChange(trx, principal, at, { action: 'user.delete', targetType: 'user', targetId: userId, detail: { email: before.email, role: before.role } });
    return deleteUser(trx, principal.accountId, userId);
  }));
}

export async function listApiKeys(ctx: ServiceContext, principal: PlatformUserPrincipal, userId: number): Promise<{ items: ApiKey[] }> {
  requireAdmin(principal);
  await requireUser(ctx, principal, userId);
  return { items: (await selectApiKeys(ctx.db, principal.accountId, userId)).map(presentKey) };
}

/** A new API key for a user of the account: the key is in this answer only; svc keeps its digest. */
export async function createApiKey(ctx: ServiceContext, principal: PlatformUserPrincipal, userId: number, body: CreateApiKeyBody): Promise<NewApiKey> {
  requireAdmin(principal);
  const key = generateApiKey();
  const at = ctx.now().toISOString();
  const row = { account_id: principal.accountId, user_id: userId, digest: digestSecret(key), name: body.name ?? null, hint: key.slice(-4), created_at: at };
  const id = await ctx.db.transaction().execute(async (trx) => {
    await requireUser({ ...ctx, db: trx }, principal, userId);
    const keyId = await insertApiKey(trx, row);
    await recordChange(trx, principal, at, { action: 'api_key.create', targetType: 'api_key', targetId: keyId, detail: { userId, name: row.name, hint: row.hint } });
    return keyId;
  });
  return { ...presentKey({ id, name: row.name, hint: row.hint, created_at: at }), key };
}

/** Deletes a key: refused on its next request in every process. */
export async function removeApiKey(ctx: AccountAdminContext, principal: PlatformUserPrincipal, userId: number, keyId: number): Promise<void> {
  requireAdmin(principal);
  const at = ctx.now().toISOString();
  await writeAndPropagate(ctx, principal.accountId, () => ctx.db.transaction().execute(async (trx) => {
    const deleted = await deleteApiKey(trx, principal.accountId, userId, keyId);
    if (deleted === 0) throw new AppError('not_found', `API key ${keyId} of user ${userId} not found`, 'keyId');
    await recordChange(trx, principal, at, { action: 'api_key.delete', targetType: 'api_key', targetId: keyId, detail: { userId } });
    return deleted;
  }));
}
