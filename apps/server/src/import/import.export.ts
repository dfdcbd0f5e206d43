import type { Kysely } from 'kysely';
import { selectAccountRows, selectAccountsToExport } from './import.store.js';
import type { Sealer } from '../core/core.sealed.js';
import { openDataSource, redactDataSource } from '../data/warehouse/warehouse.sources.js';
import type { Database } from '../db/db.schema.js';
import type { ImportDashboard, ImportItem, ImportReportSnapshot } from './import.deployment-schema.js';
import type { ImportAccount, ImportFile } from './import.schema.js';

// `svc export` (issue 33; docs/import.md "Export"): the inverse of the import. It writes what `svc import` reads, for
// one account or all, so that a team keeps its dashboards in git and promotes them from staging to production.
// What the file cannot or must not carry stays out: API keys and passwords (digests only are stored), a PostgreSQL
// password (shown as ****, which the import refuses until it is given back), comments, sessions, webhook endpoints,
// authoring drafts beyond draftConfig, past versions and the audit log. Refs are made from the order of the rows
// (`user-1`, `item-3`), so that exporting what an export imported gives the same file.

const parse = <T>(text: string | null): T | undefined => (text === null ? undefined : (JSON.parse(text) as T));
const bool = (value: number | null): boolean | undefined => (value === null ? undefined : value !== 0);
/** An object without its undefined and null fields: the import's defaults are what is left out. */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as T;
}
const isEmptyObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;

/**
 * A dashboard config whose widgets name their snapshot by a number that means the same in any database: a widget's
 * `config.reportId` is the id of a REPORT item of this database, which an import or a promotion into another
 * database could not resolve (or would resolve to another report), so it is written as `config.snapshotIndex`, the
 * position of that snapshot in the dashboard's `reportSnapshots` (`reportIds`, in order), which picks the same
 * snapshot (data.snapshot's snapshotOf). A reportId that names none of the dashboard's snapshots is left as it is.
 */
function portableConfig(config: Record<string, unknown> | undefined, reportIds: readonly number[]): Record<string, unknown> | undefined {
  const widgets = config?.widgets;
  if (!Array.isArray(widgets)) return config;
  return {
    ...config,
    widgets: widgets.map((widget: unknown) => {
      const own = (widget as { config?: unknown }).config;
      if (typeof own !== 'object' || own === null) return widget;
      const { reportId, ...rest } = own as { reportId?: unknown };
      const index = typeof reportId === 'number' ? reportIds.indexOf(reportId) : -1;
      return index < 0 ? widget : { ...(widget as object), config: { ...rest, snapshotIndex: index } };
    }),
  };
}

/** The accounts of the database (or the one of `tenantName`) as an import file. */
export async function exportAccounts(db: Kysely<Database>, sealer: Sealer, tenantName?: string): Promise<ImportFile> {
  const out: ImportAccount[] = [];
  for (const account of await selectAccountsToExport(db, tenantName)) out.push(exportAccount(sealer, account, await selectAccountRows(db, account.id)));
  return { accounts: out };
}

type AccountRows = Awaited<ReturnType<typeof selectAccountRows>>;

function exportAccount(sealer: Sealer, account: { id: number; name: string; tenant_name: string; settings: string }, rows: AccountRows): ImportAccount {
  const { users, groups, members, deployments, tenants, embedUsers } = rows;
  const userRef = new Map(users.map((u, i) => [u.id, `user-${i + 1}`]));
  const groupRef = new Map(groups.map((g, i) => [g.id, `group-${i + 1}`]));
  const refs = { next: 1 };
  const exported = deployments.map((deployment, d) => exportDeployment(sealer, rows, deployment, `deployment-${d + 1}`, userRef, groupRef, refs));
  const settings = parse<Record<string, unknown>>(account.settings) ?? {};
  return compact({
    name: account.name,
    tenantName: account.tenant_name,
    settings: isEmptyObject(settings) ? undefined : settings,
    users: users.map((u) => compact({ ref: userRef.get(u.id)!, email: u.email, firstName: u.first_name, picture: u.picture, role: u.role as 'admin' | 'member' })),
    groups: groups.length === 0 ? undefined : groups.map((g) => compact({
      ref: groupRef.get(g.id)!, name: g.name, members: members.filter((m) => m.group_id === g.id).map((m) => userRef.get(m.user_id)!),
    })),
    deployments: exported,
    embedTenants: tenants.length === 0 ? undefined : tenants.map((t) => compact({
      name: t.name,
      users: embedUsers.filter((u) => u.embed_tenant_id === t.id).map((u) => compact({
        externalId: u.external_id, username: u.username === u.external_id ? undefined : u.username, email: u.email, firstName: u.first_name,
      })),
    })),
  }) as ImportAccount;
}

function exportDeployment(
  sealer: Sealer, rows: AccountRows, deployment: AccountRows['deployments'][number],
  ref: string, userRef: Map<number, string>, groupRef: Map<number, string>, refs: { next: number },
) {
  const { grants, snapshots, views, favorites } = rows;
  const items = rows.items.filter((item) => item.deployment_id === deployment.id);
  const itemRef = new Map(items.map((item) => [item.id, `item-${refs.next++}`]));
  const dashboards = rows.dashboards.filter((d) => d.deployment_id === deployment.id);

  const dashboardOf = (workbookId: number): ImportDashboard | undefined => {
    const row = dashboards.find((d) => d.workbook_id === workbookId);
    if (row === undefined) return undefined;
    return compact({
      publicId: row.public_id, status: row.status, allowEmbed: row.allow_embed !== 0, title: row.title, description: row.description,
      config: portableConfig(parse<Record<string, unknown>>(row.config), snapshots.filter((s) => s.dashboard_id === row.id).map((s) => s.report_id)), draftConfig: parse<Record<string, unknown>>(row.draft_config), versionNumber: row.version_number,
      fromSharedWorkspace: bool(row.from_shared_workspace), restrictDataDownload: bool(row.restrict_data_download), useBoardDashboards: bool(row.use_board_dashboards),
      reportSnapshots: snapshots.filter((s) => s.dashboard_id === row.id).map((s): ImportReportSnapshot => compact({
        report: itemRef.get(s.report_id)!, versionNumber: s.version_number, name: s.name, title: s.title, description: s.description, kind: s.kind,
        isSourceReport: bool(s.is_source_report), meta: parse(s.meta), spec: parse(s.spec), sqlQuery: s.sql_query, pythonCode: s.python_code,
        fillMissingRows: parse(s.fill_missing_rows), periodComparisons: parse(s.period_comparisons), preferences: parse(s.preferences),
      })),
    }) as ImportDashboard;
  };
  const itemOf = (row: (typeof items)[number]): ImportItem => {
    const meta = parse<Record<string, unknown>>(row.meta) ?? {};
    const calculatedFields = parse<Record<string, unknown>>(row.calculated_fields) ?? {};
    const children = items.filter((child) => child.folder_id === row.id);
    return compact({
      ref: itemRef.get(row.id)!, type: row.type, name: row.name, createdBy: row.created_by === null ? undefined : userRef.get(row.created_by),
      createdAt: row.created_at, updatedAt: row.updated_at, meta: isEmptyObject(meta) ? undefined : meta,
      calculatedFields: isEmptyObject(calculatedFields) ? undefined : calculatedFields, slug: row.slug,
      // A viewer grant is written as it was before roles (the default), so an import file without roles round-trips.
      grants: grants.filter((g) => g.item_id === row.id).map((g) => ({
        ...(g.user_id !== null ? { user: userRef.get(g.user_id)! } : { group: groupRef.get(g.group_id!)! }),
        ...(g.role === 'editor' ? { role: 'editor' as const } : {}),
      })),
      children: row.is_folder === 1 ? children.map(itemOf) : undefined,
      dashboard: dashboardOf(row.id),
    }) as ImportItem;
  };
  const tidy = (item: ImportItem): ImportItem => (item.grants?.length === 0 ? (({ grants: _g, ...rest }) => rest)(item) as ImportItem : item);
  const walk = (item: ImportItem): ImportItem => tidy({ ...item, ...(item.children !== undefined ? { children: item.children.map(walk) } : {}) });
  const inDeployment = (itemId: number) => itemRef.has(itemId);
  return compact({
    ref,
    name: deployment.name,
    dataSource: deployment.data_source === null ? undefined : redactDataSource(openDataSource(deployment.data_source, sealer)),
    semanticViews: parse(deployment.semantic_views),
    items: items.filter((item) => item.folder_id === null).map(itemOf).map(walk),
    views: views.filter((v) => inDeployment(v.item_id)).map((v) => ({ user: userRef.get(v.user_id)!, item: itemRef.get(v.item_id)!, at: v.viewed_at })),
    favorites: favorites.filter((f) => inDeployment(f.item_id)).map((f) => ({ user: userRef.get(f.user_id)!, item: itemRef.get(f.item_id)! })),
  });
}
