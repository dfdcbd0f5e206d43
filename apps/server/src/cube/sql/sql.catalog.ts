import { constantOf, functionName, names, nodeOf, outputName, unsupported } from './sql.ast.js';
import type { Node } from './sql.ast.js';
import { OID } from './sql.wire.js';
import type { WireAnswer, WireColumn, WireRow } from './sql.wire.js';

// The SQL API's small in-memory catalog (issue 36 part 3; docs/cube-sql.md): what `psql`'s `\d`, `\d orders` and
// BI tools' schema browsers read from pg_catalog and information_schema, answered from the caller's views (each a
// table of schema `public`, its columns the members the caller's policies show), not from a real Postgres. A query
// over these relations is evaluated here row by row: the main relation's rows, each joined to its companions (a
// table's namespace, a column's table and type), the WHERE and the select list over them, then ORDER BY and LIMIT.
// A predicate or function this evaluator does not know is treated as unknown and does not filter rows out; a
// relation it does not model (pg_policy, pg_inherits, pg_index...) has no rows, as it would for svc's tables.

/** One column of a catalog table, with its Postgres type. */
export interface CatalogColumn {
  name: string;
  typeOid: number;
  /** The member's title: psql's `\d+` Description (col_description). */
  description?: string;
}

/** A view of the caller's model as a table: its OID (stable for a connection), name and columns. */
export interface CatalogTable {
  oid: number;
  name: string;
  columns: CatalogColumn[];
  /** The view's title (obj_description). */
  description?: string;
}

export interface Catalog {
  tables: CatalogTable[];
  database: string;
  user: string;
}

export const SERVER_VERSION = '15.0';
export const VERSION = `PostgreSQL ${SERVER_VERSION} (svc SQL API, Cube-compatible; not a PostgreSQL server)`;
const PUBLIC_OID = 2200;

/** The settings `SHOW` answers and `current_setting` reads. */
export const SETTINGS: Record<string, string> = {
  server_version: SERVER_VERSION, server_version_num: '150000', server_encoding: 'UTF8', client_encoding: 'UTF8',
  datestyle: 'ISO, MDY', timezone: 'UTC', integer_datetimes: 'on', standard_conforming_strings: 'on',
  transaction_isolation: 'read committed', default_transaction_isolation: 'read committed', search_path: 'public',
  max_identifier_length: '63', intervalstyle: 'postgres', is_superuser: 'off', application_name: '', lc_collate: 'C',
  lc_ctype: 'C', max_index_keys: '32', statement_timeout: '0', transaction_read_only: 'on', default_transaction_read_only: 'on',
};

export const TYPE_NAMES: Record<number, string> = {
  [OID.bool]: 'boolean', [OID.int8]: 'bigint', [OID.int4]: 'integer', [OID.text]: 'text', [OID.oid]: 'oid',
  [OID.float8]: 'double precision', [OID.timestamp]: 'timestamp without time zone', [OID.numeric]: 'numeric',
};
const TYPE_SHORT: Record<number, string> = {
  [OID.bool]: 'bool', [OID.int8]: 'int8', [OID.int4]: 'int4', [OID.text]: 'text', [OID.oid]: 'oid',
  [OID.float8]: 'float8', [OID.timestamp]: 'timestamp', [OID.numeric]: 'numeric',
};

type Value = string | number | boolean | null | undefined;
type Row = Record<string, Value>;
/** A row of the FROM list: each relation's alias (or name) and its row, null for an outer join's missing side. */
type Env = Map<string, Row | null>;

interface Relation { schema: string | undefined; name: string; alias: string }

/** Every relation named in a FROM list, joins flattened. `undefined`: something this catalog cannot read (a subquery). */
function relationsOf(from: Node[] | undefined): Relation[] | undefined {
  const out: Relation[] = [];
  const walk = (node: Node): boolean => {
    const [type, body] = nodeOf(node);
    if (type === 'RangeVar') {
      out.push({ schema: body.schemaname, name: String(body.relname).toLowerCase(), alias: body.alias?.aliasname ?? String(body.relname).toLowerCase() });
      return true;
    }
    if (type === 'JoinExpr') return walk(body.larg) && walk(body.rarg);
    return false;
  };
  for (const node of from ?? []) if (!walk(node)) return undefined;
  return out;
}

const CATALOG_SCHEMAS = new Set(['pg_catalog', 'information_schema']);

/** Whether a SELECT reads the catalog (a pg_catalog or information_schema relation) rather than the caller's views. */
export function readsCatalog(select: Node): boolean {
  if (select.op !== undefined && select.op !== 'SETOP_NONE') return readsCatalog(select.larg ?? {});
  const relations = relationsOf(select.fromClause) ?? [];
  return relations.some((r) => (r.schema !== undefined && CATALOG_SCHEMAS.has(r.schema)) || (r.schema === undefined && r.name.startsWith('pg_')));
}

function rowsOf(relation: Relation, catalog: Catalog): Row[] | undefined {
  const tableRow = (t: CatalogTable): Row => ({
    oid: t.oid, relname: t.name, relkind: 'r', relnamespace: PUBLIC_OID, relowner: 10, relchecks: 0, relhasindex: false, relhasrules: false,
    relhastriggers: false, relrowsecurity: false, relforcerowsecurity: false, relispartition: false, reltablespace: 0, reloftype: 0,
    relpersistence: 'p', relreplident: 'd', relam: 2, reltoastrelid: 0, relnatts: t.columns.length, relhassubclass: false,
  });
  if (relation.schema === 'information_schema') {
    switch (relation.name) {
      case 'tables': return catalog.tables.map((t) => ({ table_catalog: catalog.database, table_schema: 'public', table_name: t.name, table_type: 'BASE TABLE', is_insertable_into: 'NO' }));
      case 'columns': return catalog.tables.flatMap((t) => t.columns.map((c, i) => ({
        table_catalog: catalog.database, table_schema: 'public', table_name: t.name, column_name: c.name, ordinal_position: i + 1,
        data_type: TYPE_NAMES[c.typeOid] ?? 'text', udt_name: TYPE_SHORT[c.typeOid] ?? 'text', is_nullable: 'YES', column_default: null,
      })));
      case 'schemata': return ['public', 'information_schema', 'pg_catalog'].map((schema) => ({ catalog_name: catalog.database, schema_name: schema, schema_owner: catalog.user }));
      default: return undefined;
    }
  }
  switch (relation.name) {
    case 'pg_class': return catalog.tables.map(tableRow);
    case 'pg_tables': return catalog.tables.map((t) => ({ schemaname: 'public', tablename: t.name, tableowner: catalog.user, hasindexes: false }));
    case 'pg_namespace': return [{ oid: PUBLIC_OID, nspname: 'public', nspowner: 10 }, { oid: 11, nspname: 'pg_catalog', nspowner: 10 }, { oid: 13000, nspname: 'information_schema', nspowner: 10 }];
    case 'pg_attribute': return catalog.tables.flatMap((t) => t.columns.map((c, i) => ({
      attrelid: t.oid, attname: c.name, atttypid: c.typeOid, atttypmod: -1, attnum: i + 1, attnotnull: false, attisdropped: false,
      atthasdef: false, attidentity: '', attgenerated: '', attcollation: 0, attlen: -1, attstorage: c.typeOid === OID.bool || c.typeOid === OID.timestamp ? 'p' : 'x', attcompression: '', attstattarget: -1,
    })));
    case 'pg_type': return Object.entries(TYPE_SHORT).map(([oid, typname]) => ({ oid: Number(oid), typname, typnamespace: 11, typtype: 'b', typlen: -1, typbasetype: 0, typtypmod: -1, typnotnull: false, typelem: 0 }));
    case 'pg_database': return [{ oid: 1, datname: catalog.database, datallowconn: true }];
    case 'pg_am': return [{ oid: 2, amname: 'heap' }];
    case 'pg_settings': return Object.entries(SETTINGS).map(([name, setting]) => ({ name, setting }));
    default: return [];
  }
}

/** The row a relation joined to the main relation's row contributes (null: none, as an outer join's missing side). */
function companionOf(relation: Relation, main: Relation, row: Row, catalog: Catalog): Row | null {
  const rows = rowsOf(relation, catalog) ?? [];
  if (relation.name === 'pg_namespace') return rows[0] ?? null;
  if (relation.name === 'pg_am') return rows[0] ?? null;
  if (relation.name === 'pg_class' && main.name === 'pg_attribute') return rows.find((r) => r.oid === row.attrelid) ?? null;
  if (relation.name === 'pg_type' && main.name === 'pg_attribute') return rows.find((r) => r.oid === row.atttypid) ?? null;
  if (relation.schema === 'information_schema' && main.schema === 'information_schema') {
    return rows.find((r) => r.table_name === row.table_name) ?? null;
  }
  return null;
}

/** Evaluates an expression over a row. `undefined`: unknown to this evaluator (a predicate that does not filter). */
export function evaluate(node: Node | undefined, env: Env, catalog: Catalog, params: readonly Value[]): Value {
  const [type, body] = nodeOf(node);
  const ev = (n: Node | undefined) => evaluate(n, env, catalog, params);
  switch (type) {
    case 'A_Const': return constantOf(body);
    case 'ParamRef': return params[Number(body.number) - 1];
    case 'ColumnRef': {
      const fields = names(body.fields).map((f) => f.toLowerCase());
      const column = fields.at(-1)!;
      if (fields.length >= 2) {
        const row = env.get(fields.at(-2)!);
        if (row === undefined) return undefined;
        return row === null ? null : row[column];
      }
      for (const row of env.values()) if (row !== null && column in row) return row[column];
      return undefined;
    }
    case 'TypeCast': {
      const value = ev(body.arg);
      const target = names(body.typeName?.names).at(-1)?.toLowerCase();
      if (target === 'regclass' && typeof value === 'number') return catalog.tables.find((t) => t.oid === value)?.name ?? String(value);
      if (target === 'regclass' && typeof value === 'string') return catalog.tables.find((t) => t.name === value)?.oid ?? undefined;
      if ((target === 'int4' || target === 'int8' || target === 'oid' || target === 'int2') && typeof value === 'string' && /^-?\d+$/.test(value)) return Number(value);
      if (target === 'text' && value !== null && value !== undefined) return typeof value === 'boolean' ? (value ? 'true' : 'false') : String(value);
      return value;
    }
    case 'CollateClause': return ev(body.arg);
    case 'SQLValueFunction': {
      const op = String(body.op);
      if (op.includes('USER') || op === 'SVFOP_CURRENT_ROLE') return catalog.user;
      if (op === 'SVFOP_CURRENT_CATALOG') return catalog.database;
      if (op === 'SVFOP_CURRENT_SCHEMA') return 'public';
      return undefined;
    }
    case 'FuncCall': {
      const name = functionName(body);
      const args = (body.args ?? []) as Node[];
      switch (name) {
        case 'version': return VERSION;
        case 'current_database': return catalog.database;
        case 'current_schema': return 'public';
        case 'current_schemas': return '{public}';
        case 'current_user': case 'session_user': case 'pg_get_userbyid': return catalog.user;
        case 'pg_table_is_visible': return true;
        case 'pg_relation_is_publishable': return false;
        case 'format_type': {
          const oid = ev(args[0]);
          return typeof oid === 'number' ? TYPE_NAMES[oid] ?? 'text' : null;
        }
        case 'current_setting': {
          const setting = ev(args[0]);
          return typeof setting === 'string' ? SETTINGS[setting.toLowerCase()] ?? null : null;
        }
        case 'pg_backend_pid': return 1;
        case 'col_description': {
          const [relid, attnum] = [ev(args[0]), ev(args[1])];
          return catalog.tables.find((t) => t.oid === relid)?.columns[Number(attnum) - 1]?.description ?? null;
        }
        case 'obj_description': {
          const oid = ev(args[0]);
          return catalog.tables.find((t) => t.oid === oid)?.description ?? null;
        }
        case 'pg_get_expr': case 'pg_get_viewdef': case 'array_to_string': case 'pg_encoding_to_char':
          return name === 'pg_encoding_to_char' ? 'UTF8' : null;
        case 'lower': { const v = ev(args[0]); return typeof v === 'string' ? v.toLowerCase() : v; }
        case 'upper': { const v = ev(args[0]); return typeof v === 'string' ? v.toUpperCase() : v; }
        default: return undefined;
      }
    }
    case 'NullTest': {
      const value = ev(body.arg);
      if (value === undefined) return undefined;
      return body.nulltesttype === 'IS_NULL' ? value === null : value !== null;
    }
    case 'BoolExpr': {
      const values = (body.args as Node[]).map(ev);
      if (body.boolop === 'NOT_EXPR') return values[0] === undefined || values[0] === null ? values[0] : !values[0];
      if (body.boolop === 'AND_EXPR') {
        if (values.some((v) => v === false)) return false;
        if (values.some((v) => v === null)) return null;
        return values.every((v) => v === true) ? true : undefined;
      }
      if (values.some((v) => v === true)) return true;
      return values.some((v) => v === undefined) ? undefined : values.some((v) => v === null) ? null : false;
    }
    case 'CaseExpr': {
      const subject = body.arg === undefined ? undefined : ev(body.arg);
      for (const when of (body.args ?? []) as Node[]) {
        const [, w] = nodeOf(when);
        const test = body.arg === undefined ? ev(w.expr) : looseEquals(subject, ev(w.expr));
        if (test === undefined) return undefined;
        if (test === true) return ev(w.result);
      }
      return body.defresult === undefined ? null : ev(body.defresult);
    }
    case 'A_Expr': return evaluateOperator(body, ev);
    case 'SubLink': return null;
    default: return undefined;
  }
}

function looseEquals(a: Value, b: Value): boolean | null | undefined {
  if (a === undefined || b === undefined) return undefined;
  if (a === null || b === null) return null;
  return String(a) === String(b) || (typeof a === 'boolean' && String(b) === (a ? 't' : 'f')) || (typeof b === 'boolean' && String(a) === (b ? 't' : 'f'));
}

function compare(a: Value, b: Value): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number' && typeof b === 'string' && b.trim() !== '' && !Number.isNaN(Number(b))) return a - Number(b);
  if (typeof b === 'number' && typeof a === 'string' && a.trim() !== '' && !Number.isNaN(Number(a))) return Number(a) - b;
  const [x, y] = [String(a), String(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A LIKE pattern as a regular expression. */
export function likePattern(pattern: string, flags = ''): RegExp {
  const source = pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/%/g, '.*').replace(/_/g, '.');
  return new RegExp(`^${source}$`, `s${flags}`);
}

function safeRegExp(source: string, flags: string): RegExp | undefined {
  try {
    return new RegExp(source, flags);
  } catch {
    return undefined;
  }
}

function evaluateOperator(body: Node, ev: (n: Node | undefined) => Value): Value {
  const op = names(body.name).at(-1)!;
  const left = ev(body.lexpr);
  if (body.kind === 'AEXPR_IN') {
    const items = (nodeOf(body.rexpr)[1].items ?? []) as Node[];
    const values = items.map(ev);
    if (left === undefined || values.includes(undefined)) return undefined;
    const found = values.some((v) => looseEquals(left, v) === true);
    return op === '=' ? found : !found;
  }
  const right = ev(body.rexpr);
  if (left === undefined || right === undefined) return undefined;
  if (left === null || right === null) return null;
  switch (op) {
    case '=': return looseEquals(left, right);
    case '<>': case '!=': return !looseEquals(left, right);
    case '<': return compare(left, right) < 0;
    case '>': return compare(left, right) > 0;
    case '<=': return compare(left, right) <= 0;
    case '>=': return compare(left, right) >= 0;
    case '~': case '!~': case '~*': case '!~*': {
      const re = safeRegExp(String(right), op.includes('*') ? 'i' : '');
      if (re === undefined) return undefined;
      return op.startsWith('!') ? !re.test(String(left)) : re.test(String(left));
    }
    case '~~': case '!~~': case '~~*': case '!~~*': {
      const matched = likePattern(String(right), op.includes('*') ? 'i' : '').test(String(left));
      return op.startsWith('!') ? !matched : matched;
    }
    default: return undefined;
  }
}

/** A value in Postgres's text form. */
const textOf = (value: Value): string | null => (value === null || value === undefined ? null : typeof value === 'boolean' ? (value ? 't' : 'f') : String(value));

function typeOfColumn(values: Value[]): number {
  const known = values.find((v) => v !== null && v !== undefined);
  if (typeof known === 'boolean') return OID.bool;
  if (typeof known === 'number') return !Number.isInteger(known) ? OID.float8 : values.every((v) => typeof v !== 'number' || Math.abs(v) < 2 ** 31) ? OID.int4 : OID.int8;
  return OID.text;
}

/** A SELECT over the catalog (or with no FROM at all: `SELECT 1`, `SELECT version()`), evaluated in memory. */
export function answerCatalogSelect(select: Node, catalog: Catalog, params: readonly Value[], constantsOnly: boolean): WireAnswer {
  const { columns, rows, envs } = selectRows(select, catalog, params, constantsOnly);
  const sorted = sortRows(select, rows, envs, columns, catalog, params);
  const offset = Number(select.limitOffset === undefined ? 0 : evaluate(select.limitOffset, new Map(), catalog, params) ?? 0);
  const limit = select.limitCount === undefined ? undefined : Number(evaluate(select.limitCount, new Map(), catalog, params) ?? Infinity);
  const kept = sorted.slice(offset, limit === undefined ? undefined : offset + limit);
  const oids = columns.map((_, i) => typeOfColumn(kept.map((row) => row[i])));
  return {
    columns: columns.map((name, i) => ({ name, oid: oids[i]! })) satisfies WireColumn[],
    rows: kept.map((row) => row.map(textOf)) satisfies WireRow[],
    tag: `SELECT ${kept.length}`,
  };
}

function selectRows(select: Node, catalog: Catalog, params: readonly Value[], constantsOnly: boolean): { columns: string[]; rows: Value[][]; envs: Env[] } {
  if (select.op !== undefined && select.op !== 'SETOP_NONE') {
    if (select.op !== 'SETOP_UNION') throw unsupported(select.op === 'SETOP_INTERSECT' ? 'INTERSECT' : 'EXCEPT');
    const left = selectRows(select.larg, catalog, params, constantsOnly);
    const right = selectRows(select.rarg, catalog, params, constantsOnly);
    let rows = [...left.rows, ...right.rows];
    if (select.all !== true) {
      const seen = new Set<string>();
      rows = rows.filter((row) => !seen.has(JSON.stringify(row)) && seen.add(JSON.stringify(row)) !== undefined);
    }
    return { columns: left.columns, rows, envs: rows.map(() => new Map()) };
  }
  if (select.valuesLists !== undefined) throw unsupported('VALUES');
  const targets = ((select.targetList ?? []) as Node[]).map((t) => nodeOf(t)[1]);
  const columns = targets.map(outputName);
  let envs: Env[];
  if (select.fromClause === undefined) {
    envs = [new Map()];
  } else {
    const relations = relationsOf(select.fromClause);
    if (relations === undefined) throw unsupported('a subquery or function in FROM over the catalog');
    const [main, ...joined] = relations;
    const mainRows = rowsOf(main!, catalog);
    if (mainRows === undefined) throw unsupported(`${main!.schema ?? 'pg_catalog'}.${main!.name}`);
    // A relation this catalog does not model has no rows: an inner join with it has none either.
    const modelled = new Set(['pg_class', 'pg_namespace', 'pg_am', 'pg_attribute', 'pg_type', 'tables', 'columns', 'schemata']);
    const empty = joined.some((r) => !modelled.has(r.name));
    envs = empty ? [] : mainRows.map((row) => new Map<string, Row | null>([[main!.alias, row], ...joined.map((r) => [r.alias, companionOf(r, main!, row, catalog)] as [string, Row | null])]));
    if (select.whereClause !== undefined) envs = envs.filter((env) => evaluate(select.whereClause, env, catalog, params) !== false && evaluate(select.whereClause, env, catalog, params) !== null);
  }
  if (targets.some((t) => nodeOf(t.val)[0] === 'ColumnRef' && names(nodeOf(t.val)[1].fields).at(-1) === '*')) {
    if (envs.length === 0 && select.fromClause === undefined) throw unsupported('SELECT * without FROM');
  }
  const rows = envs.map((env) => targets.flatMap((t) => {
    const [type, body] = nodeOf(t.val);
    if (type === 'ColumnRef' && names(body.fields).at(-1) === '*') return Object.values([...env.values()][0] ?? {});
    const value = evaluate(t.val, env, catalog, params);
    if (value === undefined && constantsOnly) throw unsupported(`the expression "${outputName(t)}"`);
    return [value];
  }));
  const starColumns = targets.flatMap((t, i) => {
    const [type, body] = nodeOf(t.val);
    if (type !== 'ColumnRef' || names(body.fields).at(-1) !== '*') return [columns[i]!];
    const relations = relationsOf(select.fromClause) ?? [];
    return Object.keys(rowsOf(relations[0]!, catalog)?.[0] ?? {});
  });
  return { columns: starColumns, rows, envs };
}

function sortRows(select: Node, rows: Value[][], envs: Env[], columns: string[], catalog: Catalog, params: readonly Value[]): Value[][] {
  const sorts = ((select.sortClause ?? []) as Node[]).map((s) => nodeOf(s)[1]);
  if (sorts.length === 0) return rows;
  const keyed = rows.map((row, i) => ({
    row,
    keys: sorts.map((sort) => {
      const [type, body] = nodeOf(sort.node);
      if (type === 'A_Const' && typeof constantOf(body) === 'number') return row[(constantOf(body) as number) - 1];
      if (type === 'ColumnRef') {
        const at = columns.indexOf(names(body.fields).at(-1)!);
        if (at !== -1 && names(body.fields).length === 1) return row[at];
      }
      return evaluate(sort.node, envs[i] ?? new Map(), catalog, params);
    }),
  }));
  keyed.sort((a, b) => {
    for (let k = 0; k < sorts.length; k++) {
      const [x, y] = [a.keys[k], b.keys[k]];
      const desc = sorts[k]!.sortby_dir === 'SORTBY_DESC' ? -1 : 1;
      if (x === y) continue;
      if (x === null || x === undefined) return desc;
      if (y === null || y === undefined) return -desc;
      const c = compare(x, y);
      if (c !== 0) return c * desc;
    }
    return 0;
  });
  return keyed.map((k) => k.row);
}
