import type { EmbedPrincipal, PlatformUserPrincipal } from '../accounts/accounts.principal.js';
import { parseJson } from '../workspace/workspace.presenter.js';
import type { DashboardConfig, ReportSnapshot } from '../workspace/workspace.dashboard-schema.js';
import { checkReadableDashboard, readerOf, requireReadableDashboard } from '../dashboards/dashboards.service.js';
import type { MetadataReads } from './data.metadata.js';
import type { ServiceContext } from '../db/db.context.js';
import { Sealer } from '../core/core.sealed.js';
import { AppError } from '../core/core.errors.js';
import { formatBucket, parseBucket, addPeriods, shiftInstant } from './data.calendar.js';
import { compileSemanticQuery } from './data.compiler.js';
import type { CompiledSemanticQuery, CompileOptions, ResultColumn, WarehouseDialect } from './data.compiler.js';
import { parseDateRange } from './data.dates.js';
import { DEMO_SEMANTIC_VIEWS } from './data.demo-warehouse.js';
import { SemanticModel } from './data.model.js';
import type { DataSourceConfig, DimensionType, Granularity, ResolvedMember, SemanticView } from './data.model.js';
import { parseSemanticQuery } from './data.query.js';
import { openDataSource } from './data.sources.js';
import type { QueryFilter, SemanticQuery } from './data.query.js';
import { ResultCache } from './data.cache.js';
import { ByteLru } from '../core/core.byte-lru.js';
import { builtZone, matchRollup, rollupColumns, rollupModel } from './data.preagg.js';
import type { Manifest, RollupStore, RollupTarget } from './data.rollups.js';
import type { PreAggregation } from './data.preagg.js';
import type { AnswerSource, CachedRows } from './data.cache.js';
import { applyColumnFormats, applyComparison, checkComparison, fillMissingRows } from './data.results.js';
import type { PeriodComparison, QueryResult } from './data.results.js';
import { ModelAccess, parseReference, readReference, SQL_REFERENCE } from './data.policy.js';
import type { AccessSubject } from './data.policy.js';
import { isTimeZoneName } from './data.timezone.js';
import { selectGroupNamesOfUser } from '../workspace/workspace.store.js';
import type { WarehouseRegistry } from './data.warehouse.js';

/** What the data path needs beyond the service context. */
export interface DataContext extends ServiceContext {
  warehouses: WarehouseRegistry;
  /** Most rows a result carries (`truncated` tells when more matched). */
  rowCap: number;
  /** Longest a statement may run. */
  timeoutMs: number;
  /** Answers shared by every viewer of this process (data.cache.ts). */
  cache: ResultCache;
  /** Built pre-aggregations (data.rollups.ts); none: every query goes to the data source. */
  rollups?: RollupStore;
  /** The dashboards, snapshots, models and time zones widget requests read, held while unchanged (data.metadata.ts). */
  reads: MetadataReads;
  /** Opens the deployments' data sources sealed at rest (SVC_ENCRYPTION_KEY); default: no key, so none sealed. */
  sealer?: Sealer;
}

const NO_KEYS = new Sealer([]);

export type FilterScalar = string | number | boolean;
/** A viewer's filter value (SPEC `f_<semantic_view>.<dimension>=<JSON>`): a value, a list, or a range; null clears. */
export type ViewerFilterValue = FilterScalar | FilterScalar[] | { gte?: FilterScalar; lte?: FilterScalar } | null;

export interface WidgetDataRequest {
  filters?: Record<string, ViewerFilterValue>;
  timezone?: string;
  granularity?: Granularity;
  fields?: Record<string, string>;
  drilldown?: { member: string; point?: Record<string, FilterScalar | null> };
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
 * Everything one request's queries run under: the deployment's data source and semantic model, the time zone,
 * and the viewer's access under the model's policies. Every query of the data path is compiled with it.
 */
export interface DataScope {
  accountId: number;
  deploymentId: number;
  source: DataSourceConfig;
  model: SemanticModel;
  timezone: string;
  access: ModelAccess;
  /** Past the result cache (the `refresh` action). */
  force: boolean;
}

const NO_ATTRIBUTES: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Who a principal is to access policies. An `externalId` session: the securityContext, groups and userAttributes
 * its Generate Session call sent, with its tenant. An `internalId` session: its securityContext and
 * userAttributes, with its platform user's groups. An API key or console session: the user's groups only. Groups
 * are read only when some view has policies.
 */
async function accessSubjectOf(ctx: ServiceContext, principal: PlatformUserPrincipal | EmbedPrincipal, model: SemanticModel): Promise<AccessSubject> {
  const hasPolicies = [...model.views.values()].some((view) => (view.accessPolicy ?? []).length > 0);
  const platformGroups = hasPolicies && principal.userId !== null ? await selectGroupNamesOfUser(ctx.db, principal.accountId, principal.userId) : [];
  if (principal.kind === 'platform-user') return { securityContext: NO_ATTRIBUTES, userAttributes: NO_ATTRIBUTES, groups: platformGroups, embedTenant: null };
  return {
    securityContext: principal.access.securityContext,
    userAttributes: principal.access.userAttributes,
    groups: principal.userId !== null ? platformGroups : principal.access.groups,
    embedTenant: principal.embedTenantName,
  };
}

/** The scope a principal's queries on a deployment run in (`timezone`: the viewer's ask, else the account's). */
export async function openDataScope(ctx: DataContext, principal: PlatformUserPrincipal | EmbedPrincipal, deploymentId: number, timezone: string | undefined, force = false): Promise<DataScope> {
  const { source, model } = await deploymentModel(ctx, principal.accountId, deploymentId);
  const [zone, subject] = await Promise.all([resolveTimezone(ctx, principal.accountId, timezone), accessSubjectOf(ctx, principal, model)]);
  return { accountId: principal.accountId, deploymentId, source, model, timezone: zone, access: new ModelAccess(model, subject), force };
}

/** The deployment's data source and semantic model: its own, or the bundled demo warehouse's. */
export async function deploymentModel(ctx: DataContext, accountId: number, deploymentId: number): Promise<{ source: DataSourceConfig; model: SemanticModel }> {
  const row = await ctx.reads.deployment(ctx, accountId, deploymentId);
  if (row === undefined) throw new AppError('not_found', `deployment ${deploymentId} not found`, 'deploymentId');
  const source = openDataSource(row.data_source, ctx.sealer ?? NO_KEYS);
  return { source, model: modelOf(row.semantic_views) };
}

/** Parsed semantic models by their stored text: every widget request reads one, and most read the same few. */
const MODELS = new ByteLru<SemanticModel>(16 * 1024 * 1024);
const DEMO_MODEL = new SemanticModel(DEMO_SEMANTIC_VIEWS);

/** The model of a deployment's stored views (the demo's when it has none), parsed once per distinct text. */
function modelOf(text: string | null): SemanticModel {
  if (text === null) return DEMO_MODEL;
  let model = MODELS.get(text);
  if (model === undefined) {
    const views = parseJson<SemanticView[]>(text);
    model = views === null ? DEMO_MODEL : new SemanticModel(views);
    // About four bytes of objects for each byte of JSON, and the key itself.
    MODELS.set(text, model, text.length * 6);
  }
  return model;
}

/** The time zone queries run in: the viewer's (an IANA name), else the account's default, else UTC. */
export async function resolveTimezone(ctx: DataContext, accountId: number, asked: string | undefined): Promise<string> {
  if (asked !== undefined) {
    if (!isTimeZoneName(asked)) throw new AppError('invalid_parameter', `timezone must be an IANA time zone name (bare UTC offsets are not), got ${JSON.stringify(asked)}`, 'timezone');
    return asked;
  }
  const timezone = await ctx.reads.timezone(ctx, accountId);
  return timezone !== null && isTimeZoneName(timezone) ? timezone : 'UTC';
}

type Widget = NonNullable<DashboardConfig['widgets']>[number];

/** The report snapshot a CHART widget shows: `config.reportId`, else `config.snapshotIndex`, else its place among the charts. */
export function snapshotOf(widget: Widget, widgets: readonly Widget[], snapshots: readonly ReportSnapshot[]): ReportSnapshot | undefined {
  const config = (widget.config ?? {}) as { reportId?: unknown; snapshotIndex?: unknown };
  if (typeof config.reportId === 'number') return snapshots.find((s) => s.reportId === config.reportId);
  if (typeof config.snapshotIndex === 'number') return snapshots[config.snapshotIndex];
  return snapshots[widgets.filter((w) => w.type === 'CHART').indexOf(widget)];
}

/** A viewer's filters as query filters on the members this query can reach; the others are ignored for it. */
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
function checkViewerFilter(type: string, value: Exclude<ViewerFilterValue, null>, field: string, timezone: string): void {
  const scalars = Array.isArray(value) ? value : typeof value === 'object' ? [value.gte, value.lte].filter((v) => v !== undefined) : [value];
  for (const scalar of scalars) checkViewerValue(type, scalar as FilterScalar, field, timezone);
  if (!Array.isArray(value) && typeof value === 'object' && value.gte === undefined && value.lte === undefined) {
    throw new AppError('invalid_parameter', `${field}: a range needs gte, lte or both`, field);
  }
}

function viewerFilters(model: SemanticModel, query: SemanticQuery, filters: Record<string, ViewerFilterValue>, skip: string | undefined, timezone: string): { filters: QueryFilter[]; ignored: string[] } {
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
    const isTime = resolved.dimension.type === 'time';
    checkViewerFilter(resolved.dimension.type, value, field, timezone);
    if (Array.isArray(value)) {
      if (value.length === 0) continue;
      result.push(isTime ? { or: value.map((v) => ({ member, operator: 'inDateRange', values: [String(v)] }) as QueryFilter) } : { member, operator: 'equals', values: value });
    } else if (typeof value === 'object') {
      if (isTime) {
        if (value.gte !== undefined) result.push({ member, operator: 'afterOrOnDate', values: [value.gte] });
        if (value.lte !== undefined) result.push({ member, operator: 'beforeOrOnDate', values: [value.lte] });
      } else {
        if (value.gte !== undefined) result.push({ member, operator: 'gte', values: [value.gte] });
        if (value.lte !== undefined) result.push({ member, operator: 'lte', values: [value.lte] });
      }
    } else {
      result.push(isTime ? { member, operator: 'inDateRange', values: [String(value)] } : { member, operator: 'equals', values: [value] });
    }
  }
  return { filters: result, ignored };
}

/** A member's title as result columns carry it. */
const memberTitle = (member: ResolvedMember) => (member.kind === 'dimension' ? member.dimension.title ?? member.dimension.name : member.measure.title ?? member.measure.name);

/** The FIELD swaps a widget's query took: which member replaced which, and their titles. */
interface AppliedSwap {
  from: string;
  to: string;
  fromTitle: string;
  toTitle: string;
}

/** Each name once, in its first place: a swap onto a member the query already asks for keeps one of them. */
const unique = <T>(items: readonly T[], keyOf: (item: T) => string): T[] => {
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
function swapFields(model: SemanticModel, query: SemanticQuery, fields: Record<string, string>): { query: SemanticQuery; swaps: AppliedSwap[] } {
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
function withGranularity(query: SemanticQuery, granularity: Granularity | undefined): SemanticQuery {
  if (granularity === undefined) return query;
  return { ...query, timeDimensions: query.timeDimensions?.map((t) => (t.granularity === undefined ? t : { ...t, granularity })) };
}

/** A query's answer and where it came from. */
export type SourcedResult = QueryResult & { source: AnswerSource };

/**
 * One statement's rows through the result cache: keyed by the account, the data source, its refresh key's
 * current value, the statement and its bound values (a policy's row filter is in both), and the row limit.
 */
async function cachedRows(dc: DataContext, scope: DataScope, statement: { sql: string; parameters: readonly unknown[]; maxRows: number }, compute: () => Promise<{ value: CachedRows; source: AnswerSource }>): Promise<{ value: CachedRows; source: AnswerSource }> {
  const { refreshKey, ...source } = scope.source;
  const sourceKey = JSON.stringify(source);
  const generation = await dc.cache.refreshValue(`${scope.accountId}:${sourceKey}`, refreshKey, dc.now().getTime(), async (refreshSql) => {
    dc.cache.counters.warehouseQueries++;
    try {
      const { rows } = await dc.warehouses.get(scope.source).run(refreshSql, [], { maxRows: 1, timeoutMs: dc.timeoutMs });
      return rows[0] ?? null;
    } catch (error) {
      // The deployment's own setting failed, not the viewer's ask: said as such.
      if (error instanceof AppError) throw new AppError(error.code, `dataSource.refreshKey.sql: ${error.message}`, 'dataSource.refreshKey.sql');
      throw error;
    }
  });
  const key = ResultCache.key([scope.accountId, sourceKey, generation, statement.sql, statement.parameters, statement.maxRows]);
  return dc.cache.answer(key, scope.force, compute);
}

/**
 * A semantic query's answer: from the cache, else from the first built pre-aggregation that answers it exactly
 * (data.preagg.ts), else from the data source.
 */
async function execute(dc: DataContext, scope: DataScope, query: SemanticQuery, compiled: CompiledSemanticQuery): Promise<SourcedResult> {
  const { value, source } = await cachedRows(dc, scope, { sql: compiled.sql, parameters: compiled.parameters, maxRows: compiled.limit }, async () => {
    const rollup = await answerFromRollup(dc, scope, query);
    if (rollup !== undefined) return rollup;
    dc.cache.counters.warehouseQueries++;
    const { rows } = await dc.warehouses.get(scope.source).run(compiled.sql, compiled.parameters, { maxRows: compiled.limit, timeoutMs: dc.timeoutMs });
    return { value: { rows: rows.slice(0, compiled.limit), truncated: compiled.capped && rows.length > compiled.limit }, source: 'warehouse' };
  });
  return { columns: compiled.columns, rows: value.rows, truncated: value.truncated, source };
}

/**
 * The answer of the built rollup of the query's view that matches it with the fewest rows (Cube prefers the
 * smallest too); undefined when none matches.
 */
async function answerFromRollup(dc: DataContext, scope: DataScope, query: SemanticQuery): Promise<{ value: CachedRows; source: AnswerSource } | undefined> {
  const store = dc.rollups;
  const first = query.measures?.[0] ?? query.dimensions?.[0] ?? query.timeDimensions?.[0]?.dimension;
  if (store === undefined || first === undefined) return undefined;
  const view = scope.model.member(first, 'query').view;
  let best: { rollup: PreAggregation; manifest: Manifest; target: RollupTarget; compiled: CompiledSemanticQuery } | undefined;
  for (const rollup of view.preAggregations ?? []) {
    const target = { accountId: scope.accountId, deploymentId: scope.deploymentId, source: scope.source, model: scope.model, view, rollup, timezone: builtZone(rollup, scope.timezone) };
    const manifest = store.currentBuild(target);
    if (manifest === undefined || (best !== undefined && manifest.rows >= best.manifest.rows)) continue;
    const match = matchRollup(scope.model, view, rollup, query, { timezone: scope.timezone, now: dc.now(), access: scope.access });
    if (!('query' in match)) continue;
    const rows = match.access.rows;
    try {
      const compiled = compileSemanticQuery(new SemanticModel([rollupModel(rollupColumns(view, rollup), `b_${manifest.buildId}`, scope.model, rollup.additive !== false)]), match.query, {
        dialect: 'duckdb', timezone: 'UTC', wallClock: true, now: dc.now(), rowCap: dc.rowCap,
        access: { view: () => ({ members: 'all', rows }), requireVisible: () => undefined },
      });
      best = { rollup, manifest, target, compiled };
    } catch {
      // A query the rollup's columns cannot express (a value its column type refuses): another rollup, or the data source.
    }
  }
  if (best === undefined) return undefined;
  await store.table(best.target, best.manifest);
  dc.cache.counters.rollupQueries++;
  const { compiled } = best;
  const answer = await store.run(compiled.sql, compiled.parameters, compiled.limit);
  return { value: { rows: answer.slice(0, compiled.limit), truncated: compiled.capped && answer.length > compiled.limit }, source: `rollup:${view.name}.${best.rollup.name}` };
}

/** Runs a semantic query against a deployment's warehouse under the viewer's access (the AI and apps use this too). */
export async function runSemanticQuery(dc: DataContext, scope: DataScope, query: SemanticQuery): Promise<SourcedResult> {
  return execute(dc, scope, query, compileSemanticQuery(scope.model, query, compileOptions(dc, scope)));
}

const SOURCE_RANK = (source: AnswerSource) => (source === 'warehouse' ? 2 : source === 'cache' ? 0 : 1);
/** Of several answers' sources, the least cached one (the one that tells why an answer was slow). */
const leastCached = (sources: readonly AnswerSource[]): AnswerSource => sources.reduce((worst, next) => (SOURCE_RANK(next) > SOURCE_RANK(worst) ? next : worst), 'cache');

const compileOptions = (dc: DataContext, scope: DataScope): CompileOptions => ({ dialect: dialectOf(scope.source), timezone: scope.timezone, now: dc.now(), rowCap: dc.rowCap, access: scope.access });

/** The SQL dialect of a data source. */
export const dialectOf = (source: DataSourceConfig): WarehouseDialect => (source.type === 'postgres' || source.type === 'duckdb' ? source.type : 'sqlite');

/**
 * A snapshot's raw SQL with its references bound. SQL cannot be filtered by svc, so a viewer whom any view's
 * policy restricts gets a 403, unless the snapshot declares itself policy-aware (`meta.policyAware: true`): its
 * `{securityContext.x}` references then become bound parameters, and a reference the session lacks (or a list,
 * which one parameter cannot hold) refuses the widget rather than run it unbound. Policy-aware SQL stands in for
 * row filters only: a viewer from whom a policy hides members is refused it too, since SQL may read any column.
 */
function boundSqlSnapshot(scope: DataScope, snapshot: ReportSnapshot): { statement: string; parameters: unknown[] } {
  const sqlQuery = snapshot.sqlQuery!;
  const policyAware = (snapshot.meta as { policyAware?: unknown } | null)?.policyAware === true;
  if (policyAware && scope.access.hidesMembers) {
    throw new AppError('forbidden', `report snapshot ${snapshot.reportId} is raw SQL, which may read any column, and a policy hides members from you`, 'widgetId');
  }
  if (!policyAware) {
    if (scope.access.restricted) {
      throw new AppError('forbidden', `report snapshot ${snapshot.reportId} is raw SQL, which access policies cannot filter, and a policy restricts what you may read`, 'widgetId');
    }
    return { statement: sqlQuery, parameters: [] };
  }
  const parameters: unknown[] = [];
  const postgres = dialectOf(scope.source) === 'postgres';
  const statement = sqlQuery.replace(SQL_REFERENCE, (text) => {
    const reference = parseReference(text);
    const values = reference === undefined || reference === 'malformed' ? undefined : readReference(reference, scope.access.subject);
    if (values === undefined || values.length !== 1) {
      throw new AppError('forbidden', `report snapshot ${snapshot.reportId} needs ${text.replace(/\s+/g, '')} as one value, and this session ${values === undefined ? 'has none' : 'holds a list'}`, 'widgetId');
    }
    parameters.push(values[0]);
    return postgres ? `$${parameters.length}` : '?';
  });
  return { statement, parameters };
}

/** A snapshot's raw SQL, read-only, inside a row cap: the statement must be one SELECT (or WITH ... SELECT). */
async function runSqlSnapshot(dc: DataContext, scope: DataScope, snapshot: ReportSnapshot): Promise<SourcedResult> {
  const bound = boundSqlSnapshot(scope, snapshot);
  const statement = bound.statement.trim().replace(/;\s*$/, '');
  if (!/^(select|with)\b/i.test(statement)) throw new AppError('invalid_query', 'sqlQuery: only a SELECT (or WITH ... SELECT) runs', 'sqlQuery');
  const placeholder = dialectOf(scope.source) === 'postgres' ? `$${bound.parameters.length + 1}` : '?';
  const wrapped = { sql: `SELECT * FROM (${statement}) AS svc_q LIMIT ${placeholder}`, parameters: [...bound.parameters, dc.rowCap + 1], maxRows: dc.rowCap };
  // The column names travel with the rows: a raw statement has no model to name them.
  let fields: string[] = [];
  const { value, source } = await cachedRows(dc, scope, wrapped, async () => {
    dc.cache.counters.warehouseQueries++;
    const answer = await dc.warehouses.get(scope.source).run(wrapped.sql, wrapped.parameters, { maxRows: dc.rowCap, timeoutMs: dc.timeoutMs });
    return { value: { rows: [answer.fields, ...answer.rows.slice(0, dc.rowCap)], truncated: answer.rows.length > dc.rowCap }, source: 'warehouse' };
  });
  fields = value.rows[0] as string[];
  const rows = value.rows.slice(1);
  const columns: ResultColumn[] = fields.map((name, i) => {
    const sample = rows.find((row) => row[i] !== null)?.[i];
    return { name, member: name, title: name, type: typeof sample === 'number' ? 'number' : 'string', kind: typeof sample === 'number' ? 'measure' : 'dimension' };
  });
  return { columns, rows, truncated: value.truncated, source };
}

/** The date range of a query's time dimension as local bucket text, for filling rows; undefined without one. */
function localRange(query: SemanticQuery, timeDimension: string, timezone: string, now: Date): { from: string; to: string } | undefined {
  const td = query.timeDimensions?.find((t) => t.dimension === timeDimension || `${t.dimension}.${t.granularity}` === timeDimension);
  if (td?.dateRange === undefined) return undefined;
  const interval = parseDateRange(td.dateRange, timezone, now, 'dateRange');
  const local = (at: number) => {
    const wall = parseBucket(new Date(at * 1000).toLocaleString('sv-SE', { timeZone: timezone }).replace(' ', 'T'));
    return wall === undefined ? undefined : formatBucket(wall);
  };
  const from = local(interval.from);
  const to = local(interval.to - 1);
  return from === undefined || to === undefined ? undefined : { from, to };
}

/** The query over the period `offset` before: every date range of the time dimension moved back. */
function shiftedQuery(query: SemanticQuery, comparison: PeriodComparison, timezone: string, now: Date): SemanticQuery {
  const unit = comparison.offset.unit as Parameters<typeof addPeriods>[1];
  return {
    ...query,
    timeDimensions: query.timeDimensions?.map((td) => {
      if (td.dimension !== comparison.timeDimension || td.dateRange === undefined) return td;
      const interval = parseDateRange(td.dateRange, timezone, now, 'dateRange');
      const from = shiftInstant(interval.from, unit, -comparison.offset.amount, timezone);
      const to = shiftInstant(interval.to, unit, -comparison.offset.amount, timezone);
      // [from, to) as an inclusive range of absolute instants (an end with a time covers its second).
      return { ...td, dateRange: [new Date(from * 1000).toISOString().replace('.000Z', 'Z'), new Date((to - 1) * 1000).toISOString().replace('.000Z', 'Z')] };
    }),
  };
}

/**
 * `POST /api/v1/embed/dashboard/{publicId}/widgets/{widgetId}/data`: runs one widget's query, and only it, with
 * the viewer's filters and time zone, under the viewer's access policies. CHART widgets run their report snapshot
 * (a semantic query in `meta.query`, else its `sqlQuery`); FILTER widgets list their member's values. The
 * dashboard is checked as for reading it.
 */
export async function widgetData(dc: DataContext, principal: PlatformUserPrincipal | EmbedPrincipal, publicId: string, widgetId: string, request: WidgetDataRequest): Promise<WidgetData> {
  const dashboard = await checkReadableDashboard(dc, readerOf(principal), publicId, (id) => dc.reads.dashboard(dc, principal.accountId, id));
  const widgets = dashboard.parsedConfig.widgets ?? [];
  const widget = widgets.find((w) => w.id === widgetId);
  if (widget === undefined) throw new AppError('not_found', `dashboard ${publicId} has no widget ${widgetId}`, 'widgetId');
  // A CHART widget's snapshots are read alongside the deployment's model (two reads, one round trip of waiting).
  const reading = widget.type === 'CHART' ? dc.reads.snapshots(dc, principal.accountId, dashboard.id) : undefined;
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
    const result = await runSqlSnapshot(dc, scope, snapshot);
    return { ...result, columns: applyColumnFormats(result.columns, snapshot.preferences?.columnFormats), timezone, ignoredFilters: Object.keys(filters) };
  }

  const base = snapshotQuery(rawQuery, snapshot);
  const title = (widget.config as { title?: unknown } | null | undefined)?.title;
  try {
    return await chartData(dc, scope, snapshot, base, request, typeof title === 'string' ? title : snapshot.title ?? snapshot.name ?? undefined);
  } catch (error) {
    // A 400 may be the snapshot's own fault (a member its model lacks), found only when compiled: checked alone
    // then, so a bad dashboard is a 422 naming its snapshot's member, and a bad ask stays the viewer's 400.
    if (error instanceof AppError && error.status === 400) {
      checkSnapshotQuery(dc, scope, base, snapshot);
      throw offeredSwapFault(error, widgets, request.fields ?? {}) ?? error;
    }
    throw error;
  }
}

/**
 * A swap the dashboard's own FIELD control offers that the model refuses (an option of another view or kind) is the
 * dashboard's fault, not the viewer's: a 422 naming the control's options. Any other refused swap stays a 400.
 */
function offeredSwapFault(error: AppError, widgets: readonly Widget[], fields: Record<string, string>): AppError | undefined {
  const from = error.field?.startsWith('fields.') === true ? error.field.slice('fields.'.length) : undefined;
  if (from === undefined || fields[from] === undefined) return undefined;
  const control = widgets.find((w) => {
    const config = (w.config ?? {}) as { member?: unknown; options?: unknown };
    const options = Array.isArray(config.options) ? config.options.map((o: unknown) => (typeof o === 'object' && o !== null ? (o as { member?: unknown }).member : o)) : [];
    return w.type === 'FIELD' && config.member === from && options.includes(fields[from]);
  });
  if (control === undefined) return undefined;
  return new AppError('invalid_query', `widget ${control.id} offers ${fields[from]} for ${from}, which the model refuses: ${error.message}`, `widgets.${control.id}.config.options`);
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

/** A snapshot's semantic query, parsed: a malformed one is the dashboard's fault, a 422 naming `meta.query`. */
function snapshotQuery(raw: unknown, snapshot: ReportSnapshot): SemanticQuery {
  try {
    return parseSemanticQuery(raw, 'query');
  } catch (error) {
    throw asSnapshotFault(error, snapshot);
  }
}

/**
 * Compiles a snapshot's query alone: a query the model cannot run is the dashboard's fault, not the viewer's, so
 * it is a 422 naming the snapshot's member (`meta.query.measures[0]`). A member the viewer's policies hide stays a
 * 403. Run only once a widget's answer failed with a 400, to say whose fault it was (the answer compiles it anyway).
 */
function checkSnapshotQuery(dc: DataContext, scope: DataScope, query: SemanticQuery, snapshot: ReportSnapshot): void {
  try {
    compileSemanticQuery(scope.model, query, compileOptions(dc, scope));
  } catch (error) {
    throw asSnapshotFault(error, snapshot);
  }
}

function asSnapshotFault(error: unknown, snapshot: ReportSnapshot): unknown {
  if (!(error instanceof AppError) || error.status !== 400) return error;
  const field = error.field?.replace(/^query/, 'meta.query');
  return new AppError('invalid_query', `report snapshot ${snapshot.reportId}: ${error.message.replace(/^query/, 'meta.query')}`, field);
}

/**
 * The rows under one mark of a measure: the widget's filters, plus the mark's dimension values (a time bucket
 * becomes its period), listing the measure's view's drill members (default: its dimensions) that the viewer may see.
 */
async function drilldown(dc: DataContext, scope: DataScope, query: SemanticQuery, drill: NonNullable<WidgetDataRequest['drilldown']>): Promise<SourcedResult & { totalRows: number }> {
  const { model } = scope;
  const measure = model.measure(drill.member, 'drilldown.member');
  if (!(query.measures ?? []).includes(measure.name)) throw new AppError('invalid_parameter', `drilldown.member: ${measure.name} is not a measure of this widget`, 'drilldown.member');
  scope.access.requireVisible(measure, 'drilldown.member');
  const filters: QueryFilter[] = [...(query.filters ?? [])];
  for (const [name, value] of Object.entries(drill.point ?? {})) {
    const field = `drilldown.point.${name}`;
    const td = query.timeDimensions?.find((t) => t.granularity !== undefined && `${t.dimension}.${t.granularity}` === name);
    if (td !== undefined) {
      const wall = typeof value === 'string' ? parseBucket(value) : undefined;
      if (wall === undefined) throw new AppError('invalid_parameter', `${field}: a time bucket as YYYY-MM-DDTHH:MM:SS.000`, field);
      const end = addPeriods(wall, td.granularity!, 1) - 1000;
      filters.push({ member: td.dimension, operator: 'inDateRange', values: [formatBucket(wall).slice(0, 19), formatBucket(end).slice(0, 19)] });
      continue;
    }
    if (!(query.dimensions ?? []).includes(name)) throw new AppError('invalid_parameter', `${field}: ${name} is not a dimension of this widget`, field);
    filters.push(value === null ? { member: name, operator: 'notSet' } : { member: name, operator: 'equals', values: [value] });
  }
  const members = measure.view.drillMembers ?? measure.view.dimensions.map((d) => `${measure.view.name}.${d.name}`);
  const dimensions: string[] = [];
  const timeDimensions: NonNullable<SemanticQuery['timeDimensions']> = [];
  for (const name of members) {
    const member = model.dimension(name, 'drillMembers');
    // A drill member a policy hides from this viewer is left out of the listing (the rest still shows).
    if (!scope.access.canSee(member)) continue;
    if (member.dimension.type === 'time') timeDimensions.push({ dimension: name, granularity: 'second' });
    else dimensions.push(name);
  }
  for (const td of query.timeDimensions ?? []) if (td.dateRange !== undefined) timeDimensions.push({ dimension: td.dimension, dateRange: td.dateRange });
  const key = measure.view.dimensions.find((d) => d.primaryKey);
  const order: Array<[string, 'asc' | 'desc']> = key !== undefined && dimensions.includes(`${measure.view.name}.${key.name}`) ? [[`${measure.view.name}.${key.name}`, 'asc']] : [];
  const listing: SemanticQuery = { dimensions, timeDimensions, filters, order };
  // The drill's own cap, as the row cap: past it the listing is `truncated`, and its rows are counted.
  const result = await runSemanticQuery({ ...dc, rowCap: Math.min(dc.rowCap, DRILL_ROWS) }, scope, listing);
  return { ...result, totalRows: result.truncated ? await countRows(dc, scope, listing) : result.rows.length };
}

/** Most rows a drill-down lists. */
export const DRILL_ROWS = 1000;

/** How many rows a query has, under the viewer's policies, through the result cache. */
async function countRows(dc: DataContext, scope: DataScope, query: SemanticQuery): Promise<number> {
  const compiled = compileSemanticQuery(scope.model, query, { ...compileOptions(dc, scope), countRows: true });
  const { value } = await cachedRows(dc, scope, { sql: compiled.sql, parameters: compiled.parameters, maxRows: 1 }, async () => {
    dc.cache.counters.warehouseQueries++;
    const { rows } = await dc.warehouses.get(scope.source).run(compiled.sql, compiled.parameters, { maxRows: 1, timeoutMs: dc.timeoutMs });
    return { value: { rows, truncated: false }, source: 'warehouse' };
  });
  return Number(value.rows[0]?.[0] ?? 0);
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
