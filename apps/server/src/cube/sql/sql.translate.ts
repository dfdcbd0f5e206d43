import type { MetaCube, MetaMember } from '../../data/semantic/semantic.meta.js';
import { constantOf, functionName, names, nodeOf, outputName, sameExpression, unsupported } from './sql.ast.js';
import type { Node } from './sql.ast.js';
import { OID, SqlError } from './sql.wire.js';

// A SELECT over one of the caller's views, read into a Cube query (issue 36 part 3; docs/cube-sql.md), which the SQL
// API runs through Cube's `load` (cube.service.ts): the caller's policies, the plan (a rollup when one covers it),
// the result cache. Views are tables; a dimension is a column, a measure is `MEASURE(col)` or the aggregate it
// declares (`SUM(amount)` when `amount` is a sum, `COUNT(*)` for a count), `DATE_TRUNC('month', col)` a time
// dimension at a granularity. WHERE's comparisons become Cube filters; what has no Cube filter is a 0A000 error.

/** One output column: its name, type, and the key of Cube's `data` rows it reads. */
export interface SqlOutput {
  name: string;
  oid: number;
  key: string;
  time: boolean;
}

export interface TranslatedSelect {
  query: Record<string, unknown>;
  outputs: SqlOutput[];
}

type Param = string | null;
type FilterValue = string | number | boolean;
type CubeFilter = { member: string; operator: string; values?: FilterValue[] } | { and: CubeFilter[] } | { or: CubeFilter[] };

const GRAINS = new Set(['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year']);
const AGGREGATES: Record<string, string[]> = { sum: ['sum'], avg: ['avg'], min: ['min'], max: ['max'], count: ['count'] };

function typeOid(member: MetaMember, measure: boolean): number {
  if (measure || member.type === 'number') return OID.numeric;
  if (member.type === 'time') return OID.timestamp;
  if (member.type === 'boolean') return OID.bool;
  return OID.text;
}

interface Select {
  kind: 'measure' | 'dimension' | 'time';
  member: MetaMember;
  granularity?: string;
  node: Node;
}

export function translateSelect(select: Node, cube: MetaCube, alias: string, params: readonly Param[], rowCap: number): TranslatedSelect {
  if (select.havingClause !== undefined) throw unsupported('HAVING (filter on a measure in WHERE instead)');
  if (select.windowClause !== undefined) throw unsupported('a window');
  if (select.withClause !== undefined) throw unsupported('WITH');
  const member = (fields: string[], at: string): MetaMember => {
    const lower = fields.map((f) => f.toLowerCase());
    if (lower.length > 2 || (lower.length === 2 && lower[0] !== alias && lower[0] !== cube.name)) throw new SqlError('42P01', `missing FROM-clause entry for table "${fields[0]}"`);
    const name = `${cube.name}.${lower.at(-1)}`;
    const found = [...cube.measures, ...cube.dimensions].find((m) => m.name === name);
    if (found === undefined) throw new SqlError('42703', `column "${lower.at(-1)}" does not exist in ${cube.name}${at}`);
    return found;
  };
  const isMeasure = (m: MetaMember) => cube.measures.includes(m);
  const columnOf = (node: Node | undefined, at: string): MetaMember => {
    const [type, body] = nodeOf(node);
    if (type !== 'ColumnRef') throw unsupported(`an expression other than a column ${at}`);
    return member(names(body.fields), at);
  };
  const readTarget = (node: Node): Select => {
    const [type, body] = nodeOf(node);
    if (type === 'ColumnRef') {
      if (names(body.fields).at(-1) === '*') throw unsupported('SELECT * (svc answers grouped queries: name the dimensions and measures)');
      const m = member(names(body.fields), '');
      return { kind: isMeasure(m) ? 'measure' : 'dimension', member: m, node };
    }
    if (type === 'FuncCall') {
      const name = functionName(body);
      const args = (body.args ?? []) as Node[];
      if (name === 'measure') {
        const m = columnOf(args[0], 'in MEASURE()');
        if (!isMeasure(m)) throw new SqlError('42883', `MEASURE() takes a measure; ${m.name.split('.')[1]} is a dimension`);
        return { kind: 'measure', member: m, node };
      }
      if (name === 'date_trunc') {
        const grain = nodeOf(args[0])[0] === 'A_Const' ? constantOf(nodeOf(args[0])[1]) : undefined;
        if (typeof grain !== 'string' || !GRAINS.has(grain.toLowerCase())) throw new SqlError('22023', `DATE_TRUNC takes one of ${[...GRAINS].join(', ')}`);
        const m = columnOf(args[1], 'in DATE_TRUNC()');
        if (m.type !== 'time') throw new SqlError('42883', `DATE_TRUNC takes a time dimension; ${m.name.split('.')[1]} is not one`);
        return { kind: 'time', member: m, granularity: grain.toLowerCase(), node };
      }
      if (name in AGGREGATES) {
        if (name === 'count' && (body.agg_star === true || args.length === 0)) {
          const count = cube.measures.find((m) => m.aggType === 'count');
          if (count === undefined) throw new SqlError('42883', `${cube.name} declares no count measure`);
          return { kind: 'measure', member: count, node };
        }
        const m = columnOf(args[0], `in ${name.toUpperCase()}()`);
        const declared = body.agg_distinct === true && name === 'count' ? 'count_distinct' : name;
        const types = m.aggType === 'countDistinct' ? ['count_distinct'] : [m.aggType];
        if (!isMeasure(m) || !types.includes(declared)) {
          throw new SqlError('42803', `${name.toUpperCase()}(${m.name.split('.')[1]}): ${isMeasure(m) ? `the measure is a ${m.aggType ?? 'number'}` : 'a dimension'}; use MEASURE() of a measure`);
        }
        return { kind: 'measure', member: m, node };
      }
      throw unsupported(`the function ${name}()`);
    }
    throw unsupported('this select list expression');
  };
  const targets = ((select.targetList ?? []) as Node[]).map((t) => nodeOf(t)[1]);
  const selects = targets.map((t) => readTarget(t.val));

  const measures: string[] = [];
  const dimensions: string[] = [];
  const timeDimensions: Array<{ dimension: string; granularity: string }> = [];
  const outputs: SqlOutput[] = selects.map((s, i) => {
    const name = outputName(targets[i]!);
    if (s.kind === 'measure') {
      if (!measures.includes(s.member.name)) measures.push(s.member.name);
      return { name, oid: OID.numeric, key: s.member.name, time: false };
    }
    if (s.kind === 'time') {
      if (!timeDimensions.some((td) => td.dimension === s.member.name && td.granularity === s.granularity)) timeDimensions.push({ dimension: s.member.name, granularity: s.granularity! });
      return { name, oid: OID.timestamp, key: `${s.member.name}.${s.granularity}`, time: true };
    }
    if (!dimensions.includes(s.member.name)) dimensions.push(s.member.name);
    return { name, oid: typeOid(s.member, false), key: s.member.name, time: s.member.type === 'time' };
  });

  // GROUP BY must name every dimension of the select list (Postgres's rule, which Cube's SQL API keeps).
  const groups = ((select.groupClause ?? []) as Node[]);
  const grouped = (index: number) => groups.some((g) => {
    const [type, body] = nodeOf(g);
    if (type === 'A_Const') return constantOf(body) === index + 1;
    if (type === 'ColumnRef' && names(body.fields).length === 1 && names(body.fields)[0] === outputs[index]!.name) return true;
    return sameExpression(g, targets[index]!.val);
  });
  if (measures.length > 0) {
    selects.forEach((s, i) => {
      if (s.kind !== 'measure' && !grouped(i)) throw new SqlError('42803', `column "${outputs[i]!.name}" must appear in the GROUP BY clause or be used in an aggregate function`);
    });
  }

  const valueOf = (node: Node | undefined, m: MetaMember): FilterValue => {
    const [type, body] = nodeOf(node);
    let value: FilterValue | null;
    if (type === 'A_Const') value = constantOf(body);
    else if (type === 'ParamRef') value = params[Number(body.number) - 1] ?? null;
    else if (type === 'TypeCast') return valueOf(body.arg, m);
    else throw unsupported('a comparison with something other than a constant or a parameter');
    if (value === null || value === undefined) throw unsupported('a comparison with NULL (use IS NULL)');
    if (m.type === 'number' && typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
    return typeof value === 'number' && m.type !== 'number' ? String(value) : value;
  };
  const OPS: Record<string, [string, string]> = { '=': ['equals', 'equals'], '<>': ['notEquals', 'notEquals'], '!=': ['notEquals', 'notEquals'], '<': ['lt', 'beforeDate'], '>': ['gt', 'afterDate'], '<=': ['lte', 'beforeOrOnDate'], '>=': ['gte', 'afterOrOnDate'] };
  const FLIP: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=', '=': '=', '<>': '<>', '!=': '!=' };
  const filterOf = (node: Node): CubeFilter => {
    const [type, body] = nodeOf(node);
    if (type === 'BoolExpr') {
      if (body.boolop === 'NOT_EXPR') throw unsupported('NOT before a condition (write <>, NOT IN, NOT LIKE or IS NOT NULL)');
      const parts = (body.args as Node[]).map(filterOf);
      return body.boolop === 'AND_EXPR' ? { and: parts } : { or: parts };
    }
    if (type === 'NullTest') {
      const m = columnOf(body.arg, 'in IS NULL');
      return { member: m.name, operator: body.nulltesttype === 'IS_NULL' ? 'notSet' : 'set' };
    }
    if (type !== 'A_Expr') throw unsupported('this WHERE condition');
    const op = names(body.name).at(-1)!;
    if (body.kind === 'AEXPR_IN') {
      const m = columnOf(body.lexpr, 'in IN');
      const values = ((nodeOf(body.rexpr)[1].items ?? []) as Node[]).map((v) => valueOf(v, m));
      return { member: m.name, operator: op === '=' ? 'equals' : 'notEquals', values };
    }
    if (body.kind === 'AEXPR_BETWEEN' || body.kind === 'AEXPR_NOT_BETWEEN') {
      const m = columnOf(body.lexpr, 'in BETWEEN');
      const [low, high] = ((nodeOf(body.rexpr)[1].items ?? []) as Node[]).map((v) => valueOf(v, m));
      const not = body.kind === 'AEXPR_NOT_BETWEEN';
      if (m.type === 'time') return { member: m.name, operator: not ? 'notInDateRange' : 'inDateRange', values: [String(low), String(high)] };
      return not
        ? { or: [{ member: m.name, operator: 'lt', values: [low!] }, { member: m.name, operator: 'gt', values: [high!] }] }
        : { and: [{ member: m.name, operator: 'gte', values: [low!] }, { member: m.name, operator: 'lte', values: [high!] }] };
    }
    if (body.kind === 'AEXPR_LIKE') {
      const m = columnOf(body.lexpr, 'in LIKE');
      const pattern = String(valueOf(body.rexpr, m));
      const inner = pattern.slice(1, -1);
      const plain = (s: string) => !/[%_\\]/.test(s);
      const negated = op === '!~~';
      if (pattern.length > 1 && pattern.startsWith('%') && pattern.endsWith('%') && plain(inner)) return { member: m.name, operator: negated ? 'notContains' : 'contains', values: [inner] };
      if (!negated && pattern.endsWith('%') && plain(pattern.slice(0, -1))) return { member: m.name, operator: 'startsWith', values: [pattern.slice(0, -1)] };
      if (!negated && pattern.startsWith('%') && plain(pattern.slice(1))) return { member: m.name, operator: 'endsWith', values: [pattern.slice(1)] };
      if (plain(pattern)) return { member: m.name, operator: negated ? 'notEquals' : 'equals', values: [pattern] };
      throw unsupported(`the LIKE pattern '${pattern}' (svc has contains, starts with and ends with: '%x%', 'x%', '%x')`);
    }
    if (body.kind !== 'AEXPR_OP' || !(op in OPS)) throw unsupported(`the operator ${op}`);
    let [columnSide, valueSide, operator] = [body.lexpr as Node, body.rexpr as Node, op];
    if (nodeOf(columnSide)[0] !== 'ColumnRef') [columnSide, valueSide, operator] = [valueSide, columnSide, FLIP[op]!];
    const m = columnOf(columnSide, `in ${op}`);
    const [plainOp, timeOp] = OPS[operator]!;
    if (m.type === 'time' && (operator === '=' || operator === '<>' || operator === '!=')) {
      const v = String(valueOf(valueSide, m));
      return { member: m.name, operator: operator === '=' ? 'inDateRange' : 'notInDateRange', values: [v, v] };
    }
    return { member: m.name, operator: m.type === 'time' ? timeOp : plainOp, values: [valueOf(valueSide, m)] };
  };
  const where = select.whereClause === undefined ? undefined : filterOf(select.whereClause);
  const filters = where === undefined ? [] : 'and' in where ? where.and : [where];

  const order = ((select.sortClause ?? []) as Node[]).map((sort) => {
    const body = nodeOf(sort)[1];
    const [type, value] = nodeOf(body.node);
    let index = -1;
    if (type === 'A_Const') index = Number(constantOf(value)) - 1;
    else if (type === 'ColumnRef' && names(value.fields).length === 1) index = outputs.findIndex((o) => o.name === names(value.fields)[0]);
    if (index < 0) index = targets.findIndex((t) => sameExpression(t.val, body.node));
    const s = selects[index];
    if (s === undefined) throw unsupported('ORDER BY on something not in the select list');
    return [s.member.name, body.sortby_dir === 'SORTBY_DESC' ? 'desc' : 'asc'];
  });

  const constant = (node: Node | undefined, what: string): number | undefined => {
    if (node === undefined) return undefined;
    const [type, body] = nodeOf(node);
    const value = type === 'A_Const' ? constantOf(body) : type === 'ParamRef' ? Number(params[Number(body.number) - 1]) : undefined;
    if (value === null) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new SqlError('22023', `${what} takes a whole number`);
    return value;
  };
  const limit = constant(select.limitCount, 'LIMIT');
  const offset = constant(select.limitOffset, 'OFFSET') ?? 0;
  if (limit === 0) throw new SqlError('22023', 'LIMIT 0: ask for at least one row');
  const query: Record<string, unknown> = {
    ...(measures.length > 0 ? { measures } : {}),
    ...(dimensions.length > 0 ? { dimensions } : {}),
    ...(timeDimensions.length > 0 ? { timeDimensions } : {}),
    ...(filters.length > 0 ? { filters } : {}),
    ...(order.length > 0 ? { order } : {}),
    limit: Math.min(limit ?? rowCap, rowCap),
    ...(offset > 0 ? { offset } : {}),
  };
  if (measures.length + dimensions.length + timeDimensions.length === 0) throw unsupported('a select list without columns');
  return { query, outputs };
}
