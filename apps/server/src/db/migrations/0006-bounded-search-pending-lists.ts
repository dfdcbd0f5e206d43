import { sql } from 'kysely';
import type { Migration } from 'kysely';
import type { Dialect } from '../db.database.js';
import { NAME_SEARCH_TABLES } from '../db.schema.js';
import type { AnyDb } from './migrations.shared.js';

/**
 * PostgreSQL's GIN indexes take new entries into a pending list that every search reads whole until a vacuum
 * merges it (4 MB by default: a search at 1M items read ~490 pending pages, 3-4 ms, and twice per listing, once
 * per phase). A 64 kB list is merged as it fills, so a search never reads more than a few pages of it, whenever
 * autovacuum last ran. SQLite's FTS5 tables need nothing.
 */
export function boundedSearchPendingLists(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      if (dialect !== 'postgres') return;
      const indexes = [...Object.values(NAME_SEARCH_TABLES).map((table) => `${table}_trgm_ix`), 'embed_users_username_trgm_ix', 'embed_users_email_trgm_ix'];
      for (const index of indexes) {
        const found = await sql<{ found: boolean }>`select to_regclass(${index}) is not null as found`.execute(db);
        if (found.rows[0]?.found !== true) continue;
        await sql`alter index ${sql.raw(index)} set (gin_pending_list_limit = 64)`.execute(db);
        await sql`select gin_clean_pending_list(${index}::regclass)`.execute(db);
      }
    },
  };
}
