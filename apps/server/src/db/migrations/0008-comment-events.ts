import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { COMMENT_EVENT_CHANNEL } from '../db.database.js';
import { accountRef, columnTypes, createTableWithId } from './migrations.shared.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * Issue 23: the ordered log of comment events that live comment streams read and resume from (docs/comments.md
 * "Live updates"). One row per change of a comment: `created`, `edited`, `deleted`, `resolved`, `reopened` (a
 * thread root's), written by triggers inside the statement that changes the comment, so that no write path can
 * forget one and a post stays one statement. An event names its comment; a stream reads the comment's state with
 * it, and `resolved_at` keeps the resolution an event made (a later re-open changes the comment, not the event).
 *
 * Ids are the stream's positions (`Last-Event-ID`). Within one dashboard and tenant they are handed out in commit
 * order on both dialects: SQLite has one writer at a time, and on PostgreSQL the event rows are inserted after the
 * statement took the row lock of its `comment_streams` row (the version bump), which it holds until commit. So a
 * read of `id > n` in one scope never skips an event that commits later. Across scopes the order is not commit order.
 *
 * PostgreSQL also notifies COMMENT_EVENT_CHANNEL with `account:tenant:dashboard` once per scope and transaction (it
 * delivers at commit, to every listening process). `comment_streams.events_pruned_through` is the highest event id
 * of the scope that retention removed: a stream that would resume from before it is told to reload instead.
 */
export function commentEvents(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: AnyDb) {
      await createTableWithId(db, dialect, 'comment_events')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('embed_tenant_id', 'integer', (c) => c.notNull().references('embed_tenants.id').onDelete('cascade'))
        .addColumn('dashboard_id', 'integer', (c) => c.notNull().references('dashboards.id').onDelete('cascade'))
        // No foreign key: comments are only ever deleted with their dashboard, tenant or account, and so are events.
        .addColumn('comment_id', 'integer', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('resolved_at', t.sortedText)
        // The database's clock, for retention only (the app's clock can be a test's).
        .addColumn('recorded_at', t.sortedText, (c) => c.notNull())
        .execute();
      // A stream's reads: one scope after a position. Retention: the oldest first.
      await db.schema.createIndex('comment_events_scope_ix').on('comment_events').columns(['dashboard_id', 'embed_tenant_id', 'id']).execute();
      await db.schema.createIndex('comment_events_recorded_ix').on('comment_events').columns(['recorded_at']).execute();
      await db.schema.alterTable('comment_streams').addColumn('events_pruned_through', 'integer', (c) => c.notNull().defaultTo(0)).execute();

      const columns = sql`account_id, embed_tenant_id, dashboard_id, comment_id, kind, resolved_at, recorded_at`;
      if (dialect === 'postgres') {
        const now = sql.raw(`to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
        const channel = sql.lit(COMMENT_EVENT_CHANNEL);
        // The version bump of migration 0004 comes first: its row lock orders the scope's event ids (see above).
        const bump = sql`insert into comment_streams (dashboard_id, embed_tenant_id, account_id, version)
          select distinct dashboard_id, embed_tenant_id, account_id, 1 from new_rows
          on conflict (dashboard_id, embed_tenant_id) do update set version = comment_streams.version + 1`;
        const notify = sql`perform pg_notify(${channel}, s.account_id || ':' || s.embed_tenant_id || ':' || s.dashboard_id)
          from (select distinct account_id, embed_tenant_id, dashboard_id from new_rows) s`;
        await sql`create function svc_comment_events_inserted() returns trigger language plpgsql as $$
          begin
            ${bump};
            insert into comment_events (${columns})
              select account_id, embed_tenant_id, dashboard_id, id, 'created', null, ${now} from new_rows order by id;
            ${notify};
            return null;
          end $$`.execute(db);
        await sql`create function svc_comment_events_updated() returns trigger language plpgsql as $$
          begin
            ${bump};
            insert into comment_events (${columns})
              select account_id, embed_tenant_id, dashboard_id, id, kind, resolved_at, ${now} from (
                select a.account_id, a.embed_tenant_id, a.dashboard_id, a.id, 'edited' as kind, null as resolved_at, 1 as step
                  from new_rows a join old_rows b on b.id = a.id where a.edited_at is distinct from b.edited_at and a.removed_at is null
                union all
                select a.account_id, a.embed_tenant_id, a.dashboard_id, a.id, 'deleted', null, 2
                  from new_rows a join old_rows b on b.id = a.id where b.removed_at is null and a.removed_at is not null
                union all
                select a.account_id, a.embed_tenant_id, a.dashboard_id, a.id, 'resolved', a.resolved_at, 3
                  from new_rows a join old_rows b on b.id = a.id where b.is_resolved = 0 and a.is_resolved = 1
                union all
                select a.account_id, a.embed_tenant_id, a.dashboard_id, a.id, 'reopened', null, 3
                  from new_rows a join old_rows b on b.id = a.id where b.is_resolved = 1 and a.is_resolved = 0
              ) e order by id, step;
            ${notify};
            return null;
          end $$`.execute(db);
        // These replace migration 0004's triggers, whose bump they do first.
        await sql`drop trigger comments_stream_insert on comments`.execute(db);
        await sql`drop trigger comments_stream_update on comments`.execute(db);
        await sql`drop function svc_bump_comment_streams()`.execute(db);
        await sql`create trigger comments_events_insert after insert on comments
          referencing new table as new_rows for each statement execute function svc_comment_events_inserted()`.execute(db);
        await sql`create trigger comments_events_update after update on comments
          referencing old table as old_rows new table as new_rows for each statement execute function svc_comment_events_updated()`.execute(db);
        return;
      }
      // SQLite: one writer at a time, so row triggers beside migration 0004's bump are enough.
      const now = sql.raw(`strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`);
      const event = (kind: string, resolvedAt = sql`null`) => sql`insert into comment_events (${columns})
        values (new.account_id, new.embed_tenant_id, new.dashboard_id, new.id, ${sql.lit(kind)}, ${resolvedAt}, ${now})`;
      await sql`create trigger comment_events_created after insert on comments begin ${event('created')}; end`.execute(db);
      await sql`create trigger comment_events_edited after update of edited_at on comments
        when new.edited_at is not old.edited_at and new.removed_at is null begin ${event('edited')}; end`.execute(db);
      await sql`create trigger comment_events_deleted after update of removed_at on comments
        when old.removed_at is null and new.removed_at is not null begin ${event('deleted')}; end`.execute(db);
      await sql`create trigger comment_events_resolved after update of is_resolved on comments
        when old.is_resolved = 0 and new.is_resolved = 1 begin ${event('resolved', sql`new.resolved_at`)}; end`.execute(db);
      await sql`create trigger comment_events_reopened after update of is_resolved on comments
        when old.is_resolved = 1 and new.is_resolved = 0 begin ${event('reopened')}; end`.execute(db);
    },
  };
}
