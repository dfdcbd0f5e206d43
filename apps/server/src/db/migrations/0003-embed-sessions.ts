import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { columnTypes, createTableWithId, accountRef } from './migrations.shared.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * Embed sessions, the server's signing key and console sessions (issue 3). Revoking or deleting an embed session
 * notifies CREDENTIAL_CHANNEL on PostgreSQL like a credential change, so every process stops trusting the
 * session state it holds (minting and redeeming do not: they cannot make a token that verified stop verifying).
 */
export function embedSessions(dialect: Dialect): Migration {
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
