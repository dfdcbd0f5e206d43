import { describe, expect, it } from 'vitest';
import type { Comment, Thread } from '../api.js';
import { applyThreadEvent, isOthersNewThread, needsListReload } from './threadEvents.js';
import { retryDelay } from './commentStream.js';
import type { ThreadEvent } from './commentStream.js';

const comment = (id: number, body = `c${id}`, isOwn = false): Comment => ({ id, dashboardId: 'd', userId: 1, body, createdAt: '2026-01-01T00:00:00.000Z', isOwn });
const thread = (root: number, replies: number[] = [], resolvedAt: string | null = null): Thread => ({ root: comment(root), replies: replies.map((id) => comment(id)), resolvedAt, resolvedBy: resolvedAt === null ? null : 1 });

describe('stream events applied to the listed threads', () => {
  const threads = [thread(3, [4]), thread(1, [2])];

  it('adds a new thread first and a reply last in its thread, once each (own changes are already shown)', () => {
    const created: ThreadEvent = { type: 'comment.created', threadId: 5, comment: comment(5) };
    const withThread = applyThreadEvent(threads, 'open', created);
    expect(withThread.map((t) => t.root.id)).toEqual([5, 3, 1]);
    expect(applyThreadEvent(withThread, 'open', created)).toBe(withThread);
    const reply: ThreadEvent = { type: 'comment.created', threadId: 1, comment: comment(6) };
    const withReply = applyThreadEvent(threads, 'all', reply);
    expect(withReply[1]!.replies.map((c) => c.id)).toEqual([2, 6]);
    expect(applyThreadEvent(withReply, 'all', reply)).toBe(withReply);
  });

  it('lists no new thread under Resolved, and ignores replies to threads not loaded', () => {
    expect(applyThreadEvent(threads, 'resolved', { type: 'comment.created', threadId: 5, comment: comment(5) })).toBe(threads);
    expect(applyThreadEvent(threads, 'open', { type: 'comment.created', threadId: 99, comment: comment(100) })).toBe(threads);
  });

  it('replaces an edited root or reply', () => {
    const root = applyThreadEvent(threads, 'open', { type: 'comment.edited', threadId: 3, comment: comment(3, 'new root') });
    expect(root[0]!.root.body).toBe('new root');
    const reply = applyThreadEvent(threads, 'open', { type: 'comment.edited', threadId: 1, comment: comment(2, 'new reply') });
    expect(reply[1]!.replies[0]!.body).toBe('new reply');
    expect(reply[0]).toBe(threads[0]);
  });

  it('removes a deleted reply from its thread, and a deleted root with its whole thread; an unknown one changes nothing', () => {
    expect(applyThreadEvent(threads, 'open', { type: 'comment.deleted', threadId: 1, commentId: 2 })[1]!.replies).toEqual([]);
    expect(applyThreadEvent(threads, 'open', { type: 'comment.deleted', threadId: 3, commentId: 3 }).map((t) => t.root.id)).toEqual([1]);
    expect(applyThreadEvent(threads, 'open', { type: 'comment.deleted', threadId: 1, commentId: 77 })).toBe(threads);
    expect(applyThreadEvent(threads, 'open', { type: 'comment.deleted', threadId: 8, commentId: 8 })).toBe(threads);
  });

  it('drops a resolved thread from Open, marks it under All, and drops a re-opened one from Resolved', () => {
    const resolved: ThreadEvent = { type: 'thread.resolved', threadId: 3, resolvedAt: '2026-02-01T00:00:00.000Z', resolvedBy: 1 };
    expect(applyThreadEvent(threads, 'open', resolved).map((t) => t.root.id)).toEqual([1]);
    const all = applyThreadEvent(threads, 'all', resolved);
    expect(all[0]).toMatchObject({ resolvedAt: '2026-02-01T00:00:00.000Z', resolvedBy: 1 });
    expect(applyThreadEvent(all, 'all', resolved)).toBe(all);
    const reopened: ThreadEvent = { type: 'thread.reopened', threadId: 3, resolvedAt: null, resolvedBy: null };
    expect(applyThreadEvent(all, 'resolved', reopened).map((t) => t.root.id)).toEqual([1]);
    expect(applyThreadEvent(all, 'all', reopened)[0]).toMatchObject({ resolvedAt: null, resolvedBy: null });
  });

  it('asks for a reload only when a thread it lacks comes into the filter', () => {
    const resolved: ThreadEvent = { type: 'thread.resolved', threadId: 9, resolvedAt: '2026-02-01T00:00:00.000Z', resolvedBy: 1 };
    const reopened: ThreadEvent = { type: 'thread.reopened', threadId: 9, resolvedAt: null, resolvedBy: null };
    expect(needsListReload(threads, 'resolved', resolved)).toBe(true);
    expect(needsListReload(threads, 'open', reopened)).toBe(true);
    expect(needsListReload(threads, 'open', resolved)).toBe(false);
    expect(needsListReload(threads, 'all', reopened)).toBe(false);
    expect(needsListReload([thread(9)], 'open', reopened)).toBe(false);
  });

  it("counts others' new threads, not replies and not the viewer's own", () => {
    expect(isOthersNewThread({ type: 'comment.created', threadId: 5, comment: comment(5) })).toBe(true);
    expect(isOthersNewThread({ type: 'comment.created', threadId: 5, comment: comment(5, 'x', true) })).toBe(false);
    expect(isOthersNewThread({ type: 'comment.created', threadId: 1, comment: comment(6) })).toBe(false);
  });
});

describe('the wait before reconnecting', () => {
  it("starts at the server's retry, doubles with each failure up to a minute, and is jittered by up to half", () => {
    expect(retryDelay(3000, 0, () => 1)).toBe(3000);
    expect(retryDelay(3000, 0, () => 0)).toBe(1500);
    expect(retryDelay(3000, 2, () => 1)).toBe(12_000);
    expect(retryDelay(3000, 10, () => 1)).toBe(60_000);
    expect(retryDelay(3000, 1000, () => 0)).toBe(30_000);
  });
});
