import type { Kysely, Selectable } from 'kysely';
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
