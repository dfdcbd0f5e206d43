import { AppError } from '../core/core.errors.js';
import { parseDateRange } from '../data/semantic/semantic.dates.js';
import { FILTER_OPERATORS, parseSemanticQuery } from '../data/semantic/semantic.query.js';
import type { QueryFilter, SemanticQuery } from '../data/semantic/semantic.query.js';

// Cube's REST query format (issue 36; docs/cube.md) read into svc's semantic query. The two formats were made alike
// (members `view.member`, the same filter operators and time dimensions), so most of a Cube query passes as it is;
// this module names what Cube sends that svc reads differently (legacy `dimension` in filters, order as pairs or
// objects, `offset`, `total`, relative date ranges echoed as absolute ones) and refuses, by its path, what svc cannot
// serve (segments, ungrouped queries, `notStartsWith`...). It also writes the "normalized" query that Cube echoes in
// each result, which @cubejs-client/core's ResultSet reads to pivot and fill missing dates.

/** Cube's default and largest row limit (Cube's `CUBEJS_DB_QUERY_DEFAULT_LIMIT` and `..._LIMIT`). */
export const CUBE_DEFAULT_LIMIT = 10_000;
export const CUBE_MAX_LIMIT = 50_000;

/** One query as svc runs it, with what Cube's answer needs besides the rows. */
export interface CubeQueryPlan {
  /** svc's query: `limit` already covers `offset` (rows before it are cut from the answer). */
  query: SemanticQuery;
  offset: number;
  limit: number;
  total: boolean;
  /** The query as Cube echoes it: relative date ranges as absolute local times, order as `{id, desc}` pairs. */
  normalized: Record<string, unknown>;
}

export type CubeQueryType = 'regularQuery' | 'compareDateRangeQuery' | 'blendingQuery';

/** The queries of one `load` and how Cube names their kind. */
export interface CubeLoad {
  queryType: CubeQueryType;
  plans: CubeQueryPlan[];
}

const CUBE_ONLY_OPERATORS = new Set(['notStartsWith', 'notEndsWith', 'measureFilter']);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A `load`'s `query` parameter (one query, or an array of them: a blending query) read for svc, or a 400 naming
 * the field at fault (`query[1].timeDimensions[0].granularity`). `timezone`: the query's own, else the default.
 */
export function readCubeLoad(raw: unknown, defaultTimezone: string, now: Date): CubeLoad {
  if (Array.isArray(raw)) {
    if (raw.length === 0) throw AppError.at('invalid_parameter', 'query', 'an array of queries needs at least one');
    if (raw.length > 10) throw AppError.at('invalid_parameter', 'query', 'at most 10 queries are blended at once');
    const plans = raw.map((one, i) => readOne(one, `query[${i}]`, defaultTimezone, now));
    // Cube's rule for blending: each query has exactly one time dimension, all at the same granularity.
    const grains = raw.map((one, i) => {
      const tds = ((one as Record<string, unknown>).timeDimensions ?? []) as Array<Record<string, unknown>>;
      if (tds.length !== 1 || typeof tds[0]!.granularity !== 'string') {
        throw AppError.at('invalid_parameter', `query[${i}].timeDimensions`, 'a blending query needs exactly one time dimension with a granularity in each query');
      }
      return tds[0]!.granularity;
    });
    const other = grains.findIndex((grain) => grain !== grains[0]);
    if (other !== -1) throw AppError.at('invalid_parameter', `query[${other}].timeDimensions[0].granularity`, `a blending query's time dimensions share one granularity (${String(grains[0])})`);
    return { queryType: raw.length === 1 ? 'regularQuery' : 'blendingQuery', plans };
  }
  if (!isObject(raw)) throw AppError.at('invalid_parameter', 'query', 'send a query object (or an array of them)');
  const tds = Array.isArray(raw.timeDimensions) ? raw.timeDimensions as unknown[] : [];
  const compareAt = tds.findIndex((td) => isObject(td) && td.compareDateRange !== undefined);
  if (compareAt === -1) return { queryType: 'regularQuery', plans: [readOne(raw, 'query', defaultTimezone, now)] };
  const td = tds[compareAt] as Record<string, unknown>;
  const ranges = td.compareDateRange;
  const field = `query.timeDimensions[${compareAt}].compareDateRange`;
  if (!Array.isArray(ranges) || ranges.length < 1 || ranges.length > 10) throw AppError.at('invalid_parameter', field, 'a list of 1 to 10 date ranges');
  if (td.dateRange !== undefined) throw AppError.at('invalid_parameter', `query.timeDimensions[${compareAt}].dateRange`, 'send dateRange or compareDateRange, not both');
  // One query a range (Cube's compareDateRangeQuery), each echoed with its own absolute range.
  const plans = ranges.map((range, i) => {
    const { compareDateRange: _, ...rest } = td;
    const one = { ...raw, timeDimensions: tds.map((t, j) => (j === compareAt ? { ...rest, dateRange: range } : t)) };
    return readOne(one, 'query', defaultTimezone, now, `${field}[${i}]`);
  });
  return { queryType: 'compareDateRangeQuery', plans };
}

const KNOWN = new Set(['measures', 'dimensions', 'timeDimensions', 'filters', 'order', 'limit', 'offset', 'total', 'timezone', 'segments', 'ungrouped', 'renewQuery', 'responseFormat', 'rowLimit', 'queryType', 'cache']);

function readOne(raw: unknown, field: string, defaultTimezone: string, now: Date, rangeField?: string): CubeQueryPlan {
  if (!isObject(raw)) throw AppError.at('invalid_parameter', field, 'a query is an object');
  for (const key of Object.keys(raw)) {
    if (!KNOWN.has(key)) throw AppError.at('invalid_parameter', `${field}.${key}`, 'not a field of Cube\'s query format that svc reads');
  }
  if (Array.isArray(raw.segments) && raw.segments.length > 0) throw AppError.at('invalid_parameter', `${field}.segments[0]`, 'svc\'s views declare no segments: use a filter instead');
  if (raw.ungrouped === true) throw AppError.at('invalid_parameter', `${field}.ungrouped`, 'svc answers grouped queries only: add the primary key as a dimension to get one row per record');
  if (raw.responseFormat !== undefined && raw.responseFormat !== 'default' && raw.responseFormat !== 'compact') {
    throw AppError.at('invalid_parameter', `${field}.responseFormat`, 'one of default, compact');
  }
  const timezone = raw.timezone === undefined ? defaultTimezone : raw.timezone;
  if (typeof timezone !== 'string') throw AppError.at('invalid_parameter', `${field}.timezone`, 'an IANA time zone name');
  const offset = raw.offset === undefined ? 0 : raw.offset;
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0 || offset > CUBE_MAX_LIMIT) throw AppError.at('invalid_parameter', `${field}.offset`, `an integer from 0 to ${CUBE_MAX_LIMIT}`);
  const asked = raw.limit ?? raw.rowLimit;
  if (asked !== undefined && (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 1 || asked > CUBE_MAX_LIMIT)) {
    throw AppError.at('invalid_parameter', `${field}.${raw.limit === undefined ? 'rowLimit' : 'limit'}`, `an integer from 1 to ${CUBE_MAX_LIMIT}`);
  }
  const limit = (asked as number | undefined) ?? CUBE_DEFAULT_LIMIT;
  if (offset + limit > CUBE_MAX_LIMIT) throw AppError.at('invalid_parameter', `${field}.offset`, `offset plus limit is at most ${CUBE_MAX_LIMIT}`);
  const filters = raw.filters === undefined ? undefined : readFilters(raw.filters, `${field}.filters`);
  const order = raw.order === undefined ? undefined : readOrder(raw.order, `${field}.order`);
  const timeDimensions = raw.timeDimensions;
  const query = parseSemanticQuery({
    ...(raw.measures !== undefined ? { measures: raw.measures } : {}),
    ...(raw.dimensions !== undefined ? { dimensions: raw.dimensions } : {}),
    ...(timeDimensions !== undefined ? { timeDimensions } : {}),
    ...(filters !== undefined ? { filters } : {}),
    ...(order !== undefined && order.length > 0 ? { order: order.map(({ id, desc }) => [id, desc ? 'desc' : 'asc']) } : {}),
    limit: offset + limit,
  }, field);
  const normalizedTds = (query.timeDimensions ?? []).map((td, i) => {
    if (td.dateRange === undefined) return { ...td };
    const at = rangeField ?? `${field}.timeDimensions[${i}].dateRange`;
    const interval = parseDateRange(td.dateRange, timezone, now, at);
    return { ...td, dateRange: [localTime(interval.from * 1000, timezone), localTime(interval.to * 1000 - 1, timezone)] };
  });
  return {
    query,
    offset,
    limit,
    total: raw.total === true,
    normalized: {
      measures: query.measures ?? [],
      dimensions: query.dimensions ?? [],
      timeDimensions: normalizedTds,
      segments: [],
      filters: filters ?? [],
      order: order ?? [],
      limit,
      ...(offset > 0 ? { offset } : {}),
      ...(raw.total === true ? { total: true } : {}),
      timezone,
      rowLimit: limit,
      ...(raw.responseFormat === 'compact' ? { responseFormat: 'compact' } : {}),
      queryType: 'regularQuery',
    },
  };
}

/** Cube's filters: `member` (or the legacy `dimension`), its operators, and `and` / `or` groups. */
function readFilters(raw: unknown, field: string): QueryFilter[] {
  if (!Array.isArray(raw)) throw AppError.at('invalid_parameter', field, 'a list of filters');
  return raw.map((filter, i) => readFilter(filter, `${field}[${i}]`));
}

function readFilter(raw: unknown, field: string): QueryFilter {
  if (!isObject(raw)) throw AppError.at('invalid_parameter', field, 'a filter is an object');
  if (raw.and !== undefined) return { and: readFilters(raw.and, `${field}.and`) };
  if (raw.or !== undefined) return { or: readFilters(raw.or, `${field}.or`) };
  const member = raw.member ?? raw.dimension;
  if (typeof member !== 'string') throw AppError.at('invalid_parameter', `${field}.member`, 'the member the filter is on');
  const operator = raw.operator;
  if (typeof operator !== 'string') throw AppError.at('invalid_parameter', `${field}.operator`, 'an operator');
  if (CUBE_ONLY_OPERATORS.has(operator)) throw AppError.at('invalid_parameter', `${field}.operator`, `${operator} is Cube's but not svc's: svc has ${FILTER_OPERATORS.join(', ')}`);
  if (!(FILTER_OPERATORS as readonly string[]).includes(operator)) throw AppError.at('invalid_parameter', `${field}.operator`, `one of ${FILTER_OPERATORS.join(', ')}`);
  const values = raw.values;
  if (values !== undefined && !Array.isArray(values)) throw AppError.at('invalid_parameter', `${field}.values`, 'a list of values');
  return { member, operator: operator as (typeof FILTER_OPERATORS)[number], ...(values !== undefined ? { values: values as Array<string | number | boolean> } : {}) };
}

/** Cube's order: `{member: 'asc'}` or `[[member, 'desc'], ...]`, as `{id, desc}` pairs (how Cube echoes it). */
function readOrder(raw: unknown, field: string): Array<{ id: string; desc: boolean }> {
  const pairs: unknown[] = Array.isArray(raw) ? raw : isObject(raw) ? Object.entries(raw) : [];
  if (!Array.isArray(raw) && !isObject(raw)) throw AppError.at('invalid_parameter', field, 'an object of member: asc|desc, or a list of [member, asc|desc]');
  return pairs.map((pair, i) => {
    const at = Array.isArray(raw) ? `${field}[${i}]` : `${field}.${String((pair as unknown[])[0])}`;
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || (pair[1] !== 'asc' && pair[1] !== 'desc')) {
      throw AppError.at('invalid_parameter', at, 'a member and asc or desc');
    }
    return { id: pair[0], desc: pair[1] === 'desc' };
  });
}

/** An instant (epoch ms) as local wall time in Cube's text form, `2024-01-31T23:59:59.999`. */
export function localTime(ms: number, timezone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
  }).formatToParts(new Date(ms));
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}.${String(((ms % 1000) + 1000) % 1000).padStart(3, '0')}`;
}
