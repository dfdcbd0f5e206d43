import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';

/** One row of a bulk write, in the table spec's column order. */
export type Row = Array<string | number | null>;
type PgType = 'int' | 'text';

export interface TableSpec {
  table: string;
  columns: string[];
  types: PgType[];
}

/** A table spec: its name and its columns with their PostgreSQL array types. */
export const T = (table: string, columns: Array<[string, PgType]>): TableSpec => ({ table, columns: columns.map((c) => c[0]), types: columns.map((c) => c[1]) });

/** Writes rows in batches; the two dialects differ only here. */
export interface BulkWriter {
  write(spec: TableSpec, rows: Row[]): Promise<void>;
  finish(): Promise<void>;
}

function sqliteWriter(path: string): BulkWriter {
  const db = new SqliteDatabase(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    async write(spec, rows) {
      let statement = statements.get(spec.table);
      if (!statement) {
        statement = db.prepare(`insert into ${spec.table} (${spec.columns.join(', ')}) values (${spec.columns.map(() => '?').join(', ')})`);
        statements.set(spec.table, statement);
      }
      const run = statement;
      db.transaction(() => {
        for (const row of rows) run.run(row);
      })();
    },
    async finish() {
      db.exec('analyze');
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
    },
  };
}

function postgresWriter(url: string, serialTables: readonly string[], skipTriggers: boolean): BulkWriter {
  const client = new pg.Client({ connectionString: url });
  // `replica` skips ordinary triggers (and foreign-key checks) for this session only: a bulk load states its rows.
  const connected = client.connect().then(async () => {
    if (skipTriggers) await client.query('set session_replication_role = replica');
  });
  return {
    async write(spec, rows) {
      await connected;
      const columns = spec.columns.map((_, c) => rows.map((row) => row[c]));
      const unnest = spec.types.map((type, c) => `$${c + 1}::${type === 'int' ? 'int' : 'text'}[]`).join(', ');
      await client.query(`insert into ${spec.table} (${spec.columns.join(', ')}) select * from unnest(${unnest})`, columns);
    },
    async finish() {
      await connected;
      for (const table of serialTables) {
        await client.query(`select setval(pg_get_serial_sequence('${table}', 'id'), (select max(id) from ${table}))`);
      }
      await client.query('analyze');
      await client.end();
    },
  };
}

/**
 * A bulk writer for an empty, migrated database of either dialect, for data far too large for the import path.
 * Ids are explicit; `serialTables` are the tables whose id sequence PostgreSQL must move past them at the end.
 * `skipTriggers` (PostgreSQL, superuser) loads without firing row triggers, for rows whose trigger work the
 * caller does not need.
 */
export function bulkWriter(
  target: { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string },
  serialTables: readonly string[],
  options: { skipTriggers?: boolean } = {},
): BulkWriter {
  return target.dialect === 'sqlite' ? sqliteWriter(target.path) : postgresWriter(target.url, serialTables, options.skipTriggers ?? false);
}
