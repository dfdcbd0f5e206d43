/** SPEC.md PageInfo: opaque cursors, null on an empty page. */
export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor?: string | null;
  endCursor?: string | null;
}

export type WorkspaceItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';
export type WorkspaceOrderByField = 'updated_at' | 'created_at' | 'name' | 'viewer_last_viewed_at';

export interface ResourceOwner {
  id: number;
  email: string;
  firstName?: string | null;
  picture?: string | null;
}

/** A workspace item (SPEC.md schema Workbook). Dashboard shapes are kept open here: see the OpenAPI document. */
export interface WorkspaceItem {
  id: number;
  deploymentId: number;
  name: string;
  meta: Record<string, unknown>;
  calculatedFields: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  type: WorkspaceItemType;
  createdBy?: number;
  userId?: number | null;
  user?: ResourceOwner | null;
  folderId?: number | null;
  folderPath?: Array<{ id: number; name: string }>;
  isFavorite?: boolean | null;
  slug?: string | null;
  dashboardDraft?: Record<string, unknown> | null;
  dashboardPublished?: Record<string, unknown> | null;
  publishedDashboard?: Record<string, unknown> | null;
}

export interface WorkspaceConnectionResponse {
  items: WorkspaceItem[];
  pageInfo: PageInfo;
}

/** Query of `GET /api/v1/deployments/{deploymentId}/workspace` (SPEC part A). */
export interface WorkspaceQuery {
  folderId?: number;
  types?: WorkspaceItemType[];
  orderByField?: WorkspaceOrderByField;
  orderByDirection?: 'ASC' | 'DESC';
  search?: string;
  first?: number;
  after?: string;
}

// The authoring API (docs/authoring.md). Semantic views, dashboard configs and report snapshots are kept open here:
// their shapes are the import file's (docs/import.md) and the OpenAPI document's.

export interface DeploymentSummary {
  id: number;
  name: string;
  createdAt: string;
  /** The model's revision: a change names it (`revision` of replaceModel). */
  modelRevision: number;
}

export interface Deployment extends DeploymentSummary {
  /** Its secrets (a PostgreSQL password) shown as `****`; sent back as read, the current one is kept. */
  dataSource: { type: string } & Record<string, unknown>;
  semanticViews: Array<Record<string, unknown>>;
  demoModel: boolean;
}

export interface ModelInput {
  semanticViews: Array<Record<string, unknown>>;
  dataSource?: { type: string } & Record<string, unknown>;
}

/** What a model would change, and the published widgets it would break (`checkModel`). */
export interface ModelCheck {
  modelRevision: number;
  changes: Array<{ view: string; change: 'added' | 'removed' | 'changed'; membersAdded: string[]; membersRemoved: string[]; membersChanged: string[] }>;
  dataSourceChanged: boolean;
  breaks: Array<{ publicId: string; widgetId: string; field: string; message: string }>;
}

export interface MetaMember {
  name: string;
  title: string;
  shortTitle: string;
  type: string;
  aggType?: string;
  format?: string;
  decimalPlaces?: number | null;
  primaryKey?: boolean;
}

/** Cube's /v1/meta shape. */
export interface ModelMeta {
  modelRevision: number;
  cubes: Array<{
    name: string; title: string; type: string; measures: MetaMember[]; dimensions: MetaMember[]; segments: MetaMember[];
    joins: Array<{ name: string; relationship: string }>; drillMembers: string[];
    preAggregations: Array<{ name: string; measures: string[]; dimensions: string[]; timeDimension: string | null; granularity: string | null }>;
  }>;
}

export interface DashboardDraftInput {
  title?: string | null;
  description?: string | null;
  allowEmbed?: boolean;
  config: Record<string, unknown>;
  reportSnapshots?: Array<Record<string, unknown>>;
}

export interface DashboardCreateInput extends Omit<DashboardDraftInput, 'config'> {
  title: string;
  publicId?: string;
  folderId?: number;
  /** Required, unless `copyOf` is given. */
  config?: DashboardDraftInput['config'];
  /**
   * The publicId of a dashboard to copy (same deployment): its draft when the caller may change it and it has one,
   * else its published version. Leave `config` and `reportSnapshots` out.
   */
  copyOf?: string;
}

export interface AuthoredDashboard {
  publicId: string;
  deploymentId: number;
  workbookId: number;
  status: 'draft' | 'published' | 'archived';
  createdBy: number | null;
  /** SPEC A's Dashboard as viewers see it, or null before the first publish. */
  published: (Record<string, unknown> & { versionNumber: number }) | null;
  draft: (Required<Pick<DashboardDraftInput, 'config'>> & { title: string | null; description: string | null; allowEmbed: boolean; reportSnapshots: Array<Record<string, unknown>> }) | null;
  /** The draft's revision: a change names it (`revision` of replaceDraft). */
  draftRevision: number;
  /** Whether the caller may change it (its draft, publish, restore, archive). */
  canEdit: boolean;
}

export interface DashboardVersion {
  versionNumber: number;
  title: string | null;
  publishedAt: string;
  publishedBy: number | null;
  current: boolean;
}

export interface AuditEvent {
  id: number;
  at: string;
  actor: { userId: number | null; email: string | null };
  action: string;
  target: { type: string; id: string };
  fromVersion: number | null;
  toVersion: number | null;
  detail: Record<string, unknown>;
}

export interface QueryPreviewRequest {
  /** A semantic query; or `snapshot`, a report snapshot as a draft holds it. */
  query?: Record<string, unknown>;
  snapshot?: Record<string, unknown>;
  /** Admins only: as Generate Session would have made the viewer. */
  asViewer?: { securityContext?: Record<string, unknown>; userAttributes?: Record<string, unknown>; groups?: string[]; embedTenantName?: string };
  timezone?: string;
  force?: boolean;
}

/** Whom an admin previews a dashboard as ("View as a customer"), and which version. */
export interface PreviewSessionRequest {
  /** An embed tenant of the account; default: none. */
  embedTenantName?: string;
  securityContext?: Record<string, unknown>;
  userAttributes?: Record<string, unknown>;
  groups?: string[];
  /** true: the dashboard's draft; default: the published version. */
  draft?: boolean;
}

/** A preview session: open `url?session=<sessionId>` in a frame of svc's own console before `expiresAt`. */
export interface PreviewSession {
  sessionId: string;
  expiresAt: string;
  url: string;
  version: 'published' | 'draft';
}

export interface QueryPreview {
  columns: Array<{ name: string; member: string; title: string; type: string; kind: 'measure' | 'dimension' }>;
  rows: unknown[][];
  truncated: boolean;
  timezone: string;
  source: string;
  ignoredFilters: string[];
  /** Admins only: the statement that ran, and where. */
  statement?: { sql: string; parameters: unknown[]; on: string };
  /**
   * Admins only, when the data source answered (not the cache or a rollup): why each pre-aggregation of the query's
   * view did not answer, and one (in the model's JSON shape, for that view's `preAggregations`) that would once built.
   */
  rollupHint?: {
    reasons: Array<{ rollup: string; reason: string }>;
    suggestion: { view: string; preAggregation: Record<string, unknown> & { name: string; measures: string[] } } | null;
    unsuggested?: string;
  };
}

// The admin API of an account (issue 33 part 4): platform users, API keys, groups, settings, embed tenants and users.

export type UserRole = 'admin' | 'member';

export interface PlatformUser {
  id: number;
  email: string;
  firstName: string | null;
  role: UserRole;
  /** Whether the user can sign in to the console. */
  hasPassword: boolean;
  createdAt: string;
}

export interface PlatformUserInput {
  email: string;
  firstName?: string;
  role: UserRole;
  /** At least 12 characters; never shown again. */
  password?: string;
}

export interface PlatformUserChange {
  email?: string;
  firstName?: string | null;
  role?: UserRole;
  /** null: the user can no longer sign in to the console. */
  password?: string | null;
}

export interface ApiKeySummary {
  id: number;
  name: string | null;
  /** The key's last four characters. */
  hint: string | null;
  createdAt: string;
}

/** A key just made: `key` is in this answer only. */
export interface NewApiKey extends ApiKeySummary {
  key: string;
}

export interface Group {
  id: number;
  name: string;
  memberIds: number[];
}

export interface AccountSettings {
  allowedEmbedOrigins: string[];
  allowEmbedComments: boolean;
  timezone: string | null;
  locale: string | null;
}

export interface EmbedTenant {
  id: number;
  name: string;
  userCount: number;
  createdAt: string;
}

export interface EmbedUser {
  id: number;
  externalId: string;
  embedTenantName: string;
  username: string;
  email: string | null;
  firstName: string | null;
  groups: string[];
  userAttributes: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface EmbedUserInput {
  embedTenantName: string;
  externalId: string;
  username?: string;
  email?: string;
  firstName?: string;
  groups?: string[];
  userAttributes?: Record<string, unknown>;
}

export interface EmbedUserChange {
  username?: string;
  email?: string | null;
  firstName?: string | null;
  groups?: string[];
  userAttributes?: Record<string, unknown>;
}
// Issue 33, editor grants.

/** A grant's role: `viewer` reads the item and what is below it; `editor` also changes the dashboards there. */
export type GrantRole = 'viewer' | 'editor';

/** A grant on a workspace item, to a user or to a group. */
export type ItemGrant = ({ userId: number; groupId?: never } | { groupId: number; userId?: never }) & { role: GrantRole };

/** A grant as sent: to a user or a group; without a role, a viewer's. */
export type ItemGrantInput = ({ userId: number; groupId?: never } | { groupId: number; userId?: never }) & { role?: GrantRole };

// Issue 34, the console.

/** Who is calling (`GET /api/v1/me`); never the credential itself. */
/** `workspacePermissions`: what the caller may do in a folder and with listed items (issue 34). */
export interface WorkspacePermissions {
  folder: { id: number | null; canCreate: boolean };
  /** The items asked about that the caller can access; a workbook's dashboard is named when published, or when the caller may change it. */
  items: Array<{ id: number; canEdit: boolean; dashboardPublicId: string | null }>;
}

/** `listPreAggregations`: a pre-aggregation's build status in one time zone (issue 34, admins). */
export interface PreAggregationStatus {
  view: string;
  name: string;
  timezone: string;
  built: boolean;
  builtAt: string | null;
  buildMs: number | null;
  rows: number | null;
  sizeBytes: number | null;
  partitions: Array<{ partition: string; rows: number }>;
  /** Why a build is due now; null when up to date. */
  due: string | null;
  nextDueAt: string | null;
  lastError: { message: string; at: string } | null;
}

export interface Me {
  user: { id: number; email: string; firstName: string | null; role: UserRole };
  account: { id: number; tenantName: string };
  signedInWith: 'console' | 'api-key';
}

// ---- Issue 35 saved charts and views (SvcEmbedClient; docs/explore.md "Saved charts and views") ----

export type SavedVisibility = 'private' | 'tenant';
export type SavedChartKind = 'line' | 'bar' | 'area' | 'kpi' | 'table' | 'map' | 'sankey';

/** A semantic query as svc takes it (docs/data.md): measures, dimensions, time dimensions, filters, order, limit. */
export type SavedQuery = Record<string, unknown> & { measures?: string[]; dimensions?: string[] };

export interface SavedListQuery {
  visibility?: SavedVisibility;
  first?: number;
  after?: string;
}

export interface SavedAuthor {
  /** The embed user who saved it (a comment's userId). */
  userId: number;
  username: string;
}

export interface SavedChart {
  /** `chart_…`: unguessable. */
  id: string;
  title: string;
  query: SavedQuery;
  kind: SavedChartKind;
  spec?: Record<string, unknown>;
  visibility: SavedVisibility;
  author: SavedAuthor;
  /** Whether the caller saved it. */
  mine: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface SavedChartInput {
  title: string;
  query: SavedQuery;
  kind: SavedChartKind;
  spec?: Record<string, unknown>;
  /** Default `private`. */
  visibility?: SavedVisibility;
}

export interface SavedChartChange {
  title?: string;
  query?: SavedQuery;
  kind?: SavedChartKind;
  /** null removes it. */
  spec?: Record<string, unknown> | null;
  visibility?: SavedVisibility;
}

export interface SavedChartList {
  charts: SavedChart[];
  pageInfo: PageInfo;
}

/** A viewer's filter value, as the widget data request takes it: a value, a list, or a range. */
export type SavedFilterValue = string | number | boolean | Array<string | number | boolean> | { gte?: string | number; lte?: string | number } | null;

export interface SavedViewState {
  filters: Record<string, SavedFilterValue>;
  granularity?: 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
  fields?: Record<string, string>;
  /** Saved charts placed beside the dashboard's widgets (a personal layout). */
  charts?: Array<{ chartId: string; x: number; y: number; w: number; h: number }>;
}

export interface SavedView {
  /** `view_…`: unguessable. */
  id: string;
  /** The dashboard's publicId. */
  publicId: string;
  name: string;
  state: SavedViewState;
  visibility: SavedVisibility;
  author: SavedAuthor;
  mine: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface SavedViewInput {
  name: string;
  state: SavedViewState;
  visibility?: SavedVisibility;
}

export interface SavedViewChange {
  name?: string;
  state?: SavedViewState;
  visibility?: SavedVisibility;
}

export interface SavedViewList {
  views: SavedView[];
  pageInfo: PageInfo;
}
