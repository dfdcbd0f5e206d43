import type { Kysely } from 'kysely';
import type { Database } from '../db/db.schema.js';

/**
 * The account a session id (by digest) was minted in, whatever its state: the page that will try to redeem it is
 * framed by that account's allowed origins, and learns it was refused from the exchange, not from a blank frame.
 */
export async function findAccountOfSessionDigest(db: Kysely<Database>, digest: string): Promise<number | undefined> {
  const row = await db.selectFrom('embed_sessions').select('account_id').where('digest', '=', digest).executeTakeFirst();
  return row?.account_id;
}

/** The account of a dashboard public id (unique across accounts). */
export async function findAccountOfPublicId(db: Kysely<Database>, publicId: string): Promise<number | undefined> {
  const row = await db.selectFrom('dashboards').select('account_id').where('public_id', '=', publicId).executeTakeFirst();
  return row?.account_id;
}

/** The account of a deployment. */
export async function findAccountOfDeployment(db: Kysely<Database>, deploymentId: number): Promise<number | undefined> {
  const row = await db.selectFrom('deployments').select('account_id').where('id', '=', deploymentId).executeTakeFirst();
  return row?.account_id;
}

/** The account of a live console session (by digest). */
export async function findAccountOfConsoleDigest(db: Kysely<Database>, digest: string, now: string): Promise<number | undefined> {
  const row = await db.selectFrom('console_sessions').select('account_id')
    .where('digest', '=', digest).where('revoked_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
  return row?.account_id;
}
