import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { accountRef, columnTypes, createTableWithId } from './migrations.shared.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * Issue 33, dashboards through the API (docs/authoring.md "Dashboards"):
 * - `dashboards.draft_document`: the draft's title, description and report snapshots (JSON; its config stays in
 *   `draft_config`, which SPEC A's listing shows as `dashboardDraft`); null: no draft.
 * - `dashboards.draft_revision`: the draft's revision, which its ETag names; a save writes only over the revision
 *   its If-Match names.
 * - `dashboard_versions`: every published version, whole (title, description, config, report snapshots), so that
 *   any one can be restored into the draft; `dashboards.version_id` names the current one's row.
 */
export function dashboardVersions(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('dashboards').addColumn('draft_document', 'text').execute();
      await db.schema.alterTable('dashboards').addColumn('draft_revision', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await createTableWithId(db, dialect, 'dashboard_versions')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('dashboard_id', 'integer', (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
        .addColumn('version_number', 'integer', (c) => c.notNull())
        .addColumn('title', 'text')
        .addColumn('description', 'text')
        .addColumn('config', 'text', (c) => c.notNull())
        .addColumn('report_snapshots', 'text', (c) => c.notNull())
        .addColumn('published_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('published_at', t.sortedText, (c) => c.notNull())
        .addUniqueConstraint('dashboard_versions_number_uq', ['dashboard_id', 'version_number'])
        .execute();
    },
  };
}
