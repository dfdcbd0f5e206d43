import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { columnTypes, createTableWithId, accountRef, createNameSearchIndex } from './migrations.shared.js';
import type { AnyDb } from './migrations.shared.js';

export function initialSchema(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  const id = (db: AnyDb, table: string) => createTableWithId(db, dialect, table);

  return {
    async up(db: AnyDb) {
      await id(db, 'accounts')
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('tenant_name', 'text', (c) => c.notNull().unique())
        .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('data_version', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .execute();

      await id(db, 'users')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('first_name', 'text')
        .addColumn('picture', 'text')
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('password_digest', 'text')
        .addColumn('personal_version', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addUniqueConstraint('users_account_email_uq', ['account_id', 'email'])
        .execute();

      await id(db, 'groups')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('name', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('groups_account_ix').on('groups').columns(['account_id']).execute();

      await db.schema
        .createTable('group_members')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('group_id', 'integer', (c) => c.notNull().references('groups.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('group_members_pk', ['user_id', 'group_id'])
        .execute();

      await id(db, 'api_keys')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('digest', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .execute();

      await id(db, 'deployments')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .execute();

      await id(db, 'workspace_items')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('deployment_id', 'integer', (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('is_folder', 'integer', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('name_key', t.sortedText, (c) => c.notNull())
        .addColumn('folder_id', 'integer', (c) => c.references('workspace_items.id').onDelete('cascade'))
        .addColumn('depth', 'integer', (c) => c.notNull())
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addColumn('updated_at', t.sortedText, (c) => c.notNull())
        .addColumn('meta', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('calculated_fields', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('slug', 'text')
        .execute();
      // One index per sort order of a folder's contents: keyset pages walk them without sorting.
      for (const key of ['name_key', 'updated_at', 'created_at']) {
        await db.schema
          .createIndex(`workspace_items_folder_${key}_ix`)
          .on('workspace_items')
          .columns(['deployment_id', 'folder_id', 'is_folder', key, 'id'])
          .execute();
      }
      await db.schema.createIndex('workspace_items_creator_ix').on('workspace_items').columns(['created_by']).execute();

      await db.schema
        .createTable('item_ancestors')
        .addColumn('account_id', 'integer', (c) => c.notNull())
        .addColumn('item_id', 'integer', (c) => c.notNull().references('workspace_items.id').onDelete('cascade'))
        .addColumn('ancestor_id', 'integer', (c) => c.notNull())
        .addColumn('distance', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('item_ancestors_pk', ['item_id', 'ancestor_id'])
        .execute();
      await db.schema.createIndex('item_ancestors_ancestor_ix').on('item_ancestors').columns(['ancestor_id', 'item_id']).execute();

      await id(db, 'item_grants')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('item_id', 'integer', (c) => c.notNull().references('workspace_items.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('group_id', 'integer', (c) => c.references('groups.id').onDelete('cascade'))
        .execute();
      await db.schema.createIndex('item_grants_item_ix').on('item_grants').columns(['item_id', 'user_id', 'group_id']).execute();
      await db.schema.createIndex('item_grants_user_ix').on('item_grants').columns(['user_id']).execute();
      await db.schema.createIndex('item_grants_group_ix').on('item_grants').columns(['group_id']).execute();

      await db.schema
        .createTable('item_views')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('item_id', 'integer', (c) => c.notNull().references('workspace_items.id').onDelete('cascade'))
        .addColumn('viewed_at', t.sortedText, (c) => c.notNull())
        .addPrimaryKeyConstraint('item_views_pk', ['user_id', 'item_id'])
        .execute();

      await db.schema
        .createTable('item_favorites')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('item_id', 'integer', (c) => c.notNull().references('workspace_items.id').onDelete('cascade'))
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addPrimaryKeyConstraint('item_favorites_pk', ['user_id', 'item_id'])
        .execute();

      await id(db, 'dashboards')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('deployment_id', 'integer', (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('workbook_id', 'integer', (c) => c.notNull().unique().references('workspace_items.id').onDelete('cascade'))
        .addColumn('public_id', 'text', (c) => c.notNull().unique())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('allow_embed', 'integer', (c) => c.notNull())
        .addColumn('title', 'text')
        .addColumn('description', 'text')
        .addColumn('config', 'text', (c) => c.notNull())
        .addColumn('draft_config', 'text')
        .addColumn('version_number', 'integer', (c) => c.notNull())
        .addColumn('version_id', 'integer', (c) => c.notNull())
        .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('from_shared_workspace', 'integer')
        .addColumn('restrict_data_download', 'integer')
        .addColumn('use_board_dashboards', 'integer')
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addColumn('updated_at', t.sortedText, (c) => c.notNull())
        .execute();

      await id(db, 'report_snapshots')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('dashboard_id', 'integer', (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
        .addColumn('report_id', 'integer', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('version_number', 'integer', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('title', 'text')
        .addColumn('description', 'text')
        .addColumn('kind', 'text')
        .addColumn('is_source_report', 'integer')
        .addColumn('meta', 'text')
        .addColumn('spec', 'text')
        .addColumn('sql_query', 'text')
        .addColumn('python_code', 'text')
        .addColumn('fill_missing_rows', 'text')
        .addColumn('period_comparisons', 'text')
        .addColumn('preferences', 'text')
        .execute();
      await db.schema.createIndex('report_snapshots_dashboard_ix').on('report_snapshots').columns(['dashboard_id', 'position']).execute();

      await id(db, 'embed_tenants')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addUniqueConstraint('embed_tenants_account_name_uq', ['account_id', 'name'])
        .execute();

      await id(db, 'embed_users')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('embed_tenant_id', 'integer', (c) => c.notNull().references('embed_tenants.id').onDelete('cascade'))
        .addColumn('external_id', 'text', (c) => c.notNull())
        .addColumn('username', t.sortedText, (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('first_name', 'text')
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addColumn('updated_at', t.sortedText, (c) => c.notNull())
        .addUniqueConstraint('embed_users_tenant_external_uq', ['embed_tenant_id', 'external_id'])
        .execute();

      await createNameSearchIndex(db, dialect);
    },
  };
}
