import type { Selectable } from 'kysely';
import type { Database } from '../db/db.schema.js';
import type { Dashboard, DashboardConfig, ReportSnapshot } from './workspace.dashboard-schema.js';

// SPEC A's Dashboard from its rows: the listing's workbooks carry it, and dashboards/ answers it. The rows are those
// dashboards.store reads (its tables).
/** A dashboard row as SPEC A presents it: the authoring draft's own columns (migration 0014) are not part of it. */
export type DashboardRow = Omit<Selectable<Database['dashboards']>, 'draft_document' | 'draft_revision'>;
type ReportSnapshotRow = Selectable<Database['report_snapshots']>;

/** Parses a JSON text column written by svc itself. */
export function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

const toBool = (value: number | null): boolean | null => (value === null ? null : value !== 0);

export function presentReportSnapshot(row: ReportSnapshotRow): ReportSnapshot {
  return {
    id: row.id,
    reportId: row.report_id,
    versionNumber: row.version_number,
    name: row.name,
    title: row.title,
    description: row.description,
    kind: row.kind as ReportSnapshot['kind'],
    isSourceReport: toBool(row.is_source_report),
    meta: parseJson(row.meta),
    spec: parseJson(row.spec),
    sqlQuery: row.sql_query,
    pythonCode: row.python_code,
    fillMissingRows: parseJson(row.fill_missing_rows),
    periodComparisons: parseJson(row.period_comparisons),
    preferences: parseJson(row.preferences),
  };
}

/** The Dashboard schema of SPEC.md from its row and its report snapshots. */
export function presentDashboard(row: DashboardRow, snapshots: readonly ReportSnapshotRow[]): Dashboard {
  return {
    id: row.id,
    publicId: row.public_id,
    deploymentId: row.deployment_id,
    workbookId: row.workbook_id,
    status: row.status,
    allowEmbed: row.allow_embed !== 0,
    config: parseJson<DashboardConfig>(row.config) ?? {},
    versionNumber: row.version_number,
    versionId: row.version_id,
    reportSnapshots: snapshots.map(presentReportSnapshot),
    createdBy: row.created_by,
    description: row.description,
    title: row.title,
    fromSharedWorkspace: toBool(row.from_shared_workspace),
    restrictDataDownload: toBool(row.restrict_data_download),
    useBoardDashboards: toBool(row.use_board_dashboards),
  };
}

/** The draft config of a dashboard: its own draft when one was saved, else the current config. */
export function draftConfigOf(row: DashboardRow): DashboardConfig {
  return parseJson<DashboardConfig>(row.draft_config ?? row.config) ?? {};
}
