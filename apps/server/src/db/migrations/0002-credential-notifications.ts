import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { CREDENTIAL_CHANNEL } from '../db.database.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * PostgreSQL only: every committed change to accounts, users or api_keys notifies CREDENTIAL_CHANNEL with the
 * row's account id, so that every process drops the credentials it holds of that account (db.database.ts
 * ChangeFeed). PostgreSQL delivers on commit and folds identical notifications of one transaction into one.
 * SQLite needs nothing: its connections read `PRAGMA data_version`.
 */
export function credentialNotifications(dialect: Dialect): Migration {
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
