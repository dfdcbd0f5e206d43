import { AppError } from '../core/core.errors.js';
import type { EmbedPrincipal, PlatformUserPrincipal } from '../core/core.principal.js';
import { runSemanticQuery } from '../data/data.run.js';
import type { SourcedResult } from '../data/data.run.js';
import { openDataScope } from '../data/data.scope.js';
import type { DataContext } from '../data/data.scope.js';
import { visibleMeta } from '../data/data.visible-meta.js';
import type { ModelMeta } from '../data/semantic/semantic.meta.js';
import { parseSemanticQuery } from '../data/semantic/semantic.query.js';
import { requireExploreLevel } from '../sessions/sessions.explore.js';
import type { TenantGate } from './explore.gate.js';

// Exploration in the embed, the query side (issue 35; docs/explore.md): what a viewer may build with (the meta under
// their policies) and their own queries, run the widgets' one way (scope, policies, plan, cache, data source) on a
// data context of explore's own: its row cap, its statement timeout, its own connections to the data source.

/**
 * The saved chart `chartId` as `principal` may open it: its semantic query (as stored), or undefined when there is
 * none the principal may see (another tenant's, another viewer's private one, or none at all): a 404. Saved charts
 * (`saved_charts`) are another part of issue 35; app.ts hands their finder to the explore routes.
 */
export type FindVisibleChartQuery = (principal: EmbedPrincipal, chartId: string) => Promise<unknown | undefined>;

export interface ExploreContext {
  /** The data path with explore's limits: rowCap SVC_EXPLORE_MAX_ROWS, timeoutMs SVC_EXPLORE_TIMEOUT_MS, own warehouses. */
  data: DataContext;
  /** Explore queries per embed tenant at once (SVC_EXPLORE_TENANT_CONCURRENCY). */
  gate: TenantGate;
  /** Saved charts; none wired: every chartId is a 404. */
  findChartQuery?: FindVisibleChartQuery;
}

export interface ExploreQueryRequest {
  query?: unknown;
  chartId?: string;
  timezone?: string;
  force?: boolean;
}

export type ExploreAnswer = SourcedResult & { timezone: string; ignoredFilters: string[] };

/**
 * Explore is the embed viewer's: a platform user (API key, console session) builds in the console, so these routes
 * answer it 403 as the comment routes answer one (SPEC "Authentication": they need an embed session).
 */
function requireEmbedViewer(principal: PlatformUserPrincipal | EmbedPrincipal): EmbedPrincipal {
  if (principal.kind === 'embed') return principal;
  throw new AppError('forbidden', 'exploring in the embed needs an embed token: a platform user builds charts in the console', 'Authorization');
}

/**
 * `GET /api/v1/embed/meta`: the views and members the viewer's policies show, in the console's meta shape; a hidden
 * member or a view with none visible is not listed. Needs settings.explore view or create (the embed titles shared
 * charts with it). A session limited to named dashboards explores its deployment all the same (docs/decisions.md).
 */
export async function readEmbedMeta(dc: DataContext, caller: PlatformUserPrincipal | EmbedPrincipal): Promise<ModelMeta> {
  const principal = requireEmbedViewer(caller);
  requireExploreLevel(principal, 'view');
  return visibleMeta(await openDataScope(dc, principal, principal.deploymentId, undefined));
}

/** What the tenant gate counts a viewer under: their embed tenant; a session of no tenant (internalId) on its own. */
const gateKeyOf = (principal: EmbedPrincipal): string =>
  principal.embedTenantId !== null ? `${principal.accountId}:tenant:${principal.embedTenantId}` : `${principal.accountId}:session:${principal.sessionId}`;

/**
 * `POST /api/v1/embed/explore/query`: a viewer's own semantic query (settings.explore create), or a saved chart's
 * (view or create), answered as widget data is: the viewer's policies (a hidden member is the widgets' 403), the
 * result cache, the rollups; at most SVC_EXPLORE_MAX_ROWS rows (`truncated`). On a data source marked
 * `exploreRequiresRollup`, a query no built rollup answers is a 400 `query_too_broad`.
 */
export async function runExploreQuery(ec: ExploreContext, caller: PlatformUserPrincipal | EmbedPrincipal, request: ExploreQueryRequest): Promise<ExploreAnswer> {
  const principal = requireEmbedViewer(caller);
  if ((request.query === undefined) === (request.chartId === undefined)) throw new AppError('invalid_body', 'send exactly one of query and chartId', 'query');
  const dc = ec.data;
  requireExploreLevel(principal, request.query !== undefined ? 'create' : 'view');
  let raw = request.query;
  const root = request.query !== undefined ? 'query' : 'chartId';
  if (request.chartId !== undefined) {
    raw = ec.findChartQuery === undefined ? undefined : await ec.findChartQuery(principal, request.chartId);
    if (raw === undefined) throw new AppError('not_found', `no saved chart ${request.chartId} that this viewer may open`, 'chartId');
  }
  const scope = await openDataScope(dc, principal, principal.deploymentId, request.timezone, request.force === true);
  const query = parseSemanticQuery(raw, root);
  const onlyRollups = scope.source.exploreRequiresRollup === true;
  const result = await ec.gate.run(gateKeyOf(principal), () => runSemanticQuery(dc, scope, query, root, onlyRollups));
  return { ...result, timezone: scope.timezone, ignoredFilters: [] };
}
