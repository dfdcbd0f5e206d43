import type { Kysely } from 'kysely';
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

/** The accounts of the database (or the one of `tenantName`) as an import file. */
export async function exportAccounts(db: Kysely<Database>, sealer: Sealer, tenantName?: string): Promise<ImportFile> {
  let query = db.selectFrom('accounts').selectAll().orderBy('id');
  if (tenantName !== undefined) query = query.where('tenant_name', '=', tenantName);
  const accounts = await query.execute();
  const out: ImportAccount[] = [];
  for (const account of accounts) out.push(await exportAccount(db, sealer, account));
  return { accounts: out };
}

async function exportAccount(db: Kysely<Database>, sealer: Sealer, account: { id: number; name: string; tenant_name: string; settings: string }): Promise<ImportAccount> {
  const accountId = account.id;
  const users = await db.selectFrom('users').select(['id', 'email', 'first_name', 'picture', 'role']).where('account_id', '=', accountId).orderBy('id').execute();
  const userRef = new Map(users.map((u, i) => [u.id, `user-${i + 1}`]));
  const groups = await db.selectFrom('groups').select(['id', 'name']).where('account_id', '=', accountId).orderBy('id').execute();
  const groupRef = new Map(groups.map((g, i) => [g.id, `group-${i + 1}`]));
  const members = await db.selectFrom('group_members').select(['group_id', 'user_id']).where('account_id', '=', accountId).orderBy('user_id').execute();
  const deployments = await db.selectFrom('deployments').select(['id', 'name', 'data_source', 'semantic_views']).where('account_id', '=', accountId).orderBy('id').execute();
  const refs = { next: 1 };
  const exported = [];
  for (const [d, deployment] of deployments.entries()) exported.push(await exportDeployment(db, sealer, accountId, deployment, `deployment-${d + 1}`, userRef, groupRef, refs));
  const tenants = await db.selectFrom('embed_tenants').select(['id', 'name']).where('account_id', '=', accountId).orderBy('id').execute();
  const embedUsers = await db.selectFrom('embed_users').select(['embed_tenant_id', 'external_id', 'username', 'email', 'first_name']).where('account_id', '=', accountId).orderBy('id').execute();
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

async function exportDeployment(
  db: Kysely<Database>, sealer: Sealer, accountId: number, deployment: { id: number; name: string; data_source: string | null; semantic_views: string | null },
  ref: string, userRef: Map<number, string>, groupRef: Map<number, string>, refs: { next: number },
) {
  const items = await db.selectFrom('workspace_items').selectAll().where('account_id', '=', accountId).where('deployment_id', '=', deployment.id).orderBy('id').execute();
  const itemRef = new Map(items.map((item) => [item.id, `item-${refs.next++}`]));
  const grants = await db.selectFrom('item_grants').select(['item_id', 'user_id', 'group_id']).where('account_id', '=', accountId).orderBy('id').execute();
  const dashboards = await db.selectFrom('dashboards').selectAll().where('account_id', '=', accountId).where('deployment_id', '=', deployment.id).execute();
  const snapshots = await db.selectFrom('report_snapshots').selectAll().where('account_id', '=', accountId).orderBy('dashboard_id').orderBy('position').execute();
  const views = await db.selectFrom('item_views').select(['user_id', 'item_id', 'viewed_at']).where('account_id', '=', accountId).orderBy('user_id').orderBy('item_id').execute();
  const favorites = await db.selectFrom('item_favorites').select(['user_id', 'item_id']).where('account_id', '=', accountId).orderBy('user_id').orderBy('item_id').execute();

  const dashboardOf = (workbookId: number): ImportDashboard | undefined => {
    const row = dashboards.find((d) => d.workbook_id === workbookId);
    if (row === undefined) return undefined;
    return compact({
      publicId: row.public_id, status: row.status, allowEmbed: row.allow_embed !== 0, title: row.title, description: row.description,
      config: parse<Record<string, unknown>>(row.config), draftConfig: parse<Record<string, unknown>>(row.draft_config), versionNumber: row.version_number,
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
      grants: grants.filter((g) => g.item_id === row.id).map((g) => (g.user_id !== null ? { user: userRef.get(g.user_id)! } : { group: groupRef.get(g.group_id!)! })),
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
