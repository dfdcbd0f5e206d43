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
  /** svc:event:comment carries the comment's text (Generate Session's settings.commentEventText). */
  commentEventText: boolean;
  /** Generate Session's settings.explore (issue 35): none, view (open shared charts and views) or create (also build and save). */
  explore: 'none' | 'view' | 'create';
  /** Generate Session's filters: what the embed starts with (issue 38). */
  filters: Record<string, unknown>;
  /** The members among them the host locked (settings.lockedFilters): shown without a remove button. */
  lockedFilters: string[];
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

export interface ColumnFormat {
  type: 'currency' | 'percent' | 'number';
  decimalPlaces?: number | null;
}

export interface ReportSnapshot {
  id: number;
  reportId: number;
  name?: string | null;
  title?: string | null;
  description?: string | null;
  kind?: 'vega' | 'table' | 'kpi' | 'html' | 'map' | 'sankey' | null;
  meta?: Record<string, unknown> | null;
  spec?: string | Record<string, unknown> | null;
  sqlQuery?: string | null;
  preferences?: { columnFormats?: Record<string, ColumnFormat> } | null;
}

/** A column of a widget's result (apps/server data.routes.ts ResultColumn). */
export interface ResultColumn {
  name: string;
  member: string;
  title: string;
  type: 'string' | 'number' | 'time' | 'boolean';
  kind: 'dimension' | 'measure';
  granularity?: string;
  measureType?: string;
  format?: ColumnFormat;
}

export interface WidgetData {
  columns: ResultColumn[];
  rows: unknown[][];
  truncated: boolean;
  /** A drill-down's: how many rows lie under the mark, of which `rows` are the first. */
  totalRows?: number;
  timezone: string;
  ignoredFilters: string[];
  /** The FIELD swaps this widget's query took (member -> member), when any did. */
  fields?: Record<string, string>;
  /** The widget's title with those swaps (svc replaced the swapped members' titles). */
  title?: string;
}

export interface WidgetDataRequest {
  filters?: Record<string, unknown>;
  timezone?: string;
  granularity?: string;
  fields?: Record<string, string>;
  drilldown?: { member: string; point?: Record<string, unknown> };
  /** Past svc's result cache: a refresh. */
  force?: boolean;
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
    app?: { entry?: string | null; files?: Record<string, string> | null; html?: string | null } | null;
    title?: string | null;
    description?: string | null;
    layout?: {
      rowHeight?: number | null;
      cols?: Record<string, number | null> | null;
      breakpoints?: Record<string, number | null> | null;
      margin?: number[] | null;
      containerPadding?: number[] | null;
    } | null;
    widgets?: DashboardWidget[] | null;
    /** Translated content (issue 38): locale -> text key -> text (dashboard/translations.ts). */
    translations?: Record<string, Record<string, string>> | null;
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
  /** Only in the answer to a post: the embed users its text @mentions, in the viewer's tenant. */
  mentions?: Array<{ userId: number; username: string; externalId: string }>;
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

export function fetchWidgetData(session: EmbedSession, publicId: string, widgetId: string, body: WidgetDataRequest, signal?: AbortSignal): Promise<WidgetData> {
  return session.request(`/api/v1/embed/dashboard/${enc(publicId)}/widgets/${enc(widgetId)}/data`, { method: 'POST', body, signal });
}

/** A filter as svc checked it: its dimension's title and type in the model. */
export interface CheckedFilter {
  member: string;
  title: string;
  type: string;
}

/** Checks filters by the rules of the widget data requests, running nothing: 400 unknown or ill-typed, 403 hidden from the viewer. */
export function checkFilters(session: EmbedSession, publicId: string, filters: Record<string, unknown>, timezone?: string, signal?: AbortSignal): Promise<{ filters: CheckedFilter[] }> {
  return session.request(`/api/v1/embed/dashboard/${enc(publicId)}/filters/check`, { method: 'POST', body: { filters, ...(timezone !== undefined ? { timezone } : {}) }, signal });
}

export function runAppQuery(session: EmbedSession, publicId: string, query: unknown, timezone: string): Promise<WidgetData> {
  return session.request(`/api/v1/embed/dashboard/${enc(publicId)}/query`, { method: 'POST', body: { query, timezone } });
}

export interface AiAnswer extends WidgetData {
  chatId: string;
  question: string;
  answer: string | null;
  query: Record<string, unknown>;
}

export function askQuestion(session: EmbedSession, body: { question: string; chatId: string; publicId?: string; timezone?: string }, signal?: AbortSignal): Promise<AiAnswer> {
  return session.request('/api/v1/embed/ai/query', { method: 'POST', body, signal });
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
