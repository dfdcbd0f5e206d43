import { sql } from 'kysely';
import type { ColumnDataType, ColumnDefinitionBuilder, Expression, Kysely } from 'kysely';
import type { Dialect } from '../db.database.js';
import { EMBED_USER_SEARCH_TABLE, NAME_SEARCH_TABLES } from '../db.schema.js';

/** Migrations see the schema of their own time, not today's `Database`: untyped. */
export type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
export type DataType = ColumnDataType | Expression<unknown>;

/**
 * Column types that differ between the dialects. Text that is sorted on (names, timestamps) uses the "C"
 * collation on PostgreSQL so that it orders byte-wise, exactly as SQLite's BINARY collation does.
 */
export function columnTypes(dialect: Dialect): { id: DataType; sortedText: DataType } {
  return dialect === 'postgres'
    ? { id: 'serial', sortedText: sql`text collate "C"` }
    : { id: 'integer', sortedText: 'text' };
}

/** A new table whose first column is its integer id: autoincrement on SQLite, serial on PostgreSQL. */
export function createTableWithId(db: AnyDb, dialect: Dialect, table: string) {
  const { id } = columnTypes(dialect);
  return db.schema.createTable(table).addColumn('id', id, (c) => (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()));
}

/** `account_id`: every row's owner; deleting the account deletes the row. */
export const accountRef = (c: ColumnDefinitionBuilder) => c.notNull().references('accounts.id').onDelete('cascade');

/**
 * Substring search over item names at scale: FTS5 with the trigram tokenizer on SQLite, pg_trgm on PostgreSQL.
 * Folders and the other items get an index each, since the listing searches them in separate phases (folders
 * first): the folder phase then reads a tenth of the postings. Without pg_trgm (an extension the server may
 * lack) PostgreSQL falls back to a scan; the listing still answers.
 */
export async function createNameSearchIndex(db: AnyDb, dialect: Dialect): Promise<void> {
  const kinds = [[NAME_SEARCH_TABLES.folders, 1], [NAME_SEARCH_TABLES.others, 0]] as const;
  if (dialect === 'sqlite') {
    for (const [table, isFolder] of kinds) {
      const fts = sql.table(table);
      const kind = sql.lit(isFolder);
      await sql`create virtual table ${fts} using fts5(name_key, content='workspace_items', content_rowid='id', tokenize='trigram')`.execute(db);
      await sql`create trigger ${sql.raw(`${table}_ai`)} after insert on workspace_items when new.is_folder = ${kind} begin
        insert into ${fts}(rowid, name_key) values (new.id, new.name_key); end`.execute(db);
      await sql`create trigger ${sql.raw(`${table}_ad`)} after delete on workspace_items when old.is_folder = ${kind} begin
        insert into ${fts}(${fts}, rowid, name_key) values ('delete', old.id, old.name_key); end`.execute(db);
      await sql`create trigger ${sql.raw(`${table}_au`)} after update of name_key on workspace_items when new.is_folder = ${kind} begin
        insert into ${fts}(${fts}, rowid, name_key) values ('delete', old.id, old.name_key);
        insert into ${fts}(rowid, name_key) values (new.id, new.name_key); end`.execute(db);
    }
    return;
  }
  const available = await sql<{ n: number }>`select count(*)::int as n from pg_available_extensions where name = 'pg_trgm'`.execute(db);
  if ((available.rows[0]?.n ?? 0) === 0) return;
  await sql`create extension if not exists pg_trgm`.execute(db);
  for (const [table, isFolder] of kinds) {
    await sql`create index ${sql.raw(`${table}_trgm_ix`)} on workspace_items using gin (name_key gin_trgm_ops) where is_folder = ${sql.lit(isFolder)}`.execute(db);
  }
}

/**
 * Substring search over embed users' folded username and email, as for item names: FTS5 trigram on SQLite (kept by
 * triggers), pg_trgm on PostgreSQL. Without it a search scans the whole tenant, and every session minted without
 * `embedTenantName` shares one tenant.
 */
export async function createEmbedUserSearchIndex(db: AnyDb, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') {
    const fts = sql.table(EMBED_USER_SEARCH_TABLE);
    await sql`create virtual table ${fts} using fts5(username_key, email_key, content='embed_users', content_rowid='id', tokenize='trigram')`.execute(db);
    await sql`insert into ${fts}(${fts}) values ('rebuild')`.execute(db);
    await sql`create trigger embed_users_fts_ai after insert on embed_users begin
      insert into ${fts}(rowid, username_key, email_key) values (new.id, new.username_key, new.email_key); end`.execute(db);
    await sql`create trigger embed_users_fts_ad after delete on embed_users begin
      insert into ${fts}(${fts}, rowid, username_key, email_key) values ('delete', old.id, old.username_key, old.email_key); end`.execute(db);
    await sql`create trigger embed_users_fts_au after update of username_key, email_key on embed_users begin
      insert into ${fts}(${fts}, rowid, username_key, email_key) values ('delete', old.id, old.username_key, old.email_key);
      insert into ${fts}(rowid, username_key, email_key) values (new.id, new.username_key, new.email_key); end`.execute(db);
    return;
  }
  const available = await sql<{ n: number }>`select count(*)::int as n from pg_available_extensions where name = 'pg_trgm'`.execute(db);
  if ((available.rows[0]?.n ?? 0) === 0) return;
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`create index embed_users_username_trgm_ix on embed_users using gin (username_key gin_trgm_ops)`.execute(db);
  await sql`create index embed_users_email_trgm_ix on embed_users using gin (email_key gin_trgm_ops)`.execute(db);
}
