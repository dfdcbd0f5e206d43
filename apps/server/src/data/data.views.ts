import { findDeployment } from '../accounts/accounts.store.js';
import type { DraftChecks } from '../dashboards/dashboards.authoring.js';
import type { ServiceContext } from '../db/db.context.js';
import { parseJson } from '../workspace/workspace.presenter.js';
import { compileSemanticQuery } from './compiler/compiler.query.js';
import { dashboardProblems } from './data.snapshot.js';
import { policyAwareSqlProblem } from './policy/policy.access.js';
import { DEMO_SEMANTIC_VIEWS } from './warehouse/warehouse.demo.js';
import { accessPolicyProblem } from './policy/policy.access.js';
import { withoutPolicies } from './policy/policy.query.js';
import { preAggregationProblem } from './preagg/preagg.definitions.js';
import { checkViewerFilter } from './data.viewer.js';
import type { ViewerFilterValue } from './data.viewer.js';
import { SemanticModel } from './semantic/semantic.model.js';
import type { SemanticView } from './semantic/semantic.model.js';

// The checks of what authors write, above the rooms of the data path: the import's (and the model API's) check of a
// deployment's semantic views, which declare members (semantic/), access policies (policy/) and pre-aggregations
// (preagg/); and the dashboard draft checks that app.ts gives the authoring API (dashboards/ sits below data/).

/**
 * Checks views beyond their JSON shape: unique names, joins to declared views, drill members that exist, access
 * policies that name what exists (policy.access.ts). Returns the path and message of the first problem, or undefined.
 */
export function semanticViewsProblem(views: readonly SemanticView[]): { path: string; message: string } | undefined {
  const names = new Set<string>();
  for (const [v, view] of views.entries()) {
    if (names.has(view.name)) return { path: `[${v}].name`, message: `duplicate view name "${view.name}"` };
    names.add(view.name);
    if ((view.table === undefined) === (view.sql === undefined)) return { path: `[${v}]`, message: 'a view needs exactly one of table or sql' };
    const members = new Set<string>();
    for (const [kind, list] of [['dimensions', view.dimensions], ['measures', view.measures]] as const) {
      for (const [m, member] of list.entries()) {
        if (members.has(member.name)) return { path: `[${v}].${kind}[${m}].name`, message: `duplicate member name "${member.name}"` };
        members.add(member.name);
        if (member.column !== undefined && member.sql !== undefined) return { path: `[${v}].${kind}[${m}]`, message: 'give column or sql, not both' };
      }
    }
  }
  for (const [v, view] of views.entries()) {
    for (const [j, join] of (view.joins ?? []).entries()) {
      if (!names.has(join.view) || join.view === view.name) return { path: `[${v}].joins[${j}].view`, message: `names no other view ("${join.view}")` };
    }
    const model = new SemanticModel(views);
    for (const [d, drill] of (view.drillMembers ?? []).entries()) {
      try {
        model.dimension(drill, 'drillMembers');
      } catch {
        return { path: `[${v}].drillMembers[${d}]`, message: `"${drill}" is not a declared dimension` };
      }
    }
    const policy = accessPolicyProblem(view, model, (query) => {
      compileSemanticQuery(withoutPolicies(model, query), { dialect: 'sqlite', timezone: 'UTC', now: new Date(0), rowCap: 1 });
    });
    if (policy !== undefined) return { path: `[${v}]${policy.path}`, message: policy.message };
    const rollup = preAggregationProblem(view, model);
    if (rollup !== undefined) return { path: `[${v}]${rollup.path}`, message: rollup.message };
  }
  return undefined;
}

/** A deployment's model as stored now (the demo's when it has none), read afresh: for checks of what is written. */
async function storedModel(ctx: ServiceContext, accountId: number, deploymentId: number): Promise<SemanticModel> {
  const deployment = await findDeployment(ctx.db, accountId, deploymentId);
  return new SemanticModel(parseJson<SemanticView[]>(deployment?.semantic_views ?? null) ?? DEMO_SEMANTIC_VIEWS);
}

/**
 * The authoring API's checks of a dashboard draft (dashboards/dashboards.authoring.ts, given them by app.ts): what
 * the deployment's model, as stored now, cannot run of it, and whether raw SQL can be policy-aware.
 */
export function draftChecks(ctx: ServiceContext): DraftChecks {
  return {
    problems: async (accountId, deploymentId, config, snapshots) => {
      return dashboardProblems(await storedModel(ctx, accountId, deploymentId), config, snapshots);
    },
    policyAwareSqlProblem: (sql) => policyAwareSqlProblem(sql ?? undefined),
  };
}

/**
 * Generate Session's check of its filters (issue 38; sessions/ is given it by app.ts): each names a dimension of
 * the deployment's model, with values of its type, as a viewer's filter would; a 400 naming `filters.<member>`.
 * The host's backend sets them, so no access policy is asked.
 */
export function sessionFilterCheck(ctx: ServiceContext): (accountId: number, deploymentId: number, filters: Readonly<Record<string, unknown>>) => Promise<void> {
  return async (accountId, deploymentId, filters) => {
    const model = await storedModel(ctx, accountId, deploymentId);
    for (const [member, value] of Object.entries(filters)) {
      const field = `filters.${member}`;
      const resolved = model.dimension(member, field);
      if (value !== null) checkViewerFilter(resolved.dimension.type, value as Exclude<ViewerFilterValue, null>, field, 'UTC');
    }
  };
}
