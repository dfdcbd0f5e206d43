import type { Kysely, Selectable } from 'kysely';
import type { Database, SavedVisibility } from '../db/db.schema.js';

// Issue 35 parts 3 and 4: the only file with SQL for saved charts and views. Every query is confined to one account,
// one deployment and one embed tenant (views: and one dashboard), and reads only what the caller may see: a private
// row of another author, or any row of another scope, looks exactly like one that does not exist.

export type SavedChartRow = Selectable<Database['saved_charts']>;
export type SavedViewRow = Selectable<Database['saved_views']>;

/** Where saved charts live: one account, deployment and embed tenant. */
export interface ChartScope {
  accountId: number;
  deploymentId: number;
  embedTenantId: number;
}

/** Where a dashboard's saved views live: a chart scope and the dashboard. */
export interface ViewScope extends ChartScope {
  dashboardId: number;
}

/** A keyset position of a list, newest first. */
export interface SavedPosition {
  createdAt: string;
  id: number;
}

/** A listed row, with its author's username. */
export type Authored<T> = T & { username: string };

/** Which rows a list returns: every visible one, or those of one visibility. */
export type VisibilityFilter = SavedVisibility | 'all';

// ---- saved charts ----

/** The chart `publicId` of the scope if `viewerId` may see it (theirs, or shared with the tenant); else undefined. */
export async function findVisibleChart(db: Kysely<Database>, scope: ChartScope, publicId: string, viewerId: number): Promise<Authored<SavedChartRow> | undefined> {
  return db.selectFrom('saved_charts as c')
    .innerJoin('embed_users as u', 'u.id', 'c.embed_user_id')
    .selectAll('c').select('u.username')
    .where('c.public_id', '=', publicId)
    .where('c.account_id', '=', scope.accountId).where('c.deployment_id', '=', scope.deploymentId).where('c.embed_tenant_id', '=', scope.embedTenantId)
    .where((eb) => eb.or([eb('c.visibility', '=', 'tenant'), eb('c.embed_user_id', '=', viewerId)]))
    .executeTakeFirst();
}

/** The public ids among `publicIds` of charts of the scope that `viewerId` may see. */
export async function selectVisibleChartIds(db: Kysely<Database>, scope: ChartScope, publicIds: readonly string[], viewerId: number): Promise<Set<string>> {
  if (publicIds.length === 0) return new Set();
  const rows = await db.selectFrom('saved_charts').select('public_id')
    .where('public_id', 'in', [...new Set(publicIds)])
    .where('account_id', '=', scope.accountId).where('deployment_id', '=', scope.deploymentId).where('embed_tenant_id', '=', scope.embedTenantId)
    .where((eb) => eb.or([eb('visibility', '=', 'tenant'), eb('embed_user_id', '=', viewerId)]))
    .execute();
  return new Set(rows.map((row) => row.public_id));
}

/** One page of the charts `viewerId` may see in the scope, newest first (`limit` rows from after `after`). */
export async function selectVisibleCharts(
  db: Kysely<Database>, scope: ChartScope, viewerId: number, filter: VisibilityFilter, after: SavedPosition | null, limit: number,
): Promise<Array<Authored<SavedChartRow>>> {
  let query = db.selectFrom('saved_charts as c')
    .innerJoin('embed_users as u', 'u.id', 'c.embed_user_id')
    .selectAll('c').select('u.username')
    .where('c.account_id', '=', scope.accountId).where('c.deployment_id', '=', scope.deploymentId).where('c.embed_tenant_id', '=', scope.embedTenantId);
  if (filter === 'tenant') query = query.where('c.visibility', '=', 'tenant');
  else if (filter === 'private') query = query.where('c.visibility', '=', 'private').where('c.embed_user_id', '=', viewerId);
  else query = query.where((eb) => eb.or([eb('c.visibility', '=', 'tenant'), eb('c.embed_user_id', '=', viewerId)]));
  if (after !== null) {
    query = query.where((eb) => eb.or([eb('c.created_at', '<', after.createdAt), eb.and([eb('c.created_at', '=', after.createdAt), eb('c.id', '<', after.id)])]));
  }
  return query.orderBy('c.created_at', 'desc').orderBy('c.id', 'desc').limit(limit).execute();
}

export interface NewChart {
  publicId: string;
  embedUserId: number;
  title: string;
  query: string;
  kind: string;
  spec: string | null;
  visibility: SavedVisibility;
  at: string;
}

/** One statement: a chart is stored whole or not at all. */
export async function insertChart(db: Kysely<Database>, scope: ChartScope, chart: NewChart): Promise<SavedChartRow> {
  return db.insertInto('saved_charts').values({
    public_id: chart.publicId, account_id: scope.accountId, deployment_id: scope.deploymentId, embed_tenant_id: scope.embedTenantId,
    embed_user_id: chart.embedUserId, title: chart.title, query: chart.query, kind: chart.kind, spec: chart.spec, visibility: chart.visibility,
    created_at: chart.at, updated_at: chart.at,
  }).returningAll().executeTakeFirstOrThrow();
}

export interface ChartChanges {
  title?: string;
  query?: string;
  kind?: string;
  spec?: string | null;
  visibility?: SavedVisibility;
  updated_at: string;
}

/** Changes the author's chart in one statement; undefined if it is gone meanwhile (or not theirs). */
export async function updateChart(db: Kysely<Database>, scope: ChartScope, publicId: string, authorId: number, changes: ChartChanges): Promise<SavedChartRow | undefined> {
  return db.updateTable('saved_charts').set(changes)
    .where('public_id', '=', publicId).where('embed_user_id', '=', authorId)
    .where('account_id', '=', scope.accountId).where('deployment_id', '=', scope.deploymentId).where('embed_tenant_id', '=', scope.embedTenantId)
    .returningAll().executeTakeFirst();
}

/** Deletes the author's chart; whether it was there. */
export async function deleteChart(db: Kysely<Database>, scope: ChartScope, publicId: string, authorId: number): Promise<boolean> {
  const rows = await db.deleteFrom('saved_charts')
    .where('public_id', '=', publicId).where('embed_user_id', '=', authorId)
    .where('account_id', '=', scope.accountId).where('deployment_id', '=', scope.deploymentId).where('embed_tenant_id', '=', scope.embedTenantId)
    .returning('id').execute();
  return rows.length > 0;
}

// ---- saved views ----

/** The view `publicId` of the scope (its dashboard) if `viewerId` may see it; else undefined. */
export async function findVisibleView(db: Kysely<Database>, scope: ViewScope, publicId: string, viewerId: number): Promise<Authored<SavedViewRow> | undefined> {
  return db.selectFrom('saved_views as v')
    .innerJoin('embed_users as u', 'u.id', 'v.embed_user_id')
    .selectAll('v').select('u.username')
    .where('v.public_id', '=', publicId)
    .where('v.account_id', '=', scope.accountId).where('v.deployment_id', '=', scope.deploymentId).where('v.embed_tenant_id', '=', scope.embedTenantId)
    .where('v.dashboard_id', '=', scope.dashboardId)
    .where((eb) => eb.or([eb('v.visibility', '=', 'tenant'), eb('v.embed_user_id', '=', viewerId)]))
    .executeTakeFirst();
}

/** One page of the views of the dashboard `viewerId` may see, newest first. */
export async function selectVisibleViews(
  db: Kysely<Database>, scope: ViewScope, viewerId: number, filter: VisibilityFilter, after: SavedPosition | null, limit: number,
): Promise<Array<Authored<SavedViewRow>>> {
  let query = db.selectFrom('saved_views as v')
    .innerJoin('embed_users as u', 'u.id', 'v.embed_user_id')
    .selectAll('v').select('u.username')
    .where('v.account_id', '=', scope.accountId).where('v.deployment_id', '=', scope.deploymentId).where('v.embed_tenant_id', '=', scope.embedTenantId)
    .where('v.dashboard_id', '=', scope.dashboardId);
  if (filter === 'tenant') query = query.where('v.visibility', '=', 'tenant');
  else if (filter === 'private') query = query.where('v.visibility', '=', 'private').where('v.embed_user_id', '=', viewerId);
  else query = query.where((eb) => eb.or([eb('v.visibility', '=', 'tenant'), eb('v.embed_user_id', '=', viewerId)]));
  if (after !== null) {
    query = query.where((eb) => eb.or([eb('v.created_at', '<', after.createdAt), eb.and([eb('v.created_at', '=', after.createdAt), eb('v.id', '<', after.id)])]));
  }
  return query.orderBy('v.created_at', 'desc').orderBy('v.id', 'desc').limit(limit).execute();
}

export interface NewView {
  publicId: string;
  embedUserId: number;
  name: string;
  state: string;
  visibility: SavedVisibility;
  at: string;
}

export async function insertView(db: Kysely<Database>, scope: ViewScope, view: NewView): Promise<SavedViewRow> {
  return db.insertInto('saved_views').values({
    public_id: view.publicId, account_id: scope.accountId, deployment_id: scope.deploymentId, embed_tenant_id: scope.embedTenantId,
    dashboard_id: scope.dashboardId, embed_user_id: view.embedUserId, name: view.name, state: view.state, visibility: view.visibility,
    created_at: view.at, updated_at: view.at,
  }).returningAll().executeTakeFirstOrThrow();
}

export interface ViewChanges {
  name?: string;
  state?: string;
  visibility?: SavedVisibility;
  updated_at: string;
}

export async function updateView(db: Kysely<Database>, scope: ViewScope, publicId: string, authorId: number, changes: ViewChanges): Promise<SavedViewRow | undefined> {
  return db.updateTable('saved_views').set(changes)
    .where('public_id', '=', publicId).where('embed_user_id', '=', authorId).where('dashboard_id', '=', scope.dashboardId)
    .where('account_id', '=', scope.accountId).where('deployment_id', '=', scope.deploymentId).where('embed_tenant_id', '=', scope.embedTenantId)
    .returningAll().executeTakeFirst();
}

export async function deleteView(db: Kysely<Database>, scope: ViewScope, publicId: string, authorId: number): Promise<boolean> {
  const rows = await db.deleteFrom('saved_views')
    .where('public_id', '=', publicId).where('embed_user_id', '=', authorId).where('dashboard_id', '=', scope.dashboardId)
    .where('account_id', '=', scope.accountId).where('deployment_id', '=', scope.deploymentId).where('embed_tenant_id', '=', scope.embedTenantId)
    .returning('id').execute();
  return rows.length > 0;
}

