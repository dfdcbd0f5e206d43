import { isAdmin } from '../accounts/accounts.principal.js';
import { AppError } from '../core/core.errors.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { runExplainedQuery, runRawSql } from './data.run.js';
import type { PlannedStatement, SourcedResult } from './data.run.js';
import type { RollupHint } from './preagg/preagg.suggest.js';
import { openDataScope } from './data.scope.js';
import type { DataContext } from './data.scope.js';
import { ModelAccess } from './policy/policy.access.js';
import { parseSemanticQuery } from './semantic/semantic.query.js';

// The authors' preview (issue 33; docs/authoring.md "Previewing a query"): a semantic query, or a report snapshot
// as a draft holds it, run for a platform user on a deployment; an admin may run it as a viewer would see it
// (`asViewer`), through the same policy step as the viewer's own requests, and sees the statement that ran and,
// when the data source answered, why no pre-aggregation did and one that would (`rollupHint`).

/** Who an admin previews as: what Generate Session would have given the viewer. */
export interface AsViewer {
  securityContext?: Record<string, unknown>;
  userAttributes?: Record<string, unknown>;
  groups?: string[];
  embedTenantName?: string;
}

export interface PreviewRequest {
  query?: unknown;
  snapshot?: { meta?: { query?: unknown } | null; sqlQuery?: string | null };
  asViewer?: AsViewer;
  timezone?: string;
  /** Past the result cache. */
  force?: boolean;
}

export type PreviewResult = SourcedResult & { timezone: string; ignoredFilters: string[]; statement?: PlannedStatement & { parameters: unknown[] }; rollupHint?: RollupHint };

/**
 * `POST /api/v1/deployments/{id}/query`. Every platform user of the account previews as themselves (their groups
 * to the policies, as their widget requests); only an admin previews as a viewer (a member could otherwise read any
 * tenant's rows) or runs raw SQL, and only an admin is shown the statement.
 */
export async function previewQuery(dc: DataContext, principal: PlatformUserPrincipal, deploymentId: number, request: PreviewRequest): Promise<PreviewResult> {
  const admin = isAdmin(principal);
  if ((request.query === undefined) === (request.snapshot === undefined)) throw new AppError('invalid_body', 'send exactly one of query and snapshot', 'query');
  if (request.asViewer !== undefined && !admin) throw new AppError('forbidden', 'only an admin previews as a viewer: a member previews as themselves', 'asViewer');
  const opened = await openDataScope(dc, principal, deploymentId, request.timezone, request.force === true);
  const viewer = request.asViewer;
  const scope = viewer === undefined ? opened : {
    ...opened,
    access: new ModelAccess(opened.model, { securityContext: viewer.securityContext ?? {}, userAttributes: viewer.userAttributes ?? {}, groups: viewer.groups ?? [], embedTenant: viewer.embedTenantName ?? null }),
  };
  const done = (result: SourcedResult, statement: PlannedStatement) => ({ ...result, timezone: scope.timezone, ignoredFilters: [], ...(admin ? { statement: { ...statement, parameters: [...statement.parameters] } } : {}) });
  const sqlQuery = request.snapshot?.sqlQuery;
  if (typeof sqlQuery === 'string') {
    if (!admin) throw new AppError('forbidden', 'raw SQL can read any table of the data source: only an admin runs it', 'snapshot.sqlQuery');
    const result = await runRawSql(dc, scope, { reportId: 0, sqlQuery, policyAware: (request.snapshot?.meta as { policyAware?: unknown } | null | undefined)?.policyAware === true });
    return done(result, { sql: sqlQuery, parameters: [], on: 'warehouse' });
  }
  const root = request.query !== undefined ? 'query' : 'snapshot.meta.query';
  const raw = request.query ?? request.snapshot?.meta?.query;
  if (raw === undefined) throw new AppError('invalid_body', 'snapshot needs meta.query or sqlQuery', 'snapshot.meta.query');
  const { statement, rollupHint, ...result } = await runExplainedQuery(dc, scope, parseSemanticQuery(raw, root), root);
  // "Why is this slow" is for admins, as the statement: it names the model's rollups and the policies' members, and
  // its suggestion is for the model page, which only admins edit.
  return { ...done(result, statement), ...(admin && rollupHint !== undefined ? { rollupHint } : {}) };
}
