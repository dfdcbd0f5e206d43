import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { AnyDb } from './migrations.shared.js';

/**
 * Issue 33, editor grants (docs/authoring.md "Who may do what"): `item_grants.role`, `viewer` (reads what the
 * grant reaches, as every grant did before) or `editor` (also changes the dashboards below it, and creates
 * dashboards in the folder). Existing grants stay viewers.
 */
export function grantRoles(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('item_grants')
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('viewer').check(sql`role in ('viewer', 'editor')`))
        .execute();
    },
  };
}
