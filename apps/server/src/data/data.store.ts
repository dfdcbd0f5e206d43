import type { Kysely } from 'kysely';
import type { Database } from '../db/db.schema.js';

/** A deployment's data source and semantic views (JSON text), or undefined when the account has no such deployment. */
export async function findDeploymentData(db: Kysely<Database>, accountId: number, deploymentId: number): Promise<{ data_source: string | null; semantic_views: string | null } | undefined> {
  return db.selectFrom('deployments').select(['data_source', 'semantic_views'])
    .where('account_id', '=', accountId).where('id', '=', deploymentId)
    .executeTakeFirst();
}
