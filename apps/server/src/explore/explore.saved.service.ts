import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { toBase62 } from '../accounts/accounts.keys.js';
import { decodeCursor, encodeCursor, fingerprintQuery, invalidCursor, isCursorId, pageInfoOf } from '../core/core.cursor.js';
import { AppError } from '../core/core.errors.js';
import type { EmbedPrincipal } from '../core/core.principal.js';
import { isoTimestamp } from '../core/core.time.js';
import { readerOf, requireReadableDashboard } from '../dashboards/dashboards.service.js';
import { explainQuery } from '../data/data.run.js';
import { openDataScope } from '../data/data.scope.js';
import type { DataContext, DataScope } from '../data/data.scope.js';
import { checkViewerFilter } from '../data/data.viewer.js';
import type { ViewerFilterValue } from '../data/data.viewer.js';
import { parseSemanticQuery } from '../data/semantic/semantic.query.js';
import type { SemanticQuery } from '../data/semantic/semantic.query.js';
import type { Database, SavedVisibility } from '../db/db.schema.js';
import { requireExploreLevel } from '../sessions/sessions.explore.js';
import { canDelete, canEdit } from './explore.policy.js';
import type { Explorer } from './explore.policy.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_SPEC_CHARACTERS } from './explore.saved.schema.js';
import type {
  CreateChartBody, CreateViewBody, SavedChart, SavedChartList, SavedListQuery, SavedView, SavedViewList, UpdateChartBody, UpdateViewBody, ViewState,
} from './explore.saved.schema.js';
import {
  deleteChart, deleteView, findVisibleChart, findVisibleView, insertChart, insertView, selectVisibleChartIds, selectVisibleCharts, selectVisibleViews,
  updateChart, updateView,
} from './explore.store.js';
import type { Authored, ChartScope, SavedChartRow, SavedPosition, SavedViewRow, ViewScope } from './explore.store.js';

// Issue 35 parts 3 and 4 (docs/explore.md "Saved charts and views"): the rules of saved charts and saved views.
// Reading needs settings.explore view or more, writing create; a private item is its author's, a `tenant` item every
// viewer's of the tenant; only the author changes or deletes one (as comments: 404 when the caller cannot see it,
// 403 when they see it but did not write it). A saved chart stores a query, never rows: it re-runs under its opener.

const CHART_ID = /^chart_[0-9A-Za-z]{1,40}$/;
const VIEW_ID = /^view_[0-9A-Za-z]{1,40}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** An unguessable id: a prefix and 128 random bits in base62 (as API keys and session ids are made). */
const newPublicId = (prefix: 'chart' | 'view') => `${prefix}_${toBase62(randomBytes(16))}`;

const chartScopeOf = (explorer: Explorer): ChartScope => ({ accountId: explorer.accountId, deploymentId: explorer.deploymentId, embedTenantId: explorer.embedTenantId });

/** A title or name stored verbatim: no U+0000 (PostgreSQL text holds none) and no lone surrogate, a 400 on both dialects. */
function requireStorableText(text: string, field: string): string {
  if (text.includes('\u0000')) throw new AppError('invalid_body', `${field} contains a NUL character (U+0000), which cannot be stored`, field);
  if (LONE_SURROGATE.test(text)) throw new AppError('invalid_body', `${field} contains an unpaired UTF-16 surrogate: send well-formed Unicode`, field);
  if (text.trim() === '') throw new AppError('invalid_body', `${field} must not be blank`, field);
  return text;
}

function specText(spec: Record<string, unknown> | null | undefined): string | null {
  if (spec === undefined || spec === null) return null;
  const text = JSON.stringify(spec);
  if (text.length > MAX_SPEC_CHARACTERS) throw new AppError('invalid_body', `spec is ${text.length} characters as JSON; at most ${MAX_SPEC_CHARACTERS}`, 'spec');
  return text;
}

function pageSize(first: number | undefined): number {
  return Math.min(first ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
}

function decodePosition(after: string, fingerprint: string): SavedPosition {
  const [createdAt, id] = decodeCursor(after, fingerprint, 2);
  if (typeof createdAt !== 'string' || !TIMESTAMP.test(createdAt) || !isCursorId(id)) throw invalidCursor('malformed');
  return { createdAt, id };
}

/** The explore level a route needs, asked after the credential (a 403 naming settings.explore below it). */
async function requireLevel(db: Kysely<Database>, explorer: Explorer, needed: 'view' | 'create'): Promise<void> {
  requireExploreLevel(explorer.principal, needed);
}

/**
 * A query checked as widget data would run it for this viewer, without running it: well-formed (400 naming
 * `query…`), every member declared, none hidden from the viewer by an access policy (403 naming it, as widget data
 * refuses it), and plannable.
 */
function checkQuery(dc: DataContext, scope: DataScope, raw: unknown): SemanticQuery {
  const query = parseSemanticQuery(raw, 'query');
  explainQuery(dc, scope, query, 'query');
  return query;
}

// ---- saved charts ----

function presentChart(row: Authored<SavedChartRow>, explorer: Explorer): SavedChart {
  const spec = row.spec === null ? undefined : JSON.parse(row.spec) as Record<string, unknown>;
  return {
    id: row.public_id, title: row.title, query: JSON.parse(row.query) as SemanticQuery, kind: row.kind, ...(spec !== undefined ? { spec } : {}),
    visibility: row.visibility, author: { userId: row.embed_user_id, username: row.username }, mine: row.embed_user_id === explorer.embedUserId,
    createdAt: row.created_at, updatedAt: row.updated_at,
  };
}

const chartGone = (chartId: string) => new AppError('not_found', `saved chart ${chartId} not found`, 'chartId');

async function requireVisibleChart(dc: DataContext, explorer: Explorer, chartId: string): Promise<Authored<SavedChartRow>> {
  const row = CHART_ID.test(chartId) ? await findVisibleChart(dc.db, chartScopeOf(explorer), chartId, explorer.embedUserId) : undefined;
  if (row === undefined) throw chartGone(chartId);
  return row;
}

/** `GET /api/v1/embed/charts`: the caller's private charts and the tenant's shared ones, newest first. */
export async function listCharts(dc: DataContext, explorer: Explorer, query: SavedListQuery): Promise<SavedChartList> {
  await requireLevel(dc.db, explorer, 'view');
  const filter = query.visibility ?? 'all';
  const fingerprint = fingerprintQuery(['saved-charts', explorer.accountId, explorer.deploymentId, explorer.embedTenantId, explorer.embedUserId, filter]);
  const after = query.after === undefined ? null : decodePosition(query.after, fingerprint);
  const size = pageSize(query.first);
  const rows = await selectVisibleCharts(dc.db, chartScopeOf(explorer), explorer.embedUserId, filter, after, size + 1);
  const page = rows.slice(0, size);
  return {
    charts: page.map((row) => presentChart(row, explorer)),
    pageInfo: pageInfoOf(page, rows.length > size, after !== null, (row) => encodeCursor(fingerprint, [row.created_at, row.id])),
  };
}

export async function getChart(dc: DataContext, explorer: Explorer, chartId: string): Promise<SavedChart> {
  await requireLevel(dc.db, explorer, 'view');
  return presentChart(await requireVisibleChart(dc, explorer, chartId), explorer);
}

/** `POST /api/v1/embed/charts`: the query is checked under the author's own access policies before it is stored. */
export async function createChart(dc: DataContext, explorer: Explorer, body: CreateChartBody): Promise<SavedChart> {
  await requireLevel(dc.db, explorer, 'create');
  const title = requireStorableText(body.title, 'title');
  const spec = specText(body.spec);
  const scope = await openDataScope(dc, explorer.principal, explorer.deploymentId, undefined);
  const query = checkQuery(dc, scope, body.query);
  const row = await insertChart(dc.db, chartScopeOf(explorer), {
    publicId: newPublicId('chart'), embedUserId: explorer.embedUserId, title, query: JSON.stringify(query), kind: body.kind, spec,
    visibility: body.visibility ?? 'private', at: isoTimestamp(dc.now()),
  });
  // Read back with its author's username, as a list shows it.
  const saved = await findVisibleChart(dc.db, chartScopeOf(explorer), row.public_id, explorer.embedUserId);
  return presentChart(saved ?? { ...row, username: '' }, explorer);
}

/** `PATCH /api/v1/embed/charts/{chartId}`: the author only; a new query is checked as on save. */
export async function editChart(dc: DataContext, explorer: Explorer, chartId: string, body: UpdateChartBody): Promise<SavedChart> {
  await requireLevel(dc.db, explorer, 'create');
  const found = await requireVisibleChart(dc, explorer, chartId);
  if (!canEdit(explorer, found)) throw new AppError('forbidden', `saved chart ${chartId} was saved by another user: only its author may change it`, 'chartId');
  const changes: Parameters<typeof updateChart>[4] = { updated_at: isoTimestamp(dc.now()) };
  if (body.title !== undefined) changes.title = requireStorableText(body.title, 'title');
  if (body.spec !== undefined) changes.spec = specText(body.spec);
  if (body.kind !== undefined) changes.kind = body.kind;
  if (body.visibility !== undefined) changes.visibility = body.visibility;
  if (body.query !== undefined) {
    const scope = await openDataScope(dc, explorer.principal, explorer.deploymentId, undefined);
    changes.query = JSON.stringify(checkQuery(dc, scope, body.query));
  }
  const row = await updateChart(dc.db, chartScopeOf(explorer), chartId, explorer.embedUserId, changes);
  if (row === undefined) throw chartGone(chartId);
  return presentChart({ ...row, username: found.username }, explorer);
}

export async function removeChart(dc: DataContext, explorer: Explorer, chartId: string): Promise<void> {
  await requireLevel(dc.db, explorer, 'create');
  const found = await requireVisibleChart(dc, explorer, chartId);
  if (!canDelete(explorer, found)) throw new AppError('forbidden', `saved chart ${chartId} was saved by another user: only its author may delete it`, 'chartId');
  if (!await deleteChart(dc.db, chartScopeOf(explorer), chartId, explorer.embedUserId)) throw chartGone(chartId);
}

/** A saved chart as the explore query runs it: its stored query, with who saved it and how it is shared. */
export interface VisibleSavedChart {
  id: string;
  title: string;
  kind: string;
  query: SemanticQuery;
  visibility: SavedVisibility;
  authorId: number;
}

/**
 * The saved chart `chartId` if this viewer may see it (their own, or one shared with their tenant, on their
 * session's deployment), else undefined: the explore query runs it by id under the OPENER's policies (a chart
 * stores a query, never its author's rows). It checks no explore level: its caller does.
 *
 * @example
 * const chart = await findVisibleSavedChart(db, principal, 'chart_4kQ…');
 * if (chart !== undefined) await runSemanticQuery(dc, await openDataScope(dc, principal, principal.deploymentId, tz), chart.query);
 */
export async function findVisibleSavedChart(
  db: Kysely<Database>, principal: Pick<EmbedPrincipal, 'accountId' | 'deploymentId' | 'embedTenantId' | 'embedUserId'>, chartId: string,
): Promise<VisibleSavedChart | undefined> {
  if (principal.embedTenantId === null || principal.embedUserId === null || !CHART_ID.test(chartId)) return undefined;
  const scope = { accountId: principal.accountId, deploymentId: principal.deploymentId, embedTenantId: principal.embedTenantId };
  const row = await findVisibleChart(db, scope, chartId, principal.embedUserId);
  if (row === undefined) return undefined;
  return { id: row.public_id, title: row.title, kind: row.kind, query: JSON.parse(row.query) as SemanticQuery, visibility: row.visibility, authorId: row.embed_user_id };
}

// ---- saved views ----

/** The dashboard a view route names, checked as the dashboard GET checks it (404, then 403), and the caller's scope on it. */
async function openViews(dc: DataContext, explorer: Explorer, publicId: string): Promise<{ scope: ViewScope; deploymentId: number }> {
  const dashboard = await requireReadableDashboard(dc, readerOf(explorer.principal), publicId);
  return { scope: { ...chartScopeOf(explorer), dashboardId: dashboard.id }, deploymentId: dashboard.deployment_id };
}

/**
 * A view's state checked as the dashboard would take it: its filters as `POST .../filters/check` checks them (a
 * declared dimension the author may see, a value of its type; 400 or 403 naming `state.filters.<member>`), its field
 * swaps as FIELD controls (members of one kind and view, both visible), and its charts saved charts the author sees.
 */
async function checkViewState(dc: DataContext, explorer: Explorer, deploymentId: number, state: ViewState): Promise<ViewState> {
  const scope = await openDataScope(dc, explorer.principal, deploymentId, undefined);
  for (const [member, value] of Object.entries(state.filters) as Array<[string, ViewerFilterValue]>) {
    const field = `state.filters.${member}`;
    const resolved = scope.model.dimension(member, field);
    scope.access.requireVisible(resolved, field);
    if (value !== null) checkViewerFilter(resolved.dimension.type, value, field, scope.timezone);
  }
  for (const [from, to] of Object.entries(state.fields ?? {})) {
    const field = `state.fields.${from}`;
    const source = scope.model.member(from, field);
    const target = scope.model.member(to, field);
    scope.access.requireVisible(source, field);
    scope.access.requireVisible(target, field);
    if (source.kind !== target.kind || source.view !== target.view) {
      throw new AppError('invalid_parameter', `${field}: ${to} must be a ${source.kind} of view ${source.view.name} to replace ${from}`, field);
    }
  }
  const charts = state.charts ?? [];
  const ids = charts.map((chart) => chart.chartId);
  const visible = await selectVisibleChartIds(dc.db, chartScopeOf(explorer), ids.filter((id) => CHART_ID.test(id)), explorer.embedUserId);
  charts.forEach((chart, i) => {
    if (!visible.has(chart.chartId)) throw new AppError('invalid_parameter', `state.charts[${i}].chartId: no saved chart ${chart.chartId} that you may see`, `state.charts[${i}].chartId`);
  });
  return state;
}

function presentView(row: Authored<SavedViewRow>, publicId: string, explorer: Explorer, visibleCharts: ReadonlySet<string>): SavedView {
  const state = JSON.parse(row.state) as ViewState;
  // A chart the reader may not see (the author's private one, or one deleted since) is left out of their layout.
  const charts = state.charts?.filter((chart) => visibleCharts.has(chart.chartId));
  return {
    id: row.public_id, publicId, name: row.name, state: { ...state, ...(charts !== undefined ? { charts } : {}) }, visibility: row.visibility,
    author: { userId: row.embed_user_id, username: row.username }, mine: row.embed_user_id === explorer.embedUserId,
    createdAt: row.created_at, updatedAt: row.updated_at,
  };
}

async function presentViews(dc: DataContext, rows: Array<Authored<SavedViewRow>>, publicId: string, explorer: Explorer): Promise<SavedView[]> {
  const ids = rows.flatMap((row) => (JSON.parse(row.state) as ViewState).charts?.map((chart) => chart.chartId) ?? []);
  const visible = await selectVisibleChartIds(dc.db, chartScopeOf(explorer), ids, explorer.embedUserId);
  return rows.map((row) => presentView(row, publicId, explorer, visible));
}

const viewGone = (publicId: string, viewId: string) => new AppError('not_found', `saved view ${viewId} not found on dashboard ${publicId}`, 'viewId');

async function requireVisibleView(dc: DataContext, explorer: Explorer, scope: ViewScope, publicId: string, viewId: string): Promise<Authored<SavedViewRow>> {
  const row = VIEW_ID.test(viewId) ? await findVisibleView(dc.db, scope, viewId, explorer.embedUserId) : undefined;
  if (row === undefined) throw viewGone(publicId, viewId);
  return row;
}

export async function listViews(dc: DataContext, explorer: Explorer, publicId: string, query: SavedListQuery): Promise<SavedViewList> {
  await requireLevel(dc.db, explorer, 'view');
  const { scope } = await openViews(dc, explorer, publicId);
  const filter = query.visibility ?? 'all';
  const fingerprint = fingerprintQuery(['saved-views', scope.accountId, scope.deploymentId, scope.embedTenantId, scope.dashboardId, explorer.embedUserId, filter]);
  const after = query.after === undefined ? null : decodePosition(query.after, fingerprint);
  const size = pageSize(query.first);
  const rows = await selectVisibleViews(dc.db, scope, explorer.embedUserId, filter, after, size + 1);
  const page = rows.slice(0, size);
  return {
    views: await presentViews(dc, page, publicId, explorer),
    pageInfo: pageInfoOf(page, rows.length > size, after !== null, (row) => encodeCursor(fingerprint, [row.created_at, row.id])),
  };
}

export async function getView(dc: DataContext, explorer: Explorer, publicId: string, viewId: string): Promise<SavedView> {
  await requireLevel(dc.db, explorer, 'view');
  const { scope } = await openViews(dc, explorer, publicId);
  const [view] = await presentViews(dc, [await requireVisibleView(dc, explorer, scope, publicId, viewId)], publicId, explorer);
  return view!;
}

export async function createView(dc: DataContext, explorer: Explorer, publicId: string, body: CreateViewBody): Promise<SavedView> {
  await requireLevel(dc.db, explorer, 'create');
  const name = requireStorableText(body.name, 'name');
  const { scope, deploymentId } = await openViews(dc, explorer, publicId);
  const state = await checkViewState(dc, explorer, deploymentId, body.state);
  const row = await insertView(dc.db, scope, {
    publicId: newPublicId('view'), embedUserId: explorer.embedUserId, name, state: JSON.stringify(state), visibility: body.visibility ?? 'private', at: isoTimestamp(dc.now()),
  });
  const saved = await findVisibleView(dc.db, scope, row.public_id, explorer.embedUserId);
  const [view] = await presentViews(dc, [saved ?? { ...row, username: '' }], publicId, explorer);
  return view!;
}

export async function editView(dc: DataContext, explorer: Explorer, publicId: string, viewId: string, body: UpdateViewBody): Promise<SavedView> {
  await requireLevel(dc.db, explorer, 'create');
  const { scope, deploymentId } = await openViews(dc, explorer, publicId);
  const found = await requireVisibleView(dc, explorer, scope, publicId, viewId);
  if (!canEdit(explorer, found)) throw new AppError('forbidden', `saved view ${viewId} was saved by another user: only its author may change it`, 'viewId');
  const changes: Parameters<typeof updateView>[4] = { updated_at: isoTimestamp(dc.now()) };
  if (body.name !== undefined) changes.name = requireStorableText(body.name, 'name');
  if (body.visibility !== undefined) changes.visibility = body.visibility;
  if (body.state !== undefined) changes.state = JSON.stringify(await checkViewState(dc, explorer, deploymentId, body.state));
  const row = await updateView(dc.db, scope, viewId, explorer.embedUserId, changes);
  if (row === undefined) throw viewGone(publicId, viewId);
  const [view] = await presentViews(dc, [{ ...row, username: found.username }], publicId, explorer);
  return view!;
}

export async function removeView(dc: DataContext, explorer: Explorer, publicId: string, viewId: string): Promise<void> {
  await requireLevel(dc.db, explorer, 'create');
  const { scope } = await openViews(dc, explorer, publicId);
  const found = await requireVisibleView(dc, explorer, scope, publicId, viewId);
  if (!canDelete(explorer, found)) throw new AppError('forbidden', `saved view ${viewId} was saved by another user: only its author may delete it`, 'viewId');
  if (!await deleteView(dc.db, scope, viewId, explorer.embedUserId)) throw viewGone(publicId, viewId);
}
