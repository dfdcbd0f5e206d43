import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { accountRef, columnTypes, createTableWithId } from './migrations.shared.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * Issue 33, authoring through the API (docs/authoring.md):
 * - `deployments.model_revision`: the model's revision, which its ETag names; a PUT of the model writes only over
 *   the revision its If-Match names (a conditional update), so that two authors never overwrite each other unseen.
 * - `audit_events`: every change made through the authoring API, written in the change's own transaction: who (the
 *   user, and their email as it was), when, what (action and target) and from which version to which.
 */
export function authoring(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('deployments').addColumn('model_revision', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await createTableWithId(db, dialect, 'audit_events')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('at', t.sortedText, (c) => c.notNull())
        .addColumn('actor_user_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('actor_email', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_type', 'text', (c) => c.notNull())
        .addColumn('target_id', 'text', (c) => c.notNull())
        .addColumn('from_version', 'integer')
        .addColumn('to_version', 'integer')
        .addColumn('detail', 'text', (c) => c.notNull().defaultTo('{}'))
        .execute();
      // The audit log is read newest first, a page at a time, per account.
      await db.schema.createIndex('audit_events_account_ix').on('audit_events').columns(['account_id', 'id']).execute();
    },
  };
}
