import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * PostgreSQL only: a committed change to deployments, dashboards or report_snapshots notifies the credential
 * channel with the row's account id, as accounts, users and api_keys already do (migration 0002). Every process
 * then drops what it holds of that account: its credentials, and the dashboards, snapshots and models that widget
 * requests read (data.metadata.ts). These tables change on import and publish, rarely, so the credentials they
 * drop along are read again at little cost. SQLite needs nothing: any commit moves its change feed's mark.
 */
export function metadataNotifications(dialect: Dialect): Migration {
  const tables = ['deployments', 'dashboards', 'report_snapshots'] as const;
  return {
    async up(db: AnyDb) {
      if (dialect !== 'postgres') return;
      for (const table of tables) {
        await sql`create trigger ${sql.raw(`${table}_metadata_notify`)} after insert or update or delete
          on ${sql.table(table)} for each row execute function svc_notify_credentials('account_id')`.execute(db);
        await sql`create trigger ${sql.raw(`${table}_metadata_truncate`)} after truncate
          on ${sql.table(table)} for each statement execute function svc_notify_credentials_all()`.execute(db);
      }
    },
  };
}
