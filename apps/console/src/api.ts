/**
 * The console's calls to svc's API (issue 34). The console is a platform user's page: it authenticates with the
 * httpOnly console cookie that `POST /api/v1/auth/login` sets, and sends `X-Requested-With: svc` on every call,
 * which the API asks of a write made with cookie credentials (its CSRF rule, apps/server/src/http/http.auth.ts).
 */

/** An answer of the API other than 2xx, with svc's error body (`{ error: { status, code, message, field? } }`). */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly field: string | undefined) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The request could not reach svc at all (network down, svc stopped). */
export class OfflineError extends Error {
  constructor() {
    super('svc could not be reached');
    this.name = 'OfflineError';
  }
}

export async function call<T>(method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', 'x-requested-with': 'svc', ...extraHeaders };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method, headers, credentials: 'same-origin', cache: 'no-store',
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new OfflineError();
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: unknown; message?: unknown; field?: unknown } } | undefined)?.error;
    throw new ApiError(
      response.status,
      typeof error?.code === 'string' ? error.code : 'unknown',
      typeof error?.message === 'string' ? error.message : `svc answered ${response.status}`,
      typeof error?.field === 'string' ? error.field : undefined,
    );
  }
  return parsed as T;
}

export interface SignedInUser { id: number; email: string; firstName: string | null; role: string; tenantName: string }

export interface Deployment { id: number; name: string }

export interface FolderPathEntry { id: number; name: string }

export type ItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';

/** SPEC part A's workspace item, the fields the console reads. */
export interface WorkspaceItem {
  id: number;
  name: string;
  type: ItemType;
  updatedAt: string;
  folderId?: number | null;
  folderPath?: FolderPathEntry[];
  isFavorite?: boolean | null;
  dashboardDraft?: unknown;
  publishedDashboard?: { publicId: string; title?: string | null } | null;
}

export interface PageInfo { hasNextPage: boolean; endCursor?: string | null }

export interface WorkspacePage { items: WorkspaceItem[]; pageInfo: PageInfo }

export type OrderField = 'updated_at' | 'created_at' | 'name' | 'viewer_last_viewed_at';
export type OrderDirection = 'ASC' | 'DESC';

export interface WorkspaceQuery {
  folderId?: number | undefined;
  search?: string | undefined;
  orderByField: OrderField;
  orderByDirection: OrderDirection;
  after?: string | undefined;
  first?: number;
}

/** A widget of a dashboard's config (SPEC part A's DashboardWidget), the fields the console writes. */
export interface WidgetPosition { x: number; y: number; w: number; h: number }
export interface DashboardWidget {
  id: string;
  type: string;
  position: WidgetPosition;
  config?: Record<string, unknown> | null;
  [key: string]: unknown;
}
export interface DashboardConfig { widgets?: DashboardWidget[] | null; [key: string]: unknown }

/** A chart's report snapshot as a draft holds it (docs/authoring.md "Dashboards"). */
export interface SnapshotInput {
  reportId?: number | null;
  title?: string | null;
  kind?: string | null;
  meta?: Record<string, unknown> | null;
  spec?: unknown;
  preferences?: unknown;
  [key: string]: unknown;
}

/** What `PUT .../draft` takes, and what a dashboard's draft holds. */
export interface Draft {
  title: string | null;
  description: string | null;
  allowEmbed: boolean;
  config: DashboardConfig;
  reportSnapshots: SnapshotInput[];
}

export interface AuthoredDashboard {
  publicId: string;
  deploymentId: number;
  workbookId: number;
  status: 'draft' | 'published' | 'archived';
  published: ({ title?: string | null; description?: string | null; allowEmbed?: boolean; versionNumber?: number; config: DashboardConfig; reportSnapshots: SnapshotInput[] }) | null;
  draft: Draft | null;
  draftRevision: number;
}

export interface DashboardVersion { versionNumber: number; title: string | null; publishedAt: string; current: boolean }

/** `GET .../meta`, the preview's answer: the chart builder's types (shared with the embed's explore, issue 35). */
import type { Meta, MetaCube, MetaMember, PreviewAnswer, RollupHint } from '../../embed/src/explore/builder.js';
export type { Meta, MetaCube, MetaMember, PreviewAnswer, RollupHint };
/** A column of an answer: the embed's own type (its charts draw the preview: apps/embed/src/explore/ChartView.tsx). */
import type { ResultColumn } from '../../embed/src/api.js';
export type { ResultColumn };

export const login = (input: { email: string; password: string; tenantName?: string }) =>
  call<{ expiresAt: string; user: SignedInUser }>('POST', '/api/v1/auth/login', input);

export const logout = () => call<void>('POST', '/api/v1/auth/logout');

export const listDeployments = () => call<{ items: Deployment[] }>('GET', '/api/v1/deployments');

export function listWorkspace(deploymentId: number, query: WorkspaceQuery): Promise<WorkspacePage> {
  const params = new URLSearchParams();
  if (query.folderId !== undefined) params.set('folderId', String(query.folderId));
  if (query.search !== undefined && query.search !== '') params.set('search', query.search);
  params.set('orderByField', query.orderByField);
  params.set('orderByDirection', query.orderByDirection);
  if (query.after !== undefined) params.set('after', query.after);
  params.set('first', String(query.first ?? 50));
  return call<WorkspacePage>('GET', `/api/v1/deployments/${deploymentId}/workspace?${params.toString()}`);
}

export const setFavorite = (deploymentId: number, itemId: number, favorite: boolean) =>
  call<void>(favorite ? 'PUT' : 'DELETE', `/api/v1/deployments/${deploymentId}/workspace/${itemId}/favorite`);

export const getDashboard = (publicId: string) =>
  call<AuthoredDashboard>('GET', `/api/v1/dashboards/${encodeURIComponent(publicId)}`);

/** The draft's ETag, which a save names in If-Match (docs/authoring.md "Dashboards"). */
export const draftTag = (revision: number) => `"draft-${revision}"`;

export const createFolder = (deploymentId: number, input: { name: string; parentId?: number }) =>
  call<WorkspaceItem>('POST', `/api/v1/deployments/${deploymentId}/workspace/folders`, input);

export const renameItem = (deploymentId: number, itemId: number, name: string) =>
  call<WorkspaceItem>('PATCH', `/api/v1/deployments/${deploymentId}/workspace/${itemId}`, { name });

/** Who is signed in (`GET /api/v1/me`): the top bar's name, and whether the admins' pages are offered. */
export interface Me { user: { id: number; email: string; firstName: string | null; role: string }; account: { id: number; tenantName: string } }
export const me = () => call<Me>('GET', '/api/v1/me');

export const createDashboard = (deploymentId: number, input: { title: string; folderId?: number }) =>
  call<AuthoredDashboard>('POST', `/api/v1/deployments/${deploymentId}/dashboards`, { ...input, config: { widgets: [] } });

const dashboardPath = (publicId: string) => `/api/v1/dashboards/${encodeURIComponent(publicId)}`;

export const saveDraft = (publicId: string, draft: Draft, revision: number) =>
  call<AuthoredDashboard>('PUT', `${dashboardPath(publicId)}/draft`, draft, { 'if-match': draftTag(revision) });

export const publishDashboard = (publicId: string, revision: number) =>
  call<AuthoredDashboard>('POST', `${dashboardPath(publicId)}/publish`, undefined, { 'if-match': draftTag(revision) });

export const listVersions = (publicId: string) => call<{ items: DashboardVersion[] }>('GET', `${dashboardPath(publicId)}/versions`);

export const restoreVersion = (publicId: string, versionNumber: number) =>
  call<AuthoredDashboard>('POST', `${dashboardPath(publicId)}/versions/${versionNumber}/restore`);

export const getMeta = (deploymentId: number) => call<Meta>('GET', `/api/v1/deployments/${deploymentId}/meta`);

export const previewQuery = (deploymentId: number, query: unknown) =>
  call<PreviewAnswer>('POST', `/api/v1/deployments/${deploymentId}/query`, { query });

/** A report snapshot as a draft holds it, run by the same preview (its meta.query, or its sqlQuery for admins). */
export const previewSnapshot = (deploymentId: number, snapshot: { meta?: SnapshotInput['meta']; sqlQuery?: string }) =>
  call<PreviewAnswer>('POST', `/api/v1/deployments/${deploymentId}/query`, { snapshot });

/** Whether the caller may change the dashboard (its draft, publish, restore): a read-only page otherwise. */
export interface AuthoredDashboard { canEdit?: boolean }

/** `GET .../workspace/permissions`: what the caller may do in the folder shown and with the listed items. */
export interface WorkspacePermissions {
  folder: { id: number | null; canCreate: boolean };
  items: Array<{ id: number; canEdit: boolean; dashboardPublicId: string | null }>;
}

export function workspacePermissions(deploymentId: number, itemIds: readonly number[], folderId: number | undefined): Promise<WorkspacePermissions> {
  const params = new URLSearchParams();
  for (const id of itemIds) params.append('itemId', String(id));
  if (folderId !== undefined) params.set('folderId', String(folderId));
  return call<WorkspacePermissions>('GET', `/api/v1/deployments/${deploymentId}/workspace/permissions?${params.toString()}`);
}

/** Moves an item (with everything below it) into the folder `parentId`; null: the root. */
export const moveItem = (deploymentId: number, itemId: number, parentId: number | null) =>
  call<WorkspaceItem>('PATCH', `/api/v1/deployments/${deploymentId}/workspace/${itemId}`, { parentId });

/** A new dashboard whose draft copies `copyOf` (Metabase's "Duplicate"), in `folderId` or the root. */
export const copyDashboard = (deploymentId: number, input: { title: string; copyOf: string; folderId?: number }) =>
  call<AuthoredDashboard>('POST', `/api/v1/deployments/${deploymentId}/dashboards`, input);
