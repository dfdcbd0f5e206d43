import { SqlError } from './sql.wire.js';

// Helpers over libpg-query's parse tree (PostgreSQL's own, as JSON: `{NodeType: {...fields}}`), for the SQL API's
// translation (sql.translate.ts) and its small catalog (sql.catalog.ts).

// The tree is PostgreSQL's JSON: typed field by field in @pgsql/types, read here by node name.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Node = Record<string, any>;

/** The one node type of a node and its fields: `{ColumnRef: {...}}` -> ['ColumnRef', {...}]. */
export function nodeOf(node: Node | undefined): [string, Node] {
  if (node === undefined || node === null) return ['', {}];
  const [type] = Object.keys(node);
  return [type ?? '', (node[type!] ?? {}) as Node];
}

/** A `String` node list's values: a ColumnRef's fields, a function's name (`pg_catalog.version` -> [pg_catalog, version]). */
export function names(list: Node[] | undefined): string[] {
  return (list ?? []).map((item) => {
    const [type, body] = nodeOf(item);
    if (type === 'String') return String(body.sval ?? '');
    if (type === 'A_Star') return '*';
    return '?';
  });
}

/** A function call's name without its schema, lower case: `pg_catalog.format_type` -> `format_type`. */
export const functionName = (call: Node): string => names(call.funcname).at(-1)!.toLowerCase();

/** A constant's value: number, string, boolean or null. */
export function constantOf(body: Node): string | number | boolean | null {
  if (body.isnull === true) return null;
  if (body.ival !== undefined) return Number(body.ival.ival ?? 0);
  if (body.fval !== undefined) return Number(body.fval.fval);
  if (body.sval !== undefined) return String(body.sval.sval ?? '');
  if (body.boolval !== undefined) return body.boolval.boolval === true;
  if (body.bsval !== undefined) return String(body.bsval.bsval);
  return null;
}

/** The name Postgres gives a select list entry: its alias, a column's name, a function's name, else `?column?`. */
export function outputName(target: Node): string {
  if (typeof target.name === 'string') return target.name;
  let [type, body] = nodeOf(target.val);
  while (type === 'TypeCast') {
    const [inner, innerBody] = nodeOf(body.arg);
    if (inner === 'A_Const') return names(body.typeName?.names).at(-1) ?? '?column?';
    [type, body] = [inner, innerBody];
  }
  if (type === 'ColumnRef') return names(body.fields).at(-1)!;
  if (type === 'FuncCall') return functionName(body);
  if (type === 'SQLValueFunction') return String(body.op ?? '').replace(/^SVFOP_/, '').toLowerCase();
  if (type === 'CaseExpr') return 'case';
  return '?column?';
}

/** A node compared with another, locations aside (ORDER BY and GROUP BY name select entries by expression). */
export function sameExpression(a: Node | undefined, b: Node | undefined): boolean {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'location').map(([k, v]) => [k, strip(v)]));
    }
    return value;
  };
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}

export const unsupported = (what: string) => new SqlError('0A000', `${what} is not supported by svc's SQL API (docs/cube-sql.md)`);
