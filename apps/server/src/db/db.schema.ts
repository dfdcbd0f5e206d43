import type { Generated } from 'kysely';
import type { UserRole } from '../core/core.principal.js';

/**
 * Table types for Kysely. Conventions that hold on both dialects:
 * - timestamps are ISO 8601 UTC strings of fixed width (`2026-01-05T10:00:00.000Z`), so text order is time order;
 * - booleans are integers 0/1 (better-sqlite3 cannot bind booleans);
 * - JSON documents are text, parsed by the store that owns them;
 * - every row carries `account_id`.
 */
export interface AccountsTable {
  id: Generated<number>;
  name: string;
  tenant_name: string;
  settings: string;
  /** Bumped by every write that can change what any user of the account sees in a listing (cache validation). */
  data_version: Generated<number>;
  created_at: string;
}

export interface UsersTable {
  id: Generated<number>;
  account_id: number;
  email: string;
  first_name: string | null;
  picture: string | null;
  role: UserRole;
  password_digest: string | null;
  /** Bumped by the user's own views and favorites: the per-viewer part of their listings. */
  personal_version: Generated<number>;
  created_at: string;
}

export interface GroupsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
}

export interface GroupMembersTable {
  account_id: number;
  group_id: number;
  user_id: number;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  user_id: number;
  digest: string;
  created_at: string;
  /** A label given when the key was made, or null (migration 0016). */
  name: string | null;
  /** The key's last four characters, to tell keys apart in a list; null for keys made before migration 0016. */
  hint: string | null;
}

export interface DeploymentsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  created_at: string;
  /** DataSourceConfig as JSON; null: the bundled demo warehouse. */
  data_source: string | null;
  /** SemanticView[] as JSON; null: the demo warehouse's views. */
  semantic_views: string | null;
  /** The model's revision (its ETag), one more at each replacement through the API (migration 0013). */
  model_revision: Generated<number>;
  /** Issue 36: the deployment's Cube API secret (HS256 key of Cube JWTs), sealed (migration 0019); null: none. */
  cube_secret: string | null;
  /** When the Cube API secret was made or last rotated. */
  cube_secret_created_at: string | null;
}

export type WorkspaceItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';

export interface WorkspaceItemsTable {
  id: Generated<number>;
  account_id: number;
  deployment_id: number;
  type: WorkspaceItemType;
  is_folder: number;
  name: string;
  /** Lower-cased name: the sort key for names and the haystack for search (same folding on both dialects). */
  name_key: string;
  folder_id: number | null;
  depth: number;
  created_by: number | null;
  created_at: string;
  updated_at: string;
  meta: string;
  calculated_fields: string;
  slug: string | null;
}

/** Closure table: one row per (item, ancestor-or-self); `distance` 0 is the item itself. */
export interface ItemAncestorsTable {
  account_id: number;
  item_id: number;
  ancestor_id: number;
  distance: number;
}

export interface ItemGrantsTable {
  id: Generated<number>;
  account_id: number;
  item_id: number;
  user_id: number | null;
  group_id: number | null;
  /** `viewer` reads what the grant reaches; `editor` also changes its dashboards (migration 0015). */
  role: Generated<GrantRole>;
}

export type GrantRole = 'viewer' | 'editor';

export interface ItemViewsTable {
  account_id: number;
  user_id: number;
  item_id: number;
  viewed_at: string;
}

export interface ItemFavoritesTable {
  account_id: number;
  user_id: number;
  item_id: number;
  created_at: string;
}

export type DashboardStatus = 'draft' | 'published' | 'archived';

export interface DashboardsTable {
  id: Generated<number>;
  account_id: number;
  deployment_id: number;
  workbook_id: number;
  public_id: string;
  status: DashboardStatus;
  allow_embed: number;
  title: string | null;
  description: string | null;
  config: string;
  draft_config: string | null;
  version_number: number;
  version_id: number;
  /** The draft's title, description and report snapshots (JSON), beside its config in draft_config; null: no draft (migration 0014). */
  draft_document: Generated<string | null>;
  /** The draft's revision (its ETag), one more at each save, publish and restore (migration 0014). */
  draft_revision: Generated<number>;
  created_by: number | null;
  from_shared_workspace: number | null;
  restrict_data_download: number | null;
  use_board_dashboards: number | null;
  created_at: string;
  updated_at: string;
}

export interface ReportSnapshotsTable {
  id: Generated<number>;
  account_id: number;
  dashboard_id: number;
  report_id: number;
  position: number;
  version_number: number;
  name: string | null;
  title: string | null;
  description: string | null;
  kind: string | null;
  is_source_report: number | null;
  meta: string | null;
  spec: string | null;
  sql_query: string | null;
  python_code: string | null;
  fill_missing_rows: string | null;
  period_comparisons: string | null;
  preferences: string | null;
}

export interface EmbedTenantsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  created_at: string;
}

export interface EmbedUsersTable {
  id: Generated<number>;
  account_id: number;
  embed_tenant_id: number;
  external_id: string;
  username: string;
  email: string | null;
  first_name: string | null;
  /** JSON array of group names, as the last Generate Session gave them. */
  groups: Generated<string>;
  /** JSON object of user attributes, as the last Generate Session gave them. */
  user_attributes: Generated<string>;
  /** `foldSearchKey(username)`: the mentionable-user order and search. */
  username_key: Generated<string>;
  /** `foldSearchKey(email ?? '')`: the mentionable-user search. */
  email_key: Generated<string>;
  created_at: string;
  updated_at: string;
}

/**
 * A signed embed session (SPEC "Embed session"): minted by Generate Session, its id stored as a digest, redeemed
 * once for an embed token. `embed_user_id` is set for an `externalId` session, `user_id` for an `internalId` one.
 */
export interface EmbedSessionsTable {
  id: Generated<number>;
  account_id: number;
  deployment_id: number;
  embed_tenant_id: number | null;
  embed_user_id: number | null;
  user_id: number | null;
  digest: string;
  theme: string;
  settings: string;
  created_at: string;
  /** The session id cannot be redeemed from this instant on. */
  expires_at: string;
  redeemed_at: string | null;
  /** Nominal expiry of the token it was redeemed for. */
  token_expires_at: string | null;
  revoked_at: string | null;
  /** JSON `{ securityContext, userAttributes, groups }` the session was minted with (issue 20); null before 0007. */
  access_context: string | null;
  /** JSON list of the publicIds the session may open; null: any embeddable dashboard of its deployment. */
  dashboards: string | null;
  /** An admin's "View as a customer" session (0017): which version of its one dashboard it shows; null: a viewer's session. */
  preview: 'published' | 'draft' | null;
}

/** The server's token signing key (DESIGN "Credentials"): server-wide, not account data, so no account_id. */
export interface ServerKeysTable {
  id: Generated<number>;
  name: string;
  algorithm: string;
  private_jwk: string;
  public_jwk: string;
  created_at: string;
}

/** A platform user signed in to the console: the cookie carries the id, the table its digest. */
export interface ConsoleSessionsTable {
  id: Generated<number>;
  account_id: number;
  user_id: number;
  digest: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

/**
 * A comment on an embedded dashboard (SPEC "Comment"), in one embed tenant. A root (`parent_id` null) starts a
 * thread and carries its resolution; a reply names its root. `removed_at` marks a soft delete.
 */
export interface CommentsTable {
  id: Generated<number>;
  account_id: number;
  embed_tenant_id: number;
  dashboard_id: number;
  parent_id: number | null;
  /** The author; null once that embed user is deleted. */
  embed_user_id: number | null;
  body: string;
  created_at: string;
  edited_at: string | null;
  removed_at: string | null;
  /** 1 while the thread is resolved (roots only): the indexed form of `resolved_at is not null`. */
  is_resolved: Generated<number>;
  resolved_at: string | null;
  resolved_by: number | null;
}

/** The version of one dashboard's threads in one embed tenant: moves with every write to them. */
export interface CommentStreamsTable {
  dashboard_id: number;
  embed_tenant_id: number;
  account_id: number;
  version: Generated<number>;
  /** The highest event id of this scope that retention removed (0: none): resuming from before it is a reset. */
  events_pruned_through: Generated<number>;
}

/** What happened to a comment, as its event says (migration 0008). */
export type CommentEventKind = 'created' | 'edited' | 'deleted' | 'resolved' | 'reopened';

/**
 * One change of a comment, in the ordered log that live comment streams read and resume from (issue 23). Written by
 * triggers in the statement that changes the comment; the id is the stream position (`Last-Event-ID`).
 */
export interface CommentEventsTable {
  id: Generated<number>;
  account_id: number;
  embed_tenant_id: number;
  dashboard_id: number;
  comment_id: number;
  kind: CommentEventKind;
  /** The resolution a `resolved` event made; null for the other kinds. */
  resolved_at: string | null;
  /** The database's clock when the event was written: retention only. */
  recorded_at: string;
}

/** Issue 23: the event types a webhook endpoint can subscribe to (docs/webhooks.md). */
export type WebhookEventType = 'comment.created' | 'comment.edited' | 'comment.deleted' | 'thread.resolved' | 'thread.reopened' | 'embed_session.revoked';

/** An account's webhook endpoint (migration 0010). */
export interface WebhookEndpointsTable {
  id: Generated<number>;
  account_id: number;
  url: string;
  description: string | null;
  /** JSON array of WebhookEventType. */
  event_types: string;
  /** 1: comment payloads carry the comment's text (`body`). */
  include_comment_body: Generated<number>;
  /** The Standard Webhooks secret (`whsec_` + base64), which svc signs with. */
  secret: string;
  disabled_at: string | null;
  disabled_reason: string | null;
  /** The first failed attempt since the last success; null while the endpoint answers. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** The outbox: one event for one endpoint, with the exact body it sends, its state and its lease. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  account_id: number;
  endpoint_id: number;
  /** The stable event id (`webhook-id`), the same on every attempt and replay. */
  event_id: string;
  event_type: WebhookEventType;
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: Generated<number>;
  /** The attempt after which a failure is final: null, the retry schedule's last; a replay allows one more. */
  final_attempt: number | null;
  next_attempt_at: string | null;
  locked_until: string | null;
  lock_token: string | null;
  created_at: string;
  delivered_at: string | null;
  /** When it was delivered or failed for good (retention counts from it); null while pending (migration 0011). */
  finished_at: string | null;
}

/** One attempt of a delivery: the delivery log. */
export interface WebhookAttemptsTable {
  id: Generated<number>;
  account_id: number;
  delivery_id: number;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

export interface Database {
  accounts: AccountsTable;
  users: UsersTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  api_keys: ApiKeysTable;
  deployments: DeploymentsTable;
  workspace_items: WorkspaceItemsTable;
  item_ancestors: ItemAncestorsTable;
  item_grants: ItemGrantsTable;
  item_views: ItemViewsTable;
  item_favorites: ItemFavoritesTable;
  dashboards: DashboardsTable;
  report_snapshots: ReportSnapshotsTable;
  embed_tenants: EmbedTenantsTable;
  embed_users: EmbedUsersTable;
  embed_sessions: EmbedSessionsTable;
  server_keys: ServerKeysTable;
  console_sessions: ConsoleSessionsTable;
  comments: CommentsTable;
  comment_streams: CommentStreamsTable;
  comment_events: CommentEventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  audit_events: AuditEventsTable;
  dashboard_versions: DashboardVersionsTable;
  // Issue 35 saved charts and views (migration 0018).
  saved_charts: SavedChartsTable;
  saved_views: SavedViewsTable;
}

/** A published version of a dashboard, whole (migration 0014). */
export interface DashboardVersionsTable {
  id: Generated<number>;
  account_id: number;
  dashboard_id: number;
  version_number: number;
  title: string | null;
  description: string | null;
  /** DashboardConfig as JSON. */
  config: string;
  /** ReportSnapshot[] as the API presents them, as JSON. */
  report_snapshots: string;
  published_by: number | null;
  published_at: string;
}

/** A change made through the authoring API (migration 0013): who, when, what, from which version to which. */
export interface AuditEventsTable {
  id: Generated<number>;
  account_id: number;
  at: string;
  /** The platform user who made it; null once they are deleted (their email stays). */
  actor_user_id: number | null;
  actor_email: string | null;
  /** `model.replace`, `dashboard.create`, ...: docs/authoring.md "The audit log". */
  action: string;
  target_type: string;
  target_id: string;
  from_version: number | null;
  to_version: number | null;
  /** JSON: what else the action says (the widgets a forced model change broke). */
  detail: string;
}

/** The two kinds of the listing order, each searched through an index of its own names only (migration 0001). */
export const NAME_SEARCH_TABLES = { folders: 'workspace_fts_folders', others: 'workspace_fts_others' } as const;

/** The SQLite FTS5 table behind the mentionable-user search (comments.store.ts; migration 0003). */
export const EMBED_USER_SEARCH_TABLE = 'embed_users_fts';

// ---- Issue 35 saved charts and views (migration 0018; docs/explore.md "Saved charts and views") ----

/** Who sees a saved chart or view: its author only, or every viewer of its embed tenant. */
export type SavedVisibility = 'private' | 'tenant';

/** What a saved chart and a saved view have alike: their id, their scope (account, deployment, tenant), author and visibility. */
interface SavedItemColumns {
  id: Generated<number>;
  /** The id clients see: `chart_` or `view_` and 128 random bits in base62. */
  public_id: string;
  account_id: number;
  deployment_id: number;
  embed_tenant_id: number;
  /** The author; deleting them deletes the item. */
  embed_user_id: number;
  visibility: SavedVisibility;
  created_at: string;
  updated_at: string;
}

/** A chart an embed viewer saved: a semantic query (never its rows), its kind and spec. */
export interface SavedChartsTable extends SavedItemColumns {
  title: string;
  /** SemanticQuery as JSON. */
  query: string;
  kind: string;
  /** The chart's spec as JSON; null: none. */
  spec: string | null;
}

/** A named view of a dashboard an embed viewer saved: filters, grain, field swaps and saved charts beside its widgets. */
export interface SavedViewsTable extends SavedItemColumns {
  dashboard_id: number;
  name: string;
  /** `{ filters, granularity?, fields?, charts? }` as JSON. */
  state: string;
}
