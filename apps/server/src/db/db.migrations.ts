import { Migrator } from 'kysely';
import type { MigrationProvider, MigrationResultSet } from 'kysely';
import type { Db, Dialect } from './db.database.js';
import { initialSchema } from './migrations/0001-initial-schema.js';
import { credentialNotifications } from './migrations/0002-credential-notifications.js';
import { embedSessions } from './migrations/0003-embed-sessions.js';
import { comments } from './migrations/0004-comments.js';
import { dataSources } from './migrations/0005-data-sources.js';
import { boundedSearchPendingLists } from './migrations/0006-bounded-search-pending-lists.js';
import { sessionAccess } from './migrations/0007-session-access.js';
import { commentEvents } from './migrations/0008-comment-events.js';
import { metadataNotifications } from './migrations/0009-metadata-notifications.js';
import { webhooks } from './migrations/0010-webhooks.js';
import { webhookRetention } from './migrations/0011-webhook-retention.js';
import { webhookWakeUps } from './migrations/0012-webhook-wake-ups.js';
import { authoring } from './migrations/0013-authoring.js';
import { dashboardVersions } from './migrations/0014-dashboard-versions.js';
import { grantRoles } from './migrations/0015-grant-roles.js';
import { apiKeyLabels } from './migrations/0016-api-key-labels.js';
import { previewSessions } from './migrations/0017-preview-sessions.js';
// Issue 35 saved charts and views.
import { savedExplorations } from './migrations/0018-saved-explorations.js';

/**
 * The migrations, one file each under migrations/ (named by number and purpose), in order. The names below are
 * what databases have recorded: they never change.
 */
function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    getMigrations: async () => ({
      '0001_initial_schema': initialSchema(dialect),
      '0002_credential_notifications': credentialNotifications(dialect),
      '0003_embed_sessions': embedSessions(dialect),
      '0004_comments': comments(dialect),
      '0005_data_sources': dataSources(),
      '0006_bounded_search_pending_lists': boundedSearchPendingLists(dialect),
      '0007_session_access': sessionAccess(),
      '0008_comment_events': commentEvents(dialect),
      '0009_metadata_notifications': metadataNotifications(dialect),
      '0010_webhooks': webhooks(dialect),
      '0011_webhook_retention': webhookRetention(dialect),
      '0012_webhook_wake_ups': webhookWakeUps(dialect),
      '0013_authoring': authoring(dialect),
      '0014_dashboard_versions': dashboardVersions(dialect),
      '0015_grant_roles': grantRoles(),
      '0016_api_key_labels': apiKeyLabels(),
      '0017_preview_sessions': previewSessions(),
      // Issue 35 saved charts and views.
      '0018_saved_explorations': savedExplorations(dialect),
    }),
  };
}

/** Brings the schema to the latest migration; safe to call from several processes at once. */
export async function migrateToLatest(db: Db): Promise<void> {
  await migrate(db, (migrator) => migrator.migrateToLatest());
}

/**
 * Brings the schema up to the migration `name` (a key of the list above) and no further: a test of what a later
 * migration does to rows written before it starts there.
 *
 * @example
 * await migrateUpTo(db, '0010_webhooks');
 */
export async function migrateUpTo(db: Db, name: string): Promise<void> {
  await migrate(db, (migrator) => migrator.migrateTo(name));
}

async function migrate(db: Db, run: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<void> {
  const migrator = new Migrator({ db: db.kysely, provider: migrationProvider(db.dialect) });
  const { error, results } = await run(migrator);
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`);
  }
}
