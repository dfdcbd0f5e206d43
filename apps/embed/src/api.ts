import type { EmbedSession } from './session.js';

/** svc's API as the embed uses it (shapes of SPEC "Resources", as apps/server answers them). */

export interface CurrentSession {
  mode: 'signed' | 'private';
  deploymentId: number | null;
  embedTenant: string | null;
  embedUserId: number | null;
  userId: number | null;
  allowEmbedComments: boolean;
  embedTheme: Record<string, unknown>;
  defaults: { timezone: string | null; locale: string | null };
}

export interface WidgetPosition { x: number; y: number; w: number; h: number }

export interface DashboardWidget {
  id: string;
  type: string;
  position: WidgetPosition;
  config?: Record<string, unknown> | null;
  style?: Record<string, unknown> | null;
  responsiveLayouts?: Record<string, WidgetPosition | null> | null;
}

export interface ReportSnapshot {
  id: number;
  reportId: number;
  name?: string | null;
  title?: string | null;
  kind?: string | null;
}

export interface Dashboard {
  id: number;
  publicId: string;
  deploymentId: number;
  workbookId: number;
  title?: string | null;
  description?: string | null;
  config: {
    kind?: string | null;
    title?: string | null;
    description?: string | null;
    layout?: { rowHeight?: number | null; cols?: Record<string, number | null> | null; margin?: number[] | null; containerPadding?: number[] | null } | null;
    widgets?: DashboardWidget[] | null;
  };
  reportSnapshots: ReportSnapshot[];
}

export interface Comment {
  id: number;
  dashboardId: string;
  userId?: number | null;
  body: string;
  editedAt?: string | null;
  createdAt: string;
  isOwn: boolean;
}

export interface Thread {
  root: Comment;
  replies: Comment[];
  resolvedAt?: string | null;
  resolvedBy?: number | null;
}

export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor?: string | null;
  endCursor?: string | null;
}

export interface Connection<T> {
  items: T[];
  pageInfo: PageInfo;
}

export interface MentionableUser {
  id: number;
  username: string;
  email?: string | null;
  firstName?: string | null;
}

export type ThreadFilter = 'open' | 'resolved' | 'all';

const enc = encodeURIComponent;

export function fetchCurrentSession(session: EmbedSession): Promise<{ session: CurrentSession | null }> {
  return session.request('/api/v1/embed/session');
}

export function fetchDashboard(session: EmbedSession, publicId: string, signal?: AbortSignal): Promise<Dashboard> {
  return session.request(`/api/v1/embed/dashboard/${enc(publicId)}`, { signal });
}

export function fetchWorkbookDashboard(session: EmbedSession, deploymentId: number, workbookId: number, signal?: AbortSignal): Promise<Dashboard> {
  return session.request(`/api/v1/embed/deployments/${deploymentId}/workbooks/${workbookId}/dashboard`, { signal });
}

const commentsPath = (publicId: string) => `/api/v1/embed/dashboard/${enc(publicId)}/comments`;

/** SPEC B rule 3: open threads by default; `all` adds resolved ones (`includeResolved`), `resolved` only those (`resolvedOnly`). */
export function fetchThreads(session: EmbedSession, publicId: string, filter: ThreadFilter, after?: string, first = 20): Promise<Connection<Thread>> {
  const query = new URLSearchParams({ first: String(first) });
  if (filter === 'all') query.set('includeResolved', 'true');
  if (filter === 'resolved') query.set('resolvedOnly', 'true');
  if (after !== undefined) query.set('after', after);
  return session.request(`${commentsPath(publicId)}?${query}`);
}

export function postComment(session: EmbedSession, publicId: string, body: string, parentId?: number): Promise<Comment> {
  return session.request(commentsPath(publicId), { method: 'POST', body: parentId === undefined ? { body } : { body, parentId } });
}

export function editComment(session: EmbedSession, publicId: string, commentId: number, body: string): Promise<Comment> {
  return session.request(`${commentsPath(publicId)}/${commentId}`, { method: 'PATCH', body: { body } });
}

export function deleteComment(session: EmbedSession, publicId: string, commentId: number): Promise<void> {
  return session.request(`${commentsPath(publicId)}/${commentId}`, { method: 'DELETE' });
}

export function resolveThread(session: EmbedSession, publicId: string, commentId: number, resolved: boolean): Promise<Thread> {
  return session.request(`${commentsPath(publicId)}/${commentId}/resolve`, { method: 'POST', body: { resolved } });
}

export function fetchMentionableUsers(session: EmbedSession, publicId: string, search: string, first = 8, after?: string): Promise<Connection<MentionableUser>> {
  const query = new URLSearchParams({ first: String(first) });
  if (search !== '') query.set('search', search);
  if (after !== undefined) query.set('after', after);
  return session.request(`${commentsPath(publicId)}/mentionable-users?${query}`);
}
