import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { foldSearchKey } from '../db.search-key.js';
import { columnTypes, createTableWithId, accountRef, createEmbedUserSearchIndex } from './migrations.shared.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * Comments on embedded dashboards (issue 4, SPEC part B), stored per embed tenant. A thread is its root row
 * (`parent_id` null) plus the rows whose `parent_id` names it. Deletion is soft (`removed_at`); deleting a root
 * marks its replies too, so "live" is one column everywhere. The author and the resolver are embed users whose
 * deletion leaves the comment without them (ON DELETE SET NULL: SPEC "Comment", userId). Embed users gain
 * lower-cased `username_key` and `email_key`, folded by the application exactly as workspace names are, so that
 * the mentionable-user search and order are the same on both dialects.
 */
export function comments(dialect: Dialect): Migration {
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
