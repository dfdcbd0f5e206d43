/**
 * The chart builder's pure logic (issue 34): what the person picked, as a semantic query in Cube's format
 * (apps/server/src/data/semantic/semantic.query.ts); the chart the query's shape suggests; and the report snapshot
 * (`kind`, `spec`) that the embed draws (apps/embed/src/dashboard/Widget.tsx, vega.ts) for the kind chosen. One builder
 * for the console's editor and the embed's explore (issue 35): pure, so that both apps import it.
 */
import type { ResultColumn } from '../api.js';
import { d3NumberFormat } from '../format.js';

/** `GET .../meta` (a deployment's, or the embed viewer's): the views and members, in the shape of Cube's /v1/meta. */
export interface MetaMember { name: string; title?: string; shortTitle?: string; type: string; format?: string; decimalPlaces?: number }
export interface MetaCube { name: string; title?: string; measures: MetaMember[]; dimensions: MetaMember[] }
export interface Meta { cubes: MetaCube[] }

/** Admins only, when the data source answered: why no pre-aggregation did, and one that would (docs/authoring.md). */
export interface RollupHint {
  reasons: Array<{ rollup: string; reason: string }>;
  suggestion: { view: string; preAggregation: Record<string, unknown> } | null;
  unsuggested?: string;
}

/** A preview's answer: the console's `POST .../query`, or the embed's `POST /api/v1/embed/explore/query` (no statement, no hint). */
export interface PreviewAnswer {
  columns: ResultColumn[]; rows: unknown[][]; truncated: boolean; timezone: string; source: string;
  /** Admins only: the statement that ran, and where (`warehouse`, `rollup:<view>.<name>`). */
  statement?: { sql: string; parameters: unknown[]; on: string };
  rollupHint?: RollupHint;
}

/** What the builder's submit hands over: a chart's title, drawing, query and formats, as a report snapshot holds them. */
export type ChartDraft = {
  title: string; kind: string; spec: Record<string, unknown> | null; meta: { query: SemanticQuery };
  preferences?: { columnFormats: Record<string, ColumnFormat> };
};

/** Every operator of the query format's member filters (semantic.query.ts FILTER_OPERATORS). */
export const FILTER_OPERATORS = [
  'equals', 'notEquals', 'contains', 'notContains', 'startsWith', 'endsWith', 'gt', 'gte', 'lt', 'lte', 'set', 'notSet',
  'inDateRange', 'notInDateRange', 'beforeDate', 'beforeOrOnDate', 'afterDate', 'afterOrOnDate',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** Operators that take no value. */
const NO_VALUES: ReadonlySet<string> = new Set(['set', 'notSet']);
/** Operators that take a range of two dates. */
const TWO_DATES: ReadonlySet<string> = new Set(['inDateRange', 'notInDateRange']);

export const GRANULARITIES = ['day', 'week', 'month', 'quarter', 'year', 'hour'] as const;

export interface BuilderFilter { member: string; operator: FilterOperator; values: string }

/** What the builder's controls hold; strings as typed, so that a form keeps them. */
export interface BuilderState {
  view: string;
  measures: string[];
  dimensions: string[];
  timeDimension: string;
  granularity: string;
  dateFrom: string;
  dateTo: string;
  filters: BuilderFilter[];
  orderBy: string;
  orderDirection: 'asc' | 'desc';
  limit: string;
}

export const emptyBuilder = (view = ''): BuilderState => ({
  view, measures: [], dimensions: [], timeDimension: '', granularity: 'month', dateFrom: '', dateTo: '',
  filters: [], orderBy: '', orderDirection: 'desc', limit: '',
});

export interface MemberFilterQuery { member: string; operator: string; values?: Array<string | number> }
export interface TimeDimensionQuery { dimension: string; granularity?: string; dateRange?: [string, string] }
export interface SemanticQuery {
  measures?: string[];
  dimensions?: string[];
  timeDimensions?: TimeDimensionQuery[];
  filters?: MemberFilterQuery[];
  order?: Array<[string, 'asc' | 'desc']>;
  limit?: number;
}

/** A filter's typed values: comma-separated; numbers stay text (the server compares them to the member's type). */
export function filterValues(filter: BuilderFilter): string[] | undefined {
  if (NO_VALUES.has(filter.operator)) return undefined;
  const values = filter.values.split(',').map((v) => v.trim()).filter((v) => v !== '');
  return values;
}

/** Whether a filter is complete enough to send (an operator that needs values has them; a date range two). */
export function filterReady(filter: BuilderFilter): boolean {
  if (filter.member === '') return false;
  const values = filterValues(filter);
  if (values === undefined) return true;
  return TWO_DATES.has(filter.operator) ? values.length === 2 : values.length > 0;
}

/** The member a column of the answer is named after: a time dimension's carries its grain (`orders.created_at.month`). */
export const timeColumn = (dimension: string, granularity: string) => `${dimension}.${granularity}`;

/**
 * The query of the builder's state, or undefined while it asks for nothing (no measure, no dimension). Filters not
 * yet complete are left out rather than sent half-typed; a limit that is not a positive whole number is left out.
 */
export function buildQuery(state: BuilderState): SemanticQuery | undefined {
  const hasTime = state.timeDimension !== '';
  if (state.measures.length === 0 && state.dimensions.length === 0 && !hasTime) return undefined;
  const query: SemanticQuery = {};
  if (state.measures.length > 0) query.measures = [...state.measures];
  if (state.dimensions.length > 0) query.dimensions = [...state.dimensions];
  if (hasTime) {
    const time: TimeDimensionQuery = { dimension: state.timeDimension };
    if (state.granularity !== '') time.granularity = state.granularity;
    if (state.dateFrom !== '' && state.dateTo !== '') time.dateRange = [state.dateFrom, state.dateTo];
    query.timeDimensions = [time];
  }
  const filters = state.filters.filter(filterReady).map((f): MemberFilterQuery => {
    const values = filterValues(f);
    return values === undefined ? { member: f.member, operator: f.operator } : { member: f.member, operator: f.operator, values };
  });
  if (filters.length > 0) query.filters = filters;
  if (state.orderBy !== '') query.order = [[state.orderBy, state.orderDirection]];
  const limit = state.limit.trim();
  if (/^[1-9][0-9]{0,6}$/.test(limit)) query.limit = Number(limit);
  return query;
}

/** The members a query's answer can be ordered by: its measures, dimensions and time dimension (at its grain). */
export function orderableMembers(state: BuilderState): string[] {
  return [...state.measures, ...state.dimensions, ...(state.timeDimension !== '' && state.granularity !== '' ? [timeColumn(state.timeDimension, state.granularity)] : [])];
}

/** The kinds of chart the console offers: each one the embed draws. */
export const CHART_KINDS = ['line', 'bar', 'area', 'kpi', 'table', 'map', 'sankey'] as const;
export type ChartKind = (typeof CHART_KINDS)[number];

/**
 * The chart the query's shape suggests: a line for a time series (a time dimension with a grain and a measure), bars
 * for measures by one category, a KPI for one value (measures alone), a table otherwise.
 */
export function suggestKind(query: SemanticQuery | undefined): ChartKind {
  if (query === undefined) return 'table';
  const measures = query.measures?.length ?? 0;
  const dimensions = query.dimensions?.length ?? 0;
  const timed = (query.timeDimensions ?? []).some((t) => t.granularity !== undefined);
  if (measures === 0) return 'table';
  if (timed) return dimensions <= 1 ? 'line' : 'table';
  if (dimensions === 0) return 'kpi';
  if (dimensions <= 2) return 'bar';
  return 'table';
}

/** vega-lite's UTC time unit of a grain (the embed hands vega time buckets as UTC instants: apps/embed/src/dashboard/vega.ts). */
const TIME_UNITS: Record<string, string> = { year: 'utcyear', quarter: 'utcyearquarter', month: 'utcyearmonth', week: 'utcyearmonthdate', day: 'utcyearmonthdate', hour: 'utcyearmonthdatehours' };

/** The titles of members, for axes; a member without one shows its name. */
export type Titles = Readonly<Record<string, string>>;

const titled = (field: string, titles: Titles) => (titles[field] !== undefined ? { title: titles[field] } : {});

/**
 * A report snapshot's drawing for a chart kind: `kind` as the embed's Widget picks its chart by, and for line, bar
 * and area a vega-lite `spec` over the answer's columns (which the embed fills with the widget's rows); a format
 * chosen for the measure (`formats`, by member) goes on its axis.
 */
export function drawingFor(kind: ChartKind, query: SemanticQuery, titles: Titles = {}, formats?: Readonly<Record<string, ColumnFormat>>): { kind: string; spec: Record<string, unknown> | null } {
  if (kind === 'kpi' || kind === 'table' || kind === 'map' || kind === 'sankey') return { kind, spec: null };
  const measure = query.measures?.[0];
  const time = query.timeDimensions?.find((t) => t.granularity !== undefined);
  const category = query.dimensions?.[0];
  const second = query.dimensions?.[1];
  if (measure === undefined) return { kind: 'table', spec: null };
  // A format chosen for the measure is its axis's too, as the embed's own charts draw it (format.ts d3NumberFormat).
  const format = formats?.[measure];
  const y = { field: measure, type: 'quantitative', ...titled(measure, titles), ...(format !== undefined ? { axis: { format: d3NumberFormat(format) } } : {}) };
  const mark = kind === 'bar' ? { type: 'bar', tooltip: true } : kind === 'area' ? { type: 'area', line: true, tooltip: true } : { type: 'line', point: true, tooltip: true };
  if (time !== undefined) {
    const field = timeColumn(time.dimension, time.granularity!);
    return {
      kind: 'vega',
      spec: {
        mark,
        encoding: {
          x: { field, type: 'temporal', timeUnit: TIME_UNITS[time.granularity!] ?? 'utcyearmonthdate', ...titled(time.dimension, titles) },
          y,
          ...(category !== undefined ? { color: { field: category, type: 'nominal', ...titled(category, titles) } } : {}),
        },
      },
    };
  }
  if (category === undefined) return { kind: 'kpi', spec: null };
  return {
    kind: 'vega',
    spec: kind === 'bar'
      ? { mark, encoding: { y: { field: category, type: 'nominal', sort: '-x', ...titled(category, titles) }, x: y, ...(second !== undefined ? { color: { field: second, type: 'nominal', ...titled(second, titles) } } : {}) } }
      : { mark, encoding: { x: { field: category, type: 'nominal', ...titled(category, titles) }, y, ...(second !== undefined ? { color: { field: second, type: 'nominal', ...titled(second, titles) } } : {}) } },
  };
}

/** A title for a chart from its members' titles: "Revenue by Created at". */
export function chartTitle(query: SemanticQuery, titles: Titles): string {
  const name = (member: string) => titles[member] ?? member;
  const measures = (query.measures ?? []).map(name);
  const by = [...(query.timeDimensions ?? []).map((t) => name(t.dimension)), ...(query.dimensions ?? []).map(name)];
  const what = measures.length > 0 ? measures.join(', ') : by.join(', ');
  return measures.length > 0 && by.length > 0 ? `${what} by ${by.join(', ')}` : what;
}

/** A column's number format, as a report snapshot keeps it (`preferences.columnFormats`, SPEC Report snapshot). */
export interface ColumnFormat {
  type: 'currency' | 'percent' | 'number';
  decimalPlaces?: number | null;
}

/** The format choices the builder offers a number column: the model's own, or one of the snapshot's types. */
export const FORMAT_CHOICES = ['model', 'number', 'currency', 'percent'] as const;
export type FormatChoice = (typeof FORMAT_CHOICES)[number];

/** What the person chose for one column: a type (or the model's) and decimal places ('' for the type's default). */
export interface FormatPick {
  choice: FormatChoice;
  decimals: string;
}

/**
 * The snapshot's `columnFormats` from the builder's picks, keyed by member as the server and the embed read them
 * (semantic.results.ts applyColumnFormats): the model's own format is no entry; decimal places only when a whole
 * number from 0 to 10 was typed. Picks of members the query no longer has are left out. Undefined: no entry at all.
 */
export function columnFormats(picks: Readonly<Record<string, FormatPick>>, query: SemanticQuery | undefined): Record<string, ColumnFormat> | undefined {
  if (query === undefined) return undefined;
  const members = new Set([...(query.measures ?? []), ...(query.dimensions ?? [])]);
  const formats: Record<string, ColumnFormat> = {};
  for (const [member, pick] of Object.entries(picks)) {
    if (!members.has(member) || pick.choice === 'model') continue;
    const decimals = pick.decimals.trim();
    formats[member] = /^(10|[0-9])$/.test(decimals) ? { type: pick.choice, decimalPlaces: Number(decimals) } : { type: pick.choice };
  }
  return Object.keys(formats).length > 0 ? formats : undefined;
}

/** An answer's columns with the snapshot's formats on them, as the server gives a widget's (by column name, else member). */
export function withFormats<C extends { name: string; member: string; format?: ColumnFormat }>(columns: readonly C[], formats: Readonly<Record<string, ColumnFormat>> | undefined): C[] {
  if (formats === undefined) return [...columns];
  return columns.map((column) => {
    const format = formats[column.name] ?? formats[column.member];
    return format === undefined ? column : { ...column, format };
  });
}
