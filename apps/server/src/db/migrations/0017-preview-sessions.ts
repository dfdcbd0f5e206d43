import type { Migration } from 'kysely';
import type { AnyDb } from './migrations.shared.js';

/**
 * Issue 34 part 4, "View as a customer" (docs/console.md): `embed_sessions.preview` marks a session an admin minted
 * to see one dashboard as a viewer would, in the console: `published` (the version viewers see) or `draft` (the
 * dashboard's draft, which no other session ever reads); null for every session Generate Session mints. Such a
 * session has neither embed user nor platform user, opens its one dashboard only, and is the only kind of session
 * whose embed page svc's own origin may frame.
 */
export function previewSessions(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('embed_sessions').addColumn('preview', 'text').execute();
    },
  };
}
