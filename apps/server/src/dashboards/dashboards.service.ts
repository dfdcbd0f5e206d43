import type { EmbedPrincipal, PlatformUserPrincipal } from '../core/core.principal.js';
import { AppError } from '../core/core.errors.js';
import { accessFactsOf, accessViewerOf, canAccessItem, reachesSubtree } from '../workspace/workspace.policy.js';
import { selectAncestorChain, selectGrantedItemIds } from '../workspace/workspace.store.js';
import type { ServiceContext } from '../db/db.context.js';
import { parseJson, presentDashboard } from '../workspace/workspace.presenter.js';
import type { Dashboard, DashboardConfig, ReportSnapshot } from '../workspace/workspace.dashboard-schema.js';
import { findDashboardByPublicId, findDashboardByWorkbook, selectReportSnapshots } from './dashboards.store.js';
import type { DashboardRow } from './dashboards.store.js';

/** A platform user as DESIGN "Access" sees them: the account, who, and their role. */
export type WorkspaceUser = Pick<PlatformUserPrincipal, 'accountId' | 'userId' | 'role'>;

/** Who reads a dashboard: an account, and the deployment an embed session is confined to (null: any). */
export interface DashboardReader {
  accountId: number;
  deploymentId: number | null;
  /**
   * A platform user's key or console session, or the platform user of an `internalId` embed session: their access
   * to the dashboard's workbook is checked too.
   */
  platformUser?: WorkspaceUser;
  /** The publicIds an embed session was limited to (Generate Session's `dashboards`); null or absent: no such limit. */
  dashboards?: readonly string[] | null;
  /** An admin's preview session's version ("View as a customer"): `draft` reads the dashboard's draft. */
  preview?: 'published' | 'draft';
}

/**
 * DESIGN: the dashboard `publicId` resolves only within the caller's account (404 otherwise, before any access
 * check); it is readable when published and embeddable, for an embed session in the session's deployment, and
 * for a platform user when DESIGN "Access" lets them reach its workbook (403 otherwise). Comments (SPEC B rule 10),
 * widget data, semantic queries and AI questions use the same check.
 */
export async function requireReadableDashboard(ctx: ServiceContext, reader: DashboardReader, publicId: string): Promise<DashboardRow> {
  return checkReadableDashboard(ctx, reader, publicId, (id) => findDashboardByPublicId(ctx.db, reader.accountId, id));
}

/** requireReadableDashboard with the dashboard found by `find` (the widget data path's is held in memory). */
export async function checkReadableDashboard<T extends DashboardRow>(ctx: ServiceContext, reader: DashboardReader, publicId: string, find: (publicId: string) => Promise<T | undefined>): Promise<T> {
  // No publicId holds U+0000 (nor can PostgreSQL compare one): such a path names nothing.
  const found = publicId.includes('\u0000') ? undefined : await find(publicId);
  if (found === undefined) throw new AppError('not_found', `dashboard ${publicId} not found`, 'publicId');
  // A draft preview reads the draft (a dashboard never published has one), and nothing else ever does.
  const dashboard = reader.preview === 'draft' && found.status !== 'archived' ? asDraft(found) : found;
  if (dashboard.status !== 'published') throw new AppError('forbidden', `dashboard ${publicId} is ${dashboard.status}, not published`, 'publicId');
  if (dashboard.allow_embed === 0) throw new AppError('forbidden', `dashboard ${publicId} does not allow embedding`, 'publicId');
  if (reader.deploymentId !== null && dashboard.deployment_id !== reader.deploymentId) {
    throw new AppError('forbidden', `dashboard ${publicId} belongs to another deployment than this session's`, 'publicId');
  }
  if (reader.dashboards !== undefined && reader.dashboards !== null && !reader.dashboards.includes(dashboard.public_id)) {
    throw new AppError('forbidden', `this session was minted for other dashboards than ${publicId} (Generate Session's dashboards)`, 'publicId');
  }
  if (reader.platformUser !== undefined && !(await canReachWorkbook(ctx, reader.platformUser, dashboard.workbook_id))) {
    throw new AppError('forbidden', `dashboard ${publicId} is on a workbook this user was not granted`, 'publicId');
  }
  return dashboard;
}

/** The draft's content in the row's place, as it will show once published; the row itself when it has no draft. */
function asDraft<T extends DashboardRow>(row: T): T {
  if (row.draft_document === null) return row;
  const document = JSON.parse(row.draft_document) as { title?: string | null; description?: string | null; allowEmbed?: boolean };
  const config = row.draft_config ?? row.config;
  return {
    ...row, status: 'published', config, title: document.title ?? null, description: document.description ?? null, allow_embed: document.allowEmbed === false ? 0 : 1,
    // The data path's held row carries its config parsed.
    ...('parsedConfig' in row ? { parsedConfig: parseJson<DashboardConfig>(config) ?? {} } : {}),
  };
}

/**
 * The report snapshots a draft preview shows: the draft's, numbered as the draft's checks number them (a snapshot
 * without a report yet gets a negative reportId); undefined when the reader reads the published version.
 */
export function previewSnapshots(reader: Pick<DashboardReader, 'preview'>, row: DashboardRow): ReportSnapshot[] | undefined {
  if (reader.preview !== 'draft' || row.draft_document === null) return undefined;
  const snapshots = (JSON.parse(row.draft_document) as { reportSnapshots?: Array<Omit<ReportSnapshot, 'id' | 'versionNumber'> & { reportId?: number | null }> }).reportSnapshots ?? [];
  return snapshots.map((snapshot, s) => ({ ...snapshot, id: s + 1, reportId: snapshot.reportId ?? -(s + 1), versionNumber: 1 }));
}

/**
 * DESIGN "Access" for a dashboard's workbook: read with workspace's store, decided by workspace's policy. An admin's
 * viewer reaches the whole account, so nothing about the workbook is read for one.
 */
export async function canReachWorkbook(ctx: ServiceContext, principal: WorkspaceUser, workbookId: number): Promise<boolean> {
  if (reachesSubtree(accessViewerOf(principal, []), [])) return true;
  const [granted, chain] = await Promise.all([
    selectGrantedItemIds(ctx.db, principal.accountId, principal.userId),
    selectAncestorChain(ctx.db, principal.accountId, workbookId),
  ]);
  return chain.length > 0 && canAccessItem(accessViewerOf(principal, granted), accessFactsOf(chain));
}

/** The reader a principal is: its account, and the deployment an embed session is confined to. */
export function readerOf(principal: PlatformUserPrincipal | EmbedPrincipal): DashboardReader {
  if (principal.kind === 'embed') {
    return {
      accountId: principal.accountId, deploymentId: principal.deploymentId, dashboards: principal.dashboards,
      ...(principal.preview !== undefined ? { preview: principal.preview } : {}),
      ...(principal.userId !== null && principal.userRole !== null ? { platformUser: { accountId: principal.accountId, userId: principal.userId, role: principal.userRole } } : {}),
    };
  }
  return { accountId: principal.accountId, deploymentId: null, platformUser: principal };
}

export async function readDashboard(ctx: ServiceContext, principal: PlatformUserPrincipal | EmbedPrincipal, publicId: string): Promise<Dashboard> {
  const reader = readerOf(principal);
  const dashboard = await requireReadableDashboard(ctx, reader, publicId);
  const drafted = previewSnapshots(reader, dashboard);
  if (drafted !== undefined) return { ...presentDashboard(dashboard, []), reportSnapshots: drafted };
  return presentDashboard(dashboard, await selectReportSnapshots(ctx.db, principal.accountId, [dashboard.id]));
}

/**
 * The dashboard of a workbook, for the in-embed path `/embed/d/<deployment_id>/app/workbook/<workbook_id>` (SPEC
 * "Embed URL shape"): found by workbook in the caller's account (404 otherwise), then the same checks as by publicId.
 */
export async function readWorkbookDashboard(ctx: ServiceContext, principal: PlatformUserPrincipal | EmbedPrincipal, deploymentId: number, workbookId: number): Promise<Dashboard> {
  const row = await findDashboardByWorkbook(ctx.db, principal.accountId, deploymentId, workbookId);
  if (row === undefined) throw new AppError('not_found', `workbook ${workbookId} of deployment ${deploymentId} has no dashboard`, 'workbookId');
  return readDashboard(ctx, principal, row.public_id);
}
