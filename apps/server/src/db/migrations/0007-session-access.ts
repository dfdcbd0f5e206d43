import type { Migration } from 'kysely';
import type { AnyDb } from './migrations.shared.js';

/**
 * Issue 20: what an embed session's data access is decided by. `access_context` holds the securityContext,
 * userAttributes and groups the session was minted with (JSON); `dashboards` the publicIds it may open (JSON list;
 * null: every embeddable dashboard of its deployment). Sessions minted before this migration have neither: an
 * empty context, which access policies read as missing attributes (their rows are denied, never widened).
 */
export function sessionAccess(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('embed_sessions').addColumn('access_context', 'text').execute();
      await db.schema.alterTable('embed_sessions').addColumn('dashboards', 'text').execute();
    },
  };
}
