import { Migrator, sql } from 'kysely';
import type { ColumnDataType, ColumnDefinitionBuilder, Expression, Kysely, Migration, MigrationProvider } from 'kysely';
import { CREDENTIAL_CHANNEL } from './db.database.js';
import { foldSearchKey } from './db.search-key.js';
import type { Db, Dialect } from './db.database.js';

type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type DataType = ColumnDataType | Expression<unknown>;

/**
 * Column types that differ between the dialects. Text that is sorted on (names, timestamps) uses the "C"
 * collation on PostgreSQL so that it orders byte-wise, exactly as SQLite's BINARY collation does.
 */
function columnTypes(dialect: Dialect): { id: DataType; sortedText: DataType } {
  return dialect === 'postgres'
    ? { id: 'serial', sortedText: sql`text collate "C"` }
    : { id: 'integer', sortedText: 'text' };
}

/** A new table whose first column is its integer id: autoincrement on SQLite, serial on PostgreSQL. */
function createTableWithId(db: AnyDb, dialect: Dialect, table: string) {
  const { id } = columnTypes(dialect);
  return db.schema.createTable(table).addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()));
}

/** `account_id`: every row's owner; deleting the account deletes the row. */
const accountRef = (c: ColumnDefinitionBuilder) => c.notNull().references('accounts.id').onDelete('cascade');

function initialSchema(dialect: Dialect): Migration {
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

/** The two kinds of the listing order, each searched through an index of its own names only. */
export const NAME_SEARCH_TABLES = { folders: 'workspace_fts_folders', others: 'workspace_fts_others' } as const;

/**
 * After an import: on SQLite, each name index merged into one segment (FTS5 `optimize`). Every write
 * transaction leaves a segment, and automerge keeps a few per level, so after a large import a search probes
 * dozens of segments for each trigram of its term: ~1 ms a search at 10k items, 0.1 ms once merged (bench/README.md).
 * The merge rewrites the index: ~20 ms at 10k names, ~3 s at 1M. PostgreSQL's trigram indexes need nothing here
 * (their pending list is kept small, migration 0006).
 */
export async function compactNameSearchIndex(db: AnyDb, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  for (const table of Object.values(NAME_SEARCH_TABLES)) {
    const fts = sql.table(table);
    await sql`insert into ${fts}(${fts}) values ('optimize')`.execute(db);
  }
}

/**
 * Substring search over item names at scale: FTS5 with the trigram tokenizer on SQLite, pg_trgm on PostgreSQL.
 * Folders and the other items get an index each, since the listing searches them in separate phases (folders
 * first): the folder phase then reads a tenth of the postings. Without pg_trgm (an extension the server may
 * lack) PostgreSQL falls back to a scan; the listing still answers.
 */
async function createNameSearchIndex(db: AnyDb, dialect: Dialect): Promise<void> {
  const kinds = [[NAME_SEARCH_TABLES.folders, 1], [NAME_SEARCH_TABLES.others, 0]] as const;
  if (dialect === 'sqlite') {
    for (const [table, isFolder] of kinds) {
      const fts = sql.table(table);
      const kind = sql.lit(isFolder);
      await sql`create virtual table ${fts} using fts5(name_key, content='workspace_items', content_rowid='id', tokenize='trigram')`.execute(db);
      await sql`create trigger ${sql.raw(`${table}_ai`)} after insert on workspace_items when new.is_folder = ${kind} begin
        insert into ${fts}(rowid, name_key) values (new.id, new.name_key); end`.execute(db);
      await sql`create trigger ${sql.raw(`${table}_ad`)} after delete on workspace_items when old.is_folder = ${kind} begin
        insert into ${fts}(${fts}, rowid, name_key) values ('delete', old.id, old.name_key); end`.execute(db);
      await sql`create trigger ${sql.raw(`${table}_au`)} after update of name_key on workspace_items when new.is_folder = ${kind} begin
        insert into ${fts}(${fts}, rowid, name_key) values ('delete', old.id, old.name_key);
        insert into ${fts}(rowid, name_key) values (new.id, new.name_key); end`.execute(db);
    }
    return;
  }
  const available = await sql<{ n: number }>`select count(*)::int as n from pg_available_extensions where name = 'pg_trgm'`.execute(db);
  if ((available.rows[0]?.n ?? 0) === 0) return;
  await sql`create extension if not exists pg_trgm`.execute(db);
  for (const [table, isFolder] of kinds) {
    await sql`create index ${sql.raw(`${table}_trgm_ix`)} on workspace_items using gin (name_key gin_trgm_ops) where is_folder = ${sql.lit(isFolder)}`.execute(db);
  }
}

/** The SQLite FTS5 table behind the mentionable-user search (comments.store.ts). */
export const EMBED_USER_SEARCH_TABLE = 'embed_users_fts';

/**
 * Substring search over embed users' folded username and email, as for item names: FTS5 trigram on SQLite (kept by
 * triggers), pg_trgm on PostgreSQL. Without it a search scans the whole tenant, and every session minted without
 * `embedTenantName` shares one tenant.
 */
async function createEmbedUserSearchIndex(db: AnyDb, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') {
    const fts = sql.table(EMBED_USER_SEARCH_TABLE);
    await sql`create virtual table ${fts} using fts5(username_key, email_key, content='embed_users', content_rowid='id', tokenize='trigram')`.execute(db);
    await sql`insert into ${fts}(${fts}) values ('rebuild')`.execute(db);
    await sql`create trigger embed_users_fts_ai after insert on embed_users begin
      insert into ${fts}(rowid, username_key, email_key) values (new.id, new.username_key, new.email_key); end`.execute(db);
    await sql`create trigger embed_users_fts_ad after delete on embed_users begin
      insert into ${fts}(${fts}, rowid, username_key, email_key) values ('delete', old.id, old.username_key, old.email_key); end`.execute(db);
    await sql`create trigger embed_users_fts_au after update of username_key, email_key on embed_users begin
      insert into ${fts}(${fts}, rowid, username_key, email_key) values ('delete', old.id, old.username_key, old.email_key);
      insert into ${fts}(rowid, username_key, email_key) values (new.id, new.username_key, new.email_key); end`.execute(db);
    return;
  }
  const available = await sql<{ n: number }>`select count(*)::int as n from pg_available_extensions where name = 'pg_trgm'`.execute(db);
  if ((available.rows[0]?.n ?? 0) === 0) return;
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`create index embed_users_username_trgm_ix on embed_users using gin (username_key gin_trgm_ops)`.execute(db);
  await sql`create index embed_users_email_trgm_ix on embed_users using gin (email_key gin_trgm_ops)`.execute(db);
}

/**
 * PostgreSQL only: every committed change to accounts, users or api_keys notifies CREDENTIAL_CHANNEL with the
 * row's account id, so that every process drops the credentials it holds of that account (db.database.ts
 * ChangeFeed). PostgreSQL delivers on commit and folds identical notifications of one transaction into one.
 * SQLite needs nothing: its connections read `PRAGMA data_version`.
 */
function credentialNotifications(dialect: Dialect): Migration {
  const tables = [['accounts', 'id'], ['users', 'account_id'], ['api_keys', 'account_id']] as const;
  return {
    async up(db: AnyDb) {
      if (dialect !== 'postgres') return;
      await sql`create function svc_notify_credentials_all() returns trigger language plpgsql as $$
        begin perform pg_notify(${sql.lit(CREDENTIAL_CHANNEL)}, ''); return null; end $$`.execute(db);
      await sql`create function svc_notify_credentials() returns trigger language plpgsql as $$
        begin
          if tg_op <> 'INSERT' then perform pg_notify(${sql.lit(CREDENTIAL_CHANNEL)}, to_jsonb(old) ->> tg_argv[0]); end if;
          if tg_op <> 'DELETE' then perform pg_notify(${sql.lit(CREDENTIAL_CHANNEL)}, to_jsonb(new) ->> tg_argv[0]); end if;
          return null;
        end $$`.execute(db);
      for (const [table, column] of tables) {
        await sql`create trigger ${sql.raw(`${table}_credentials_notify`)} after insert or update or delete
          on ${sql.table(table)} for each row execute function svc_notify_credentials(${sql.lit(column)})`.execute(db);
        // TRUNCATE has no rows to name: an empty payload drops everything held.
        await sql`create trigger ${sql.raw(`${table}_credentials_truncate`)} after truncate
          on ${sql.table(table)} for each statement execute function svc_notify_credentials_all()`.execute(db);
      }
    },
  };
}

/**
 * Embed sessions, the server's signing key and console sessions (issue 3). Revoking or deleting an embed session
 * notifies CREDENTIAL_CHANNEL on PostgreSQL like a credential change, so every process stops trusting the
 * session state it holds (minting and redeeming do not: they cannot make a token that verified stop verifying).
 */
function embedSessions(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  const id = (db: AnyDb, table: string) => createTableWithId(db, dialect, table);
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('embed_users').addColumn('groups', 'text', (c) => c.notNull().defaultTo('[]')).execute();
      await db.schema.alterTable('embed_users').addColumn('user_attributes', 'text', (c) => c.notNull().defaultTo('{}')).execute();

      await id(db, 'embed_sessions')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('deployment_id', 'integer', (c) => c.notNull().references('deployments.id').onDelete('cascade'))
        .addColumn('embed_tenant_id', 'integer', (c) => c.references('embed_tenants.id').onDelete('cascade'))
        .addColumn('embed_user_id', 'integer', (c) => c.references('embed_users.id').onDelete('cascade'))
        .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('digest', 'text', (c) => c.notNull().unique())
        .addColumn('theme', 'text', (c) => c.notNull())
        .addColumn('settings', 'text', (c) => c.notNull())
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addColumn('expires_at', t.sortedText, (c) => c.notNull())
        .addColumn('redeemed_at', t.sortedText)
        .addColumn('token_expires_at', t.sortedText)
        .addColumn('revoked_at', t.sortedText)
        .execute();
      await db.schema.createIndex('embed_sessions_user_ix').on('embed_sessions').columns(['account_id', 'embed_user_id']).execute();
      await db.schema.createIndex('embed_sessions_platform_user_ix').on('embed_sessions').columns(['account_id', 'user_id']).execute();

      await id(db, 'server_keys')
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('algorithm', 'text', (c) => c.notNull())
        .addColumn('private_jwk', 'text', (c) => c.notNull())
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .execute();

      await id(db, 'console_sessions')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('digest', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addColumn('expires_at', t.sortedText, (c) => c.notNull())
        .addColumn('revoked_at', t.sortedText)
        .execute();

      if (dialect === 'postgres') {
        await sql`create trigger embed_sessions_revoked_notify after update of revoked_at on embed_sessions
          for each row when (old.revoked_at is null and new.revoked_at is not null)
          execute function svc_notify_credentials('account_id')`.execute(db);
        await sql`create trigger embed_sessions_deleted_notify after delete on embed_sessions
          for each row execute function svc_notify_credentials('account_id')`.execute(db);
        await sql`create trigger console_sessions_notify after update or delete on console_sessions
          for each row execute function svc_notify_credentials('account_id')`.execute(db);
      }
    },
  };
}

/**
 * Comments on embedded dashboards (issue 4, SPEC part B), stored per embed tenant. A thread is its root row
 * (`parent_id` null) plus the rows whose `parent_id` names it. Deletion is soft (`removed_at`); deleting a root
 * marks its replies too, so "live" is one column everywhere. The author and the resolver are embed users whose
 * deletion leaves the comment without them (ON DELETE SET NULL: SPEC "Comment", userId). Embed users gain
 * lower-cased `username_key` and `email_key`, folded by the application exactly as workspace names are, so that
 * the mentionable-user search and order are the same on both dialects.
 */
function comments(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('embed_users').addColumn('username_key', t.sortedText, (c) => c.notNull().defaultTo('')).execute();
      await db.schema.alterTable('embed_users').addColumn('email_key', 'text', (c) => c.notNull().defaultTo('')).execute();
      const users = await db.selectFrom('embed_users').select(['id', 'username', 'email']).execute() as { id: number; username: string; email: string | null }[];
      for (const user of users) {
        await db.updateTable('embed_users').set({ username_key: foldSearchKey(user.username), email_key: foldSearchKey(user.email ?? '') }).where('id', '=', user.id).execute();
      }
      await db.schema.createIndex('embed_users_tenant_username_ix').on('embed_users').columns(['embed_tenant_id', 'username_key', 'id']).execute();
      await createEmbedUserSearchIndex(db, dialect);

      await createTableWithId(db, dialect, 'comments')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('embed_tenant_id', 'integer', (c) => c.notNull().references('embed_tenants.id').onDelete('cascade'))
        .addColumn('dashboard_id', 'integer', (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
        .addColumn('parent_id', 'integer', (c) => c.references('comments.id').onDelete('cascade'))
        .addColumn('embed_user_id', 'integer', (c) => c.references('embed_users.id').onDelete('set null'))
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addColumn('edited_at', t.sortedText)
        .addColumn('removed_at', t.sortedText)
        .addColumn('is_resolved', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('resolved_at', t.sortedText)
        .addColumn('resolved_by', 'integer', (c) => c.references('embed_users.id').onDelete('set null'))
        .execute();
      // Live threads of a dashboard in one tenant, newest first: all of them (includeResolved), or one state
      // (open by default, resolvedOnly). Partial, so deleted rows and replies cost the listings nothing.
      await sql`create index comments_threads_ix on comments (dashboard_id, embed_tenant_id, created_at, id)
        where parent_id is null and removed_at is null`.execute(db);
      await sql`create index comments_threads_state_ix on comments (dashboard_id, embed_tenant_id, is_resolved, created_at, id)
        where parent_id is null and removed_at is null`.execute(db);
      // The replies of a page's threads, oldest first; also the parent key of the cascade.
      await db.schema.createIndex('comments_replies_ix').on('comments').columns(['parent_id', 'created_at', 'id']).execute();
      // Deleting an embed user nulls their authorship without scanning every comment.
      await db.schema.createIndex('comments_author_ix').on('comments').columns(['embed_user_id']).execute();
      await sql`create index comments_resolver_ix on comments (resolved_by) where resolved_by is not null`.execute(db);

      // One row per dashboard and tenant that has comments: `version` moves with every write to its threads (and
      // when an author of the tenant is deleted), so a cached thread list is valid exactly while it stands still.
      await db.schema.createTable('comment_streams')
        .addColumn('dashboard_id', 'integer', (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
        .addColumn('embed_tenant_id', 'integer', (c) => c.notNull().references('embed_tenants.id').onDelete('cascade'))
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('comment_streams_pk', ['dashboard_id', 'embed_tenant_id'])
        .execute();
      await db.schema.createIndex('comment_streams_tenant_ix').on('comment_streams').columns(['embed_tenant_id']).execute();
      // The version moves inside the statement that changes comments (posts, edits, deletes, resolutions, and the
      // ON DELETE SET NULL of a deleted author alike), so no write path can forget it and a post stays one statement.
      // PostgreSQL bumps once per statement and stream (transition tables): a per-row trigger would update the same
      // stream row once per changed comment, quadratic in one transaction (deleting an author of 40,000 comments).
      if (dialect === 'postgres') {
        await sql`create function svc_bump_comment_streams() returns trigger language plpgsql as $$
          begin
            insert into comment_streams (dashboard_id, embed_tenant_id, account_id, version)
              select distinct dashboard_id, embed_tenant_id, account_id, 1 from changed
              on conflict (dashboard_id, embed_tenant_id) do update set version = comment_streams.version + 1;
            return null;
          end $$`.execute(db);
        for (const event of ['insert', 'update'] as const) {
          await sql`create trigger ${sql.raw(`comments_stream_${event}`)} after ${sql.raw(event)} on comments
            referencing new table as changed for each statement execute function svc_bump_comment_streams()`.execute(db);
        }
      } else {
        const bump = sql`insert into comment_streams (dashboard_id, embed_tenant_id, account_id, version)
          values (new.dashboard_id, new.embed_tenant_id, new.account_id, 1)
          on conflict (dashboard_id, embed_tenant_id) do update set version = comment_streams.version + 1`;
        await sql`create trigger comments_stream_insert after insert on comments begin ${bump}; end`.execute(db);
        await sql`create trigger comments_stream_update after update on comments begin ${bump}; end`.execute(db);
      }
    },
  };
}

/** Issue 7: each deployment's data source and semantic views (JSON; null: the bundled demo warehouse and its views). */
function dataSources(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('deployments').addColumn('data_source', 'text').execute();
      await db.schema.alterTable('deployments').addColumn('semantic_views', 'text').execute();
    },
  };
}

/**
 * PostgreSQL's GIN indexes take new entries into a pending list that every search reads whole until a vacuum
 * merges it (4 MB by default: a search at 1M items read ~490 pending pages, 3-4 ms, and twice per listing, once
 * per phase). A 64 kB list is merged as it fills, so a search never reads more than a few pages of it, whenever
 * autovacuum last ran. SQLite's FTS5 tables need nothing.
 */
function boundedSearchPendingLists(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      if (dialect !== 'postgres') return;
      const indexes = [...Object.values(NAME_SEARCH_TABLES).map((table) => `${table}_trgm_ix`), 'embed_users_username_trgm_ix', 'embed_users_email_trgm_ix'];
      for (const index of indexes) {
        const found = await sql<{ found: boolean }>`select to_regclass(${index}) is not null as found`.execute(db);
        if (found.rows[0]?.found !== true) continue;
        await sql`alter index ${sql.raw(index)} set (gin_pending_list_limit = 64)`.execute(db);
        await sql`select gin_clean_pending_list(${index}::regclass)`.execute(db);
      }
    },
  };
}

function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    getMigrations: async () => ({
      '0001_initial_schema': initialSchema(dialect),
      '0002_credential_notifications': credentialNotifications(dialect),
      '0003_embed_sessions': embedSessions(dialect),
      '0004_comments': comments(dialect),
      '0005_data_sources': dataSources(),
      '0006_bounded_search_pending_lists': boundedSearchPendingLists(dialect),
    }),
  };
}

/** Brings the schema to the latest migration; safe to call from several processes at once. */
export async function migrateToLatest(db: Db): Promise<void> {
  const migrator = new Migrator({ db: db.kysely, provider: migrationProvider(db.dialect) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`);
  }
}
