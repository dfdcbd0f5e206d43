import type { Insertable, Kysely, Selectable } from 'kysely';
import { prepare } from '../db/db.prepared.js';
import type { Database } from '../db/db.schema.js';

export type DashboardRow = Selectable<Database['dashboards']>;
export type ReportSnapshotRow = Selectable<Database['report_snapshots']>;

/** Report snapshots of these dashboards, in their dashboard order. */
export async function selectReportSnapshots(db: Kysely<Database>, accountId: number, dashboardIds: readonly number[]): Promise<ReportSnapshotRow[]> {
  if (dashboardIds.length === 0) return [];
  return db
    .selectFrom('report_snapshots')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('dashboard_id', 'in', dashboardIds)
    .orderBy('dashboard_id')
    .orderBy('position')
    .execute();
}

/** The dashboard with this public id in the account, or undefined (another account's never resolves). */
export async function findDashboardByPublicId(db: Kysely<Database>, accountId: number, publicId: string): Promise<DashboardRow | undefined> {
  return dashboardByPublicId.first(db, { accountId, publicId });
}

const dashboardByPublicId = prepare((db, p: { accountId: number; publicId: string }) =>
  db.selectFrom('dashboards').selectAll().where('account_id', '=', p.accountId).where('public_id', '=', p.publicId));

/** The dashboard of a workbook of a deployment in the account, or undefined. */
export async function findDashboardByWorkbook(db: Kysely<Database>, accountId: number, deploymentId: number, workbookId: number): Promise<DashboardRow | undefined> {
  return dashboardByWorkbook.first(db, { accountId, deploymentId, workbookId });
}

const dashboardByWorkbook = prepare((db, p: { accountId: number; deploymentId: number; workbookId: number }) =>
  db.selectFrom('dashboards').selectAll()
    .where('account_id', '=', p.accountId).where('deployment_id', '=', p.deploymentId).where('workbook_id', '=', p.workbookId));

/** Which of these publicIds name a dashboard of the deployment in the account. */
export async function selectPublicIdsOfDeployment(db: Kysely<Database>, accountId: number, deploymentId: number, publicIds: readonly string[]): Promise<string[]> {
  if (publicIds.length === 0) return [];
  const rows = await db.selectFrom('dashboards').select('public_id')
    .where('account_id', '=', accountId).where('deployment_id', '=', deploymentId).where('public_id', 'in', publicIds).execute();
  return rows.map((row) => row.public_id);
}

/** The account of a dashboard public id (unique across accounts). */
export async function findAccountOfPublicId(db: Kysely<Database>, publicId: string): Promise<number | undefined> {
  const row = await db.selectFrom('dashboards').select('account_id').where('public_id', '=', publicId).executeTakeFirst();
  return row?.account_id;
}

/** The published dashboards of a deployment with their configs, for the check that a model change breaks none. */
export async function selectPublishedDashboards(db: Kysely<Database>, accountId: number, deploymentId: number): Promise<Array<{ id: number; public_id: string; config: string }>> {
  return db.selectFrom('dashboards').select(['id', 'public_id', 'config'])
    .where('account_id', '=', accountId).where('deployment_id', '=', deploymentId).where('status', '=', 'published').orderBy('id').execute();
}

// The authoring API's writes (issue 33; dashboards.authoring.ts): drafts, publishing, versions, archiving. Each runs
// inside the caller's transaction (`db` is it), and each conditional write answers whether it happened.

export type DashboardVersionRow = Selectable<Database['dashboard_versions']>;
type NewRow<T extends keyof Database> = Insertable<Database[T]>;

export async function insertDashboard(db: Kysely<Database>, row: NewRow<'dashboards'>): Promise<number> {
  return (await db.insertInto('dashboards').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

/** Whether a dashboard of any account has this public id (they are unique across accounts). */
export async function publicIdTaken(db: Kysely<Database>, publicId: string): Promise<boolean> {
  return (await db.selectFrom('dashboards').select('id').where('public_id', '=', publicId).executeTakeFirst()) !== undefined;
}

/**
 * Writes the draft (its config, and the rest of it as JSON; both null: no draft) over revision `over` and raises
 * the revision: the new revision, or undefined when the draft is no longer at `over`.
 */
export async function updateDraft(
  db: Kysely<Database>, accountId: number, dashboardId: number, over: number, draft: { config: string | null; document: string | null; updatedAt: string },
): Promise<number | undefined> {
  const row = await db.updateTable('dashboards')
    .set((eb) => ({ draft_config: draft.config, draft_document: draft.document, draft_revision: eb('draft_revision', '+', 1), updated_at: draft.updatedAt }))
    .where('account_id', '=', accountId).where('id', '=', dashboardId).where('draft_revision', '=', over)
    .returning('draft_revision').executeTakeFirst();
  return row?.draft_revision;
}

/** Makes a version current: the dashboard shows it, published, and its draft is gone (over revision `over`). */
export async function updatePublished(
  db: Kysely<Database>, accountId: number, dashboardId: number, over: number,
  published: { title: string | null; description: string | null; config: string; allowEmbed: boolean; versionNumber: number; versionId: number; updatedAt: string },
): Promise<number | undefined> {
  const row = await db.updateTable('dashboards')
    .set((eb) => ({
      title: published.title, description: published.description, config: published.config, allow_embed: published.allowEmbed ? 1 : 0, status: 'published',
      version_number: published.versionNumber, version_id: published.versionId, draft_config: null, draft_document: null,
      draft_revision: eb('draft_revision', '+', 1), updated_at: published.updatedAt,
    }))
    .where('account_id', '=', accountId).where('id', '=', dashboardId).where('draft_revision', '=', over)
    .returning('draft_revision').executeTakeFirst();
  return row?.draft_revision;
}

/** Replaces the report snapshots a dashboard shows, in their order. */
export async function replaceReportSnapshots(db: Kysely<Database>, accountId: number, dashboardId: number, rows: ReadonlyArray<NewRow<'report_snapshots'>>): Promise<void> {
  await db.deleteFrom('report_snapshots').where('account_id', '=', accountId).where('dashboard_id', '=', dashboardId).execute();
  if (rows.length > 0) await db.insertInto('report_snapshots').values([...rows]).execute();
}

export async function insertDashboardVersion(db: Kysely<Database>, row: NewRow<'dashboard_versions'>): Promise<number> {
  return (await db.insertInto('dashboard_versions').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

/** A dashboard's published versions, newest first. */
export async function selectDashboardVersions(db: Kysely<Database>, accountId: number, dashboardId: number): Promise<DashboardVersionRow[]> {
  return db.selectFrom('dashboard_versions').selectAll().where('account_id', '=', accountId).where('dashboard_id', '=', dashboardId).orderBy('version_number', 'desc').execute();
}

export async function findDashboardVersion(db: Kysely<Database>, accountId: number, dashboardId: number, versionNumber: number): Promise<DashboardVersionRow | undefined> {
  return db.selectFrom('dashboard_versions').selectAll()
    .where('account_id', '=', accountId).where('dashboard_id', '=', dashboardId).where('version_number', '=', versionNumber).executeTakeFirst();
}

/** Archives a dashboard (viewers no longer open it; its comments, versions and draft stay). */
export async function archiveDashboardRow(db: Kysely<Database>, accountId: number, dashboardId: number, updatedAt: string): Promise<void> {
  await db.updateTable('dashboards').set({ status: 'archived', updated_at: updatedAt }).where('account_id', '=', accountId).where('id', '=', dashboardId).execute();
}
