import { sql } from 'kysely';
import type { Kysely, Selectable } from 'kysely';
import { prepare } from '../db/db.prepared.js';
import type { CommentEventKind, Database } from '../db/db.schema.js';

export type CommentRow = Selectable<Database['comments']>;

/** Where every comment query is confined: one account, one embed tenant, one dashboard (SPEC B rule 6). */
export interface CommentScope {
  accountId: number;
  embedTenantId: number;
  dashboardId: number;
}

/** SPEC B rule 3: which threads a list returns, decided in SQL before the page is cut. */
export type ThreadFilter = 'open' | 'resolved' | 'all';

/** A keyset position in the thread list: the root's creation time and id (newest first). */
export interface ThreadPosition {
  createdAt: string;
  id: number;
}

const commentColumns = [
  'c.id', 'c.account_id', 'c.embed_tenant_id', 'c.dashboard_id', 'c.parent_id', 'c.embed_user_id', 'c.body',
  'c.created_at', 'c.edited_at', 'c.removed_at', 'c.is_resolved', 'c.resolved_at', 'c.resolved_by',
] as const;

/**
 * What a listed comment shows (SPEC "Comment" and "Thread"), and no more: a page reads about a thousand rows, and
 * each column read is paid per row.
 */
const listedColumns = ['c.id', 'c.parent_id', 'c.embed_user_id', 'c.body', 'c.created_at', 'c.edited_at', 'c.resolved_at', 'c.resolved_by'] as const;

/** A comment as a list shows it. */
export type ListedComment = Pick<CommentRow, 'id' | 'parent_id' | 'embed_user_id' | 'body' | 'created_at' | 'edited_at' | 'resolved_at' | 'resolved_by'>;

/**
 * A live comment of the scope, or undefined: one that does not exist, was deleted, sits in a thread whose root was
 * deleted, or belongs to another dashboard or tenant all look the same (404).
 */
export async function findLiveComment(db: Kysely<Database>, scope: CommentScope, commentId: number): Promise<CommentRow | undefined> {
  return liveComment.first(db, { ...scope, commentId });
}

const liveComment = prepare((db, p: CommentScope & { commentId: number }) =>
  db.selectFrom('comments as c')
    .leftJoin('comments as r', 'r.id', 'c.parent_id')
    .select(commentColumns)
    .where('c.id', '=', p.commentId)
    .where('c.account_id', '=', p.accountId)
    .where('c.embed_tenant_id', '=', p.embedTenantId)
    .where('c.dashboard_id', '=', p.dashboardId)
    .where('c.removed_at', 'is', null)
    // A reply lives only while its root does (a reply that raced its root's deletion stays invisible).
    .where((eb) => eb.or([eb('c.parent_id', 'is', null), eb('r.removed_at', 'is', null)])));

export async function insertComment(
  db: Kysely<Database>,
  scope: CommentScope,
  values: { parentId: number | null; embedUserId: number; body: string; createdAt: string },
): Promise<CommentRow> {
  // One statement: the thread list's version moves in its trigger (migration 0004).
  const [row] = await newComment.execute(db, { ...scope, ...values });
  return row!;
}

const newComment = prepare((db, p: CommentScope & { parentId: number | null; embedUserId: number; body: string; createdAt: string }) =>
  db.insertInto('comments')
    .values({
      account_id: p.accountId, embed_tenant_id: p.embedTenantId, dashboard_id: p.dashboardId,
      parent_id: p.parentId, embed_user_id: p.embedUserId, body: p.body, created_at: p.createdAt,
    })
    .returningAll());

/** The version of the scope's threads (0 before its first comment). Read before the threads themselves. */
export async function readStreamVersion(db: Kysely<Database>, scope: CommentScope): Promise<number> {
  return (await streamVersion.first(db, scope))?.version ?? 0;
}

const streamVersion = prepare((db, p: CommentScope) =>
  db.selectFrom('comment_streams').select('version')
    .where('dashboard_id', '=', p.dashboardId).where('embed_tenant_id', '=', p.embedTenantId).where('account_id', '=', p.accountId));

/** Replaces the body of a live comment of its author; undefined if it is gone meanwhile. */
export async function updateCommentBody(db: Kysely<Database>, scope: CommentScope, commentId: number, authorId: number, body: string, editedAt: string): Promise<CommentRow | undefined> {
  return db.updateTable('comments')
    .set({ body, edited_at: editedAt })
    .where('id', '=', commentId)
    .where('account_id', '=', scope.accountId)
    .where('embed_tenant_id', '=', scope.embedTenantId)
    .where('embed_user_id', '=', authorId)
    .where('removed_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Soft-deletes a live comment of its author (SPEC "Comment deletion"). A root takes its replies with it in the same
 * statement, so no reply of a deleted thread is ever live, and no second statement can deadlock against a
 * concurrent edit of a reply on PostgreSQL (the rows are locked before the stream's version moves, at the end of
 * the statement). Whether the comment itself was live and its author's.
 */
export async function markCommentRemoved(db: Kysely<Database>, scope: CommentScope, comment: CommentRow, authorId: number, removedAt: string): Promise<boolean> {
  const rows = await db.updateTable('comments')
    .set({ removed_at: removedAt })
    .where('account_id', '=', scope.accountId)
    .where('embed_tenant_id', '=', scope.embedTenantId)
    .where('removed_at', 'is', null)
    .where((eb) => {
      const itself = eb.and([eb('id', '=', comment.id), eb('embed_user_id', '=', authorId)]);
      if (comment.parent_id !== null) return itself;
      // The replies go only if the root goes: the same conditions, read in the statement's snapshot.
      const rootIsTheAuthors = eb.exists(eb.selectFrom('comments as r').select('r.id')
        .where('r.id', '=', comment.id).where('r.embed_user_id', '=', authorId).where('r.removed_at', 'is', null)
        .where('r.account_id', '=', scope.accountId).where('r.embed_tenant_id', '=', scope.embedTenantId));
      return eb.or([itself, eb.and([eb('parent_id', '=', comment.id), rootIsTheAuthors])]);
    })
    .returning('id')
    .execute();
  return rows.some((row) => row.id === comment.id);
}

/** Resolves or re-opens a live thread root of its author; the row after, or undefined if it is gone or already in that state. */
export async function setThreadResolution(
  db: Kysely<Database>,
  scope: CommentScope,
  rootId: number,
  authorId: number,
  resolution: { resolvedAt: string; resolvedBy: number } | null,
): Promise<CommentRow | undefined> {
  return db.updateTable('comments')
    .set(resolution === null
      ? { is_resolved: 0, resolved_at: null, resolved_by: null }
      : { is_resolved: 1, resolved_at: resolution.resolvedAt, resolved_by: resolution.resolvedBy })
    .where('id', '=', rootId)
    .where('account_id', '=', scope.accountId)
    .where('embed_tenant_id', '=', scope.embedTenantId)
    .where('parent_id', 'is', null)
    .where('embed_user_id', '=', authorId)
    .where('removed_at', 'is', null)
    // Only a change of state: of two concurrent resolutions the first stays, and the second sees it.
    .where('is_resolved', '=', resolution === null ? 1 : 0)
    .returningAll()
    .executeTakeFirst();
}

/**
 * One page of live thread roots, newest first by start time (SPEC B rule 2), filtered by state in SQL (rule 3),
 * after a keyset position. `limit` rows at most: the caller asks for one more than the page to learn whether a
 * next page exists. Served by the partial indexes `comments_threads_ix` / `comments_threads_state_ix`.
 */
export async function selectThreadRoots(db: Kysely<Database>, scope: CommentScope, filter: ThreadFilter, after: ThreadPosition | null, limit: number): Promise<ListedComment[]> {
  const statement = threadRoots[filter][after === null ? 'first' : 'next'];
  return statement.execute(db, { ...scope, limit, afterCreatedAt: after?.createdAt ?? '', afterId: after?.id ?? 0 });
}

type ThreadRootsParams = CommentScope & { limit: number; afterCreatedAt: string; afterId: number };

/** The thread list's six shapes (by state filter, first page or after a position), each compiled once. */
function threadRootsOf(filter: ThreadFilter, paged: boolean) {
  return prepare((db, p: ThreadRootsParams) => {
    let query = db.selectFrom('comments as c')
      .select(listedColumns)
      .where('c.dashboard_id', '=', p.dashboardId)
      .where('c.embed_tenant_id', '=', p.embedTenantId)
      .where('c.account_id', '=', p.accountId)
      .where('c.parent_id', 'is', null)
      .where('c.removed_at', 'is', null);
    // A value fixed by the shape: compiled in once, bound on every run.
    if (filter !== 'all') query = query.where('c.is_resolved', '=', filter === 'resolved' ? 1 : 0);
    if (paged) query = query.where(sql<boolean>`(c.created_at, c.id) < (${p.afterCreatedAt}, ${p.afterId})`);
    return query.orderBy('c.created_at', 'desc').orderBy('c.id', 'desc').limit(p.limit);
  });
}

const threadRoots = Object.fromEntries((['open', 'resolved', 'all'] as const).map((filter) =>
  [filter, { first: threadRootsOf(filter, false), next: threadRootsOf(filter, true) }])) as Record<ThreadFilter, Record<'first' | 'next', ReturnType<typeof threadRootsOf>>>;

/**
 * Every live reply of these roots in one query (no query per thread), grouped by root and oldest first within
 * each (SPEC "Thread": replies oldest first).
 */
export async function selectReplies(db: Kysely<Database>, scope: Omit<CommentScope, 'dashboardId'>, rootIds: readonly number[]): Promise<ListedComment[]> {
  if (rootIds.length === 0) return [];
  return db.selectFrom('comments as c')
    .select(listedColumns)
    .where('c.parent_id', 'in', rootIds)
    .where('c.embed_tenant_id', '=', scope.embedTenantId)
    .where('c.account_id', '=', scope.accountId)
    .where('c.removed_at', 'is', null)
    .orderBy('c.parent_id').orderBy('c.created_at').orderBy('c.id')
    .execute();
}

/** Where the events of one stream come from, with the account that owns them. */
export type EventScope = CommentScope;

/**
 * An event of the log with the state of its comment now (issue 23): whether it and its thread's root still live
 * decides whether a stream shows it (comments.policy.ts `isEventShown`), and a shown comment is presented as it is
 * now. `resolution_at` is the resolution the event made (`resolved` only).
 */
export type EventRow = Pick<CommentRow, 'parent_id' | 'embed_user_id' | 'body' | 'created_at' | 'edited_at' | 'removed_at'> & {
  id: number;
  kind: CommentEventKind;
  comment_id: number;
  resolution_at: string | null;
  root_removed_at: string | null;
};

/**
 * The scope's position now: its newest event id, or (when retention removed every event) the last one removed; 0
 * before its first event.
 */
export async function readEventHead(db: Kysely<Database>, scope: EventScope): Promise<number> {
  const [newest, pruned] = await Promise.all([eventHead.first(db, scope), prunedThrough.first(db, scope)]);
  return Math.max(newest?.id ?? 0, pruned?.events_pruned_through ?? 0);
}

const eventHead = prepare((db, p: EventScope) =>
  db.selectFrom('comment_events').select((eb) => eb.fn.max('id').as('id'))
    .where('dashboard_id', '=', p.dashboardId).where('embed_tenant_id', '=', p.embedTenantId).where('account_id', '=', p.accountId));

/**
 * The scope's events after `afterId`, oldest first, `limit` at most, each with its comment as it is now. Served by
 * `comment_events_scope_ix` and the comments' primary key.
 */
export async function selectEventsAfter(db: Kysely<Database>, scope: EventScope, afterId: number, limit: number): Promise<EventRow[]> {
  return eventsAfter.execute(db, { ...scope, afterId, limit });
}

const eventsAfter = prepare((db, p: EventScope & { afterId: number; limit: number }) =>
  db.selectFrom('comment_events as e')
    .innerJoin('comments as c', (j) => j.onRef('c.id', '=', 'e.comment_id').onRef('c.account_id', '=', 'e.account_id'))
    .leftJoin('comments as r', 'r.id', 'c.parent_id')
    .select([
      'e.id', 'e.kind', 'e.comment_id', 'e.resolved_at as resolution_at', 'c.parent_id', 'c.embed_user_id', 'c.body', 'c.created_at',
      'c.edited_at', 'c.removed_at', 'r.removed_at as root_removed_at',
    ])
    .where('e.dashboard_id', '=', p.dashboardId).where('e.embed_tenant_id', '=', p.embedTenantId).where('e.account_id', '=', p.accountId)
    .where('e.id', '>', p.afterId)
    .orderBy('e.id')
    .limit(p.limit));

/** How many events of the scope follow `afterId`, counted up to `limit` (ids only: the index alone answers). */
export async function countEventsAfter(db: Kysely<Database>, scope: EventScope, afterId: number, limit: number): Promise<number> {
  return (await eventIdsAfter.execute(db, { ...scope, afterId, limit })).length;
}

const eventIdsAfter = prepare((db, p: EventScope & { afterId: number; limit: number }) =>
  db.selectFrom('comment_events').select('id')
    .where('dashboard_id', '=', p.dashboardId).where('embed_tenant_id', '=', p.embedTenantId).where('account_id', '=', p.accountId)
    .where('id', '>', p.afterId)
    .orderBy('id')
    .limit(p.limit));

/**
 * Whether a stream of the scope can resume after `lastEventId`: the id of an event of the scope still kept, or the
 * last id retention removed (0 while it removed none), after which nothing was removed. Anything else (an id before
 * what retention removed, another scope's id, an id never handed out) cannot say what was missed.
 */
export async function isResumablePosition(db: Kysely<Database>, scope: EventScope, lastEventId: number): Promise<boolean> {
  const pruned = (await prunedThrough.first(db, scope))?.events_pruned_through ?? 0;
  if (lastEventId <= pruned) return lastEventId === pruned;
  return (await eventById.first(db, { ...scope, id: lastEventId })) !== undefined;
}

const prunedThrough = prepare((db, p: EventScope) =>
  db.selectFrom('comment_streams').select('events_pruned_through')
    .where('dashboard_id', '=', p.dashboardId).where('embed_tenant_id', '=', p.embedTenantId).where('account_id', '=', p.accountId));

const eventById = prepare((db, p: EventScope & { id: number }) =>
  db.selectFrom('comment_events').select('id')
    .where('id', '=', p.id).where('dashboard_id', '=', p.dashboardId).where('embed_tenant_id', '=', p.embedTenantId).where('account_id', '=', p.accountId));

/** The newest event id of every scope, 0 before the first event. */
export async function readLatestEventId(db: Kysely<Database>): Promise<number> {
  return (await db.selectFrom('comment_events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst())?.id ?? 0;
}

/**
 * The scopes with events after `afterId`, each with its newest event id, in every account: what one process's
 * streams must read after a commit on SQLite, whose single writer hands out ids in commit order across scopes.
 * Never on PostgreSQL, where ids of different scopes commit out of order (its notifications name the scope).
 */
export async function selectScopesWithEventsAfter(db: Kysely<Database>, afterId: number): Promise<Array<EventScope & { lastId: number }>> {
  const rows = await scopesAfter.execute(db, { afterId });
  return rows.map((row) => ({ accountId: row.account_id, embedTenantId: row.embed_tenant_id, dashboardId: row.dashboard_id, lastId: row.last_id }));
}

const scopesAfter = prepare((db, p: { afterId: number }) =>
  db.selectFrom('comment_events')
    .select(['account_id', 'embed_tenant_id', 'dashboard_id', (eb) => eb.fn.max('id').as('last_id')])
    .where('id', '>', p.afterId)
    .groupBy(['account_id', 'embed_tenant_id', 'dashboard_id']));

/**
 * Removes the events the database recorded before `cutoff` (retention), scope by scope, and notes in each scope's
 * `comment_streams` row the highest id removed, so that a stream never resumes across the gap. One transaction;
 * the scopes in one order, so two processes pruning at once wait for each other rather than deadlock. The number
 * of events removed.
 */
export async function pruneCommentEvents(db: Kysely<Database>, cutoff: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const scopes = await trx.selectFrom('comment_events')
      .select(['dashboard_id', 'embed_tenant_id', (eb) => eb.fn.max('id').as('through')])
      .where('recorded_at', '<', cutoff)
      .groupBy(['dashboard_id', 'embed_tenant_id'])
      .orderBy('dashboard_id').orderBy('embed_tenant_id')
      .execute();
    let removed = 0;
    for (const scope of scopes) {
      await trx.updateTable('comment_streams').set({ events_pruned_through: scope.through })
        .where('dashboard_id', '=', scope.dashboard_id).where('embed_tenant_id', '=', scope.embed_tenant_id)
        .where('events_pruned_through', '<', scope.through)
        .execute();
      const result = await trx.deleteFrom('comment_events')
        .where('dashboard_id', '=', scope.dashboard_id).where('embed_tenant_id', '=', scope.embed_tenant_id).where('id', '<=', scope.through)
        .executeTakeFirst();
      removed += Number(result.numDeletedRows);
    }
    return removed;
  });
}

