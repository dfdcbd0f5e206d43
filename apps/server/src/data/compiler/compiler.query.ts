import {
  DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql,
} from 'kysely';
import type { RawBuilder } from 'kysely';
import { AppError } from '../../core/core.errors.js';
import { parseDate, endOf, parseDateRange } from '../semantic/semantic.dates.js';
import type { Interval } from '../semantic/semantic.dates.js';
import type { SemanticModel } from '../semantic/semantic.model.js';
import { baseViewOf } from '../semantic/semantic.model.js';
import type { DimensionType, Granularity, ResolvedMember, ResultColumn, SemanticDimension, SemanticMeasure, SemanticView, WarehouseDialect } from '../semantic/semantic.model.js';
import type { MemberFilter, QueryFilter } from '../semantic/semantic.query.js';
import type { BoundFilter } from '../policy/policy.access.js';
import type { PolicedQuery, ViewRowFilter } from '../policy/policy.query.js';
import { offsetSpans } from '../semantic/semantic.timezone.js';
import type { OffsetSpan } from '../semantic/semantic.timezone.js';

export interface CompiledSemanticQuery {
  sql: string;
  parameters: readonly unknown[];
  columns: ResultColumn[];
  /** Rows asked for; one more is fetched to tell a truncated result. */
  limit: number;
  /** Whether the limit is the row cap (and not the query's own). */
  capped: boolean;
}

export interface CompileOptions {
  dialect: WarehouseDialect;
  /** IANA name: time buckets and date ranges are read in it. */
  timezone: string;
  now: Date;
  /** Most rows any query returns. */
  rowCap: number;
  /**
   * The field the query stands at, which every error names below (default `query`: `query.measures[0]`); a
   * dashboard's own query is checked at `meta.query`.
   */
  root?: string;
  /**
   * DuckDB only: time columns hold wall-clock TIMESTAMPs already in the query's zone (a pre-aggregation's buckets,
   * preagg.definitions.ts), read with `timezone: 'UTC'` and no zone arithmetic.
   */
  wallClock?: boolean;
  /**
   * The statement counts the query's rows instead of listing them (`SELECT count(*) FROM (...)`, no order, no row
   * cap): a drill-down says "the first 1,000 of 5,842". The same WHERE, row policy included, as the listing's.
   */
  countRows?: boolean;
}

type AnyKysely = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const compilers: Record<WarehouseDialect, AnyKysely> = {
  sqlite: new Kysely({
    dialect: {
      createAdapter: () => new SqliteAdapter(), createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db), createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  }),
  postgres: new Kysely({
    dialect: {
      createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
  // DuckDB speaks PostgreSQL's syntax where the compiler needs it: "quoted" identifiers and $1 placeholders.
  duckdb: new Kysely({
    dialect: {
      createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
};

/** Compiles raw SQL built from fragments for a dialect: identifiers quoted, every value a bound parameter. */
export function compileFragment(fragment: RawBuilder<unknown>, dialect: WarehouseDialect): { sql: string; parameters: readonly unknown[] } {
  return fragment.compile(compilers[dialect]);
}

const quote = (identifier: string) => `"${identifier}"`;

/** A member's SQL expression: its `sql` with `{view}` placeholders, else `"view"."column"`. */
function memberExpression(view: SemanticView, member: SemanticDimension | SemanticMeasure, model: SemanticModel): RawBuilder<unknown> {
  if (member.sql !== undefined) {
    return sql.raw(`(${member.sql.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      model.view(name, `${view.name}.${member.name}.sql`);
      return quote(name);
    })})`);
  }
  return sql.ref(`${view.name}.${member.column ?? member.name}`);
}

/** Epoch seconds of a time expression: ISO 8601 text or a number of seconds on SQLite, timestamptz on PostgreSQL. */
function sqliteEpoch(expression: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(CASE WHEN typeof(${expression}) IN ('integer', 'real') THEN ${expression} ELSE unixepoch(${expression}) END)`;
}

/** The zone's offset at an instant as a balanced CASE tree over the offset spans (literal integers, no input). */
function offsetTree(spans: readonly OffsetSpan[]): string {
  const build = (low: number, high: number): string => {
    if (low === high) return String(spans[low]!.offset);
    const middle = Math.ceil((low + high) / 2);
    return `CASE WHEN __t < ${spans[middle]!.from} THEN ${build(low, middle - 1)} ELSE ${build(middle, high)} END`;
  };
  return build(0, spans.length - 1);
}

/** Local-epoch SQL text by zone and time expression: the offset tree of a zone with daylight saving runs to tens of KB. */
const localEpochTexts = new Map<string, string>();

function sqliteLocalEpoch(expression: RawBuilder<unknown>, timezone: string): RawBuilder<unknown> {
  const epoch = sqliteEpoch(expression);
  const spans = offsetSpans(timezone);
  if (spans.length === 1) return sql`(${epoch} + ${sql.lit(spans[0]!.offset)})`;
  // The tree compares the epoch many times: each comparison repeats the expression (SQLite has no let-binding).
  const compiled = epoch.compile(compilers.sqlite);
  if (compiled.parameters.length > 0) {
    const tree = offsetTree(spans).split('__t');
    return sql`(${epoch} + ${sql.join(tree.map((part) => sql.raw(part)), epoch)})`;
  }
  // A member's expression has no bound value: its text is built once per zone, not node by node per query.
  const key = `${timezone}\u0000${compiled.sql}`;
  let text = localEpochTexts.get(key);
  if (text === undefined) {
    text = `(${compiled.sql} + ${offsetTree(spans).split('__t').join(compiled.sql)})`;
    if (localEpochTexts.size > 1000) localEpochTexts.clear();
    localEpochTexts.set(key, text);
  }
  return sql.raw(text);
}

const LOCAL_FORMAT: Record<Exclude<Granularity, 'week' | 'quarter'>, string> = {
  second: '%Y-%m-%dT%H:%M:%S.000', minute: '%Y-%m-%dT%H:%M:00.000', hour: '%Y-%m-%dT%H:00:00.000',
  day: '%Y-%m-%dT00:00:00.000', month: '%Y-%m-01T00:00:00.000', year: '%Y-01-01T00:00:00.000',
};

/** A time bucket as local wall-clock text `YYYY-MM-DDTHH:MM:SS.000` (Cube's form), the same on every dialect. */
function timeBucket(expression: RawBuilder<unknown>, granularity: Granularity, options: CompileOptions): RawBuilder<unknown> {
  if (options.dialect === 'postgres') {
    const local = sql`(${expression})::timestamptz AT TIME ZONE ${options.timezone}`;
    return sql`to_char(date_trunc(${sql.lit(granularity)}, ${local}), 'YYYY-MM-DD"T"HH24:MI:SS.MS')`;
  }
  if (options.dialect === 'duckdb' && options.wallClock === true) return sql`strftime(date_trunc(${sql.lit(granularity)}, ${expression}), '%Y-%m-%dT%H:%M:%S.000')`;
  if (options.dialect === 'duckdb') {
    // ICU's timezone() gives the wall clock of the instant in the zone; date_trunc's weeks start on Monday.
    const local = sql`timezone(${options.timezone}, ${instantExpression(expression, 'duckdb')})`;
    return sql`strftime(date_trunc(${sql.lit(granularity)}, ${local}), '%Y-%m-%dT%H:%M:%S.000')`;
  }
  const local = sqliteLocalEpoch(expression, options.timezone);
  if (granularity === 'week') return sql`strftime('%Y-%m-%dT00:00:00.000', ${local}, 'unixepoch', '-6 days', 'weekday 1')`;
  if (granularity === 'quarter') {
    return sql`printf('%s-%02d-01T00:00:00.000', strftime('%Y', ${local}, 'unixepoch'), ((CAST(strftime('%m', ${local}, 'unixepoch') AS INTEGER) - 1) / 3) * 3 + 1)`;
  }
  return sql`strftime(${sql.lit(LOCAL_FORMAT[granularity])}, ${local}, 'unixepoch')`;
}

/**
 * A time expression as an instant. DuckDB: TIMESTAMPTZ as is; TIMESTAMP and ISO 8601 text without an offset are
 * read as UTC (the warehouse's session time zone).
 */
function instantExpression(expression: RawBuilder<unknown>, dialect: WarehouseDialect): RawBuilder<unknown> {
  switch (dialect) {
    case 'postgres':
      return sql`(${expression})::timestamptz`;
    case 'duckdb':
      return sql`CAST(${expression} AS TIMESTAMPTZ)`;
    case 'sqlite':
      return sqliteEpoch(expression);
  }
}

function instantValue(epochSeconds: number, dialect: WarehouseDialect): RawBuilder<unknown> {
  switch (dialect) {
    case 'postgres':
      return sql`${new Date(epochSeconds * 1000).toISOString()}::timestamptz`;
    case 'duckdb':
      return sql`CAST(${new Date(epochSeconds * 1000).toISOString()} AS TIMESTAMPTZ)`;
    case 'sqlite':
      return sql`${epochSeconds}`;
  }
}

function aggregate(measure: SemanticMeasure, expression: RawBuilder<unknown> | undefined): RawBuilder<unknown> {
  switch (measure.type) {
    case 'count':
      return expression === undefined ? sql`count(*)` : sql`count(${expression})`;
    case 'count_distinct':
      return sql`count(distinct ${expression!})`;
    case 'sum':
      return sql`sum(${expression!})`;
    case 'avg':
      return sql`avg(${expression!})`;
    case 'min':
      return sql`min(${expression!})`;
    case 'max':
      return sql`max(${expression!})`;
    // A pre-aggregation's columns (preagg.definitions.ts rollupModel).
    case 'rollup_count':
      return sql`coalesce(sum(${expression!}), 0)`;
    case 'rollup_grain':
      return sql`max(${expression!})`;
    case 'rollup_avg':
      throw new Error('rollup_avg is compiled from its two columns (measureExpression)');
  }
}

const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A filter value as the dimension's type; a value of another type is a 400 naming the field. */
function coerce(value: string | number | boolean, type: DimensionType, field: string): string | number | boolean {
  if (type === 'string') return String(value);
  if (type === 'number') {
    const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
    if (!Number.isFinite(number)) throw AppError.at('invalid_parameter', field, `${JSON.stringify(value)} is not a number`);
    return number;
  }
  if (type === 'boolean') {
    if (value === true || value === 'true' || value === 1) return true;
    if (value === false || value === 'false' || value === 0) return false;
    throw AppError.at('invalid_parameter', field, `${JSON.stringify(value)} is not a boolean`);
  }
  if (typeof value !== 'string') throw AppError.at('invalid_parameter', field, `a time is given as a date string, got ${JSON.stringify(value)}`);
  return value;
}

interface Scope {
  model: SemanticModel;
  base: SemanticView;
  joined: Set<string>;
  options: CompileOptions;
  /** The row filters the policies attached (policy.query.ts), by view. */
  rowFilters: readonly ViewRowFilter[];
}

/** Resolves a member reachable from the base view: its own, or of a view it joins (many to one). */
function reachable(scope: Scope, name: unknown, field: string): ResolvedMember {
  const member = scope.model.member(name, field);
  if (member.view === scope.base) return member;
  const join = (scope.base.joins ?? []).find((j) => j.view === member.view.name);
  if (join === undefined) {
    throw AppError.at('invalid_parameter', field, `view ${member.view.name} is not joined to ${scope.base.name} (a query reads one view and the views it joins)`);
  }
  if (member.kind === 'measure') {
    throw AppError.at('invalid_parameter', field, `measures come from the query's view ${scope.base.name}, not from the joined view ${member.view.name}`);
  }
  scope.joined.add(member.view.name);
  return member;
}

function dimensionExpression(scope: Scope, member: Extract<ResolvedMember, { kind: 'dimension' }>): RawBuilder<unknown> {
  return memberExpression(member.view, member.dimension, scope.model);
}

function measureExpression(scope: Scope, member: Extract<ResolvedMember, { kind: 'measure' }>): RawBuilder<unknown> {
  const { measure } = member;
  if (measure.type === 'rollup_avg') {
    // An average from a rollup: the sum of its parts' sums over the sum of their counts.
    const part = (suffix: string) => sql.ref(`${member.view.name}.${measure.column ?? measure.name}__${suffix}`);
    return sql`sum(${part('sum')}) / nullif(sum(${part('count')}), 0)`;
  }
  const inner = measure.type === 'count' && measure.column === undefined && measure.sql === undefined ? undefined : memberExpression(member.view, measure, scope.model);
  return aggregate(measure, inner);
}

function timeInterval(scope: Scope, values: MemberFilter['values'], operator: string, field: string): Interval {
  const { timezone, now } = scope.options;
  const texts = (values ?? []).map((value, i) => coerce(value, 'time', `${field}.values[${i}]`) as string);
  if (operator === 'inDateRange' || operator === 'notInDateRange') {
    if (texts.length === 1) return parseDateRange(texts[0]!, timezone, now, `${field}.values`);
    if (texts.length !== 2) throw AppError.at('invalid_parameter', `${field}.values`, `${operator} takes a range: two dates, or one relative range`);
    return parseDateRange(texts, timezone, now, `${field}.values`);
  }
  if (texts.length !== 1) throw AppError.at('invalid_parameter', `${field}.values`, `${operator} takes one date`);
  const date = parseDate(texts[0]!, timezone, `${field}.values[0]`);
  // before: [-inf, start); beforeOrOn: [-inf, end); after: [end, inf); afterOrOn: [start, inf)
  if (operator === 'beforeDate') return { from: -Infinity, to: date.at };
  if (operator === 'beforeOrOnDate') return { from: -Infinity, to: endOf(date, timezone) };
  if (operator === 'afterDate') return { from: endOf(date, timezone), to: Infinity };
  return { from: date.at, to: Infinity };
}

function intervalCondition(expression: RawBuilder<unknown>, interval: Interval, options: CompileOptions): RawBuilder<unknown> {
  const { dialect } = options;
  // Wall-clock timestamps (a pre-aggregation's buckets) compare with wall-clock values: no time zone arithmetic.
  const wall = (epoch: number) => sql`CAST(${new Date(epoch * 1000).toISOString().slice(0, 19)} AS TIMESTAMP)`;
  const instant = options.wallClock === true ? expression : instantExpression(expression, dialect);
  const value = (epoch: number) => (options.wallClock === true ? wall(epoch) : instantValue(epoch, dialect));
  const parts: RawBuilder<unknown>[] = [];
  if (Number.isFinite(interval.from)) parts.push(sql`${instant} >= ${value(interval.from)}`);
  if (Number.isFinite(interval.to)) parts.push(sql`${instant} < ${value(interval.to)}`);
  return parts.length === 0 ? sql`1 = 1` : sql`(${sql.join(parts, sql` AND `)})`;
}

const TIME_OPERATORS = new Set(['inDateRange', 'notInDateRange', 'beforeDate', 'beforeOrOnDate', 'afterDate', 'afterOrOnDate']);

/** One member filter as a condition; measures' conditions go to HAVING, dimensions' to WHERE. */
function memberCondition(scope: Scope, filter: MemberFilter, field: string): { condition: RawBuilder<unknown>; isMeasure: boolean } {
  const member = reachable(scope, filter.member, `${field}.member`);
  const type: DimensionType = member.kind === 'measure' ? 'number' : member.dimension.type;
  const expression = member.kind === 'measure' ? measureExpression(scope, member) : dimensionExpression(scope, member);
  const { operator } = filter;
  const values = filter.values ?? [];
  const need = (count: 'some' | 'one') => {
    if (count === 'some' ? values.length === 0 : values.length !== 1) {
      throw AppError.at('invalid_parameter', `${field}.values`, `${operator} takes ${count === 'some' ? 'at least one value' : 'one value'}`);
    }
  };
  const isMeasure = member.kind === 'measure';
  const done = (condition: RawBuilder<unknown>) => ({ condition, isMeasure });

  if (TIME_OPERATORS.has(operator)) {
    if (type !== 'time') throw AppError.at('invalid_parameter', `${field}.operator`, `${operator} applies to time dimensions, and ${member.name} is ${type}`);
    const interval = timeInterval(scope, filter.values, operator, field);
    const inside = intervalCondition(expression, interval, scope.options);
    return done(operator === 'notInDateRange' ? sql`(${expression} IS NULL OR NOT ${inside})` : inside);
  }
  if (operator === 'set') return done(sql`${expression} IS NOT NULL`);
  if (operator === 'notSet') return done(sql`${expression} IS NULL`);
  need('some');

  if (type === 'time') {
    // equals and comparisons on a time dimension compare instants.
    const at = (i: number) => parseDate(coerce(values[i]!, 'time', `${field}.values[${i}]`) as string, scope.options.timezone, `${field}.values[${i}]`).at;
    const instant = instantExpression(expression, scope.options.dialect);
    const value = (i: number) => instantValue(at(i), scope.options.dialect);
    if (operator === 'equals') return done(sql`${instant} IN (${sql.join(values.map((_, i) => value(i)))})`);
    if (operator === 'notEquals') return done(sql`(${instant} IS NULL OR ${instant} NOT IN (${sql.join(values.map((_, i) => value(i)))}))`);
    const comparison = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[operator as 'gt'];
    if (comparison === undefined) throw AppError.at('invalid_parameter', `${field}.operator`, `${operator} does not apply to the time dimension ${member.name}`);
    need('one');
    return done(sql`${instant} ${sql.raw(comparison)} ${value(0)}`);
  }

  const typed = values.map((value, i) => coerce(value, type, `${field}.values[${i}]`));
  switch (operator) {
    case 'equals':
      return done(typed.length === 1 ? sql`${expression} = ${typed[0]}` : sql`${expression} IN (${sql.join(typed)})`);
    case 'notEquals':
      return done(sql`(${expression} IS NULL OR ${expression} NOT IN (${sql.join(typed)}))`);
    case 'gt': case 'gte': case 'lt': case 'lte': {
      need('one');
      const comparison = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[operator];
      return done(sql`${expression} ${sql.raw(comparison)} ${typed[0]}`);
    }
    case 'contains': case 'notContains': case 'startsWith': case 'endsWith': {
      if (type !== 'string') throw AppError.at('invalid_parameter', `${field}.operator`, `${operator} applies to string dimensions, and ${member.name} is ${type}`);
      const patterns = typed.map((value) => {
        const text = escapeLike(String(value).toLowerCase());
        return operator === 'startsWith' ? `${text}%` : operator === 'endsWith' ? `%${text}` : `%${text}%`;
      });
      const any = sql.join(patterns.map((pattern) => sql`lower(${expression}) LIKE ${pattern} ESCAPE '\\'`), sql` OR `);
      return done(operator === 'notContains' ? sql`(${expression} IS NULL OR NOT (${any}))` : sql`(${any})`);
    }
    default:
      throw AppError.at('invalid_parameter', `${field}.operator`, `${operator} is not known`);
  }
}

function filterCondition(scope: Scope, filter: QueryFilter, field: string): { condition: RawBuilder<unknown>; isMeasure: boolean } {
  if ('member' in filter) return memberCondition(scope, filter, field);
  const [key, list] = 'and' in filter ? ['and', filter.and] as const : ['or', filter.or] as const;
  if (list.length === 0) return { condition: sql`1 = 1`, isMeasure: false };
  const parts = list.map((inner, i) => filterCondition(scope, inner, `${field}.${key}[${i}]`));
  const isMeasure = parts[0]!.isMeasure;
  if (parts.some((part) => part.isMeasure !== isMeasure)) {
    throw AppError.at('invalid_parameter', field, `an ${key} group cannot mix measures and dimensions`);
  }
  return { condition: sql`(${sql.join(parts.map((part) => part.condition), sql.raw(key === 'and' ? ' AND ' : ' OR '))})`, isMeasure };
}

/** A bound policy filter as a condition: a filter that cannot hold (a missing reference, a bad value) matches no row. */
function policyCondition(scope: Scope, filter: BoundFilter, field: string): RawBuilder<unknown> {
  if ('never' in filter) return sql`1 = 0`;
  if ('member' in filter) {
    try {
      const { condition, isMeasure } = memberCondition(scope, filter, field);
      return isMeasure ? sql`1 = 0` : condition;
    } catch (error) {
      if (error instanceof AppError) return sql`1 = 0`;
      throw error;
    }
  }
  const [list, joiner] = 'and' in filter ? [filter.and, ' AND '] as const : [filter.or, ' OR '] as const;
  if (list.length === 0) return sql`1 = 1`;
  return sql`(${sql.join(list.map((inner) => policyCondition(scope, inner, field)), sql.raw(joiner))})`;
}

/**
 * The row filters of every view the query reads (its own and each view it joins): per view, the OR of the
 * matching policies' filter lists, each ANDed. A view whose policies match nobody gives no row.
 */
function rowPolicyConditions(scope: Scope): RawBuilder<unknown>[] {
  const conditions: RawBuilder<unknown>[] = [];
  for (const { view: name, rows } of scope.rowFilters) {
    if (rows.length === 0) {
      conditions.push(sql`1 = 0`);
      continue;
    }
    const field = `${name}.accessPolicy`;
    const alternatives = rows.map((filters) => (filters.length === 0 ? sql`1 = 1` : sql`(${sql.join(filters.map((f) => policyCondition(scope, f, field)), sql` AND `)})`));
    conditions.push(sql`(${sql.join(alternatives, sql` OR `)})`);
  }
  return conditions;
}

/**
 * Compiles a semantic query into one SELECT for the dialect. Measures come from one view (the query's); dimensions
 * from it or from views it joins many to one, so no join multiplies a measure. Rows are grouped by every
 * dimension, ordered as asked (else Cube's default: the first time dimension, else the first measure descending),
 * then by every dimension for a stable order, and cut at the query's limit or the row cap.
 */
export function compileSemanticQuery(policed: PolicedQuery, options: CompileOptions): CompiledSemanticQuery {
  const { model, query } = policed;
  const root = options.root ?? 'query';
  const measures = query.measures ?? [];
  const dimensions = query.dimensions ?? [];
  const timeDimensions = query.timeDimensions ?? [];
  const scope: Scope = { model, base: baseViewOf(model, query, root), joined: new Set(), options, rowFilters: policed.rowFilters };

  const columns: ResultColumn[] = [];
  const selects: RawBuilder<unknown>[] = [];
  const where: RawBuilder<unknown>[] = [];
  const having: RawBuilder<unknown>[] = [];
  const seen = new Set<string>();
  const addColumn = (column: ResultColumn, expression: RawBuilder<unknown>, field: string) => {
    if (seen.has(column.name)) throw AppError.at('invalid_parameter', field, `${column.name} is asked for twice`);
    seen.add(column.name);
    columns.push(column);
    // PostgreSQL sorts text by the database's locale; the "C" collation sorts byte-wise, as SQLite does (and DuckDB,
    // whose default collation is binary).
    const collated = options.dialect === 'postgres' && column.type === 'string' ? sql`(${expression}) COLLATE "C"` : expression;
    selects.push(sql`${collated} AS ${sql.id(column.name)}`);
  };

  dimensions.forEach((name, i) => {
    const member = reachable(scope, name, `${root}.dimensions[${i}]`);
    if (member.kind !== 'dimension') throw AppError.at('invalid_parameter', `${root}.dimensions[${i}]`, `${member.name} is a measure`);
    const { dimension } = member;
    if (dimension.type === 'time') {
      throw AppError.at('invalid_parameter', `${root}.dimensions[${i}]`, `${member.name} is a time dimension; ask for it in timeDimensions with a granularity`);
    }
    addColumn({
      name: member.name, member: member.name, title: dimension.title ?? dimension.name, type: dimension.type, kind: 'dimension',
      ...(dimension.format !== undefined ? { format: dimension.format } : {}),
    }, dimensionExpression(scope, member), `${root}.dimensions[${i}]`);
  });
  timeDimensions.forEach((timeDimension, i) => {
    const field = `${root}.timeDimensions[${i}]`;
    const member = reachable(scope, timeDimension.dimension, `${field}.dimension`);
    if (member.kind !== 'dimension' || member.dimension.type !== 'time') {
      throw AppError.at('invalid_parameter', `${field}.dimension`, `${member.name} is not a time dimension`);
    }
    const expression = dimensionExpression(scope, member);
    if (timeDimension.dateRange !== undefined) {
      const range = typeof timeDimension.dateRange === 'string' ? timeDimension.dateRange : timeDimension.dateRange;
      where.push(intervalCondition(expression, parseDateRange(range, options.timezone, options.now, `${field}.dateRange`), options));
    }
    if (timeDimension.granularity !== undefined) {
      addColumn({
        name: `${member.name}.${timeDimension.granularity}`, member: member.name, title: member.dimension.title ?? member.dimension.name,
        type: 'time', kind: 'dimension', granularity: timeDimension.granularity,
      }, timeBucket(expression, timeDimension.granularity, options), `${field}.granularity`);
    }
  });
  const groupCount = columns.length;
  measures.forEach((name, i) => {
    const member = reachable(scope, name, `${root}.measures[${i}]`);
    if (member.kind !== 'measure') throw AppError.at('invalid_parameter', `${root}.measures[${i}]`, `${member.name} is a dimension`);
    const { measure } = member;
    addColumn({
      name: member.name, member: member.name, title: measure.title ?? measure.name, type: 'number', kind: 'measure', measureType: measure.type,
      ...(measure.format !== undefined ? { format: measure.format } : {}),
    }, measureExpression(scope, member), `${root}.measures[${i}]`);
  });
  (query.filters ?? []).forEach((filter, i) => {
    const { condition, isMeasure } = filterCondition(scope, filter, `${root}.filters[${i}]`);
    (isMeasure ? having : where).push(condition);
  });

  where.push(...rowPolicyConditions(scope));

  // Order: as asked, then every group column ascending, so equal keys never shuffle between runs or dialects.
  const asked: Array<[string, 'asc' | 'desc']> = query.order === undefined ? [] : Array.isArray(query.order) ? query.order : Object.entries(query.order);
  const order: Array<[ResultColumn, 'asc' | 'desc']> = [];
  asked.forEach(([name, direction], i) => {
    // A time dimension may be named without its granularity, as in Cube, when the query buckets it once.
    const bucketed = columns.filter((c) => c.granularity !== undefined && c.member === name);
    const column = columns.find((c) => c.name === name) ?? (bucketed.length === 1 ? bucketed[0] : undefined);
    if (column === undefined) {
      // (A hidden member was refused as such by the policies, policy.query.ts, before it came here.)
      throw AppError.at('invalid_parameter', `${root}.order[${i}]`, `${name} is not a member of this query's result`);
    }
    order.push([column, direction]);
  });
  if (order.length === 0) {
    const time = columns.find((c) => c.granularity !== undefined);
    const measure = columns.find((c) => c.kind === 'measure');
    if (time !== undefined) order.push([time, 'asc']);
    else if (measure !== undefined) order.push([measure, 'desc']);
  }
  for (const column of columns.slice(0, groupCount)) if (!order.some(([c]) => c === column)) order.push([column, 'asc']);
  const orderBy = order.map(([column, direction]) => sql`${sql.id(column.name)} ${sql.raw(direction === 'asc' ? 'ASC' : 'DESC')} NULLS LAST`);

  const limit = Math.min(query.limit ?? options.rowCap, options.rowCap);
  const from = scope.base.table !== undefined ? sql`${sql.table(scope.base.table)} AS ${sql.id(scope.base.name)}` : sql`(${sql.raw(scope.base.sql!)}) AS ${sql.id(scope.base.name)}`;
  const joins = [...scope.joined].map((name) => {
    const join = scope.base.joins!.find((j) => j.view === name)!;
    const view = model.view(name, 'join');
    const source = view.table !== undefined ? sql`${sql.table(view.table)}` : sql`(${sql.raw(view.sql!)})`;
    return sql` LEFT JOIN ${source} AS ${sql.id(name)} ON ${sql.ref(`${scope.base.name}.${join.foreignKey}`)} = ${sql.ref(`${name}.${join.primaryKey ?? 'id'}`)}`;
  });
  const groupBy = groupCount > 0 && measures.length > 0 ? sql` GROUP BY ${sql.raw(Array.from({ length: groupCount }, (_, i) => i + 1).join(', '))}` : sql``;
  const distinct = measures.length === 0 ? sql`DISTINCT ` : sql``;
  const body = sql`SELECT ${distinct}${sql.join(selects)} FROM ${from}${sql.join(joins, sql``)}${where.length > 0 ? sql` WHERE ${sql.join(where, sql` AND `)}` : sql``}${groupBy}${having.length > 0 ? sql` HAVING ${sql.join(having, sql` AND `)}` : sql``}`;
  const statement = options.countRows === true
    ? sql`SELECT count(*) AS ${sql.id('count')} FROM (${body}) AS ${sql.id('svc_rows')}`
    : sql`${body}${orderBy.length > 0 ? sql` ORDER BY ${sql.join(orderBy)}` : sql``} LIMIT ${limit + 1}`;
  const compiled = compileFragment(statement, options.dialect);
  return { sql: compiled.sql, parameters: compiled.parameters, columns, limit, capped: query.limit === undefined || query.limit > options.rowCap };
}

/**
 * The result columns of a policed query, as its compiled statement on the data source would name them, without
 * compiling it: a rollup's statement (plan/plan.query.ts) reads columns of its own table (`r.m0`), and its answer is
 * given under the query's own columns. The same order as compileSemanticQuery: dimensions, bucketed time
 * dimensions, measures.
 */
export function resultColumns(policed: PolicedQuery): ResultColumn[] {
  const { model, query } = policed;
  const columns: ResultColumn[] = [];
  for (const name of query.dimensions ?? []) {
    const { dimension } = model.dimension(name, 'query.dimensions');
    columns.push({ name, member: name, title: dimension.title ?? dimension.name, type: dimension.type, kind: 'dimension', ...(dimension.format !== undefined ? { format: dimension.format } : {}) });
  }
  for (const td of query.timeDimensions ?? []) {
    if (td.granularity === undefined) continue;
    const { dimension } = model.dimension(td.dimension, 'query.timeDimensions');
    columns.push({ name: `${td.dimension}.${td.granularity}`, member: td.dimension, title: dimension.title ?? dimension.name, type: 'time', kind: 'dimension', granularity: td.granularity });
  }
  for (const name of query.measures ?? []) {
    const { measure } = model.measure(name, 'query.measures');
    columns.push({ name, member: name, title: measure.title ?? measure.name, type: 'number', kind: 'measure', measureType: measure.type, ...(measure.format !== undefined ? { format: measure.format } : {}) });
  }
  return columns;
}
