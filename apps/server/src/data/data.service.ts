import type { EmbedPrincipal, PlatformUserPrincipal } from '../core/core.principal.js';
import { AppError } from '../core/core.errors.js';
import { parseJson } from '../workspace/workspace.presenter.js';
import type { DashboardConfig, ReportSnapshot } from '../workspace/workspace.dashboard-schema.js';
import { checkReadableDashboard, previewSnapshots, readerOf, requireReadableDashboard } from '../dashboards/dashboards.service.js';
import type { AnswerSource } from './cache/cache.results.js';
import { drilldown } from './data.drill.js';
import type { Drill } from './data.drill.js';
import { leastCached, runRawSql, runSemanticQuery } from './data.run.js';
import type { SourcedResult } from './data.run.js';
import { openDataScope } from './data.scope.js';
import type { DataContext, DataScope } from './data.scope.js';
import { checkSnapshotQuery, offeredSwapFault, snapshotOf, snapshotQuery } from './data.snapshot.js';
import { checkViewerFilter, memberTitle, refuseLockedFilters, swapFields, swappedTitle, unique, viewerFilters, withGranularity } from './data.viewer.js';
import type { ViewerFilterValue } from './data.viewer.js';
import type { DimensionType, Granularity } from './semantic/semantic.model.js';
import { parseSemanticQuery } from './semantic/semantic.query.js';
import type { SemanticQuery } from './semantic/semantic.query.js';
import { applyColumnFormats, applyComparison, checkComparison, fillMissingRows, localRange, shiftedQuery } from './semantic/semantic.results.js';
import type { QueryResult } from './semantic/semantic.results.js';

// The data path's routes, in short (issue 32): a widget's answer, a host's filters checked, an APP dashboard's
// query. Each opens its scope (data.scope.ts) and runs its queries one way (data.run.ts).

export interface WidgetDataRequest {
  filters?: Record<string, ViewerFilterValue>;
  timezone?: string;
  granularity?: Granularity;
  fields?: Record<string, string>;
  drilldown?: Drill;
  /** Answer from the data source (or a pre-aggregation) whatever the cache holds: the `refresh` action's ask. */
  force?: boolean;
}

export interface WidgetData extends QueryResult {
  /** A drill-down's: how many rows lie under the mark (`rows` holds the first DRILL_ROWS). */
  totalRows?: number;
  timezone: string;
  /** Where the answer came from; of several statements (period comparisons), the least cached one's. */
  source: AnswerSource;
  /** Filters of the request that name no member this widget's query can reach: they do not apply to it. */
  ignoredFilters: string[];
  /** The FIELD swaps this widget's query took (`fields` of the request that named one of its members). */
  fields?: Record<string, string>;
  /** The widget's title with those swaps: the swapped members' titles replaced (swappedTitle). */
  title?: string;
}

/**
 * `POST /api/v1/embed/dashboard/{publicId}/widgets/{widgetId}/data`: runs one widget's query, and only it, with
 * the viewer's filters and time zone, under the viewer's access policies. CHART widgets run their report snapshot
 * (a semantic query in `meta.query`, else its `sqlQuery`); FILTER widgets list their member's values. The
 * dashboard is checked as for reading it.
 */
export async function widgetData(dc: DataContext, principal: PlatformUserPrincipal | EmbedPrincipal, publicId: string, widgetId: string, request: WidgetDataRequest): Promise<WidgetData> {
  if (principal.kind === 'embed') refuseLockedFilters(principal.access.lockedFilters, request.filters);
  const reader = readerOf(principal);
  const dashboard = await checkReadableDashboard(dc, reader, publicId, (id) => dc.reads.dashboard(dc, principal.accountId, id));
  const widgets = dashboard.parsedConfig.widgets ?? [];
  const widget = widgets.find((w) => w.id === widgetId);
  if (widget === undefined) throw new AppError('not_found', `dashboard ${publicId} has no widget ${widgetId}`, 'widgetId');
  // A CHART widget's snapshots are read alongside the deployment's model (two reads, one round trip of waiting); a
  // draft preview's are the draft's.
  const drafted = previewSnapshots(reader, dashboard);
  const reading = widget.type !== 'CHART' ? undefined : drafted !== undefined ? Promise.resolve(drafted) : dc.reads.snapshots(dc, principal.accountId, dashboard.id);
  reading?.catch(() => undefined);
  const scope = await openDataScope(dc, principal, dashboard.deployment_id, request.timezone, request.force === true);
  const { model, timezone } = scope;
  const filters = request.filters ?? {};
  // Every filter must name a declared dimension the viewer may see, whether or not it applies to this widget.
  for (const member of Object.keys(filters)) scope.access.requireVisible(model.dimension(member, `filters.${member}`), `filters.${member}`);

  if (widget.type === 'FILTER') {
    const member = (widget.config as { member?: unknown } | null | undefined)?.member;
    const dimension = model.dimension(member, `widgets.${widgetId}.config.member`);
    scope.access.requireVisible(dimension, `widgets.${widgetId}.config.member`);
    if (dimension.dimension.type === 'time') return { columns: [], rows: [], truncated: false, timezone, ignoredFilters: [], source: 'cache' };
    const query: SemanticQuery = { dimensions: [dimension.name], limit: 1000 };
    // A filter control lists the values the other filters leave, not narrowed by its own choice.
    const applied = viewerFilters(model, query, filters, dimension.name, timezone);
    const result = await runSemanticQuery(dc, scope, { ...query, filters: applied.filters });
    return { ...result, timezone, ignoredFilters: applied.ignored };
  }
  if (widget.type !== 'CHART') throw new AppError('invalid_parameter', `widget ${widgetId} is a ${widget.type} widget, which runs no query`, 'widgetId');

  const snapshots = await reading!;
  const snapshot = snapshotOf(widget, widgets, snapshots);
  if (snapshot === undefined) throw new AppError('invalid_query', `widget ${widgetId} names no report snapshot of dashboard ${publicId}`, 'widgetId');
  const rawQuery = (snapshot.meta as { query?: unknown } | null)?.query;
  if (rawQuery === undefined) {
    if (typeof snapshot.sqlQuery !== 'string' || snapshot.sqlQuery.trim() === '') {
      throw new AppError('invalid_query', `report snapshot ${snapshot.reportId} has neither meta.query nor sqlQuery`, 'widgetId');
    }
    if (request.drilldown !== undefined) throw new AppError('invalid_parameter', 'drilldown: a widget of raw SQL has no semantic members to drill into', 'drilldown');
    const result = await runRawSql(dc, scope, { reportId: snapshot.reportId, sqlQuery: snapshot.sqlQuery, policyAware: (snapshot.meta as { policyAware?: unknown } | null)?.policyAware === true });
    return { ...result, columns: applyColumnFormats(result.columns, snapshot.preferences?.columnFormats), timezone, ignoredFilters: Object.keys(filters) };
  }

  const base = snapshotQuery(rawQuery, snapshot);
  checkSnapshotQuery(model, base, snapshot);
  const title = (widget.config as { title?: unknown } | null | undefined)?.title;
  try {
    return await chartData(dc, scope, snapshot, base, request, typeof title === 'string' ? title : snapshot.title ?? snapshot.name ?? undefined);
  } catch (error) {
    // The snapshot's own query is sound (checked above): a 400 is the viewer's ask, unless it is a swap the
    // dashboard's own FIELD control offers, which makes it the dashboard's fault.
    if (error instanceof AppError && error.status === 400) throw offeredSwapFault(error, widgets, request.fields ?? {}) ?? error;
    throw error;
  }
}

/** A filter the host or the viewer may set on a dashboard, as the embed shows it. */
export interface CheckedFilter {
  member: string;
  /** The dimension's title in the model (what a filter chip shows). */
  title: string;
  type: DimensionType;
}

/**
 * `POST /api/v1/embed/dashboard/{publicId}/filters/check`: the filters a widget data request would accept, checked
 * by the same rules and nothing run: each must name a declared dimension (400 naming `filters.<member>`), one the
 * viewer's access policies show (403), with a value of its type. The embed asks it before it applies a host's
 * `set-filter`, so that a filter every widget would refuse is refused once, as an invalid action (issue 31).
 */
export async function checkFilters(dc: DataContext, principal: PlatformUserPrincipal | EmbedPrincipal, publicId: string, request: { filters: Record<string, ViewerFilterValue>; timezone?: string }): Promise<{ filters: CheckedFilter[] }> {
  if (principal.kind === 'embed') refuseLockedFilters(principal.access.lockedFilters, request.filters);
  const dashboard = await checkReadableDashboard(dc, readerOf(principal), publicId, (id) => dc.reads.dashboard(dc, principal.accountId, id));
  const scope = await openDataScope(dc, principal, dashboard.deployment_id, request.timezone);
  return {
    filters: Object.entries(request.filters).map(([member, value]) => {
      const field = `filters.${member}`;
      const resolved = scope.model.dimension(member, field);
      scope.access.requireVisible(resolved, field);
      if (value !== null) checkViewerFilter(resolved.dimension.type, value, field, scope.timezone);
      return { member, title: memberTitle(resolved), type: resolved.dimension.type };
    }),
  };
}

/** A CHART widget's answer: its snapshot's query with the viewer's fields, granularity, filters and drill. */
async function chartData(dc: DataContext, scope: DataScope, snapshot: ReportSnapshot, base: SemanticQuery, request: WidgetDataRequest, title: string | undefined): Promise<WidgetData> {
  const { model, timezone } = scope;
  const filters = request.filters ?? {};
  const fields = request.fields ?? {};
  const swapped = swapFields(model, base, fields);
  let query = withGranularity(swapped.query, request.granularity);
  // A swapped measure is compared in its place; two comparisons a swap made one are made once.
  const comparisons = unique((snapshot.periodComparisons ?? []).map((c) => ({ ...c, measure: fields[c.measure] ?? c.measure })), (c) => JSON.stringify(c));
  const swaps = swapped.swaps.length === 0 ? {} : {
    fields: Object.fromEntries(swapped.swaps.map((s) => [s.from, s.to])),
    ...(title !== undefined ? { title: swappedTitle(title, swapped.swaps) } : {}),
  };
  const applied = viewerFilters(model, query, filters, undefined, timezone);
  query = { ...query, filters: [...(query.filters ?? []), ...applied.filters] };

  if (request.drilldown !== undefined) return { ...(await drilldown(dc, scope, query, request.drilldown)), timezone, ignoredFilters: applied.ignored, ...swaps };

  const answer = await runSemanticQuery(dc, scope, query);
  const sources = [answer.source];
  let result: QueryResult = answer;
  for (const [i, comparison] of comparisons.entries()) {
    checkComparison(comparison, result.columns, `periodComparisons[${i}]`);
    const previous = await runSemanticQuery(dc, scope, shiftedQuery(query, comparison, timezone, dc.now()));
    sources.push(previous.source);
    result = applyComparison(result, previous, comparison);
  }
  if (snapshot.fillMissingRows) {
    const member = snapshot.fillMissingRows.member;
    const td = result.columns.find((c) => c.granularity !== undefined && (c.name === member || c.member === member));
    result = fillMissingRows(result, snapshot.fillMissingRows, td === undefined ? undefined : localRange(query, td.member, timezone, dc.now()), dc.rowCap);
  }
  return { ...result, columns: applyColumnFormats(result.columns, snapshot.preferences?.columnFormats), timezone, ignoredFilters: applied.ignored, source: leastCached(sources), ...swaps };
}

/**
 * `POST /api/v1/embed/dashboard/{publicId}/query`: an APP dashboard's own code asks for a semantic query through
 * the embed's bridge. Only APP dashboards may: a CLASSIC dashboard's viewers run its widgets' queries and no other.
 */
export async function appQuery(dc: DataContext, principal: PlatformUserPrincipal | EmbedPrincipal, publicId: string, body: { query: unknown; timezone?: string }): Promise<SourcedResult & { timezone: string }> {
  const dashboard = await requireReadableDashboard(dc, readerOf(principal), publicId);
  const config = parseJson<DashboardConfig>(dashboard.config) ?? {};
  if (config.kind !== 'APP') throw new AppError('forbidden', `dashboard ${publicId} is not an APP dashboard: only its widgets' queries run`, 'publicId');
  const scope = await openDataScope(dc, principal, dashboard.deployment_id, body.timezone);
  const query = parseSemanticQuery(body.query, 'query');
  return { ...(await runSemanticQuery(dc, scope, query)), timezone: scope.timezone };
}
