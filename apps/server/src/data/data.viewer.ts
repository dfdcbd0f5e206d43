import { AppError } from '../core/core.errors.js';
import { parseDateRange } from './semantic/semantic.dates.js';
import type { Granularity, ResolvedMember, SemanticModel } from './semantic/semantic.model.js';
import type { QueryFilter, SemanticQuery } from './semantic/semantic.query.js';

// What a viewer asks of a widget beyond its dashboard's query: filters, FIELD swaps and a TIME_GRAIN choice, each
// checked against the model and turned into the query's own terms.

export type FilterScalar = string | number | boolean;

/** A viewer's filter value (SPEC `f_<semantic_view>.<dimension>=<JSON>`): a value, a list, or a range; null clears. */
export type ViewerFilterValue = FilterScalar | FilterScalar[] | { gte?: FilterScalar; lte?: FilterScalar } | null;

/** A viewer's filter value checked against its dimension's type: a 400 naming `filters.<member>` otherwise. */
function checkViewerValue(type: string, value: FilterScalar, field: string, timezone: string): void {
  const fail = (what: string) => {
    throw new AppError('invalid_parameter', `${field}: ${JSON.stringify(value)} is not ${what}`, field);
  };
  if (type === 'number' && !(typeof value === 'number' || (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))))) fail('a number');
  if (type === 'boolean' && !([true, false, 'true', 'false'] as FilterScalar[]).includes(value)) fail('a boolean');
  if (type === 'time') {
    if (typeof value !== 'string') fail('a date');
    try {
      parseDateRange(String(value), timezone, new Date(0), field);
    } catch {
      fail('a date (YYYY-MM-DD, optionally with a time) or a relative range');
    }
  }
}

/** A viewer's filter value (not null) as its dimension's type reads it: every scalar, and a range with an end. */
export function checkViewerFilter(type: string, value: Exclude<ViewerFilterValue, null>, field: string, timezone: string): void {
  const scalars = Array.isArray(value) ? value : typeof value === 'object' ? [value.gte, value.lte].filter((v) => v !== undefined) : [value];
  for (const scalar of scalars) checkViewerValue(type, scalar as FilterScalar, field, timezone);
  if (!Array.isArray(value) && typeof value === 'object' && value.gte === undefined && value.lte === undefined) {
    throw new AppError('invalid_parameter', `${field}: a range needs gte, lte or both`, field);
  }
}

/**
 * The viewer's own filters may not name a member the host locked (issue 38; Generate Session's filters with
 * settings.lockedFilters): a 400 naming `filters.<member>`. Clearing one (null) changes nothing and is let through.
 */
export function refuseLockedFilters(locked: Readonly<Record<string, unknown>>, filters: Readonly<Record<string, ViewerFilterValue>> | undefined): void {
  for (const [member, value] of Object.entries(filters ?? {})) {
    if (value !== null && Object.hasOwn(locked, member)) {
      throw new AppError('invalid_parameter', `filters.${member}: the host locked this filter for the session; it cannot be changed here`, `filters.${member}`);
    }
  }
}

/** One viewer filter value (not null, already checked) as the query filters it means; an empty list means none. */
export function viewerValueFilters(member: string, isTime: boolean, value: Exclude<ViewerFilterValue, null>): QueryFilter[] {
  if (Array.isArray(value)) {
    if (value.length === 0) return [];
    return [isTime ? { or: value.map((v) => ({ member, operator: 'inDateRange', values: [String(v)] }) as QueryFilter) } : { member, operator: 'equals', values: value }];
  }
  if (typeof value === 'object') {
    const result: QueryFilter[] = [];
    if (value.gte !== undefined) result.push({ member, operator: isTime ? 'afterOrOnDate' : 'gte', values: [value.gte] });
    if (value.lte !== undefined) result.push({ member, operator: isTime ? 'beforeOrOnDate' : 'lte', values: [value.lte] });
    return result;
  }
  return [isTime ? { member, operator: 'inDateRange', values: [String(value)] } : { member, operator: 'equals', values: [value] }];
}

/** A viewer's filters as query filters on the members this query can reach; the others are ignored for it. */
export function viewerFilters(model: SemanticModel, query: SemanticQuery, filters: Record<string, ViewerFilterValue>, skip: string | undefined, timezone: string): { filters: QueryFilter[]; ignored: string[] } {
  const first = query.measures?.[0] ?? query.dimensions?.[0] ?? query.timeDimensions?.[0]?.dimension;
  const base = first === undefined ? undefined : model.member(first, 'query').view;
  const result: QueryFilter[] = [];
  const ignored: string[] = [];
  for (const [member, value] of Object.entries(filters)) {
    const field = `filters.${member}`;
    const resolved = model.dimension(member, field);
    if (value === null || member === skip) continue;
    const reachable = base !== undefined && (resolved.view === base || (base.joins ?? []).some((j) => j.view === resolved.view.name));
    if (!reachable) {
      ignored.push(member);
      continue;
    }
    checkViewerFilter(resolved.dimension.type, value, field, timezone);
    result.push(...viewerValueFilters(member, resolved.dimension.type === 'time', value));
  }
  return { filters: result, ignored };
}

/** A member's title as result columns carry it. */
export const memberTitle = (member: ResolvedMember) => (member.kind === 'dimension' ? member.dimension.title ?? member.dimension.name : member.measure.title ?? member.measure.name);

/** The FIELD swaps a widget's query took: which member replaced which, and their titles. */
export interface AppliedSwap {
  from: string;
  to: string;
  fromTitle: string;
  toTitle: string;
}

/** Each name once, in its first place: a swap onto a member the query already asks for keeps one of them. */
export const unique = <T>(items: readonly T[], keyOf: (item: T) => string): T[] => {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = keyOf(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};

/**
 * FIELD controls: a member of the query swapped for another of the same kind and view. A swap onto a member the
 * query already has (Revenue for Orders in a table of both) keeps that member once, where it first stands, rather
 * than ask for it twice: the dashboard offered the choice, so it must not end in a 400 (issue 31).
 */
export function swapFields(model: SemanticModel, query: SemanticQuery, fields: Record<string, string>): { query: SemanticQuery; swaps: AppliedSwap[] } {
  const swaps = new Map<string, string>();
  const applied: AppliedSwap[] = [];
  const used = new Set([...(query.measures ?? []), ...(query.dimensions ?? [])]);
  for (const [from, to] of Object.entries(fields)) {
    const source = model.member(from, `fields.${from}`);
    const target = model.member(to, `fields.${from}`);
    if (source.kind !== target.kind || source.view !== target.view) {
      throw new AppError('invalid_parameter', `fields.${from}: ${to} must be a ${source.kind} of view ${source.view.name} to replace ${from}`, `fields.${from}`);
    }
    swaps.set(from, to);
    if (used.has(from) && from !== to) applied.push({ from, to, fromTitle: memberTitle(source), toTitle: memberTitle(target) });
  }
  const swap = (name: string) => swaps.get(name) ?? name;
  const order = query.order === undefined ? undefined : (Array.isArray(query.order) ? query.order : Object.entries(query.order)).map(([name, direction]) => [swap(name), direction] as [string, 'asc' | 'desc']);
  return {
    query: {
      ...query,
      measures: query.measures === undefined ? undefined : unique(query.measures.map(swap), (name) => name),
      dimensions: query.dimensions === undefined ? undefined : unique(query.dimensions.map(swap), (name) => name),
      ...(order !== undefined ? { order: unique(order, ([name]) => name) } : {}),
    },
    swaps: applied,
  };
}

/**
 * A widget's title with the FIELD swaps it took: each swapped member's title, as a word of the title, becomes its
 * replacement's ("Revenue 2025" showing orders.count reads "Orders 2025"), keeping a leading capital. A title that
 * names no swapped member stays as the author wrote it.
 */
export function swappedTitle(title: string, swaps: readonly AppliedSwap[]): string {
  const named = swaps.filter((swap) => swap.fromTitle !== '' && swap.toTitle !== '');
  if (named.length === 0) return title;
  const byTitle = new Map(named.map((swap) => [swap.fromTitle.toLowerCase(), swap.toTitle]));
  const escaped = [...byTitle.keys()].sort((a, b) => b.length - a.length).map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // One pass, so that swaps both ways (Revenue for Orders and Orders for Revenue) do not undo each other.
  return title.replace(new RegExp(`(?<![\\p{L}\\p{N}])(?:${escaped.join('|')})(?![\\p{L}\\p{N}])`, 'giu'), (found) => {
    const to = byTitle.get(found.toLowerCase())!;
    const first = found[0]!;
    const isCapital = first !== first.toLowerCase();
    // "average revenue" becomes "average orders", but a title such as "SKU count" keeps its own capitals.
    const isPlainWord = /^\p{Lu}\p{Ll}*(?:\s|$)/u.test(to);
    return isCapital ? to[0]!.toUpperCase() + to.slice(1) : isPlainWord ? to[0]!.toLowerCase() + to.slice(1) : to;
  });
}

/** The query of a TIME_GRAIN control's choice: every bucketed time dimension at that granularity. */
export function withGranularity(query: SemanticQuery, granularity: Granularity | undefined): SemanticQuery {
  if (granularity === undefined) return query;
  return { ...query, timeDimensions: query.timeDimensions?.map((t) => (t.granularity === undefined ? t : { ...t, granularity })) };
}
