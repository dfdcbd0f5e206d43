import type { Kysely } from 'kysely';
import type { Database } from '../db/db.schema.js';
import type { PlatformUserPrincipal } from './accounts.principal.js';

/** The platform user owning the API key with this digest, or undefined. */
export async function findPlatformUserByKeyDigest(db: Kysely<Database>, digest: string): Promise<PlatformUserPrincipal | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'k.user_id').onRef('u.account_id', '=', 'k.account_id'))
    .select(['u.id as userId', 'u.account_id as accountId', 'u.role', 'u.email'])
    .where('k.digest', '=', digest)
    .executeTakeFirst();
  return row ? { kind: 'platform-user', ...row } : undefined;
}

/**
 * Stores a new API key digest for the platform user with this email (in the account with this tenant name, when
 * given). Reports `none` or `ambiguous` (the email exists in several accounts) instead of guessing.
 */
export async function insertApiKeyForEmail(
  db: Kysely<Database>,
  email: string,
  tenantName: string | undefined,
  digest: string,
  now: string,
): Promise<{ userId: number; accountId: number } | 'none' | 'ambiguous'> {
  let query = db
    .selectFrom('users as u')
    .innerJoin('accounts as a', 'a.id', 'u.account_id')
    .select(['u.id', 'u.account_id'])
    .where('u.email', '=', email.trim().toLowerCase());
  if (tenantName !== undefined) query = query.where('a.tenant_name', '=', tenantName);
  const users = await query.execute();
  if (users.length === 0) return 'none';
  if (users.length > 1) return 'ambiguous';
  const user = users[0]!;
  await db.insertInto('api_keys').values({ account_id: user.account_id, user_id: user.id, digest, created_at: now }).execute();
  return { userId: user.id, accountId: user.account_id };
}

/** The deployment's id when it exists in the account, else undefined. */
export async function findDeploymentInAccount(db: Kysely<Database>, accountId: number, deploymentId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('deployments')
    .select('id')
    .where('id', '=', deploymentId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.id;
}
