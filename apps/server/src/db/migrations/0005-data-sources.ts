import type { Migration } from 'kysely';
import type { AnyDb } from './migrations.shared.js';

/** Issue 7: each deployment's data source and semantic views (JSON; null: the bundled demo warehouse and its views). */
export function dataSources(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('deployments').addColumn('data_source', 'text').execute();
      await db.schema.alterTable('deployments').addColumn('semantic_views', 'text').execute();
    },
  };
}
