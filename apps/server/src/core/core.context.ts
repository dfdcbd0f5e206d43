import type { Kysely } from 'kysely';
import type { Dialect } from '../db/db.database.js';
import type { Database } from '../db/db.schema.js';

/** What a service needs from the outside world: the database and the clock. */
export interface ServiceContext {
  db: Kysely<Database>;
  dialect: Dialect;
  now(): Date;
}

/** The fixed-width ISO 8601 UTC form every timestamp is stored in. */
export function isoTimestamp(date: Date): string {
  return date.toISOString();
}
