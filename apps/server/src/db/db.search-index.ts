import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Dialect } from './db.database.js';
import { NAME_SEARCH_TABLES } from './db.schema.js';
import type { Database } from './db.schema.js';

/**
 * After an import: on SQLite, each name index merged into one segment (FTS5 `optimize`). Every write
 * transaction leaves a segment, and automerge keeps a few per level, so after a large import a search probes
 * dozens of segments for each trigram of its term: ~1 ms a search at 10k items, 0.1 ms once merged (bench/README.md).
 * The merge rewrites the index: ~20 ms at 10k names, ~3 s at 1M. PostgreSQL's trigram indexes need nothing here
 * (their pending list is kept small, migration 0006).
 */
export async function compactNameSearchIndex(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  for (const table of Object.values(NAME_SEARCH_TABLES)) {
    const fts = sql.table(table);
    await sql`insert into ${fts}(${fts}) values ('optimize')`.execute(db);
  }
}
