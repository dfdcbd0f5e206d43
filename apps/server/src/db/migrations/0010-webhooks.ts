import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { accountRef, columnTypes, createTableWithId } from './migrations.shared.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * Issue 23 part 3: webhooks to the host's backend (docs/webhooks.md).
 *
 * - `webhook_endpoints`: an account's endpoints (URL, event types, whether payloads carry comment text, the
 *   Standard Webhooks secret it signs with), and why one was disabled.
 * - `webhook_deliveries`: the durable outbox, one row per event and endpoint, inserted in the transaction that
 *   changes the comment, thread or session (so an uncommitted change never has one). It keeps the exact body sent
 *   and the event's stable id (`webhook-id`), its state, when it is next due, and the lease of the process
 *   attempting it (`locked_until`, `lock_token`): a claim is one conditional update, taken with
 *   `FOR UPDATE SKIP LOCKED` on PostgreSQL, so each attempt is made by one process.
 * - `webhook_attempts`: the delivery log, one row per attempt (status code, duration, error).
 */
export function webhooks(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: AnyDb) {
      await createTableWithId(db, dialect, 'webhook_endpoints')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('event_types', 'text', (c) => c.notNull())
        .addColumn('include_comment_body', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('disabled_at', t.sortedText)
        .addColumn('disabled_reason', 'text')
        .addColumn('failing_since', t.sortedText)
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addColumn('updated_at', t.sortedText, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_endpoints_account_ix').on('webhook_endpoints').columns(['account_id', 'id']).execute();

      await createTableWithId(db, dialect, 'webhook_deliveries')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('endpoint_id', 'integer', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('final_attempt', 'integer')
        .addColumn('next_attempt_at', t.sortedText)
        .addColumn('locked_until', t.sortedText)
        .addColumn('lock_token', 'text')
        .addColumn('created_at', t.sortedText, (c) => c.notNull())
        .addColumn('delivered_at', t.sortedText)
        .execute();
      // The worker's claim: pending deliveries by due time (only they are in the index).
      await sql`create index webhook_deliveries_due_ix on webhook_deliveries (next_attempt_at, id) where status = 'pending'`.execute(db);
      // The delivery log of an endpoint, newest first.
      await db.schema.createIndex('webhook_deliveries_endpoint_ix').on('webhook_deliveries').columns(['endpoint_id', 'id']).execute();

      await createTableWithId(db, dialect, 'webhook_attempts')
        .addColumn('account_id', 'integer', accountRef)
        .addColumn('delivery_id', 'integer', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('attempted_at', t.sortedText, (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .execute();
      await db.schema.createIndex('webhook_attempts_delivery_ix').on('webhook_attempts').columns(['delivery_id', 'id']).execute();
    },
  };
}
