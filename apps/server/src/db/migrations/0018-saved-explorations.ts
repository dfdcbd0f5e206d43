import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { accountRef, columnTypes, createTableWithId } from './migrations.shared.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * Issue 35 parts 3 and 4, exploration in the embed (docs/explore.md "Saved charts and views"): what an embed viewer
 * saves, per account, deployment and embed tenant, with its author (an embed user).
 * - `saved_charts`: a semantic query with its chart kind and spec; never its rows (a chart re-runs under its opener).
 * - `saved_views`: a dashboard's filters, grain and field swaps, and a personal layout of saved charts beside its
 *   widgets; the dashboard itself is never changed.
 * Both are `private` (their author only) or `tenant` (every viewer of the tenant). Clients see only `public_id`, a
 * random string (`chart_…`, `view_…`), never the integer id. Deleting the account, deployment, tenant, author or
 * (views) dashboard deletes the rows: a viewer's work goes with the viewer, as no one else may rename or delete it.
 */
export function savedExplorations(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: AnyDb) {
      const common = (table: string) => createTableWithId(db, dialect, table)
        .addColumn('public_id', 'text', (c) => c.notNull().unique())
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('deployment_id', 'integer', (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('embed_tenant_id', 'integer', (c) => c.notNull().references('embed_tenants.id').onDelete('cascade'))
        .addColumn('embed_user_id', 'integer', (c) => c.notNull().references('embed_users.id').onDelete('cascade'));

      await common('saved_charts')
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('query', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('spec', 'text')
        .addColumn('visibility', 'text', (c) => c.notNull())
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addColumn('updated_at', t.sortedText, (c) => c.notNull())
        .execute();
      // A tenant's list on one deployment, newest first; the author's own rows are a part of it.
      await db.schema.createIndex('saved_charts_list_ix').on('saved_charts').columns(['embed_tenant_id', 'deployment_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('saved_charts_author_ix').on('saved_charts').columns(['embed_user_id']).execute();
      await db.schema.createIndex('saved_charts_deployment_ix').on('saved_charts').columns(['deployment_id']).execute();

      await common('saved_views')
        .addColumn('dashboard_id', 'integer', (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('visibility', 'text', (c) => c.notNull())
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addColumn('updated_at', t.sortedText, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('saved_views_list_ix').on('saved_views').columns(['dashboard_id', 'embed_tenant_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('saved_views_author_ix').on('saved_views').columns(['embed_user_id']).execute();
      await db.schema.createIndex('saved_views_tenant_ix').on('saved_views').columns(['embed_tenant_id']).execute();
      await db.schema.createIndex('saved_views_deployment_ix').on('saved_views').columns(['deployment_id']).execute();
    },
  };
}
