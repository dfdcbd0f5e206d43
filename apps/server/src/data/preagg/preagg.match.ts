import { parseDate, endOf, parseDateRange } from '../semantic/semantic.dates.js';
import type { Interval } from '../semantic/semantic.dates.js';
import { SemanticModel } from '../semantic/semantic.model.js';
import type { Granularity, PreAggregation, SemanticView } from '../semantic/semantic.model.js';
import type { MemberFilter, QueryFilter, SemanticQuery } from '../semantic/semantic.query.js';
import type { BoundFilter } from '../policy/policy.access.js';
import { derivePoliced } from '../policy/policy.query.js';
import type { PolicedQuery } from '../policy/policy.query.js';
import { nests, rollupColumns, rollupModel, timezonesOf } from './preagg.definitions.js';

/** A rollup's answer to a query: the query over its table, policed as the viewer's was; or why it cannot answer. */
export type Match = { rollup: PreAggregation; policed: PolicedQuery } | { rollup: PreAggregation; reason: string };

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
export function matchRollup(policed: PolicedQuery, view: SemanticView, rollup: PreAggregation, options: MatchOptions): Match {
  try {
    const { query, rows } = translate(policed, view, rollup, options);
    const table = new SemanticModel([rollupModel(rollupColumns(view, rollup), options.table, policed.model, rollup.additive !== false)]);
    return { rollup, policed: derivePoliced(policed, table, query, rows === 'all' ? [] : [{ view: 'r', rows }]) };
  } catch (error) {
    if (error instanceof NoMatch) return { rollup, reason: error.message };
    throw error;
  }
}

export interface MatchOptions {
  timezone: string;
  now: Date;
  /** The table of the build that would answer (`b_<buildId>`): the query is compiled against it. */
  table: string;
}

function translate(policed: PolicedQuery, view: SemanticView, rollup: PreAggregation, options: MatchOptions): { query: SemanticQuery; rows: 'all' | ReadonlyArray<readonly BoundFilter[]> } {
  const { query } = policed;
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

  // The viewer's row filters of every view the query reads (its own, and each view it joins through a member), as
  // the policies attached them.
  let rows: 'all' | ReadonlyArray<readonly BoundFilter[]> = 'all';
  for (const { rows: viewRows } of policed.rowFilters) {
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
    rows,
  };
}
