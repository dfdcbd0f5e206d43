import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve, sep } from 'node:path';
import type * as DuckDb from '@duckdb/node-api';
import type { DuckDBBlobValue, DuckDBConnection, DuckDBDecimalValue, DuckDBInstance, DuckDBPreparedStatement, DuckDBValue, DuckDBValueConverter, Json } from '@duckdb/node-api';
import { AppError } from '../../core/core.errors.js';
import { IDENTIFIER } from '../semantic/semantic.model.js';
import type { DataSourceConfig } from '../semantic/semantic.model.js';
import type { QueryRows, RunOptions, Warehouse } from './warehouse.js';

/** A DuckDB data source: a database file opened read-only, tables read from Parquet or CSV files, or both. */
export type DuckDbSource = Extract<DataSourceConfig, { type: 'duckdb' }>;

/** The catalog the database file is attached as (`warehouse.main.orders`); its tables are also found by bare name. */
const DATABASE_ALIAS = 'warehouse';

/**
 * The DuckDB function that reads a data file, by its extension (a glob's too); undefined for any other file.
 *
 * @example
 * duckDbReaderOf('/srv/events/*.parquet'); // 'read_parquet'
 * duckDbReaderOf('exports/customers.CSV'); // 'read_csv'
 */
export function duckDbReaderOf(file: string): 'read_parquet' | 'read_csv' | undefined {
  const extension = /\.(parquet|csv)$/i.exec(file)?.[1]?.toLowerCase();
  return extension === 'parquet' ? 'read_parquet' : extension === 'csv' ? 'read_csv' : undefined;
}

/**
 * What is wrong with a DuckDB data source beyond its JSON shape, as a path below the data source and a message; the
 * import names it. A source needs `path`, `files` or both; a file's table name is an identifier, unique whatever
 * its case (DuckDB's names are case-insensitive), read from a `.parquet` or `.csv` file or a glob of them, and
 * not a glob of the root directory, which the locked warehouse would have to allow whole.
 *
 * @example
 * duckDbSourceProblem({ type: 'duckdb', files: { events: 'events.json' } });
 * // { path: '.files.events', message: '"events.json" is not a .parquet or .csv file, nor a glob of them' }
 */
export function duckDbSourceProblem(source: DuckDbSource): { path: string; message: string } | undefined {
  const files = Object.entries(source.files ?? {});
  if (source.path === undefined && files.length === 0) {
    return { path: '', message: 'a duckdb data source needs path (a DuckDB database file), files (tables read from Parquet or CSV files), or both' };
  }
  const names = new Map<string, string>();
  for (const [name, file] of files) {
    const path = `.files.${name}`;
    if (!IDENTIFIER.test(name)) return { path, message: `${JSON.stringify(name)} is not a table name: a letter or _, then letters, digits or _ (at most 63)` };
    const twin = names.get(name.toLowerCase());
    if (twin !== undefined) return { path, message: `the table ${name} is also named ${twin}: DuckDB's names ignore case` };
    names.set(name.toLowerCase(), name);
    if (duckDbReaderOf(file) === undefined) return { path, message: `${JSON.stringify(file)} is not a .parquet or .csv file, nor a glob of them` };
    if (isAbsolute(file) && globDirectory(file) === sep) return { path, message: `${JSON.stringify(file)} is a glob directly under ${sep}, which would open every file of the server` };
  }
  return undefined;
}

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
const identifier = (name: string) => `"${name.replace(/"/g, '""')}"`;
const list = (texts: readonly string[]) => `[${texts.map(literal).join(', ')}]`;

const WILD = /[*?[]/;

/**
 * The directory a glob reads, which the locked warehouse allows whole: the one above its first wild segment
 * (DuckDB's glob characters are `*`, `?` and `[`); undefined for a plain file. `/srv/events/2025-*.parquet` reads
 * `/srv/events/`.
 */
function globDirectory(file: string): string | undefined {
  const segments = file.split(sep);
  const wild = segments.findIndex((segment) => WILD.test(segment));
  return wild < 0 ? undefined : segments.slice(0, wild).join(sep) + sep;
}

/** What the warehouse may read once it is locked: each plain file itself, and each glob's directory. */
function readablePaths(files: ReadonlyArray<readonly [name: string, file: string]>): { paths: string[]; directories: string[] } {
  const paths = new Set<string>();
  const directories = new Set<string>();
  for (const [name, file] of files) {
    const directory = globDirectory(file);
    if (directory === undefined) paths.add(file);
    else if (directory === sep) throw new Error(`files.${name}: a glob directly under ${sep} would open every file of the server`);
    else directories.add(directory);
  }
  return { paths: [...paths], directories: [...directories] };
}

/**
 * The statements that build the warehouse, then lock it: the database file attached READ_ONLY, a view per file,
 * and then no file but those named may be read, no extension loaded, and no setting changed again. Relative paths
 * are resolved against the process's working directory, as SQLite's `path` is. DuckDB itself keeps readable the
 * attached database file (with its WAL) and its own temporary directory.
 */
function setupStatements(source: DuckDbSource): string[] {
  const files = Object.entries(source.files ?? {}).map(([name, file]) => [name, resolve(file)] as const);
  const statements = [
    // TIMESTAMP columns and ISO text without an offset are read as UTC, as on the other dialects.
    "SET GLOBAL TimeZone = 'UTC'",
    // Spilled data goes to a directory of its own (DuckDB keeps it readable), not `.tmp` in the working directory.
    `SET temp_directory = ${literal(join(tmpdir(), `svc-duckdb-${randomBytes(6).toString('hex')}`))}`,
  ];
  if (source.path !== undefined) statements.push(`ATTACH ${literal(resolve(source.path))} AS ${DATABASE_ALIAS} (READ_ONLY)`);
  for (const [name, file] of files) statements.push(`CREATE VIEW memory.main.${identifier(name)} AS SELECT * FROM ${duckDbReaderOf(file)!}(${literal(file)})`);
  const { paths, directories } = readablePaths(files);
  if (paths.length > 0) statements.push(`SET allowed_paths = ${list(paths)}`);
  if (directories.length > 0) statements.push(`SET allowed_directories = ${list(directories)}`);
  statements.push(
    'SET enable_external_access = false',
    'SET autoinstall_known_extensions = false',
    'SET autoload_known_extensions = false',
    'SET lock_configuration = true',
  );
  return statements;
}

/** The first table of the database that a file's table would hide: a name means one table, never a guess. */
async function collidingTable(connection: DuckDBConnection, source: DuckDbSource): Promise<string | undefined> {
  const names = Object.keys(source.files ?? {}).map((name) => name.toLowerCase());
  if (source.path === undefined || names.length === 0) return undefined;
  const reader = await connection.runAndReadAll(
    `SELECT table_name FROM information_schema.tables WHERE table_catalog = '${DATABASE_ALIAS}' AND table_schema = 'main' AND lower(table_name) IN (${names.map(literal).join(', ')})`,
  );
  const row = reader.getRows()[0];
  return row === undefined ? undefined : String(row[0]);
}

/**
 * @duckdb/node-api, loaded with the first DuckDB data source that runs a query: loading it takes about 100 ms and
 * 25 MB, which a server or an import without one never pays.
 */
let duckDbApi: Promise<typeof DuckDb> | undefined;
const loadDuckDb = () => (duckDbApi ??= import('@duckdb/node-api'));

/**
 * DuckDB values as the plain JavaScript values the other warehouses give: integers of any width and decimals as
 * numbers (exact below 2^53), timestamps as ISO 8601 instants like PostgreSQL's (`2024-01-05T10:00:00.000Z`;
 * infinities and years a Date cannot hold as DuckDB writes them), blobs as base64, dates and times as text, lists,
 * structs and maps as JSON (DuckDB's JSON conversion, with these rules inside them).
 */
function plainConverter(duckdb: typeof DuckDb): DuckDBValueConverter<Json> {
  const { DuckDBTypeId: Type } = duckdb;
  const instant = (toDate: (value: DuckDBValue) => Date) => (value: DuckDBValue): string => {
    try {
      return toDate(value).toISOString();
    } catch {
      return String(value);
    }
  };
  const instants: Partial<Record<DuckDb.DuckDBTypeId, (value: DuckDBValue) => string>> = {
    [Type.TIMESTAMP]: instant(duckdb.dateFromTimestampValue),
    [Type.TIMESTAMP_S]: instant(duckdb.dateFromTimestampSecondsValue),
    [Type.TIMESTAMP_MS]: instant(duckdb.dateFromTimestampMillisecondsValue),
    [Type.TIMESTAMP_NS]: instant(duckdb.dateFromTimestampNanosecondsValue),
    [Type.TIMESTAMP_TZ]: instant(duckdb.dateFromTimestampTZValue),
  };
  const convert: DuckDBValueConverter<Json> = (value, type, converter) => {
    if (value === null) return null;
    switch (type.typeId) {
      case Type.BIGINT: case Type.UBIGINT: case Type.HUGEINT: case Type.UHUGEINT: case Type.BIGNUM:
        return Number(value as bigint);
      case Type.DECIMAL:
        return (value as DuckDBDecimalValue).toDouble();
      case Type.FLOAT: case Type.DOUBLE:
        return value as number;
      case Type.BLOB:
        return Buffer.from((value as DuckDBBlobValue).bytes).toString('base64');
      default:
        return instants[type.typeId]?.(value) ?? duckdb.JsonDuckDBValueConverter(value, type, converter);
    }
  };
  return convert;
}

/** Binds svc's parameters (text, numbers, booleans, null) positionally; an integer past 2^53 as a double, as it is in JavaScript. */
function bindParameters(duckdb: typeof DuckDb, prepared: DuckDBPreparedStatement, parameters: readonly unknown[]): void {
  parameters.forEach((value, i) => {
    if (value === null || value === undefined) prepared.bindNull(i + 1);
    else if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) prepared.bindValue(i + 1, value, duckdb.DOUBLE);
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') prepared.bindValue(i + 1, value);
    else prepared.bindVarchar(i + 1, JSON.stringify(value));
  });
}

/** DuckDB's errors begin with their kind (`Catalog Error: ...`); these say the data source failed, not the query. */
const UNAVAILABLE = /^(IO|Out of Memory|FATAL|INTERNAL|Connection) Error/;

interface Opened {
  duckdb: typeof DuckDb;
  convert: DuckDBValueConverter<Json>;
  instance: DuckDBInstance;
  connections: DuckDBConnection[];
}

/** Runs one statement: it must be one (DuckDB refuses to prepare several), and a SELECT. */
async function execute(opened: Opened, connection: DuckDBConnection, sql: string, parameters: readonly unknown[], maxRows: number): Promise<QueryRows> {
  const prepared = await connection.prepare(sql);
  try {
    // The database file is attached read-only and the files are read through views, but the in-memory catalog
    // takes writes, and COPY could write into a directory the files are read from.
    if (prepared.statementType !== opened.duckdb.StatementType.SELECT) throw new AppError('invalid_query', 'the data source refused the query: only a SELECT runs');
    bindParameters(opened.duckdb, prepared, parameters);
    const reader = await prepared.runAndReadUntil(maxRows + 1);
    return { fields: reader.columnNames(), rows: reader.convertRows(opened.convert).slice(0, maxRows + 1) };
  } finally {
    prepared.destroySync();
  }
}

/**
 * A DuckDB data source: one in-memory DuckDB instance (two threads) per data source, the database file attached
 * READ_ONLY, a view per Parquet or CSV file, then locked (warehouse.duckdb.ts `setupStatements`). Statements run on a
 * small pool of connections; only a SELECT runs; one past its time is interrupted. Opened on the first query.
 */
export class DuckDbWarehouse implements Warehouse {
  readonly dialect = 'duckdb' as const;
  private opening: Promise<Opened> | undefined;
  private readonly idle: DuckDBConnection[] = [];
  private readonly waiting: Array<{ resolve(connection: DuckDBConnection): void; reject(error: unknown): void }> = [];
  private readonly running = new Map<DuckDBConnection, Promise<unknown>>();
  private closed = false;

  constructor(private readonly source: DuckDbSource, private readonly size: number) {}

  private async open(): Promise<Opened> {
    let instance: DuckDBInstance | undefined;
    try {
      const duckdb = await loadDuckDb();
      instance = await duckdb.DuckDBInstance.create(':memory:', { threads: '2' });
      const setup = await instance.connect();
      try {
        for (const statement of setupStatements(this.source)) await setup.run(statement);
        const hidden = await collidingTable(setup, this.source);
        if (hidden !== undefined) throw new Error(`files.${hidden}: the database at path already has a table ${hidden}`);
      } finally {
        setup.closeSync();
      }
      const connections: DuckDBConnection[] = [];
      for (let i = 0; i < this.size; i++) {
        const connection = await instance.connect();
        // Each connection finds the database's tables (bare or schema-qualified), then the files' views.
        if (this.source.path !== undefined) await connection.run(`SET search_path = '${DATABASE_ALIAS}.main,memory.main'`);
        connections.push(connection);
      }
      return { duckdb, convert: plainConverter(duckdb), instance, connections };
    } catch (error) {
      instance?.closeSync();
      throw new AppError('service_unavailable', `the data source could not be opened: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The open warehouse and a free connection of it; a warehouse that failed to open is tried again by the next query. */
  private async acquire(): Promise<{ opened: Opened; connection: DuckDBConnection }> {
    if (this.opening === undefined) {
      this.opening = this.open();
      this.opening.then((opened) => this.idle.push(...opened.connections), () => {
        this.opening = undefined;
      });
    }
    const opened = await this.opening;
    if (this.closed) throw new AppError('service_unavailable', 'the data source is closed');
    const connection = this.idle.pop() ?? await new Promise<DuckDBConnection>((resolve, reject) => this.waiting.push({ resolve, reject }));
    return { opened, connection };
  }

  private release(connection: DuckDBConnection): void {
    this.running.delete(connection);
    const next = this.waiting.shift();
    if (next !== undefined) next.resolve(connection);
    else this.idle.push(connection);
  }

  async run(sql: string, parameters: readonly unknown[], options: RunOptions): Promise<QueryRows> {
    if (this.closed) throw new AppError('service_unavailable', 'the data source is closed');
    const { opened, connection } = await this.acquire();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      connection.interrupt();
    }, options.timeoutMs);
    const work = execute(opened, connection, sql, parameters, options.maxRows);
    this.running.set(connection, work);
    try {
      return await work;
    } catch (error) {
      if (error instanceof AppError) throw error;
      const message = error instanceof Error ? error.message : String(error);
      if (this.closed) throw new AppError('service_unavailable', 'the data source is closed');
      if (timedOut) throw new AppError('query_timeout', `the query ran longer than ${options.timeoutMs} ms and was stopped`);
      if (UNAVAILABLE.test(message)) throw new AppError('service_unavailable', `the data source failed: ${message}`);
      throw new AppError('invalid_query', `the data source refused the query: ${message}`);
    } finally {
      clearTimeout(timer);
      this.release(connection);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiting.splice(0)) waiter.reject(new AppError('service_unavailable', 'the data source is closed'));
    const opened = await this.opening?.catch(() => undefined);
    if (opened === undefined) return;
    for (const connection of this.running.keys()) connection.interrupt();
    await Promise.allSettled(this.running.values());
    for (const connection of opened.connections) connection.closeSync();
    opened.instance.closeSync();
  }
}
