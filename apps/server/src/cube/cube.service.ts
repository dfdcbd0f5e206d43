import { selectDeployments } from '../accounts/accounts.store.js';
import { AppError } from '../core/core.errors.js';
import type { EmbedPrincipal, PlatformUserPrincipal } from '../core/core.principal.js';
import { requireAdmin } from '../accounts/accounts.policy.js';
import { countRows, explainQuery, runSemanticQuery } from '../data/data.run.js';
import { openDataScope } from '../data/data.scope.js';
import type { DataContext } from '../data/data.scope.js';
import { visibleMeta } from '../data/data.visible-meta.js';
import type { ModelMeta } from '../data/semantic/semantic.meta.js';
import { dialectOf } from '../data/semantic/semantic.model.js';
import type { SemanticQuery } from '../data/semantic/semantic.query.js';
import { readCubeLoad } from './cube.query.js';
import type { CubeQueryType } from './cube.query.js';
import { cubeResult, membersByName } from './cube.results.js';
import type { CubeResult } from './cube.results.js';

// Cube's REST API over svc's data path (issue 36; docs/cube.md). Every query goes the widgets' one way: the
// caller's scope, the access policies, the plan (a rollup when one covers it), the result cache, the data source.

export type CubePrincipal = PlatformUserPrincipal | EmbedPrincipal;

/**
 * The deployment a Cube call reads. An embed token carries its session's; a platform user names one with the
 * `x-svc-deployment-id` header, or, when the account has exactly one, may leave it out.
 */
export async function cubeDeployment(dc: DataContext, principal: CubePrincipal, header: string | undefined): Promise<number> {
  if (principal.kind === 'embed') {
    if (header !== undefined && Number(header) !== principal.deploymentId) {
      throw AppError.at('forbidden', 'x-svc-deployment-id', 'an embed token reads its own session\'s deployment only');
    }
    return principal.deploymentId;
  }
  if (header !== undefined) {
    if (!/^[1-9][0-9]{0,15}$/.test(header)) throw AppError.at('invalid_parameter', 'x-svc-deployment-id', 'a deployment id');
    return Number(header);
  }
  const deployments = await selectDeployments(dc.db, principal.accountId);
  if (deployments.length === 1) return deployments[0]!.id;
  throw AppError.at('invalid_parameter', 'x-svc-deployment-id', `the account has ${deployments.length} deployments: name one with the x-svc-deployment-id header`);
}

/** `GET /cubejs-api/v1/meta`: the cubes (svc's views) with the members the caller may see. */
export async function cubeMeta(dc: DataContext, principal: CubePrincipal, deploymentId: number): Promise<ModelMeta> {
  return visibleMeta(await openDataScope(dc, principal, deploymentId, undefined));
}

export interface CubeLoadAnswer {
  queryType: CubeQueryType;
  results: CubeResult[];
  pivotQuery: Record<string, unknown>;
  slowQuery: false;
}

/**
 * `load`: each query of the call run under the caller's policies, answered in Cube's shape. A blending query's
 * pivot query carries every query's measures (as Cube's does), so that ResultSet draws them on one axis.
 */
export async function cubeLoad(dc: DataContext, principal: CubePrincipal, deploymentId: number, raw: unknown, signal?: AbortSignal): Promise<CubeLoadAnswer> {
  const base = await openDataScope(dc, principal, deploymentId, undefined);
  // A query dropped by continue wait's orphan timeout starts no statement it has not started yet.
  signal?.throwIfAborted();
  const load = readCubeLoad(raw, base.timezone, dc.now());
  const members = membersByName(visibleMeta(base));
  const dbType = dialectOf(base.source);
  const results = await Promise.all(load.plans.map(async (plan) => {
    const zone = plan.normalized.timezone as string;
    const scope = zone === base.timezone ? base : await openDataScope(dc, principal, deploymentId, zone);
    signal?.throwIfAborted();
    const [result, total] = await Promise.all([
      runSemanticQuery(dc, scope, plan.query),
      plan.total ? countRows(dc, scope, withoutLimit(plan.query)) : Promise.resolve(undefined),
    ]);
    return cubeResult(plan, result, members, { now: dc.now(), dbType, ...(total !== undefined ? { total } : {}) });
  }));
  return { queryType: load.queryType, results, pivotQuery: pivotOf(load.queryType, load.plans.map((plan) => plan.normalized)), slowQuery: false };
}

/** Cube's `sql` answer for one query: the statement and its values, and where it runs. */
export interface CubeSqlAnswer {
  sql: {
    sql: [string, unknown[]];
    order: Array<{ id: string; desc: boolean }>;
    limit: number;
    aliasNameToMember: Record<string, string>;
    dataSource: 'default';
    external: boolean;
    preAggregations: Array<{ preAggregationId: string }>;
  };
}

/**
 * `sql`, admins only (issue 36): the statement each query of the call compiles to under the admin's own policies
 * (their groups), and whether a rollup answers it; nothing runs. One query: one answer; several: an array, as Cube.
 */
export async function cubeSql(dc: DataContext, principal: CubePrincipal, deploymentId: number, raw: unknown): Promise<CubeSqlAnswer | CubeSqlAnswer[]> {
  if (principal.kind === 'embed') throw AppError.at('forbidden', 'Authorization', 'the compiled SQL is for an account\'s admins: send an admin\'s API key');
  // Another account's deployment is a 404 before the role is asked (openDataScope reads it in the caller's account).
  const base = await openDataScope(dc, principal, deploymentId, undefined);
  requireAdmin(principal);
  const load = readCubeLoad(raw, base.timezone, dc.now());
  const answers = await Promise.all(load.plans.map(async (plan) => {
    const zone = plan.normalized.timezone as string;
    const scope = zone === base.timezone ? base : await openDataScope(dc, principal, deploymentId, zone);
    const statement = explainQuery(dc, scope, plan.query);
    const rollup = statement.on.startsWith('rollup:') ? statement.on.slice('rollup:'.length) : undefined;
    return {
      sql: {
        sql: [statement.sql, [...statement.parameters]] as [string, unknown[]],
        order: plan.normalized.order as Array<{ id: string; desc: boolean }>,
        limit: plan.limit,
        aliasNameToMember: Object.fromEntries(statement.columns.map((column) => [column.name, column.member])),
        dataSource: 'default' as const,
        external: rollup !== undefined,
        preAggregations: rollup === undefined ? [] : [{ preAggregationId: rollup }],
      },
    };
  }));
  return load.queryType === 'regularQuery' && !Array.isArray(raw) ? answers[0]! : answers;
}

/** Cube's `dry-run` answer: the queries as Cube normalizes them, their pivot query and order, nothing run. */
export interface CubeDryRun {
  queryType: CubeQueryType;
  normalizedQueries: Array<Record<string, unknown>>;
  pivotQuery: Record<string, unknown>;
  queryOrder: Array<Record<string, 'asc' | 'desc'>>;
  transformedQueries: null[];
}

/**
 * `dry-run`: the call's queries normalized as `load` would run them, checked against the model and the caller's
 * policies (an unknown member is a 400, a hidden one a 403, as in `load`), without running them.
 */
export async function cubeDryRun(dc: DataContext, principal: CubePrincipal, deploymentId: number, raw: unknown): Promise<CubeDryRun> {
  const base = await openDataScope(dc, principal, deploymentId, undefined);
  const load = readCubeLoad(raw, base.timezone, dc.now());
  for (const plan of load.plans) explainQuery(dc, base, plan.query);
  const normalizedQueries = load.plans.map((plan) => plan.normalized);
  return {
    queryType: load.queryType,
    normalizedQueries,
    pivotQuery: pivotOf(load.queryType, normalizedQueries),
    queryOrder: (normalizedQueries[0]!.order as Array<{ id: string; desc: boolean }>).map(({ id, desc }) => ({ [id]: desc ? 'desc' : 'asc' })),
    transformedQueries: normalizedQueries.map(() => null),
  };
}

/** The pivot query of a call: the first query's, with every query's measures for a blending query (as Cube's). */
function pivotOf(queryType: CubeQueryType, normalized: ReadonlyArray<Record<string, unknown>>): Record<string, unknown> {
  const first = normalized[0]!;
  return queryType === 'blendingQuery'
    ? { ...first, measures: normalized.flatMap((query) => query.measures as string[]), queryType }
    : { ...first, queryType };
}

/** The query without its row limit: what `total` counts. */
function withoutLimit(query: SemanticQuery): SemanticQuery {
  const { limit: _limit, ...rest } = query;
  return rest;
}
