import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { WEBHOOK_DELIVERY_CHANNEL } from '../db.database.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * PostgreSQL only: whatever makes a webhook delivery due now notifies WEBHOOK_DELIVERY_CHANNEL with the account id,
 * which the server sends at commit to every listening process, so that every process's dispatcher looks at once
 * instead of at its next poll (docs/webhooks.md "Delivery"): new deliveries (the outbox insert, once per statement
 * and account), a replay (a delivery that turns pending again) and an endpoint re-enabled (its waiting deliveries).
 * Triggers, as for comment events (migration 0008), so that no write path can forget one; identical notifications
 * of one transaction are folded into one by the server. Claims, attempts and retries scheduled for later notify
 * nothing: the dispatcher that scheduled a retry wakes for it, and every process polls. SQLite needs nothing: one
 * process writes, and nudges its own dispatcher.
 */
export function webhookWakeUps(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      if (dialect !== 'postgres') return;
      const channel = sql.lit(WEBHOOK_DELIVERY_CHANNEL);
      await sql`create function svc_webhook_deliveries_inserted() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${channel}, s.account_id::text) from (select distinct account_id from new_rows) s;
          return null;
        end $$`.execute(db);
      await sql`create function svc_webhook_deliveries_due() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${channel}, new.account_id::text);
          return null;
        end $$`.execute(db);
      await sql`create trigger webhook_deliveries_inserted after insert on webhook_deliveries
        referencing new table as new_rows for each statement execute function svc_webhook_deliveries_inserted()`.execute(db);
      await sql`create trigger webhook_deliveries_replayed after update of status on webhook_deliveries
        for each row when (old.status <> 'pending' and new.status = 'pending') execute function svc_webhook_deliveries_due()`.execute(db);
      await sql`create trigger webhook_endpoints_reenabled after update of disabled_at on webhook_endpoints
        for each row when (old.disabled_at is not null and new.disabled_at is null) execute function svc_webhook_deliveries_due()`.execute(db);
    },
  };
}
