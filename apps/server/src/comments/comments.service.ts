import { requireReadableDashboard } from '../dashboards/dashboards.service.js';
import type { DashboardRow } from '../dashboards/dashboards.store.js';
import { foldSearchKey } from '../db/db.search-key.js';
import { isoTimestamp } from '../core/core.time.js';
import type { ServiceContext } from '../db/db.context.js';
import { AfterCommit } from '../core/core.events.js';
import type { EventPublisher } from '../core/core.events.js';
import { decodeCursor, encodeCursor, fingerprintQuery, invalidCursor, isCursorId, pageInfoOf } from '../core/core.cursor.js';
import { AppError } from '../core/core.errors.js';
import { MAX_ROW_ID } from '../core/core.schema.js';
import { selectMentionableUsers } from '../sessions/sessions.store.js';
import type { UserPosition } from '../sessions/sessions.store.js';
import { canDelete, canEdit, canResolve, isOwnComment } from './comments.policy.js';
import type { Commenter } from './comments.policy.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './comments.schema.js';
import type {
  Comment, MentionableUserList, MentionableUsersQuery, StreamCommentData, StreamDeletionData, StreamResolutionData, Thread, ThreadList,
  ThreadListQuery,
} from './comments.schema.js';
import {
  findLiveComment, insertComment, readStreamVersion, markCommentRemoved, selectReplies, selectThreadRoots, setThreadResolution, updateCommentBody,
} from './comments.store.js';
import type { CommentRow, CommentScope, EventRow, ListedComment, ThreadFilter, ThreadPosition } from './comments.store.js';
import { resolveMentions } from './comments.mentions.js';
import type { Mention } from './comments.mentions.js';
import type { CommentEvents } from './comments.events.js';

/** What the writes of comments need besides the database and the clock: where their events go (comments.events.ts). */
export interface CommentContext extends ServiceContext {
  events: EventPublisher<CommentEvents>;
}

/** The dashboard a request names, checked readable (SPEC B rule 10: 404 before 403), and the caller's scope in it. */
async function openDashboard(ctx: ServiceContext, commenter: Commenter, publicId: string): Promise<{ dashboard: DashboardRow; scope: CommentScope }> {
  const dashboard = await requireReadableDashboard(ctx, commenter, publicId);
  return { dashboard, scope: { accountId: commenter.accountId, embedTenantId: commenter.embedTenantId, dashboardId: dashboard.id } };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * SPEC "Comment": bodies are stored and returned verbatim. Two strings cannot be: a lone UTF-16 surrogate (no
 * database stores it; it would come back as U+FFFD) and U+0000 (PostgreSQL text cannot hold it). Both are a 400 on
 * both dialects alike, rather than a body that silently changes.
 */
function requireStorableBody(body: string): string {
  if (body.includes('\u0000')) throw new AppError('invalid_body', 'body contains a NUL character (U+0000), which cannot be stored', 'body');
  if (LONE_SURROGATE.test(body)) throw new AppError('invalid_body', 'body contains an unpaired UTF-16 surrogate: send well-formed Unicode', 'body');
  return body;
}

function pageSize(first: number | undefined): number {
  // SPEC Limits: above the maximum is clamped, not rejected (`hasNextPage` stays true); below 1 the schema refused.
  return Math.min(first ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
}

function presentComment(row: ListedComment, publicId: string, commenter: Commenter): Comment {
  return {
    id: row.id,
    dashboardId: publicId,
    userId: row.embed_user_id,
    body: row.body,
    editedAt: row.edited_at,
    removedAt: null,
    createdAt: row.created_at,
    isOwn: isOwnComment(commenter, row),
  };
}

function presentThread(root: ListedComment, replies: readonly ListedComment[], publicId: string, commenter: Commenter): Thread {
  return {
    root: presentComment(root, publicId, commenter),
    replies: replies.map((reply) => presentComment(reply, publicId, commenter)),
    resolvedAt: root.resolved_at,
    resolvedBy: root.resolved_at === null ? null : root.resolved_by,
  };
}

/** SPEC B rule 3: open threads by default; `includeResolved` adds resolved ones; `resolvedOnly` wins over both. */
export function threadFilterOf(query: Pick<ThreadListQuery, 'includeResolved' | 'resolvedOnly'>): ThreadFilter {
  if (query.resolvedOnly === true) return 'resolved';
  return query.includeResolved === true ? 'all' : 'open';
}

/** The fixed-width form every timestamp is stored in (http.context.ts `isoTimestamp`). */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function decodeThreadCursor(after: string, fingerprint: string): ThreadPosition {
  const [createdAt, id] = decodeCursor(after, fingerprint, 2);
  if (typeof createdAt !== 'string' || !TIMESTAMP.test(createdAt) || !isCursorId(id)) throw invalidCursor('malformed');
  return { createdAt, id };
}

/** One page of a thread list, opened: what it is cached under, the version it is valid at, and how to read it. */
export interface ThreadListPage {
  /** The caller's own key (isOwn differs between callers). */
  key: string;
  version: string;
  read(): Promise<ThreadList>;
}

/**
 * SPEC B `GET /dashboard/{publicId}/comments`: one page of the tenant's threads on the dashboard, newest first by
 * start, each with all of its live replies, in two queries (roots, then the replies of all of them). Opening it
 * checks the dashboard (rule 10) and reads the version of its threads before any thread is read, so a page
 * cached under that version is never older than it.
 *
 * @example
 * const page = await openThreadList(ctx, commenter, 'q1-review', { includeResolved: true, first: 20 });
 * const { items, pageInfo } = await page.read();
 */
export async function openThreadList(ctx: ServiceContext, commenter: Commenter, publicId: string, query: ThreadListQuery): Promise<ThreadListPage> {
  const { scope } = await openDashboard(ctx, commenter, publicId);
  const version = await readStreamVersion(ctx.db, scope);
  const filter = threadFilterOf(query);
  const size = pageSize(query.first);
  const key = JSON.stringify(['threads', scope.accountId, scope.embedTenantId, scope.dashboardId, commenter.embedUserId, filter, size, query.after ?? null]);
  return { key, version: String(version), read: () => readThreadPage(ctx, commenter, publicId, scope, filter, size, query.after) };
}

async function readThreadPage(
  ctx: ServiceContext, commenter: Commenter, publicId: string, scope: CommentScope, filter: ThreadFilter, size: number, afterCursor: string | undefined,
): Promise<ThreadList> {
  // SPEC B rule 7: a cursor belongs to one tenant's list of one dashboard under one filter.
  const fingerprint = fingerprintQuery(['threads', scope.accountId, scope.embedTenantId, scope.dashboardId, filter]);
  const after = afterCursor === undefined ? null : decodeThreadCursor(afterCursor, fingerprint);
  const rows = await selectThreadRoots(ctx.db, scope, filter, after, size + 1);
  const roots = rows.slice(0, size);
  const replies = await selectReplies(ctx.db, scope, roots.map((root) => root.id));
  const repliesByRoot = new Map<number, ListedComment[]>();
  for (const reply of replies) {
    const list = repliesByRoot.get(reply.parent_id!);
    if (list === undefined) repliesByRoot.set(reply.parent_id!, [reply]);
    else list.push(reply);
  }
  return {
    items: roots.map((root) => presentThread(root, repliesByRoot.get(root.id) ?? [], publicId, commenter)),
    // SPEC "Thread list": cursors are null on an empty page.
    pageInfo: pageInfoOf(roots, rows.length > size, after !== null, (root) => encodeCursor(fingerprint, [root.created_at, root.id])),
  };
}

/**
 * SPEC B `POST /dashboard/{publicId}/comments`: a new thread, or (with `parentId`) a reply to a thread root
 * (rule 1: one level; a reply's id is a 400, anything not live on this dashboard in this tenant a 404). The author
 * is always the session's embed user (rule 9).
 */
export async function postComment(
  ctx: CommentContext, commenter: Commenter, publicId: string, input: { body: string; parentId?: number | undefined },
): Promise<Comment & { mentions: Mention[] }> {
  const body = requireStorableBody(input.body);
  const { scope } = await openDashboard(ctx, commenter, publicId);
  let parentId: number | null = null;
  if (input.parentId !== undefined) {
    const parent = await findLiveComment(ctx.db, scope, input.parentId);
    if (parent === undefined) throw new AppError('not_found', `comment ${input.parentId} (parentId) not found on dashboard ${publicId}`, 'parentId');
    if (parent.parent_id !== null) {
      throw new AppError('invalid_body', `comment ${input.parentId} is a reply: replies nest one level, so reply to its thread root ${parent.parent_id}`, 'parentId');
    }
    parentId = parent.id;
  }
  const mentions = await resolveMentions(ctx.db, scope.accountId, scope.embedTenantId, body);
  const now = ctx.now();
  // The comment and what its event's subscribers write (webhook deliveries) commit together: an event exists
  // exactly when its comment does.
  const afterCommit = new AfterCommit();
  const row = await ctx.db.transaction().execute(async (trx) => {
    const inserted = await insertComment(trx, scope, { parentId, embedUserId: commenter.embedUserId, body, createdAt: isoTimestamp(now) });
    await ctx.events.publish('comment.created', { transaction: trx, afterCommit, scope, publicId, at: now, comment: inserted, mentions });
    return inserted;
  });
  afterCommit.run();
  return { ...presentComment(row, publicId, commenter), mentions };
}

/** The 404 of a comment that is not live on this dashboard in this tenant, found so or gone meanwhile. */
const gone = (publicId: string, commentId: number) => new AppError('not_found', `comment ${commentId} not found on dashboard ${publicId}`, 'commentId');

async function requireLiveComment(ctx: ServiceContext, scope: CommentScope, publicId: string, commentId: number): Promise<CommentRow> {
  const comment = await findLiveComment(ctx.db, scope, commentId);
  if (comment === undefined) throw gone(publicId, commentId);
  return comment;
}

/** SPEC B `PATCH /dashboard/{publicId}/comments/{commentId}`: the author replaces the body (rule 5). */
export async function editComment(ctx: CommentContext, commenter: Commenter, publicId: string, commentId: number, input: { body: string }): Promise<Comment> {
  const body = requireStorableBody(input.body);
  const { scope } = await openDashboard(ctx, commenter, publicId);
  const comment = await requireLiveComment(ctx, scope, publicId, commentId);
  if (!canEdit(commenter, comment)) throw new AppError('forbidden', `comment ${commentId} was written by another user: only its author may edit it`, 'commentId');
  const now = ctx.now();
  const afterCommit = new AfterCommit();
  const updated = await ctx.db.transaction().execute(async (trx) => {
    const row = await updateCommentBody(trx, scope, commentId, commenter.embedUserId, body, isoTimestamp(now));
    if (row === undefined) return row;
    const mentions = await resolveMentions(trx, scope.accountId, scope.embedTenantId, body);
    await ctx.events.publish('comment.edited', { transaction: trx, afterCommit, scope, publicId, at: now, comment: row, mentions });
    return row;
  });
  if (updated === undefined) throw gone(publicId, commentId);
  afterCommit.run();
  return presentComment(updated, publicId, commenter);
}

/** SPEC B `DELETE /dashboard/{publicId}/comments/{commentId}` and "Comment deletion": the author only; a root takes its thread. */
export async function deleteComment(ctx: CommentContext, commenter: Commenter, publicId: string, commentId: number): Promise<void> {
  const { scope } = await openDashboard(ctx, commenter, publicId);
  const comment = await requireLiveComment(ctx, scope, publicId, commentId);
  if (!canDelete(commenter, comment)) throw new AppError('forbidden', `comment ${commentId} was written by another user: only its author may delete it`, 'commentId');
  const now = ctx.now();
  const afterCommit = new AfterCommit();
  const removed = await ctx.db.transaction().execute(async (trx) => {
    if (!await markCommentRemoved(trx, scope, comment, commenter.embedUserId, isoTimestamp(now))) return false;
    await ctx.events.publish('comment.deleted', {
      transaction: trx, afterCommit, scope, publicId, at: now, threadId: comment.parent_id ?? comment.id, commentId: comment.id, actorId: commenter.embedUserId,
    });
    return true;
  });
  if (!removed) throw gone(publicId, commentId);
  afterCommit.run();
}

/**
 * SPEC B `POST /dashboard/{publicId}/comments/{commentId}/resolve` and the "Thread" state table: a reply's id is a
 * 400 whoever asks; the root's author resolves (`resolved` true) or re-opens (false); anyone else gets 403.
 * Resolving a resolved thread keeps its first resolution (idempotent).
 */
export async function resolveThread(ctx: CommentContext, commenter: Commenter, publicId: string, commentId: number, resolved: boolean): Promise<Thread> {
  const { scope } = await openDashboard(ctx, commenter, publicId);
  let after = await requireLiveComment(ctx, scope, publicId, commentId);
  if (after.parent_id !== null) {
    throw new AppError('invalid_parameter', `comment ${commentId} is a reply: resolve its thread root ${after.parent_id}`, 'commentId');
  }
  if (!canResolve(commenter, after)) throw new AppError('forbidden', `thread ${commentId} was started by another user: only its author may resolve or re-open it`, 'commentId');
  // The update changes the state only from the other one, so concurrent requests serialize: the first resolution
  // is kept, and a request that lost a race reads the state again and decides again.
  const afterCommit = new AfterCommit();
  for (let attempt = 0; attempt < 10 && resolved !== (after.resolved_at !== null); attempt++) {
    const now = ctx.now();
    const resolution = resolved ? { resolvedAt: isoTimestamp(now), resolvedBy: commenter.embedUserId } : null;
    const changed = await ctx.db.transaction().execute(async (trx) => {
      const row = await setThreadResolution(trx, scope, commentId, commenter.embedUserId, resolution);
      if (row !== undefined) {
        const event = { transaction: trx, afterCommit, scope, publicId, at: now, threadId: commentId, actorId: commenter.embedUserId };
        if (resolved) await ctx.events.publish('thread.resolved', { ...event, resolvedAt: row.resolved_at });
        else await ctx.events.publish('thread.reopened', event);
      }
      return row;
    });
    after = changed ?? await requireLiveComment(ctx, scope, publicId, commentId);
  }
  afterCommit.run();
  return presentThread(after, await selectReplies(ctx.db, scope, [commentId]), publicId, commenter);
}

function decodeUserCursor(after: string, fingerprint: string): UserPosition {
  const [usernameKey, id] = decodeCursor(after, fingerprint, 2);
  if (typeof usernameKey !== 'string' || usernameKey.length > 1024 || !isCursorId(id)) throw invalidCursor('malformed');
  return { usernameKey, id };
}

/**
 * SPEC B `GET /dashboard/{publicId}/comments/mentionable-users` and rule 8: the embed users of the caller's tenant
 * (never platform users, never another tenant), by username case-insensitively then id, optionally those whose
 * username or email contains `search` case-insensitively.
 */
export async function listMentionableUsers(ctx: ServiceContext, commenter: Commenter, publicId: string, query: MentionableUsersQuery): Promise<MentionableUserList> {
  if (query.search?.includes('\u0000')) throw new AppError('invalid_parameter', 'query parameter search contains a NUL character', 'search');
  await openDashboard(ctx, commenter, publicId);
  const search = query.search === undefined || query.search === '' ? null : foldSearchKey(query.search);
  const fingerprint = fingerprintQuery(['mentionable-users', commenter.accountId, commenter.embedTenantId, search]);
  const after = query.after === undefined ? null : decodeUserCursor(query.after, fingerprint);
  const size = pageSize(query.first);
  const rows = await selectMentionableUsers(ctx.db, ctx.dialect, commenter.accountId, commenter.embedTenantId, search, after, size + 1);
  const users = rows.slice(0, size);
  return {
    items: users.map((user) => ({ id: user.id, username: user.username, email: user.email, firstName: user.first_name })),
    pageInfo: pageInfoOf(users, rows.length > size, after !== null, (user) => encodeCursor(fingerprint, [user.username_key, user.id])),
  };
}

/**
 * Issue 23: the scope of a dashboard's comment stream, opened for the commenter exactly as the thread list is (SPEC B
 * rule 10: a dashboard not in the account is a 404, one the session may not read a 403; rule 6: the caller's tenant).
 */
export async function openCommentStream(ctx: ServiceContext, commenter: Commenter, publicId: string): Promise<CommentScope> {
  return (await openDashboard(ctx, commenter, publicId)).scope;
}

const LAST_EVENT_ID = /^(0|[1-9][0-9]{0,9})$/;

/**
 * The stream position a `Last-Event-ID` header names: undefined when it is absent or empty (an EventSource whose
 * last event had an empty `id` sends none), else a whole number up to 2^31 - 1 (event ids are 32-bit), or a 400
 * naming the header.
 */
export function parseLastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined || header === '') return undefined;
  const value = Array.isArray(header) ? header.join(', ') : header;
  if (!LAST_EVENT_ID.test(value) || Number(value) > MAX_ROW_ID) {
    throw new AppError('invalid_parameter', `header Last-Event-ID must be the id of an event this stream sent (a whole number from 0 to ${MAX_ROW_ID}), got ${JSON.stringify(value.slice(0, 40))}`, 'Last-Event-ID');
  }
  return Number(value);
}

/** One event of a comment stream as the commenter is shown it: its type and its data. */
export type PresentedEvent =
  | { type: 'comment.created' | 'comment.edited'; data: StreamCommentData }
  | { type: 'comment.deleted'; data: StreamDeletionData }
  | { type: 'thread.resolved' | 'thread.reopened'; data: StreamResolutionData };

/**
 * An event of the log as a stream sends it (docs/comments.md "Live updates"); call it only for an event
 * `isEventShown` lets through. A comment is shown as it is now (its newest text, `userId` null once its author is
 * deleted), with `isOwn` for this commenter; a resolution as the event made it, by the root's author (only they
 * resolve: SPEC "Thread").
 */
export function presentEvent(row: EventRow, publicId: string, commenter: Commenter): PresentedEvent {
  const threadId = row.parent_id ?? row.comment_id;
  switch (row.kind) {
    case 'created':
    case 'edited': {
      const comment = presentComment({ ...row, id: row.comment_id, resolved_at: null, resolved_by: null }, publicId, commenter);
      return { type: row.kind === 'created' ? 'comment.created' : 'comment.edited', data: { threadId, comment } };
    }
    case 'deleted':
      return { type: 'comment.deleted', data: { threadId, commentId: row.comment_id } };
    case 'resolved':
      return { type: 'thread.resolved', data: { threadId, resolvedAt: row.resolution_at, resolvedBy: row.embed_user_id } };
    case 'reopened':
      return { type: 'thread.reopened', data: { threadId, resolvedAt: null, resolvedBy: null } };
  }
}

