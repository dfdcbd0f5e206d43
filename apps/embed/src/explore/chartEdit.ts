import { CHART_KINDS, FILTER_OPERATORS, buildQuery, emptyBuilder } from './builder.js';
import type { BuilderFilter, BuilderState, ChartKind, FilterOperator, Meta, SemanticQuery } from './builder.js';

/** A chart as a report snapshot holds it (the console's draft, the embed's widget, a saved chart): what the builder starts from. */
export interface SnapshotInput { title?: string | null; kind?: string | null; spec?: unknown; meta?: Record<string, unknown> | null; sqlQuery?: string | null }

/** What the chart builder starts from when a CHART widget is edited: its query as the builder's state, its kind, its title. */
export interface ChartStart { state: BuilderState; kind: ChartKind | undefined; title: string }

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** The chart kind a snapshot was drawn as: its `kind`, or for vega-lite its mark (line, bar, area). */
export function chartKindOf(snapshot: SnapshotInput): ChartKind | undefined {
  const kind = snapshot.kind ?? undefined;
  if (kind !== 'vega') return (CHART_KINDS as readonly string[]).includes(kind ?? '') ? (kind as ChartKind) : undefined;
  const mark = (snapshot.spec as { mark?: unknown } | null | undefined)?.mark;
  const type = typeof mark === 'string' ? mark : typeof mark === 'object' && mark !== null ? (mark as { type?: unknown }).type : undefined;
  return type === 'line' || type === 'bar' || type === 'area' ? type : undefined;
}

/**
 * The builder's state of a snapshot's semantic query (`meta.query`), and whether the builder holds all of it: a query
 * with what the builder has no control for (an `and`/`or` group, a relative date range, a second time dimension or
 * order) is shown as far as it can be, and `complete` is false, so that the editor can say saving drops the rest.
 */
export function chartStart(snapshot: SnapshotInput, meta: Meta): { start: ChartStart; complete: boolean } | undefined {
  const query = (snapshot.meta as { query?: unknown } | null | undefined)?.query as Record<string, unknown> | undefined;
  if (query === undefined || typeof query !== 'object' || query === null) return undefined;
  const measures = strings(query.measures);
  const dimensions = strings(query.dimensions);
  const times = Array.isArray(query.timeDimensions) ? (query.timeDimensions as Array<Record<string, unknown>>) : [];
  const time = times[0];
  const first = [...measures, ...dimensions, typeof time?.dimension === 'string' ? time.dimension : ''].find((m) => m !== '');
  const view = meta.cubes.find((c) => first !== undefined && first.startsWith(`${c.name}.`))?.name ?? meta.cubes[0]?.name ?? '';
  const state: BuilderState = { ...emptyBuilder(view), measures, dimensions };
  if (time !== undefined && typeof time.dimension === 'string') {
    state.timeDimension = time.dimension;
    state.granularity = typeof time.granularity === 'string' ? time.granularity : '';
    const range = strings(time.dateRange);
    if (range.length === 2) [state.dateFrom, state.dateTo] = range as [string, string];
  }
  const filters = Array.isArray(query.filters) ? (query.filters as Array<Record<string, unknown>>) : [];
  state.filters = filters
    .filter((f) => typeof f.member === 'string' && (FILTER_OPERATORS as readonly string[]).includes(String(f.operator)))
    .map((f): BuilderFilter => ({ member: f.member as string, operator: f.operator as FilterOperator, values: (Array.isArray(f.values) ? f.values : []).map(String).join(', ') }));
  const order = Array.isArray(query.order) ? (query.order as unknown[]).filter(Array.isArray) as Array<[string, string]>
    : typeof query.order === 'object' && query.order !== null ? Object.entries(query.order as Record<string, string>) : [];
  if (order[0] !== undefined) {
    state.orderBy = order[0][0];
    state.orderDirection = order[0][1] === 'asc' ? 'asc' : 'desc';
  }
  if (typeof query.limit === 'number') state.limit = String(query.limit);
  const complete = JSON.stringify(normalised(buildQuery(state) ?? {})) === JSON.stringify(normalised(query as SemanticQuery));
  return { start: { state, kind: chartKindOf(snapshot), title: typeof snapshot.title === 'string' ? snapshot.title : '' }, complete };
}

/** A query with its values as text and its order as a list, for comparing what the builder holds with what was saved. */
function normalised(query: SemanticQuery | Record<string, unknown>): Record<string, unknown> {
  const q = query as Record<string, unknown>;
  const order = Array.isArray(q.order) ? q.order : typeof q.order === 'object' && q.order !== null ? Object.entries(q.order) : undefined;
  const filters = Array.isArray(q.filters) ? (q.filters as Array<Record<string, unknown>>).map((f) => ({ ...f, ...(Array.isArray(f.values) ? { values: f.values.map(String) } : {}) })) : undefined;
  const keys = ['measures', 'dimensions', 'timeDimensions', 'filters', 'order', 'limit', ...Object.keys(q)];
  const out: Record<string, unknown> = {};
  for (const key of new Set(keys)) {
    const value = key === 'order' ? order : key === 'filters' ? filters : q[key];
    if (value !== undefined && !(Array.isArray(value) && value.length === 0)) out[key] = value;
  }
  return out;
}
