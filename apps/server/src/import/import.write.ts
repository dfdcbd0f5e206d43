import type { Transaction } from 'kysely';
import { normalizeEmail, normalizeExternalId } from '../accounts/accounts.identity.js';
import { digestSecret } from '../core/core.digest.js';
import { hashPassword } from '../accounts/accounts.passwords.js';
import type { Sealer } from '../core/core.sealed.js';
import { sealDataSource } from '../data/warehouse/warehouse.sources.js';
import type { Database } from '../db/db.schema.js';
import { foldSearchKey } from '../db/db.search-key.js';
import { normalizeTimestamp } from './import.check.js';
import type { PlannedItem } from './import.check.js';
import type { ImportDashboard, ImportDeployment, ImportItem } from './import.deployment-schema.js';
import type { ImportAccount, ImportEmbedTenant, ImportGroup, ImportUser } from './import.schema.js';
import {
  insertAccount, insertApiKey, insertDashboard, insertDeployment, insertEmbedTenant, insertEmbedUser, insertGroup, insertGroupMember,
  insertDashboardVersion, insertItem, insertItemAncestors, insertItemFavoriteIfAbsent, insertItemGrant, insertReportSnapshot, insertUser, upsertItemView,
} from './import.store.js';

// Writing one checked account of an import file (DESIGN.md "The import file"), inside the import's transaction.
// Rows are written in the file's order, each after the rows it points at; every ref gets the id of its row.

/** One account's write: where it goes, the ids given so far by ref, and what the checks planned. */
interface AccountWrite {
  trx: Transaction<Database>;
  accountId: number;
  userIds: Map<string, number>;
  groupIds: Map<string, number>;
  planned: Map<ImportItem, PlannedItem>;
  refs: Record<string, number>;
  now: string;
  /** Seals the deployments' data sources (SVC_ENCRYPTION_KEY). */
  sealer: Sealer;
}

/** A workbook's dashboard, written once every item of its deployment (the reports it shows) has an id. */
interface PendingDashboard {
  dashboard: ImportDashboard;
  workbookId: number;
  createdBy: number | null;
  createdAt: string;
  updatedAt: string;
}

const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));
const bool = (value: boolean | null | undefined): number | null => (value === undefined || value === null ? null : value ? 1 : 0);

function setRef(refs: Record<string, number>, ref: string | undefined, id: number, ids?: Map<string, number>): void {
  if (ref === undefined) return;
  ids?.set(ref, id);
  refs[ref] = id;
}

/** Writes an account checked by `checkFile` and records the id of each of its refs in `refs`. */
export async function writeAccount(
  trx: Transaction<Database>,
  account: ImportAccount,
  planned: Map<ImportItem, PlannedItem>,
  refs: Record<string, number>,
  now: string,
  sealer: Sealer,
): Promise<void> {
  const accountId = await insertAccount(trx, { name: account.name, tenant_name: account.tenantName, settings: JSON.stringify(account.settings ?? {}), created_at: now });
  setRef(refs, account.ref, accountId);
  const w: AccountWrite = { trx, accountId, userIds: new Map(), groupIds: new Map(), planned, refs, now, sealer };
  await writeUsers(w, account.users ?? []);
  await writeGroups(w, account.groups ?? []);
  for (const deployment of account.deployments ?? []) await writeDeployment(w, deployment);
  await writeEmbedTenants(w, account.embedTenants ?? []);
}

/** Platform users, each with its password's hash and its API keys' digests. */
async function writeUsers(w: AccountWrite, users: ImportUser[]): Promise<void> {
  for (const user of users) {
    const password = user.password === undefined ? null : await hashPassword(user.password);
    const id = await insertUser(w.trx, {
      account_id: w.accountId, email: normalizeEmail(user.email), first_name: user.firstName ?? null,
      picture: user.picture ?? null, role: user.role, password_digest: password, created_at: w.now,
    });
    setRef(w.refs, user.ref, id, w.userIds);
    for (const key of user.apiKeys ?? []) {
      await insertApiKey(w.trx, { account_id: w.accountId, user_id: id, digest: digestSecret(key), hint: key.slice(-4), created_at: w.now });
    }
  }
}

/** Groups and their members; a member named twice is written once. */
async function writeGroups(w: AccountWrite, groups: ImportGroup[]): Promise<void> {
  for (const group of groups) {
    const id = await insertGroup(w.trx, { account_id: w.accountId, name: group.name });
    setRef(w.refs, group.ref, id, w.groupIds);
    for (const member of new Set(group.members ?? [])) {
      await insertGroupMember(w.trx, { account_id: w.accountId, group_id: id, user_id: w.userIds.get(member)! });
    }
  }
}

/** A deployment with its data source and semantic views, then its items, dashboards, views and favourites. */
async function writeDeployment(w: AccountWrite, deployment: ImportDeployment): Promise<void> {
  const deploymentId = await insertDeployment(w.trx, {
    account_id: w.accountId, name: deployment.name, created_at: w.now,
    // Sealed at rest: a PostgreSQL source's URL may carry its password (docs/operations.md "Secrets at rest").
    data_source: deployment.dataSource === undefined ? null : sealDataSource(deployment.dataSource, w.sealer),
    semantic_views: deployment.semanticViews === undefined ? null : JSON.stringify(deployment.semanticViews),
  });
  setRef(w.refs, deployment.ref, deploymentId);
  const itemIds = new Map<string, number>();
  const dashboards: PendingDashboard[] = [];
  await writeItems(w, deploymentId, deployment.items ?? [], [], itemIds, dashboards);
  await writeDashboards(w, deploymentId, dashboards, itemIds);
  await writeViewsAndFavorites(w, deployment, itemIds);
}

/**
 * The item tree, depth first: each item, its ancestor rows (`ancestorsOfParent` is the parent's, itself first;
 * empty at the root) and its grants, then its children. Collects the workbooks' dashboards in `dashboards`.
 */
async function writeItems(
  w: AccountWrite,
  deploymentId: number,
  items: ImportItem[],
  ancestorsOfParent: number[],
  itemIds: Map<string, number>,
  dashboards: PendingDashboard[],
): Promise<void> {
  for (const item of items) {
    const plan = w.planned.get(item)!;
    const createdBy = item.createdBy === undefined ? null : w.userIds.get(item.createdBy)!;
    const id = await insertItem(w.trx, {
      account_id: w.accountId, deployment_id: deploymentId, type: item.type, is_folder: item.type === 'FOLDER' ? 1 : 0,
      name: item.name, name_key: foldSearchKey(item.name), folder_id: ancestorsOfParent[0] ?? null, depth: plan.depth, created_by: createdBy,
      created_at: plan.createdAt, updated_at: plan.updatedAt, meta: JSON.stringify(item.meta ?? {}),
      calculated_fields: JSON.stringify(item.calculatedFields ?? {}), slug: item.slug ?? null,
    });
    setRef(w.refs, item.ref, id, itemIds);
    const ancestors = [id, ...ancestorsOfParent];
    await insertItemAncestors(w.trx, ancestors.map((ancestorId, distance) => ({ account_id: w.accountId, item_id: id, ancestor_id: ancestorId, distance })));
    for (const grant of item.grants ?? []) {
      await insertItemGrant(w.trx, {
        account_id: w.accountId, item_id: id,
        user_id: grant.user === undefined ? null : w.userIds.get(grant.user)!,
        group_id: grant.group === undefined ? null : w.groupIds.get(grant.group)!,
        role: grant.role ?? 'viewer',
      });
    }
    if (item.dashboard) dashboards.push({ dashboard: item.dashboard, workbookId: id, createdBy, createdAt: plan.createdAt, updatedAt: plan.updatedAt });
    if (item.children) await writeItems(w, deploymentId, item.children, ancestors, itemIds, dashboards);
  }
}

/** Each dashboard (taking its workbook's owner and timestamps) and its report snapshots, in the file's order. */
async function writeDashboards(w: AccountWrite, deploymentId: number, dashboards: PendingDashboard[], itemIds: Map<string, number>): Promise<void> {
  for (const { dashboard, workbookId, createdBy, createdAt, updatedAt } of dashboards) {
    const versionNumber = dashboard.versionNumber ?? 1;
    const id = await insertDashboard(w.trx, {
      account_id: w.accountId, deployment_id: deploymentId, workbook_id: workbookId, public_id: dashboard.publicId,
      status: dashboard.status ?? 'draft', allow_embed: dashboard.allowEmbed ? 1 : 0, title: dashboard.title ?? null,
      description: dashboard.description ?? null, config: JSON.stringify(dashboard.config ?? {}), draft_config: json(dashboard.draftConfig),
      version_number: versionNumber, version_id: versionNumber, created_by: createdBy,
      from_shared_workspace: bool(dashboard.fromSharedWorkspace), restrict_data_download: bool(dashboard.restrictDataDownload),
      use_board_dashboards: bool(dashboard.useBoardDashboards), created_at: createdAt, updated_at: updatedAt,
    });
    // A published dashboard's version is kept whole, as the authoring API keeps each one it publishes, so that it
    // can be restored into a draft (docs/authoring.md "Versions").
    if ((dashboard.status ?? 'draft') === 'published') {
      await insertDashboardVersion(w.trx, {
        account_id: w.accountId, dashboard_id: id, version_number: versionNumber, title: dashboard.title ?? null, description: dashboard.description ?? null,
        config: JSON.stringify(dashboard.config ?? {}), published_by: createdBy, published_at: updatedAt,
        report_snapshots: JSON.stringify((dashboard.reportSnapshots ?? []).map(({ report, versionNumber: _v, ...rest }) => ({ ...rest, reportId: itemIds.get(report)! }))),
      });
    }
    for (const [position, s] of (dashboard.reportSnapshots ?? []).entries()) {
      await insertReportSnapshot(w.trx, {
        account_id: w.accountId, dashboard_id: id, report_id: itemIds.get(s.report)!,
        position, version_number: s.versionNumber ?? 1, name: s.name ?? null, title: s.title ?? null, description: s.description ?? null,
        kind: s.kind ?? null, is_source_report: bool(s.isSourceReport), meta: json(s.meta),
        spec: json(s.spec), sql_query: s.sqlQuery ?? null, python_code: s.pythonCode ?? null,
        fill_missing_rows: json(s.fillMissingRows), period_comparisons: json(s.periodComparisons), preferences: json(s.preferences),
      });
    }
  }
}

async function writeViewsAndFavorites(w: AccountWrite, { views, favorites }: ImportDeployment, itemIds: Map<string, number>): Promise<void> {
  for (const view of views ?? []) {
    await upsertItemView(w.trx, { account_id: w.accountId, user_id: w.userIds.get(view.user)!, item_id: itemIds.get(view.item)!, viewed_at: normalizeTimestamp(view.at, '') });
  }
  for (const favorite of favorites ?? []) {
    await insertItemFavoriteIfAbsent(w.trx, { account_id: w.accountId, user_id: w.userIds.get(favorite.user)!, item_id: itemIds.get(favorite.item)!, created_at: w.now });
  }
}

/** Embed tenants and their users; a username defaults to the (normalised) externalId. */
async function writeEmbedTenants(w: AccountWrite, tenants: ImportEmbedTenant[]): Promise<void> {
  for (const tenant of tenants) {
    const tenantId = await insertEmbedTenant(w.trx, { account_id: w.accountId, name: tenant.name, created_at: w.now });
    for (const user of tenant.users ?? []) {
      const externalId = normalizeExternalId(user.externalId);
      const id = await insertEmbedUser(w.trx, {
        account_id: w.accountId, embed_tenant_id: tenantId, external_id: externalId, username: user.username ?? externalId,
        username_key: foldSearchKey(user.username ?? externalId), email: user.email ?? null, email_key: foldSearchKey(user.email ?? ''),
        first_name: user.firstName ?? null, created_at: w.now, updated_at: w.now,
      });
      setRef(w.refs, user.ref, id);
    }
  }
}
