import type { Thread, ThreadFilter } from '../api.js';
import type { ThreadEvent } from './commentStream.js';

/** SPEC B rule 3: which threads a filter lists (an open thread may omit resolvedAt: `== null`). */
export const isListedUnder = (filter: ThreadFilter, thread: Pick<Thread, 'resolvedAt'>): boolean =>
  filter === 'all' || (filter === 'open') === (thread.resolvedAt == null);

/**
 * A stream event applied to the threads a filter lists, idempotently (by comment id): the poster's own panel has
 * already applied its own change from the server's answer, a reloaded list may already hold what an event says, and
 * a deletion may name a comment never shown. Threads not loaded (another page, another filter) are left alone; a new
 * thread goes first (SPEC B rule 2: newest first by start), a reply last in its thread (oldest first).
 *
 * @example
 * const next = applyThreadEvent(threads, 'open', { type: 'comment.deleted', threadId: 4, commentId: 4 });
 */
export function applyThreadEvent(threads: Thread[], filter: ThreadFilter, event: ThreadEvent): Thread[] {
  switch (event.type) {
    case 'comment.created': {
      const { comment } = event;
      if (comment.id === event.threadId) {
        // A new thread is open: the Resolved filter does not list it.
        if (filter === 'resolved' || threads.some((thread) => thread.root.id === comment.id)) return threads;
        return [{ root: comment, replies: [], resolvedAt: null, resolvedBy: null }, ...threads];
      }
      return mapThread(threads, event.threadId, (thread) => (thread.replies.some((reply) => reply.id === comment.id)
        ? thread
        : { ...thread, replies: [...thread.replies, comment] }));
    }
    case 'comment.edited': {
      const { comment } = event;
      return mapThread(threads, event.threadId, (thread) => (thread.root.id === comment.id
        ? { ...thread, root: comment }
        : thread.replies.some((reply) => reply.id === comment.id)
          ? { ...thread, replies: thread.replies.map((reply) => (reply.id === comment.id ? comment : reply)) }
          : thread));
    }
    case 'comment.deleted':
      // SPEC "Comment deletion": a root takes its whole thread; a reply leaves the thread where it is.
      if (event.commentId === event.threadId) {
        return threads.some((thread) => thread.root.id === event.threadId) ? threads.filter((thread) => thread.root.id !== event.threadId) : threads;
      }
      return mapThread(threads, event.threadId, (thread) => (thread.replies.some((reply) => reply.id === event.commentId)
        ? { ...thread, replies: thread.replies.filter((reply) => reply.id !== event.commentId) }
        : thread));
    case 'thread.resolved':
    case 'thread.reopened': {
      const state = { resolvedAt: event.resolvedAt, resolvedBy: event.resolvedBy };
      if (!isListedUnder(filter, state)) {
        return threads.some((thread) => thread.root.id === event.threadId) ? threads.filter((thread) => thread.root.id !== event.threadId) : threads;
      }
      return mapThread(threads, event.threadId, (thread) => ((thread.resolvedAt ?? null) === event.resolvedAt && (thread.resolvedBy ?? null) === event.resolvedBy ? thread : { ...thread, ...state }));
    }
  }
}

/**
 * Whether an event brings into the filter's list a thread whose text the panel does not have (the stream says only
 * that it was resolved or re-opened): the list must be read again to show it.
 */
export function needsListReload(threads: readonly Thread[], filter: ThreadFilter, event: ThreadEvent): boolean {
  if (event.type !== 'thread.resolved' && event.type !== 'thread.reopened') return false;
  return filter !== 'all' && isListedUnder(filter, event) && !threads.some((thread) => thread.root.id === event.threadId);
}

/** Whether an event starts a thread someone else wrote (counted while the panel is closed). */
export function isOthersNewThread(event: ThreadEvent): boolean {
  return event.type === 'comment.created' && event.comment.id === event.threadId && !event.comment.isOwn;
}

function mapThread(threads: Thread[], threadId: number, change: (thread: Thread) => Thread): Thread[] {
  let changed = false;
  const next = threads.map((thread) => {
    if (thread.root.id !== threadId) return thread;
    const updated = change(thread);
    if (updated !== thread) changed = true;
    return updated;
  });
  // The same array when nothing changed: no render, and nothing for the scroll keeper to do.
  return changed ? next : threads;
}
