import type { Kysely, Selectable } from 'kysely';
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
