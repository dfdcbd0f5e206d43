import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { columnTypes } from './migrations.shared.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * Issue 36, Cube-style JWTs (docs/cube.md "A Cube JWT"): a deployment's Cube API secret, the HS256 key a host's
 * backend signs Cube tokens with, as Cube's `CUBEJS_API_SECRET` is.
 * - `deployments.cube_secret`: the secret, sealed under SVC_ENCRYPTION_KEY as webhook signing secrets are (svc must
 *   use it again to verify an HMAC, so a digest would not do); null: no secret, no Cube JWT is accepted.
 * - `deployments.cube_secret_created_at`: when it was made (the last rotation), shown to admins.
 * Numbered 0019: 0018 is another branch's of the same session.
 */
export function cubeSecrets(dialect: Dialect): Migration {
  const t = columnTypes(dialect);
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('deployments').addColumn('cube_secret', 'text').execute();
      await db.schema.alterTable('deployments').addColumn('cube_secret_created_at', t.sortedText).execute();
    },
  };
}
