import type { Migration } from 'kysely';
import type { AnyDb } from './migrations.shared.js';

/**
 * Issue 33 part 4, API keys made through the API (docs/authoring.md "Users, groups and API keys"): a key is shown
 * once, so a list of keys needs something a person can recognise a key by without the key itself.
 * - `api_keys.name`: a label given at creation ("CI deploy"), or null.
 * - `api_keys.hint`: the key's last four characters (of 43 random base62 ones: it says nothing usable about the
 *   rest), or null for the keys made before this migration.
 */
export function apiKeyLabels(): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('api_keys').addColumn('name', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('hint', 'text').execute();
    },
  };
}
