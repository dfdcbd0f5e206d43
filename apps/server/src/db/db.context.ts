import type { Kysely } from 'kysely';
import type { Dialect } from './db.database.js';
import type { Database } from './db.schema.js';

/** What a service needs from the outside world: the database (its dialect too) and the clock. */
export interface ServiceContext {
  db: Kysely<Database>;
  dialect: Dialect;
  now(): Date;
}
