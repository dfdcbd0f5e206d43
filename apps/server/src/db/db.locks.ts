import { sql } from 'kysely';
import type { Db } from './db.database.js';

/**
 * Runs `work` holding a PostgreSQL session advisory lock named `name`, on one connection of the pool for the
 * whole time; undefined at once when another session holds it. The server releases the lock when the holder's
 * connection ends, so a process killed while holding it never blocks the next. PostgreSQL only: SQLite has no
 * such lock (callers use a lock file there).
 */
export async function withAdvisoryLock<T>(db: Db, name: string, work: () => Promise<T>): Promise<T | undefined> {
  if (db.dialect !== 'postgres') throw new Error('advisory locks are PostgreSQL\'s');
  return db.kysely.connection().execute(async (connection) => {
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(hashtextextended(${name}, 0)) as locked`.execute(connection);
    if (rows[0]?.locked !== true) return undefined;
    try {
      return await work();
    } finally {
      await sql`select pg_advisory_unlock(hashtextextended(${name}, 0))`.execute(connection);
    }
  });
}
