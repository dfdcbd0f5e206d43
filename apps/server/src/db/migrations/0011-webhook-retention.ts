import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { columnTypes } from './migrations.shared.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * Retention of the webhook delivery log (docs/webhooks.md "Retention"): a delivery is removed, with its attempts,
 * once it finished (delivered, or failed for good) more than SVC_WEBHOOK_RETENTION_MS ago.
 *
 * - `webhook_deliveries.finished_at`: when it finished (its last attempt's time, the dispatcher's clock, as
 *   `delivered_at` and `attempted_at` are), null while pending. A replay makes it pending again and clears it. The
 *   deliveries that finished before this migration take their delivery time, else their last attempt's, else their
 *   creation's.
 * - `webhook_deliveries_finished_ix`: retention's delete, oldest first, reads only finished rows (partial on
 *   `finished_at is not null`, which both dialects know a `finished_at < ?` implies). The attempts go by cascade,
 *   through `webhook_attempts_delivery_ix` (migration 0010).
 */
export function webhookRetention(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('webhook_deliveries').addColumn('finished_at', t.sortedText).execute();
      await sql`update webhook_deliveries set finished_at = coalesce(
          delivered_at,
          (select max(a.attempted_at) from webhook_attempts a where a.delivery_id = webhook_deliveries.id),
          created_at)
        where status <> 'pending'`.execute(db);
      await sql`create index webhook_deliveries_finished_ix on webhook_deliveries (finished_at) where finished_at is not null`.execute(db);
    },
  };
}
