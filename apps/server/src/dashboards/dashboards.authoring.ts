import { randomBytes } from 'node:crypto';
import { bumpAccountDataVersion, findDeployment } from '../accounts/accounts.store.js';
import { isAdmin } from '../accounts/accounts.principal.js';
import { recordChange } from '../audit/audit.store.js';
import { AppError, staleRevision } from '../core/core.errors.js';
import type { ErrorDetail } from '../core/core.errors.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import type { ServiceContext } from '../db/db.context.js';
import { isUniqueViolation } from '../db/db.database.js';
import { findFolder, findParentFolder, hasEditorGrant, insertWorkspaceItem, selectReportIds } from '../workspace/workspace.store.js';
import { parseJson, presentDashboard, presentReportSnapshot } from '../workspace/workspace.presenter.js';
import type { Dashboard, DashboardConfig, ReportSnapshot } from '../workspace/workspace.dashboard-schema.js';
import { translationsProblem } from '../workspace/workspace.translations.js';
import { canCreateDashboardIn, canEditDashboard, canEditWithoutGrants } from './dashboards.policy.js';
import type { EditorReach } from './dashboards.policy.js';
import { canReachWorkbook } from './dashboards.service.js';
import {
  archiveDashboardRow, findDashboardByPublicId, findDashboardVersion, insertDashboard, insertDashboardVersion, publicIdTaken, replaceReportSnapshots,
  selectDashboardVersions, selectReportSnapshots, updateDraft, updatePublished,
} from './dashboards.store.js';
import type { DashboardRow, DashboardVersionRow } from './dashboards.store.js';

// Dashboards through the authoring API (issue 33; docs/authoring.md "Dashboards"). A dashboard has at most one
// draft, which viewers never see, and published versions, each kept whole: publishing makes the draft the next
// version in one transaction, restoring copies a version into the draft. Admins edit every dashboard of the account;
// a member edits the dashboards they created and those below an editor grant (dashboards.policy.ts). Every write is
// in the audit log, in its own transaction.

/**
 * What the data path checks of a draft, given by app.ts (dashboards/ sits below data/, which reads dashboards): each
 * way the deployment's model cannot run the dashboard, and why raw SQL cannot be policy-aware.
 */
export interface DraftChecks {
  problems(accountId: number, deploymentId: number, config: DashboardConfig, snapshots: readonly ReportSnapshot[]): Promise<Array<{ widgetId: string; field: string; message: string }>>;
  policyAwareSqlProblem(sql: string | null | undefined): string | undefined;
}

/** The authoring services' context: the database and clock, and the data path's checks. */
export interface AuthoringContext extends ServiceContext {
  checks: DraftChecks;
}

/** A report snapshot as an author writes it: its report (a REPORT of the deployment) is made at publish when absent. */
export type SnapshotInput = Omit<ReportSnapshot, 'id' | 'reportId' | 'versionNumber'> & { reportId?: number | null };

/** What an author sends: the dashboard as it will show once published. */
export interface DraftInput {
  title?: string | null;
  description?: string | null;
  allowEmbed?: boolean;
  config: DashboardConfig;
  reportSnapshots?: SnapshotInput[];
}

/** A draft as stored and answered. */
export interface Draft {
  title: string | null;
  description: string | null;
  allowEmbed: boolean;
  config: DashboardConfig;
  reportSnapshots: SnapshotInput[];
}

export interface AuthoredDashboard {
  publicId: string;
  deploymentId: number;
  workbookId: number;
  status: DashboardRow['status'];
  createdBy: number | null;
  /** The version viewers see (SPEC A's Dashboard), or null before the first publish. */
  published: Dashboard | null;
  /** The draft, or null when there is none (nothing changed since the last publish). */
  draft: Draft | null;
  /** The draft's revision: its ETag is `"draft-<draftRevision>"`. */
  draftRevision: number;
  /** Whether the caller may change it (dashboards.policy.ts): the console offers a read-only page otherwise. */
  canEdit: boolean;
}

export interface DashboardVersion {
  versionNumber: number;
  title: string | null;
  publishedAt: string;
  publishedBy: number | null;
  current: boolean;
}

/** Records a change to a dashboard in the audit log, in the change's transaction `db`. */
function audit(db: ServiceContext['db'], ctx: ServiceContext, principal: PlatformUserPrincipal, change: { action: string; publicId: string; from: number | null; to: number | null; detail?: Record<string, unknown> }) {
  return recordChange(db, principal, ctx.now().toISOString(), {
    action: change.action, targetType: 'dashboard', targetId: change.publicId, fromVersion: change.from, toVersion: change.to, detail: change.detail ?? {},
  });
}

async function requireDashboard(ctx: ServiceContext, principal: PlatformUserPrincipal, publicId: string, field = 'publicId'): Promise<DashboardRow> {
  const row = publicId.includes('\u0000') ? undefined : await findDashboardByPublicId(ctx.db, principal.accountId, publicId);
  if (row === undefined) throw new AppError('not_found', `dashboard ${publicId} not found`, field);
  return row;
}

/** The caller's editor grants on the item or above it; read only when the rule needs them (not for an admin or the creator). */
async function editorReachOf(ctx: ServiceContext, principal: PlatformUserPrincipal, itemId: number): Promise<EditorReach> {
  return { editorGrant: await hasEditorGrant(ctx.db, principal.accountId, principal.userId, itemId) };
}

/** Whether the caller may change the dashboard (dashboards.policy.ts `canEditDashboard`); its grants are read only when needed. */
async function mayEdit(ctx: ServiceContext, principal: PlatformUserPrincipal, row: DashboardRow): Promise<boolean> {
  return canEditWithoutGrants(principal, row) || canEditDashboard(principal, row, await editorReachOf(ctx, principal, row.workbook_id));
}

/** The dashboard, when the caller may change it (dashboards.policy.ts `canEditDashboard`); 404 or 403 otherwise. */
async function requireEditable(ctx: ServiceContext, principal: PlatformUserPrincipal, publicId: string): Promise<DashboardRow> {
  const row = await requireDashboard(ctx, principal, publicId);
  if (await mayEdit(ctx, principal, row)) return row;
  throw new AppError('forbidden', `dashboard ${publicId} is not yours to change: a member edits the dashboards they created, or those below an editor grant`, 'Authorization');
}

/**
 * The checks of a draft against its deployment, each at its JSON path: widget ids unique, a widget's `reportId` one
 * of the draft's snapshots, a snapshot's `reportId` a REPORT of the deployment, raw SQL only from an admin (it reads
 * any table), and every widget's query and members run on the model (data.snapshot's dashboardProblems).
 */
async function checkDraft(ctx: AuthoringContext, principal: PlatformUserPrincipal, deploymentId: number, input: DraftInput): Promise<Draft> {
  const widgets = input.config.widgets ?? [];
  const snapshots = input.reportSnapshots ?? [];
  const seen = new Set<string>();
  widgets.forEach((widget, w) => {
    if (seen.has(widget.id)) throw AppError.at('invalid_body', `config.widgets[${w}].id`, `duplicate widget id "${widget.id}"`);
    seen.add(widget.id);
    const reportId = (widget.config as { reportId?: unknown } | null | undefined)?.reportId;
    if (typeof reportId === 'number' && !snapshots.some((s) => s.reportId === reportId)) {
      throw AppError.at('invalid_body', `config.widgets[${w}].config.reportId`, `names no report snapshot of this dashboard (${reportId})`);
    }
  });
  const translation = translationsProblem(input.config);
  if (translation !== undefined) throw AppError.at('invalid_body', `config.${translation.field}`, translation.message);
  const given = snapshots.flatMap((s) => (typeof s.reportId === 'number' ? [s.reportId] : []));
  const reports = new Set(await selectReportIds(ctx.db, principal.accountId, deploymentId, given));
  snapshots.forEach((snapshot, s) => {
    if (typeof snapshot.reportId === 'number' && !reports.has(snapshot.reportId)) {
      throw AppError.at('invalid_body', `reportSnapshots[${s}].reportId`, `names no REPORT of deployment ${deploymentId} (${snapshot.reportId})`);
    }
    if (typeof snapshot.sqlQuery === 'string') {
      if (!isAdmin(principal)) throw AppError.at('forbidden', `reportSnapshots[${s}].sqlQuery`, 'raw SQL can read any table of the data source: only an admin writes it');
      const problem = (snapshot.meta as { policyAware?: unknown } | null | undefined)?.policyAware === true ? ctx.checks.policyAwareSqlProblem(snapshot.sqlQuery) : undefined;
      if (problem !== undefined) throw AppError.at('invalid_body', `reportSnapshots[${s}].sqlQuery`, problem);
    }
  });
  const asShown = snapshots.map((snapshot, s): ReportSnapshot => ({ ...snapshot, id: s + 1, reportId: snapshot.reportId ?? -(s + 1), versionNumber: 1 }));
  const problems = (await ctx.checks.problems(principal.accountId, deploymentId, input.config, asShown)).map((p): ErrorDetail => {
    const w = widgets.findIndex((widget) => widget.id === p.widgetId);
    const widget = widgets[w]!;
    const s = widget.type === 'CHART' ? chartSnapshotIndex(widget, widgets, asShown) : -1;
    return { widgetId: p.widgetId, field: s >= 0 ? `reportSnapshots[${s}].${p.field}` : `config.widgets[${w}].${p.field}`, message: p.message };
  });
  if (problems.length > 0) {
    throw new AppError('invalid_body', `${problems[0]!.field}: ${problems[0]!.message}${problems.length > 1 ? ` (and ${problems.length - 1} more in error.details)` : ''}`, problems[0]!.field, problems[0]!.message, problems);
  }
  return { title: input.title ?? null, description: input.description ?? null, allowEmbed: input.allowEmbed ?? true, config: input.config, reportSnapshots: snapshots };
}

/** The index of the snapshot a CHART shows (as data.snapshot's snapshotOf picks it), or -1. */
function chartSnapshotIndex(widget: NonNullable<DashboardConfig['widgets']>[number], widgets: NonNullable<DashboardConfig['widgets']>, snapshots: readonly ReportSnapshot[]): number {
  const config = (widget.config ?? {}) as { reportId?: unknown; snapshotIndex?: unknown };
  if (typeof config.reportId === 'number') return snapshots.findIndex((s) => s.reportId === config.reportId);
  if (typeof config.snapshotIndex === 'number') return config.snapshotIndex < snapshots.length ? config.snapshotIndex : -1;
  const i = widgets.filter((w) => w.type === 'CHART').indexOf(widget);
  return i < snapshots.length ? i : -1;
}

const draftOf = (row: DashboardRow): Draft | null => {
  if (row.draft_document === null) return null;
  return { ...(JSON.parse(row.draft_document) as Omit<Draft, 'config'>), config: parseJson<DashboardConfig>(row.draft_config) ?? {} };
};

async function present(ctx: ServiceContext, principal: PlatformUserPrincipal, row: DashboardRow): Promise<AuthoredDashboard> {
  const [published, canEdit] = await Promise.all([
    row.version_number > 0 ? selectReportSnapshots(ctx.db, row.account_id, [row.id]).then((snapshots) => presentDashboard(row, snapshots)) : null,
    mayEdit(ctx, principal, row),
  ]);
  return {
    publicId: row.public_id, deploymentId: row.deployment_id, workbookId: row.workbook_id, status: row.status, createdBy: row.created_by,
    published, draft: draftOf(row), draftRevision: row.draft_revision, canEdit,
  };
}

const storedDraft = (draft: Draft, at: string) => ({
  config: JSON.stringify(draft.config),
  document: JSON.stringify({ title: draft.title, description: draft.description, allowEmbed: draft.allowEmbed, reportSnapshots: draft.reportSnapshots }),
  updatedAt: at,
});

/**
 * `POST /api/v1/deployments/{id}/dashboards`: a WORKBOOK item (in `folderId`, else the deployment's root) with a
 * dashboard that has a draft and no published version yet. A member creates where they can reach.
 */
export async function createDashboard(
  ctx: AuthoringContext, principal: PlatformUserPrincipal, deploymentId: number,
  request: Omit<DraftInput, 'config'> & { config?: DashboardConfig; title: string; publicId?: string; folderId?: number; copyOf?: string },
): Promise<AuthoredDashboard> {
  if ((await findDeployment(ctx.db, principal.accountId, deploymentId)) === undefined) throw new AppError('not_found', `deployment ${deploymentId} not found`, 'deploymentId');
  const copy = request.copyOf === undefined ? null : await copiedContent(ctx, principal, deploymentId, request);
  if (copy === null && request.config === undefined) throw AppError.at('invalid_body', 'config', 'is required (or copyOf, to copy a dashboard)');
  const input = { ...request, ...(copy?.content ?? {}), config: copy?.content.config ?? request.config! };
  let folder: { id: number; depth: number; created_by: number | null } | null = null;
  if (input.folderId !== undefined) {
    folder = (await findFolder(ctx.db, principal.accountId, deploymentId, input.folderId)) ?? null;
    // A body field naming nothing is the request's fault (400), as `parentId` on the folder routes (docs/decisions.md).
    if (folder === null) throw AppError.at('invalid_body', 'folderId', `names no folder of deployment ${deploymentId} (${input.folderId})`);
    const reach = isAdmin(principal) ? { editorGrant: false } : await editorReachOf(ctx, principal, folder.id);
    if (!canCreateDashboardIn(principal, folder, reach)) {
      throw new AppError('forbidden', `folder ${input.folderId} is not one you may change: a member creates dashboards in folders they created or below an editor grant, or at the root`, 'folderId');
    }
  }
  const draft = await checkDraft(ctx, principal, deploymentId, input);
  const publicId = input.publicId ?? `d-${randomBytes(9).toString('base64url').replace(/[^A-Za-z0-9]/g, 'x')}`;
  const taken = () => new AppError('conflict', `a dashboard with publicId "${publicId}" already exists`, 'publicId');
  if (await publicIdTaken(ctx.db, publicId)) throw taken();
  const at = ctx.now().toISOString();
  try {
    await ctx.db.transaction().execute(async (trx) => {
      const workbookId = await insertWorkspaceItem(trx, { accountId: principal.accountId, deploymentId, type: 'WORKBOOK', name: input.title, folder, createdBy: principal.userId, at, dialect: ctx.dialect });
      const stored = storedDraft(draft, at);
      await insertDashboard(trx, {
        account_id: principal.accountId, deployment_id: deploymentId, workbook_id: workbookId, public_id: publicId, status: 'draft',
        allow_embed: draft.allowEmbed ? 1 : 0, title: draft.title, description: draft.description, config: '{}', draft_config: stored.config,
        draft_document: stored.document, version_number: 0, version_id: 0, created_by: principal.userId, created_at: at, updated_at: at,
        from_shared_workspace: null, restrict_data_download: null, use_board_dashboards: null,
      });
      await bumpAccountDataVersion(trx, principal.accountId);
      await audit(trx, ctx, principal, { action: 'dashboard.create', publicId, from: null, to: null, detail: { deploymentId, workbookId, ...(copy === null ? {} : { copyOf: request.copyOf, copied: copy.copied }) } });
    });
  } catch (error) {
    // Two creations racing for one publicId both pass the check; the loser's unique violation says what the check would have.
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
  return readAuthoredDashboard(ctx, principal, publicId);
}

/**
 * What a copy starts from (`copyOf`, Metabase's "Duplicate"): the source's draft when the caller may change the source
 * and it has one (an author copies what they are working on), else its published version (what a reader of it sees);
 * a source with neither for this caller (never published, and not theirs to change) is a 409. The caller must read
 * the source (404 or 403 at `copyOf`, as `GET` says), in the same deployment (400 at `copyOf`); `config` and
 * `reportSnapshots` come from the source only (400 when sent too). The snapshots lose their `reportId`, so the copy's
 * first publish gives them REPORT items of their own: a shared REPORT would sit in the source's folder, out of the
 * copy's author's reach. A widget that named its snapshot by `config.reportId` names it by `config.snapshotIndex`.
 */
async function copiedContent(
  ctx: AuthoringContext, principal: PlatformUserPrincipal, deploymentId: number, request: { copyOf?: string; config?: unknown; reportSnapshots?: unknown },
): Promise<{ content: Omit<DraftInput, 'title'>; copied: 'draft' | 'published' }> {
  for (const field of ['config', 'reportSnapshots'] as const) {
    if (request[field] !== undefined) throw AppError.at('invalid_body', field, 'comes from the dashboard copyOf names: leave it out, and change the copy\'s draft afterwards');
  }
  const source = await requireReadable(ctx, principal, request.copyOf!, 'copyOf');
  if (source.deployment_id !== deploymentId) throw AppError.at('invalid_body', 'copyOf', `dashboard ${source.public_id} is in deployment ${source.deployment_id}: copy it there`);
  const mayChange = await mayEdit(ctx, principal, source);
  const draft = mayChange ? draftOf(source) : null;
  if (draft === null && source.version_number === 0) {
    throw new AppError('conflict', `dashboard ${source.public_id} has no published version to copy`, 'copyOf');
  }
  const from = draft ?? {
    description: source.description, allowEmbed: source.allow_embed !== 0, config: parseJson<DashboardConfig>(source.config) ?? {},
    reportSnapshots: (await selectReportSnapshots(ctx.db, principal.accountId, [source.id])).map(presentReportSnapshot) as SnapshotInput[],
  };
  const snapshots = from.reportSnapshots;
  const widgets = (from.config.widgets ?? []).map((widget) => {
    const { reportId, ...rest } = (widget.config ?? {}) as { reportId?: unknown };
    if (typeof reportId !== 'number') return widget;
    const index = snapshots.findIndex((s) => s.reportId === reportId);
    return { ...widget, config: index < 0 ? rest : { ...rest, snapshotIndex: index } };
  });
  return {
    copied: draft === null ? 'published' : 'draft',
    content: {
      description: from.description, allowEmbed: from.allowEmbed,
      config: from.config.widgets === undefined ? from.config : { ...from.config, widgets },
      reportSnapshots: snapshots.map((snapshot) => Object.fromEntries(
        Object.entries(snapshot).filter(([key, value]) => value !== null && !['id', 'reportId', 'versionNumber'].includes(key)),
      ) as SnapshotInput),
    },
  };
}

/** `GET /api/v1/dashboards/{publicId}`: the published version and the draft (an admin, its creator, or whoever reaches its workbook). */
export async function readAuthoredDashboard(ctx: ServiceContext, principal: PlatformUserPrincipal, publicId: string): Promise<AuthoredDashboard> {
  return present(ctx, principal, await requireReadable(ctx, principal, publicId));
}

/** The dashboard, for an admin, its creator, or whoever reaches its workbook (403 otherwise). */
async function requireReadable(ctx: ServiceContext, principal: PlatformUserPrincipal, publicId: string, field = 'publicId'): Promise<DashboardRow> {
  const row = await requireDashboard(ctx, principal, publicId, field);
  if (!isAdmin(principal) && row.created_by !== principal.userId && !(await canReachWorkbook(ctx, principal, row.workbook_id))) {
    throw new AppError('forbidden', `dashboard ${publicId} is on a workbook this user was not granted`, field);
  }
  return row;
}

/** `PUT /api/v1/dashboards/{publicId}/draft`: the draft replaced over the revision `over` (If-Match). */
export async function replaceDraft(ctx: AuthoringContext, principal: PlatformUserPrincipal, publicId: string, over: number | '*' | 'weak', input: DraftInput): Promise<AuthoredDashboard> {
  const row = await requireEditable(ctx, principal, publicId);
  const draft = await checkDraft(ctx, principal, row.deployment_id, input);
  const revision = over === '*' ? row.draft_revision : over;
  if (over === 'weak' || revision !== row.draft_revision) throw staleDraft(row.draft_revision);
  const at = ctx.now().toISOString();
  await ctx.db.transaction().execute(async (trx) => {
    const next = await updateDraft(trx, principal.accountId, row.id, revision, storedDraft(draft, at));
    if (next === undefined) throw staleDraft((await findDashboardByPublicId(trx, principal.accountId, publicId))!.draft_revision);
    await bumpAccountDataVersion(trx, principal.accountId);
    await audit(trx, ctx, principal, { action: 'dashboard.draft', publicId, from: row.version_number, to: null, detail: { draftRevision: next } });
  });
  return readAuthoredDashboard(ctx, principal, publicId);
}

/**
 * `POST /api/v1/dashboards/{publicId}/publish`: the draft becomes the next version, atomically: a REPORT item for
 * each snapshot without one (beside the workbook), the dashboard's config and snapshots, the version kept whole,
 * the draft cleared, the audit entry. Checked against the model as it is now; 409 without a draft.
 */
export async function publishDraft(ctx: AuthoringContext, principal: PlatformUserPrincipal, publicId: string, over: number | '*' | 'weak' | undefined): Promise<AuthoredDashboard> {
  const row = await requireEditable(ctx, principal, publicId);
  const stored = draftOf(row);
  if (stored === null) throw new AppError('conflict', `dashboard ${publicId} has no draft to publish: change its draft first`, 'publicId');
  if (over === 'weak' || (typeof over === 'number' && over !== row.draft_revision)) throw staleDraft(row.draft_revision);
  const draft = await checkDraft(ctx, principal, row.deployment_id, stored);
  const at = ctx.now().toISOString();
  const versionNumber = row.version_number + 1;
  await ctx.db.transaction().execute(async (trx) => {
    const folder = await findParentFolder(trx, principal.accountId, row.workbook_id);
    const snapshots: Array<SnapshotInput & { reportId: number }> = [];
    for (const snapshot of draft.reportSnapshots) {
      const reportId = snapshot.reportId ?? await insertWorkspaceItem(trx, {
        accountId: principal.accountId, deploymentId: row.deployment_id, type: 'REPORT', name: snapshot.title ?? snapshot.name ?? `${draft.title ?? publicId} chart`, folder, createdBy: principal.userId, at, dialect: ctx.dialect,
      });
      snapshots.push({ ...snapshot, reportId });
    }
    const versionId = await insertDashboardVersion(trx, {
      account_id: principal.accountId, dashboard_id: row.id, version_number: versionNumber, title: draft.title, description: draft.description,
      config: JSON.stringify(draft.config), report_snapshots: JSON.stringify(snapshots), published_by: principal.userId, published_at: at,
    });
    const done = await updatePublished(trx, principal.accountId, row.id, row.draft_revision, {
      title: draft.title, description: draft.description, config: JSON.stringify(draft.config), allowEmbed: draft.allowEmbed, versionNumber, versionId, updatedAt: at,
    });
    if (done === undefined) throw staleDraft((await findDashboardByPublicId(trx, principal.accountId, publicId))!.draft_revision);
    await replaceReportSnapshots(trx, principal.accountId, row.id, snapshots.map((s, position) => snapshotRow(principal.accountId, row.id, position, versionNumber, s)));
    await bumpAccountDataVersion(trx, principal.accountId);
    await audit(trx, ctx, principal, { action: 'dashboard.publish', publicId, from: row.version_number === 0 ? null : row.version_number, to: versionNumber, detail: { snapshots: snapshots.length } });
  });
  return readAuthoredDashboard(ctx, principal, publicId);
}

const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));

function snapshotRow(accountId: number, dashboardId: number, position: number, versionNumber: number, s: SnapshotInput & { reportId: number }) {
  return {
    account_id: accountId, dashboard_id: dashboardId, report_id: s.reportId, position, version_number: versionNumber,
    name: s.name ?? null, title: s.title ?? null, description: s.description ?? null, kind: s.kind ?? null,
    is_source_report: s.isSourceReport === undefined || s.isSourceReport === null ? null : s.isSourceReport ? 1 : 0,
    meta: json(s.meta), spec: json(s.spec), sql_query: s.sqlQuery ?? null, python_code: s.pythonCode ?? null,
    fill_missing_rows: json(s.fillMissingRows), period_comparisons: json(s.periodComparisons), preferences: json(s.preferences),
  };
}

/** `GET /api/v1/dashboards/{publicId}/versions`: every published version, newest first. */
export async function listVersions(ctx: ServiceContext, principal: PlatformUserPrincipal, publicId: string): Promise<DashboardVersion[]> {
  const row = await requireReadable(ctx, principal, publicId);
  return (await selectDashboardVersions(ctx.db, principal.accountId, row.id)).map((v: DashboardVersionRow) => ({
    versionNumber: v.version_number, title: v.title, publishedAt: v.published_at, publishedBy: v.published_by, current: v.version_number === row.version_number,
  }));
}

/** `POST /api/v1/dashboards/{publicId}/versions/{n}/restore`: version n copied into the draft (viewers see nothing until it is published). */
export async function restoreVersion(ctx: ServiceContext, principal: PlatformUserPrincipal, publicId: string, versionNumber: number, over: number | '*' | 'weak' | undefined): Promise<AuthoredDashboard> {
  const row = await requireEditable(ctx, principal, publicId);
  const version = await findDashboardVersion(ctx.db, principal.accountId, row.id, versionNumber);
  if (version === undefined) throw new AppError('not_found', `dashboard ${publicId} has no version ${versionNumber}`, 'versionNumber');
  if (over === 'weak' || (typeof over === 'number' && over !== row.draft_revision)) throw staleDraft(row.draft_revision);
  const draft: Draft = {
    title: version.title, description: version.description, allowEmbed: row.allow_embed !== 0,
    config: JSON.parse(version.config) as DashboardConfig, reportSnapshots: JSON.parse(version.report_snapshots) as SnapshotInput[],
  };
  const at = ctx.now().toISOString();
  await ctx.db.transaction().execute(async (trx) => {
    const next = await updateDraft(trx, principal.accountId, row.id, row.draft_revision, storedDraft(draft, at));
    if (next === undefined) throw staleDraft((await findDashboardByPublicId(trx, principal.accountId, publicId))!.draft_revision);
    await bumpAccountDataVersion(trx, principal.accountId);
    await audit(trx, ctx, principal, { action: 'dashboard.restore', publicId, from: versionNumber, to: null, detail: { draftRevision: next } });
  });
  return readAuthoredDashboard(ctx, principal, publicId);
}

/** `DELETE /api/v1/dashboards/{publicId}`: archived; viewers no longer open it; its comments, versions and draft stay. */
export async function archiveDashboard(ctx: ServiceContext, principal: PlatformUserPrincipal, publicId: string): Promise<void> {
  const row = await requireEditable(ctx, principal, publicId);
  if (row.status === 'archived') return;
  await ctx.db.transaction().execute(async (trx) => {
    await archiveDashboardRow(trx, principal.accountId, row.id, ctx.now().toISOString());
    await bumpAccountDataVersion(trx, principal.accountId);
    await audit(trx, ctx, principal, { action: 'dashboard.archive', publicId, from: row.version_number === 0 ? null : row.version_number, to: null });
  });
}

const staleDraft = (current: number): AppError => staleRevision('draft', current);
