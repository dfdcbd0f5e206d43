import { createHash } from 'node:crypto';
import { parseDate, endOf, parseDateRange } from './data.dates.js';
import type { Interval } from './data.dates.js';
import { GRANULARITIES } from './data.model.js';
import type { DataSourceConfig, Granularity, SemanticMeasure, SemanticModel, SemanticView, SourceRefreshKey } from './data.model.js';
import type { BoundFilter, ModelAccess } from './data.policy.js';
import type { MemberFilter, QueryFilter, SemanticQuery } from './data.query.js';
import { isTimeZoneName } from './data.timezone.js';

/**
 * Pre-aggregations (Cube's rollups), declared on a semantic view: its measures grouped by some dimensions and a
 * time dimension at a granularity, built from the data source into files of DuckDB's (data.rollups.ts) and
 * answering every query they can answer exactly. This module is the rule: what a declaration may say, and which
 * query a built rollup answers, as a query of its own over the rollup's table.
 */
export interface PreAggregation {
  /** Unique in its view; an answer from it says `rollup:<view>.<name>`. */
  name: string;
  /** Measures of the view (`view.member`). */
  measures: string[];
  /** Dimensions of the view or of views it joins (`view.member`), not time dimensions. */
  dimensions?: string[];
  /** A time dimension of the view or of a view it joins, bucketed at `granularity` in each of `timezones`. */
  timeDimension?: string;
  granularity?: Granularity;
  /** One file per period of the time dimension; an incremental refresh rebuilds only the recent ones. */
  partitionGranularity?: 'month' | 'quarter' | 'year';
  /** When a build is due (as a data source's refreshKey); `incremental` rebuilds the partitions of `updateWindow` only. */
  refresh?: SourceRefreshKey & { incremental?: boolean; updateWindow?: string };
  /** IANA time zones it is built for (default UTC): a query in another zone goes to the data source. */
  timezones?: string[];
  /**
   * Default true: every measure re-aggregates (count, sum, min, max, avg), so the rollup answers coarser queries.
   * false: it may hold `count_distinct`, and answers only queries at its own grain.
   */
  additive?: boolean;
}

/** Measures that re-aggregate from a finer rollup: a count is summed, an average is kept as its sum and count. */
const ADDITIVE: ReadonlySet<SemanticMeasure['type']> = new Set(['count', 'sum', 'min', 'max', 'avg']);

/** Which granularity answers from which: a bucket of `coarse` is a union of buckets of `fine`. */
export function nests(fine: Granularity, coarse: Granularity): boolean {
  if (fine === coarse) return true;
  const rank = (g: Granularity) => GRANULARITIES.indexOf(g);
  if (rank(fine) > rank(coarse)) return false;
  // Weeks cross month boundaries: nothing coarser than a week is made of weeks, and a week is made of days or finer.
  if (fine === 'week') return false;
  if (coarse === 'week') return rank(fine) <= rank('day');
  return true;
}

export const timezonesOf = (rollup: PreAggregation): string[] => rollup.timezones ?? ['UTC'];

/** The zone of the build that answers a query in `timezone`: its own, or for a rollup without time, its one build. */
export const builtZone = (rollup: PreAggregation, timezone: string): string => (rollup.timeDimension === undefined ? timezonesOf(rollup)[0]! : timezone);

/** The problems of one view's pre-aggregations: the path below the view and what is wrong, or undefined. */
export function preAggregationProblem(view: SemanticView, model: SemanticModel): { path: string; message: string } | undefined {
  const names = new Set<string>();
  const joined = new Set((view.joins ?? []).map((j) => j.view));
  const reachable = (name: string) => {
    const [viewName] = name.split('.');
    return viewName === view.name || joined.has(viewName!);
  };
  for (const [i, rollup] of (view.preAggregations ?? []).entries()) {
    const at = `.preAggregations[${i}]`;
    if (names.has(rollup.name)) return { path: `${at}.name`, message: `duplicate pre-aggregation name "${rollup.name}"` };
    names.add(rollup.name);
    const additive = rollup.additive !== false;
    for (const [j, name] of rollup.measures.entries()) {
      const measure = view.measures.find((m) => `${view.name}.${m.name}` === name);
      if (measure === undefined) return { path: `${at}.measures[${j}]`, message: `"${name}" is not a measure of view ${view.name}` };
      if (additive && !ADDITIVE.has(measure.type)) {
        return { path: `${at}.measures[${j}]`, message: `${name} is a ${measure.type} measure, which does not re-aggregate: only a rollup with "additive": false (answering at its own grain) may hold it` };
      }
    }
    for (const [j, name] of (rollup.dimensions ?? []).entries()) {
      const dimension = lookupDimension(model, name);
      if (dimension === undefined || !reachable(name)) return { path: `${at}.dimensions[${j}]`, message: `"${name}" is not a dimension of view ${view.name} or of a view it joins` };
      if (dimension.type === 'time') return { path: `${at}.dimensions[${j}]`, message: `${name} is a time dimension: name it as timeDimension, with a granularity` };
    }
    if (rollup.timeDimension !== undefined) {
      const time = lookupDimension(model, rollup.timeDimension);
      if (time === undefined || !reachable(rollup.timeDimension) || time.type !== 'time') {
        return { path: `${at}.timeDimension`, message: `"${rollup.timeDimension}" is not a time dimension of view ${view.name} or of a view it joins` };
      }
      if (rollup.granularity === undefined) return { path: `${at}.granularity`, message: 'a timeDimension needs a granularity' };
      if (rollup.partitionGranularity !== undefined && !nests(rollup.granularity, rollup.partitionGranularity)) {
        return { path: `${at}.partitionGranularity`, message: `${rollup.granularity} buckets do not fall within ${rollup.partitionGranularity} partitions` };
      }
    } else {
      if (rollup.granularity !== undefined) return { path: `${at}.granularity`, message: 'a granularity needs a timeDimension' };
      if (rollup.partitionGranularity !== undefined) return { path: `${at}.partitionGranularity`, message: 'partitions need a timeDimension' };
      if (rollup.refresh?.incremental === true) return { path: `${at}.refresh.incremental`, message: 'an incremental refresh needs partitions' };
    }
    if (rollup.refresh?.incremental === true && rollup.partitionGranularity === undefined) {
      return { path: `${at}.refresh.incremental`, message: 'an incremental refresh needs a partitionGranularity' };
    }
    for (const [j, zone] of (rollup.timezones ?? []).entries()) {
      if (!isTimeZoneName(zone)) return { path: `${at}.timezones[${j}]`, message: `"${zone}" is not an IANA time zone name` };
    }
  }
  return undefined;
}

function lookupDimension(model: SemanticModel, name: string) {
  const [viewName, member] = name.split('.');
  return model.views.get(viewName!)?.dimensions.find((d) => d.name === member);
}

/** The rollup's columns: one per dimension (`d<i>`), the time bucket (`t`), and per measure `m<i>` (an average: `m<i>__sum`, `m<i>__count`). */
export interface RollupColumns {
  dimensions: Array<{ member: string; column: string }>;
  time: { member: string; column: string } | undefined;
  measures: Array<{ member: string; column: string; type: SemanticMeasure['type'] }>;
}

export function rollupColumns(view: SemanticView, rollup: PreAggregation): RollupColumns {
  return {
    dimensions: (rollup.dimensions ?? []).map((member, i) => ({ member, column: `d${i}` })),
    time: rollup.timeDimension === undefined ? undefined : { member: rollup.timeDimension, column: 't' },
    measures: rollup.measures.map((member, i) => ({ member, column: `m${i}`, type: view.measures.find((m) => `${view.name}.${m.name}` === member)!.type })),
  };
}

/**
 * What a build depends on: the rollup, the views it reads and the data source. A build made under another
 * definition is never read (the import changed it); it is rebuilt.
 */
export function definitionHash(source: DataSourceConfig, model: SemanticModel, view: SemanticView, rollup: PreAggregation, timezone: string): string {
  const { refreshKey: _refreshKey, ...where } = source;
  const views = [view, ...(view.joins ?? []).map((j) => model.views.get(j.view))].map((v) => v && { ...v, accessPolicy: undefined, preAggregations: undefined });
  return createHash('sha256').update(JSON.stringify([where, views, { ...rollup, refresh: undefined }, timezone])).digest('base64url').slice(0, 22);
}

/**
 * The semantic model of a rollup's table: one view `r` whose dimensions are the rollup's columns and whose
 * measures re-aggregate them. Queries matched to the rollup are compiled against it, in DuckDB's dialect, with
 * its time bucket read as wall-clock time (the time zone of the build, compiled as UTC).
 */
export function rollupModel(columns: RollupColumns, table: string, model: SemanticModel, additive: boolean): SemanticView {
  const dimensionType = (member: string) => lookupDimension(model, member)!.type;
  return {
    name: 'r', table,
    dimensions: [
      ...columns.dimensions.map(({ member, column }) => ({ name: column, type: dimensionType(member) })),
      ...(columns.time !== undefined ? [{ name: columns.time.column, type: 'time' as const }] : []),
    ],
    measures: columns.measures.map(({ column, type }) => ({ name: column, type: reaggregation(type, additive), column })),
  };
}

/** How a rollup column of a measure re-aggregates (internal measure types of the compiler: data.compiler.ts `aggregate`). */
function reaggregation(type: SemanticMeasure['type'], additive: boolean): SemanticMeasure['type'] {
  if (!additive) return 'rollup_grain';
  if (type === 'count') return 'rollup_count';
  if (type === 'avg') return 'rollup_avg';
  return type;
}

export type Match = { rollup: PreAggregation; query: SemanticQuery; access: RollupAccess } | { rollup: PreAggregation; reason: string };

/** The viewer's row filters, translated to the rollup's columns: what the compiler adds to a rollup query's WHERE. */
export interface RollupAccess {
  rows: 'all' | ReadonlyArray<readonly BoundFilter[]>;
}

class NoMatch extends Error {}
const refuse = (reason: string): never => {
  throw new NoMatch(reason);
};

/** The wall-clock text of an instant in a zone, `YYYY-MM-DDTHH:MM:SS`. */
function wallText(epochSeconds: number, timezone: string): string {
  return new Date(epochSeconds * 1000).toLocaleString('sv-SE', { timeZone: timezone }).replace(' ', 'T');
}

/** Whether a wall-clock time starts a bucket of the granularity. */
function startsBucket(wall: string, granularity: Granularity): boolean {
  const [date, time] = wall.split('T') as [string, string];
  const [, month, day] = date.split('-').map(Number) as [number, number, number];
  const [hour, minute, second] = time.split(':').map(Number) as [number, number, number];
  const units = { second: 0, minute: second, hour: second + minute, day: second + minute + hour } as const;
  if (granularity === 'second') return true;
  if (granularity === 'minute' || granularity === 'hour' || granularity === 'day') return units[granularity] === 0;
  if (units.day !== 0) return false;
  if (granularity === 'week') return new Date(`${date}T00:00:00Z`).getUTCDay() === 1;
  if (granularity === 'month') return day === 1;
  if (granularity === 'quarter') return day === 1 && (month - 1) % 3 === 0;
  return day === 1 && month === 1;
}

/**
 * An interval of the query's zone as an inclusive wall-clock range over the rollup's buckets, or a refusal when an
 * end falls inside a bucket (the rollup cannot split it).
 */
function wallRange(interval: Interval, granularity: Granularity, timezone: string, what: string): { from?: string; to?: string } {
  const range: { from?: string; to?: string } = {};
  for (const end of ['from', 'to'] as const) {
    const at = interval[end];
    if (!Number.isFinite(at)) continue;
    const wall = wallText(at, timezone);
    if (!startsBucket(wall, granularity)) refuse(`${what} ${end === 'from' ? 'starts' : 'ends'} at ${wall}, inside a ${granularity} of the rollup`);
    // A boundary whose wall-clock time names another instant too (a daylight saving change) cannot be placed.
    if (parseDate(wall, timezone, 'range').at !== at) refuse(`${what} ${end === 'from' ? 'starts' : 'ends'} at ${wall}, which a daylight saving change makes ambiguous`);
    // The rollup query reads wall-clock time as UTC, and an inclusive end as the end of its second.
    range[end] = end === 'from' ? wall : shiftWall(wall, -1);
  }
  return range;
}

/** A wall-clock text moved by some seconds, as wall-clock arithmetic (no zone). */
function shiftWall(wall: string, seconds: number): string {
  return new Date(Date.parse(`${wall}Z`) + seconds * 1000).toISOString().slice(0, 19);
}

/** An interval filter's [from, to) in epoch seconds (the compiler's reading of the time operators). */
function filterInterval(filter: MemberFilter, timezone: string, now: Date): Interval {
  const texts = (filter.values ?? []).map(String);
  if (filter.operator === 'inDateRange' || filter.operator === 'notInDateRange') {
    return parseDateRange(texts.length === 1 ? texts[0]! : texts, timezone, now, 'filter');
  }
  const date = parseDate(texts[0] ?? '', timezone, 'filter');
  if (filter.operator === 'beforeDate') return { from: -Infinity, to: date.at };
  if (filter.operator === 'beforeOrOnDate') return { from: -Infinity, to: endOf(date, timezone) };
  if (filter.operator === 'afterDate') return { from: endOf(date, timezone), to: Infinity };
  return { from: date.at, to: Infinity };
}

const TIME_OPERATORS = new Set(['inDateRange', 'notInDateRange', 'beforeDate', 'beforeOrOnDate', 'afterDate', 'afterOrOnDate']);

/**
 * Whether a built rollup answers a query exactly, and the query that does over its table: every measure in the
 * rollup (re-aggregated, or at its grain when it is not additive), every dimension in it, a time granularity that
 * its buckets make up, date ranges on its bucket boundaries, filters and the viewer's policy filters on its
 * members only, the rollup built for the query's time zone. The query must already compile against the model
 * (it has been checked and the viewer's access applied).
 */
export function matchRollup(model: SemanticModel, view: SemanticView, rollup: PreAggregation, query: SemanticQuery, options: { timezone: string; now: Date; access?: ModelAccess }): Match {
  try {
    return { rollup, ...translate(model, view, rollup, query, options) };
  } catch (error) {
    if (error instanceof NoMatch) return { rollup, reason: error.message };
    throw error;
  }
}

function translate(model: SemanticModel, view: SemanticView, rollup: PreAggregation, query: SemanticQuery, options: { timezone: string; now: Date; access?: ModelAccess }): { query: SemanticQuery; access: RollupAccess } {
  const { timezone, now } = options;
  if (rollup.timeDimension !== undefined && !timezonesOf(rollup).includes(timezone)) refuse(`it is not built for the time zone ${timezone} (${timezonesOf(rollup).join(', ')})`);
  const columns = rollupColumns(view, rollup);
  const additive = rollup.additive !== false;
  const granularity = rollup.granularity;
  const dimensionColumn = new Map(columns.dimensions.map((d) => [d.member, `r.${d.column}`]));
  const measureColumn = new Map(columns.measures.map((m) => [m.member, `r.${m.column}`]));
  const timeMember = columns.time?.member;

  const measures = (query.measures ?? []).map((name) => measureColumn.get(name) ?? refuse(`the measure ${name} is not in it`));
  const dimensions = (query.dimensions ?? []).map((name) => dimensionColumn.get(name) ?? refuse(`the dimension ${name} is not in it`));
  const timeDimensions = (query.timeDimensions ?? []).map((td) => {
    if (td.dimension !== timeMember || granularity === undefined) return refuse(`the time dimension ${td.dimension} is not its time dimension`);
    if (td.granularity !== undefined && !nests(granularity, td.granularity)) refuse(`${td.granularity} buckets are not made of its ${granularity} buckets`);
    const range = td.dateRange === undefined ? undefined : wallRange(parseDateRange(td.dateRange, timezone, now, 'dateRange'), granularity, timezone, 'the date range');
    return {
      dimension: 'r.t',
      ...(td.granularity !== undefined ? { granularity: td.granularity } : {}),
      ...(range !== undefined ? { dateRange: [range.from ?? '0001-01-01T00:00:00', range.to ?? '9999-12-31T23:59:59'] } : {}),
    };
  });
  if (!additive) {
    const sameDimensions = dimensions.length === columns.dimensions.length;
    const atGrain = timeMember === undefined || timeDimensions.some((td) => td.granularity === granularity);
    if (!sameDimensions || !atGrain) refuse(`it is not additive, and answers only at its own grain (${[...columns.dimensions.map((d) => d.member), ...(timeMember !== undefined ? [`${timeMember}.${granularity}`] : [])].join(', ')})`);
  }

  const translateFilter = (filter: QueryFilter | BoundFilter, policy: boolean): QueryFilter | BoundFilter => {
    if ('never' in filter) return filter;
    if ('and' in filter) return { and: filter.and.map((f) => translateFilter(f, policy)) } as QueryFilter;
    if ('or' in filter) return { or: filter.or.map((f) => translateFilter(f, policy)) } as QueryFilter;
    const whose = policy ? 'the access policy filters on' : 'a filter names';
    const measure = measureColumn.get(filter.member);
    if (measure !== undefined) {
      if (policy) refuse(`${whose} the measure ${filter.member}`);
      return { ...filter, member: measure };
    }
    if (filter.member === timeMember && granularity !== undefined) {
      if (filter.operator === 'set' || filter.operator === 'notSet') return { ...filter, member: 'r.t' };
      if (!TIME_OPERATORS.has(filter.operator)) refuse(`${whose} ${filter.member} with ${filter.operator}, which compares instants inside its buckets`);
      let interval: Interval;
      try {
        interval = filterInterval(filter, timezone, now);
      } catch {
        return refuse(`${whose} ${filter.member} with a value the rollup cannot place`);
      }
      const range = wallRange(interval, granularity, timezone, `${whose} ${filter.member}, whose range`);
      if (filter.operator === 'inDateRange' || filter.operator === 'notInDateRange') {
        return { member: 'r.t', operator: filter.operator, values: [range.from ?? '0001-01-01T00:00:00', range.to ?? '9999-12-31T23:59:59'] };
      }
      return range.from !== undefined ? { member: 'r.t', operator: 'afterOrOnDate', values: [range.from] } : { member: 'r.t', operator: 'beforeOrOnDate', values: [range.to!] };
    }
    const column = dimensionColumn.get(filter.member) ?? refuse(`${whose} ${filter.member}, which is not in it`);
    return { ...filter, member: column };
  };
  const filters = (query.filters ?? []).map((f) => translateFilter(f, false) as QueryFilter);

  // The viewer's row filters of every view the query reads: its own, and each view it joins through a member.
  const read = new Set([view.name, ...[...(query.dimensions ?? []), ...(query.timeDimensions ?? []).map((t) => t.dimension), ...collectMembers(query.filters ?? [])].map((m) => m.split('.')[0]!)]);
  let rows: RollupAccess['rows'] = 'all';
  for (const name of read) {
    const viewRows = options.access?.view(model.view(name, 'query')).rows ?? 'all';
    if (viewRows === 'all') continue;
    const translated = viewRows.map((list) => list.map((f) => translateFilter(f, true) as BoundFilter));
    // AND across views of each view's OR of alternatives: the alternatives' cross product.
    rows = rows === 'all' ? translated : rows.flatMap((left) => translated.map((right) => [...left, ...right]));
  }

  const orderName = (name: string) => {
    if (measureColumn.has(name)) return measureColumn.get(name)!;
    if (dimensionColumn.has(name)) return dimensionColumn.get(name)!;
    if (timeMember !== undefined && name.startsWith(`${timeMember}.`)) return `r.t${name.slice(timeMember.length)}`;
    if (timeMember !== undefined && name === timeMember) return 'r.t';
    return refuse(`it orders by ${name}, which is not in it`);
  };
  const order = query.order === undefined ? undefined : (Array.isArray(query.order) ? query.order : Object.entries(query.order)).map(([name, direction]) => [orderName(name), direction] as [string, 'asc' | 'desc']);
  return {
    query: {
      measures, dimensions, timeDimensions, filters,
      ...(order !== undefined ? { order } : {}),
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
    },
    access: { rows },
  };
}

function collectMembers(filters: readonly QueryFilter[]): string[] {
  return filters.flatMap((f) => ('member' in f ? [f.member] : 'and' in f ? collectMembers(f.and) : collectMembers(f.or)));
}
