import { recordChange } from '../audit/audit.store.js';
import { AppError, staleRevision } from '../core/core.errors.js';
import type { ErrorDetail } from '../core/core.errors.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { Sealer } from '../core/core.sealed.js';
import { selectPublishedDashboards, selectReportSnapshots } from '../dashboards/dashboards.store.js';
import { dashboardProblems } from '../data/data.snapshot.js';
import { modelMeta } from '../data/semantic/semantic.meta.js';
import type { ModelMeta } from '../data/semantic/semantic.meta.js';
import { SemanticModel } from '../data/semantic/semantic.model.js';
import type { DataSourceConfig, SemanticView } from '../data/semantic/semantic.model.js';
import { DEMO_SEMANTIC_VIEWS } from '../data/warehouse/warehouse.demo.js';
import { openDataSource, redactDataSource, sealDataSource, withRedactedSecrets } from '../data/warehouse/warehouse.sources.js';
import type { ServiceContext } from '../db/db.context.js';
import { checkModel } from '../import/import.model.js';
import { ImportError } from '../import/import.check.js';
import { parseJson, presentReportSnapshot } from '../workspace/workspace.presenter.js';
import type { DashboardConfig } from '../workspace/workspace.dashboard-schema.js';
import { findDeployment, selectDeployments, updateModel } from '../accounts/accounts.store.js';
import type { DeploymentRow } from '../accounts/accounts.store.js';
import { canReadMeta, canReadModel, canReplaceModel, requireModelAccess } from './deployments.policy.js';

// A deployment's model through the authoring API (issue 33; docs/authoring.md "The model"). Every platform user of
// the account lists the deployments and reads their meta (member names, titles, types: what authors write
// dashboards with); the model itself (view SQL, the data source) is read and replaced by admins only, over the
// revision they read, after the import's own checks, and never so that a published dashboard stops running unless
// they say so. Another account's deployment is a 404 before any role is looked at.

export interface AuthoringContext extends ServiceContext {
  /** Opens and seals deployments' data sources (SVC_ENCRYPTION_KEY). */
  sealer?: Sealer;
}

export interface DeploymentSummary {
  id: number;
  name: string;
  createdAt: string;
  modelRevision: number;
}

export interface DeploymentDetail extends DeploymentSummary {
  /** The data source with its secrets redacted (`****`); the demo warehouse is `{ type: 'demo' }`. */
  dataSource: DataSourceConfig;
  semanticViews: SemanticView[];
  /** True while the deployment runs on the bundled demo views (none of its own stored yet). */
  demoModel: boolean;
}

const NO_KEYS = new Sealer([]);

const summaryOf = (row: Pick<DeploymentRow, 'id' | 'name' | 'created_at' | 'model_revision'>): DeploymentSummary => ({
  id: row.id, name: row.name, createdAt: row.created_at, modelRevision: row.model_revision,
});

export async function listDeployments(ctx: ServiceContext, principal: PlatformUserPrincipal): Promise<DeploymentSummary[]> {
  return (await selectDeployments(ctx.db, principal.accountId)).map(summaryOf);
}

async function requireDeployment(ctx: ServiceContext, principal: PlatformUserPrincipal, deploymentId: number): Promise<DeploymentRow> {
  const row = await findDeployment(ctx.db, principal.accountId, deploymentId);
  if (row === undefined) throw new AppError('not_found', `deployment ${deploymentId} not found`, 'deploymentId');
  return row;
}

const viewsOf = (row: DeploymentRow): SemanticView[] => parseJson<SemanticView[]>(row.semantic_views) ?? DEMO_SEMANTIC_VIEWS;

function detailOf(ctx: AuthoringContext, row: DeploymentRow): DeploymentDetail {
  return {
    ...summaryOf(row),
    dataSource: redactDataSource(openDataSource(row.data_source, ctx.sealer ?? NO_KEYS)),
    semanticViews: viewsOf(row),
    demoModel: row.semantic_views === null,
  };
}

/** A deployment with its model (admins only: a view's SQL and the data source are not every member's to read). */
export async function readDeployment(ctx: AuthoringContext, principal: PlatformUserPrincipal, deploymentId: number): Promise<DeploymentDetail> {
  const row = await requireDeployment(ctx, principal, deploymentId);
  requireModelAccess(principal, canReadModel);
  return detailOf(ctx, row);
}

/** The model's members for authors, in Cube's `/v1/meta` shape, with the revision it describes. */
export async function readMeta(ctx: ServiceContext, principal: PlatformUserPrincipal, deploymentId: number): Promise<ModelMeta & { modelRevision: number }> {
  const row = await requireDeployment(ctx, principal, deploymentId);
  requireModelAccess(principal, canReadMeta);
  return { ...modelMeta(viewsOf(row)), modelRevision: row.model_revision };
}

/** A published widget a model could not run. */
export type WidgetBreak = Required<ErrorDetail>;

/**
 * What of the deployment's published dashboards a model could not run: each widget, with its dashboard, the JSON
 * path of its query that fails, and why.
 */
async function brokenWidgets(ctx: ServiceContext, accountId: number, deploymentId: number, model: SemanticModel): Promise<WidgetBreak[]> {
  const dashboards = await selectPublishedDashboards(ctx.db, accountId, deploymentId);
  const snapshots = await selectReportSnapshots(ctx.db, accountId, dashboards.map((d) => d.id));
  return dashboards.flatMap((dashboard) => {
    const config = parseJson<DashboardConfig>(dashboard.config) ?? {};
    const own = snapshots.filter((s) => s.dashboard_id === dashboard.id).map(presentReportSnapshot);
    return dashboardProblems(model, config, own).map((p) => ({ publicId: dashboard.public_id, widgetId: p.widgetId, field: p.field, message: p.message }));
  });
}

/** The import's checks of a model body: a 400 at the JSON path of the first problem. */
function parseModel(input: unknown): ReturnType<typeof checkModel> {
  try {
    return checkModel(input);
  } catch (error) {
    if (error instanceof ImportError) throw AppError.at('invalid_body', error.path.replace(/^\$\.?/, '') || 'body', error.message.slice(error.path.length + 2));
    throw error;
  }
}

/** How one view differs between the current model and a new one, by member name. */
export interface ViewChange {
  view: string;
  change: 'added' | 'removed' | 'changed';
  membersAdded: string[];
  membersRemoved: string[];
  membersChanged: string[];
}

/** Each view's members by name (measures and dimensions), with their definitions to compare. */
function membersOf(view: SemanticView): Map<string, string> {
  const members = new Map<string, string>();
  for (const member of [...view.measures, ...view.dimensions]) members.set(member.name, JSON.stringify(member));
  return members;
}

/** What a new model changes, view by view (views in the new model's order, then the removed ones). */
export function modelChanges(before: SemanticView[], after: SemanticView[]): ViewChange[] {
  const old = new Map(before.map((view) => [view.name, view]));
  const changes: ViewChange[] = [];
  for (const view of after) {
    const previous = old.get(view.name);
    old.delete(view.name);
    const now = membersOf(view);
    if (previous === undefined) {
      changes.push({ view: view.name, change: 'added', membersAdded: [...now.keys()], membersRemoved: [], membersChanged: [] });
      continue;
    }
    if (JSON.stringify(previous) === JSON.stringify(view)) continue;
    const was = membersOf(previous);
    changes.push({
      view: view.name, change: 'changed',
      membersAdded: [...now.keys()].filter((name) => !was.has(name)),
      membersRemoved: [...was.keys()].filter((name) => !now.has(name)),
      membersChanged: [...now.keys()].filter((name) => was.has(name) && was.get(name) !== now.get(name)),
    });
  }
  for (const view of old.values()) changes.push({ view: view.name, change: 'removed', membersAdded: [], membersRemoved: [...membersOf(view).keys()], membersChanged: [] });
  return changes;
}

export interface ModelCheck {
  /** The revision checked against: save over it (If-Match: "model-<modelRevision>"). */
  modelRevision: number;
  changes: ViewChange[];
  dataSourceChanged: boolean;
  /** The published widgets the new model could not run, as a replace's 409 would list them. */
  breaks: WidgetBreak[];
}

/**
 * A model body checked as `PUT .../model` checks it, written nowhere (`POST .../model/check`, admins only): the
 * import's checks (a 400 at the JSON path), then what it would change, view by view, and the published widgets it
 * would break. The console's model editor calls it as its author types, and shows it before a save.
 */
export async function checkModelChange(ctx: AuthoringContext, principal: PlatformUserPrincipal, deploymentId: number, input: unknown): Promise<ModelCheck> {
  const row = await requireDeployment(ctx, principal, deploymentId);
  requireModelAccess(principal, canReplaceModel);
  const model = parseModel(input);
  const current = openDataSource(row.data_source, ctx.sealer ?? NO_KEYS);
  const source = model.dataSource === undefined ? undefined : withRedactedSecrets(model.dataSource, current, 'dataSource');
  return {
    modelRevision: row.model_revision,
    changes: modelChanges(viewsOf(row), model.semanticViews),
    dataSourceChanged: source !== undefined && JSON.stringify(source) !== JSON.stringify(current),
    breaks: await brokenWidgets(ctx, principal.accountId, deploymentId, new SemanticModel(model.semanticViews)),
  };
}

/**
 * Replaces the deployment's model (`PUT /api/v1/deployments/{id}/model`), admins only, over revision `over` (from
 * If-Match): the import's checks first (a 400 at the JSON path), then the published dashboards (a 409 listing each
 * widget the new model breaks, unless `force`), then one transaction writes the model, raises its revision and
 * records the change in the audit log. A data source left out stays as it is; one sent back with its password
 * redacted keeps the current password.
 */
export async function replaceModel(
  ctx: AuthoringContext, principal: PlatformUserPrincipal, deploymentId: number, over: number | '*' | 'weak', input: unknown, force: boolean,
): Promise<DeploymentDetail> {
  const row = await requireDeployment(ctx, principal, deploymentId);
  requireModelAccess(principal, canReplaceModel);
  const model = parseModel(input);
  if (over === 'weak' || (over !== '*' && over !== row.model_revision)) throw staleRevision('model', row.model_revision);
  const sealer = ctx.sealer ?? NO_KEYS;
  const current = openDataSource(row.data_source, sealer);
  const source = model.dataSource === undefined ? undefined : withRedactedSecrets(model.dataSource, current, 'dataSource');
  const broken = await brokenWidgets(ctx, principal.accountId, deploymentId, new SemanticModel(model.semanticViews));
  if (broken.length > 0 && !force) {
    const widgets = [...new Set(broken.map((b) => `${b.publicId}/${b.widgetId}`))];
    throw new AppError('conflict', `this model would break ${widgets.length} widget(s) of published dashboards (${widgets.slice(0, 5).join(', ')}${widgets.length > 5 ? ', ...' : ''}); fix them first, or send ?force=true`, 'semanticViews', undefined, broken);
  }
  const stored = {
    semantic_views: JSON.stringify(model.semanticViews),
    data_source: source === undefined ? row.data_source : sealDataSource(source, sealer),
  };
  await ctx.db.transaction().execute(async (trx) => {
    const revision = await updateModel(trx, principal.accountId, deploymentId, over === '*' ? '*' : row.model_revision, stored);
    if (revision === undefined) {
      const now = await findDeployment(trx, principal.accountId, deploymentId);
      if (now === undefined) throw new AppError('not_found', `deployment ${deploymentId} not found`, 'deploymentId');
      throw staleRevision('model', now.model_revision);
    }
    await recordChange(trx, principal, ctx.now().toISOString(), {
      action: 'model.replace', targetType: 'deployment', targetId: deploymentId, fromVersion: revision - 1, toVersion: revision,
      detail: { views: model.semanticViews.map((v) => v.name), dataSourceChanged: source !== undefined, ...(broken.length > 0 ? { forced: true, broken } : {}) },
    });
  });
  return readDeployment(ctx, principal, deploymentId);
}
