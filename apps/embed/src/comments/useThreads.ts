import { useCallback, useEffect, useRef, useState } from 'react';
import { fetchThreads } from '../api.js';
import type { PageInfo, Thread, ThreadFilter } from '../api.js';
import type { EmbedSession } from '../session.js';
import { isSessionLapse, messageOf } from './failures.js';

/** Threads per page (SPEC Limits: the server's default is 100; every thread carries all its replies). */
export const THREADS_PER_PAGE = 20;

export type ThreadsStatus = 'loading' | 'ready' | 'failed' | 'stopped';

export interface ThreadsState {
  /** Which list these threads are: a new dashboard or filter shows none of the old ones while it loads. */
  publicId: string;
  filter: ThreadFilter;
  threads: Thread[];
  pageInfo: PageInfo | undefined;
  /** `stopped`: a 401 lapsed the session; what is shown stays as it was. */
  status: ThreadsStatus;
  error: string | undefined;
  isLoadingMore: boolean;
}

/** A change to the loaded threads made after a mutation; written to be idempotent (see `useThreads`). */
export type ThreadsUpdate = (threads: Thread[]) => Thread[];

export interface UseThreads {
  state: ThreadsState;
  /** Loads the page after the last one; resolves to the root id of the first thread it added, if any. */
  loadMore(): Promise<number | undefined>;
  /** Loads the first page again (retry, or a comment found gone). */
  reload(): void;
  /** Applies a mutation's outcome locally, so the list shows what the server now holds without a reload. */
  update(change: ThreadsUpdate): void;
}

const hasMore = (pageInfo: PageInfo | undefined): pageInfo is PageInfo & { endCursor: string } =>
  // SPEC B rule 7: loops are driven by hasNextPage, and a null cursor sent back is bogus, not a restart.
  pageInfo !== undefined && pageInfo.hasNextPage && typeof pageInfo.endCursor === 'string';

/** Whether another page can be asked for. */
export function canLoadMore(state: ThreadsState): boolean {
  return hasMore(state.pageInfo);
}

/**
 * The dashboard's threads under a filter (SPEC B rules 2, 3, 7): the first page, loaded again when the
 * dashboard, the filter or `refreshKey` changes, and further pages by cursor. Local updates made while a first
 * page is on its way are applied to it too when it lands, so a mutation is never undone by an older read.
 * `isStarted` false holds the first read back (the panel waits for its live stream to be ready, so that no change
 * falls between the list and the stream); it starts when it turns true.
 *
 * @example
 * const { state, loadMore, update } = useThreads(session, 'q1-review', 'open', refreshKey, report);
 * update((threads) => threads.filter((thread) => thread.root.id !== 42));
 */
export function useThreads(session: EmbedSession, publicId: string, filter: ThreadFilter, refreshKey: number, report: (error: unknown) => void, isStarted = true): UseThreads {
  const [state, setState] = useState<ThreadsState>({
    publicId, filter, threads: [], pageInfo: undefined, status: 'loading', error: undefined, isLoadingMore: false,
  });
  const [reloadKey, setReloadKey] = useState(0);
  // Each first-page load gets a number; answers of an older one are dropped.
  const generation = useRef(0);
  const pendingUpdates = useRef<ThreadsUpdate[]>([]);
  const isLoadingMore = useRef(false);
  const reportRef = useRef(report);
  useEffect(() => {
    reportRef.current = report;
  }, [report]);

  useEffect(() => {
    if (!isStarted) return;
    const current = ++generation.current;
    pendingUpdates.current = [];
    isLoadingMore.current = false;
    setState((previous) => (previous.publicId === publicId && previous.filter === filter
      // A refresh keeps the threads shown until the new page replaces them.
      ? { ...previous, status: 'loading', error: undefined, isLoadingMore: false }
      : { publicId, filter, threads: [], pageInfo: undefined, status: 'loading', error: undefined, isLoadingMore: false }));
    fetchThreads(session, publicId, filter, undefined, THREADS_PER_PAGE).then((page) => {
      if (generation.current !== current) return;
      const threads = pendingUpdates.current.reduce((items, change) => change(items), page.items);
      pendingUpdates.current = [];
      setState({ publicId, filter, threads, pageInfo: page.pageInfo, status: 'ready', error: undefined, isLoadingMore: false });
    }, (error: unknown) => {
      if (generation.current !== current) return;
      if (isSessionLapse(error)) {
        setState((previous) => ({ ...previous, status: 'stopped' }));
        return;
      }
      setState((previous) => ({ ...previous, status: 'failed', error: messageOf(error) }));
      reportRef.current(error);
    });
  }, [session, publicId, filter, refreshKey, reloadKey, isStarted]);

  const loadMore = useCallback(async (): Promise<number | undefined> => {
    const { pageInfo } = state;
    if (!hasMore(pageInfo) || isLoadingMore.current) return undefined;
    const current = generation.current;
    isLoadingMore.current = true;
    setState((previous) => ({ ...previous, isLoadingMore: true }));
    try {
      const page = await fetchThreads(session, publicId, filter, pageInfo.endCursor, THREADS_PER_PAGE);
      if (generation.current !== current) return undefined;
      setState((previous) => {
        // A thread posted here since the first page is already shown; the cursor keeps the rest in order.
        const shown = new Set(previous.threads.map((thread) => thread.root.id));
        const added = page.items.filter((thread) => !shown.has(thread.root.id));
        return { ...previous, threads: [...previous.threads, ...added], pageInfo: page.pageInfo, error: undefined, isLoadingMore: false };
      });
      const shownBefore = new Set(state.threads.map((thread) => thread.root.id));
      return page.items.find((thread) => !shownBefore.has(thread.root.id))?.root.id;
    } catch (error) {
      if (generation.current !== current) return undefined;
      if (isSessionLapse(error)) {
        setState((previous) => ({ ...previous, isLoadingMore: false, status: 'stopped' }));
        return undefined;
      }
      setState((previous) => ({ ...previous, isLoadingMore: false, error: messageOf(error) }));
      reportRef.current(error);
      return undefined;
    } finally {
      if (generation.current === current) isLoadingMore.current = false;
    }
  }, [state, session, publicId, filter]);

  const reload = useCallback(() => setReloadKey((key) => key + 1), []);

  const update = useCallback((change: ThreadsUpdate) => {
    pendingUpdates.current.push(change);
    setState((previous) => {
      const threads = change(previous.threads);
      return threads === previous.threads ? previous : { ...previous, threads };
    });
  }, []);

  return { state, loadMore, reload, update };
}
