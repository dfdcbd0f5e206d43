import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { deleteComment, editComment, fetchMentionableUsers, postComment, resolveThread } from '../api.js';
import type { Comment, MentionableUser, Thread, ThreadFilter } from '../api.js';
import type { Formatters } from '../format.js';
import type { EmbedSession } from '../session.js';
import { Composer } from './Composer.js';
import { isGone, isSessionLapse, isWorthReporting, messageOf } from './failures.js';
import { ThreadView } from './ThreadView.js';
import type { ThreadActions } from './ThreadView.js';
import type { Translate } from '../i18n.js';
import { useMentionDirectory } from './useMentionDirectory.js';
import { canLoadMore, useThreads } from './useThreads.js';
import type { CommentStreamListener } from './commentStream.js';
import { applyThreadEvent, isListedUnder, isOthersNewThread, needsListReload } from './threadEvents.js';
import { useCommentStream } from './useCommentStream.js';

/** What the comment panel gets from the embed (issue 6 scope 4). */
export interface CommentPanelProps {
  session: EmbedSession;
  /** The dashboard whose threads are shown (SPEC B: `dashboardId` is its publicId). */
  publicId: string;
  t: Translate;
  format: Formatters;
  /** Bumped by svc:action:refresh: the panel reloads its first page. */
  refreshKey: number;
  /** A failure worth telling the host (never a 401: the session reports that itself). */
  onError(error: unknown, context: string): void;
  /** Whether the viewer sees the panel (default true). Closed, it stays mounted and counts others' new threads. */
  isOpen?: boolean;
  /** The count of threads others started while the panel was closed (0 once it opens). */
  onUnseenChange?(count: number): void;
  /** The open threads loaded (`more`: a further page exists), for the closed panel's button; told while Open is shown. */
  onOpenCountChange?(count: number, more: boolean): void;
  /** Bumped when the host swapped in a new session (set-session): the live stream reconnects with its token. */
  credentialKey?: number;
  /** The viewer started a thread or replied, and svc stored it (the host's svc:event:comment). */
  onPosted?(kind: 'thread-created' | 'reply-created', comment: Comment, threadId: number): void;
}

/** How long the first read of the list waits for the live stream to be ready before it goes ahead without (ms). */
const STREAM_WAIT_MS = 2000;

/** Where the viewer's eye is: an element of the panel and its distance from the top of the viewport. */
interface ScrollAnchor { element: Element; top: number }

/** The element that scrolls the panel: its nearest scrolling ancestor, else the page. */
function scrollerOf(element: Element): Element {
  for (let parent = element.parentElement; parent !== null; parent = parent.parentElement) {
    const { overflowY } = getComputedStyle(parent);
    if ((overflowY === 'auto' || overflowY === 'scroll') && parent.scrollHeight > parent.clientHeight) return parent;
  }
  return document.scrollingElement ?? document.documentElement;
}

/**
 * What must stay in place when the stream changes the list above it: the focused control in the panel (a half-typed
 * reply) when it is on screen, else the first thread on screen. None at the top of the page (a viewer there sees
 * new threads arrive, as browsers' own scroll anchoring does) or while the panel is hidden.
 */
function findScrollAnchor(panel: HTMLElement | null): ScrollAnchor | undefined {
  if (panel === null || panel.offsetParent === null) return undefined;
  if (scrollerOf(panel).scrollTop <= 0) return undefined;
  const onScreen = (element: Element) => {
    const box = element.getBoundingClientRect();
    return box.bottom > 0 && box.top < innerHeight;
  };
  const focused = document.activeElement;
  if (focused !== null && focused !== panel && panel.contains(focused) && onScreen(focused)) return { element: focused, top: focused.getBoundingClientRect().top };
  const thread = [...panel.querySelectorAll('article[data-thread-id]')].find(onScreen);
  return thread === undefined ? undefined : { element: thread, top: thread.getBoundingClientRect().top };
}

/** How many people the `@` autocomplete lists. */
const SUGGESTIONS = 8;

const FILTERS: ReadonlyArray<{ filter: ThreadFilter; label: 'filterOpen' | 'filterResolved' | 'filterAll' }> = [
  { filter: 'open', label: 'filterOpen' },
  { filter: 'resolved', label: 'filterResolved' },
  { filter: 'all', label: 'filterAll' },
];

/** Unsaved text by form: `new`, `reply:<rootId>`, `edit:<commentId>`; a key is present while its form is open. */
type Drafts = Record<string, string>;

const replyKey = (thread: Thread) => `reply:${thread.root.id}`;
const editKey = (comment: Comment) => `edit:${comment.id}`;

const replaceComment = (updated: Comment) => (threads: Thread[]) => threads.map((thread) => (
  thread.root.id === updated.id
    ? { ...thread, root: updated }
    : thread.replies.some((reply) => reply.id === updated.id)
      ? { ...thread, replies: thread.replies.map((reply) => (reply.id === updated.id ? updated : reply)) }
      : thread
));

/**
 * The built-in comment panel (issue 6 scope 4, SPEC B): the dashboard's threads newest first with their replies,
 * Open / Resolved / All, more by cursor, a new thread, replies, and edit, delete and resolve on the viewer's own
 * comments and threads, with `@` autocomplete over the tenant's mentionable users. Every mutation updates the
 * list from the server's answer. Drafts live here, so a refresh or a token swap keeps them; a 401 stops the panel
 * as it is (the App shows the lapse and tells the host).
 *
 * Issue 23: the panel follows the dashboard's live stream (commentStream.ts) while it is mounted, open or closed.
 * Others' threads, replies, edits, deletions, resolutions and re-openings show without a reload, keeping drafts and
 * the viewer's place on the page; the viewer's own changes, already shown from the server's answers, are not shown
 * twice (events apply by id). The first page is read once the stream is ready (or after STREAM_WAIT_MS), so no
 * change falls between the two; a `stream.reset` reads it again. While closed, it counts others' new threads.
 */
export function CommentPanel(props: CommentPanelProps) {
  const { session, publicId, t, format, refreshKey, onPosted } = props;
  const [filter, setFilter] = useState<ThreadFilter>('open');
  const [draftState, setDraftState] = useState<{ publicId: string; drafts: Drafts }>({ publicId, drafts: {} });
  const [announcement, setAnnouncement] = useState('');
  const panel = useRef<HTMLElement | null>(null);
  const heading = useRef<HTMLHeadingElement | null>(null);
  const baseId = useId();
  const headingId = `${baseId}-heading`;

  const onErrorRef = useRef(props.onError);
  useEffect(() => {
    onErrorRef.current = props.onError;
  }, [props.onError]);
  const report = useCallback((error: unknown) => onErrorRef.current(error, 'comments'), []);

  // The first page waits for the stream (see above); it goes ahead without it when the stream is slow or down.
  const [isListStarted, setListStarted] = useState(false);
  const listStarted = useRef(false);
  const startList = useCallback((): boolean => {
    if (listStarted.current) return false;
    listStarted.current = true;
    setListStarted(true);
    return true;
  }, []);
  useEffect(() => {
    const timer = setTimeout(startList, STREAM_WAIT_MS);
    return () => clearTimeout(timer);
  }, [startList]);

  const { state, loadMore, reload, update } = useThreads(session, publicId, filter, refreshKey, report, isListStarted);
  const { directory, learn } = useMentionDirectory(session, publicId, refreshKey, report);

  // Others' new threads while the panel is closed, by root id (a thread deleted meanwhile is not counted).
  const isOpen = props.isOpen ?? true;
  const isOpenRef = useRef(isOpen);
  const unseen = useRef(new Set<number>());
  const [unseenCount, setUnseenCount] = useState(0);
  useEffect(() => {
    isOpenRef.current = isOpen;
    if (!isOpen) return;
    unseen.current.clear();
    setUnseenCount(0);
  }, [isOpen]);
  const onUnseenChange = useRef(props.onUnseenChange);
  useEffect(() => {
    onUnseenChange.current = props.onUnseenChange;
  }, [props.onUnseenChange]);
  useEffect(() => onUnseenChange.current?.(unseenCount), [unseenCount]);
  const onOpenCountChange = useRef(props.onOpenCountChange);
  useEffect(() => {
    onOpenCountChange.current = props.onOpenCountChange;
  }, [props.onOpenCountChange]);

  // The viewer's place on the page across a change the stream makes (set before the change, restored after it).
  const scrollAnchor = useRef<ScrollAnchor | undefined>(undefined);
  useLayoutEffect(() => {
    const anchor = scrollAnchor.current;
    scrollAnchor.current = undefined;
    if (anchor === undefined || !anchor.element.isConnected) return;
    const moved = anchor.element.getBoundingClientRect().top - anchor.top;
    if (Math.abs(moved) >= 1) scrollerOf(anchor.element).scrollTop += moved;
  });

  const latest = useRef({ threads: state.threads, filter });
  latest.current = { threads: state.threads, filter };
  const listener: CommentStreamListener = {
    ready(resumed) {
      // A fresh stream starts at the newest event: the list is read after it (again, if it was read before).
      if (!resumed && !startList()) reload();
    },
    reset() {
      if (!startList()) reload();
    },
    event(event) {
      const { threads, filter: shown } = latest.current;
      if (isOthersNewThread(event)) {
        if (!isOpenRef.current) {
          unseen.current.add(event.threadId);
          setUnseenCount(unseen.current.size);
        } else {
          setAnnouncement(t('liveThread'));
        }
      } else if (event.type === 'comment.created' && !event.comment.isOwn && isOpenRef.current && threads.some((thread) => thread.root.id === event.threadId)) {
        setAnnouncement(t('liveReply'));
      }
      if (event.type === 'comment.deleted' && event.commentId === event.threadId && unseen.current.delete(event.threadId)) setUnseenCount(unseen.current.size);
      if (needsListReload(threads, shown, event)) reload();
      scrollAnchor.current ??= findScrollAnchor(panel.current);
      update((items) => applyThreadEvent(items, shown, event));
    },
    stopped() {
      startList();
    },
    interrupted() {
      startList();
    },
  };
  useCommentStream(session, publicId, props.credentialKey ?? 0, listener);

  // Drafts belong to one dashboard: another dashboard starts with none.
  const drafts = draftState.publicId === publicId ? draftState.drafts : {};
  const setDraft = useCallback((key: string, value: string | undefined) => {
    setDraftState((previous) => {
      const next = { ...(previous.publicId === publicId ? previous.drafts : {}) };
      if (value === undefined) delete next[key];
      else next[key] = value;
      return { publicId, drafts: next };
    });
  }, [publicId]);

  // A thread to focus once it is on screen: the list update that adds it may commit after the next frame, so the
  // effect below tries again after every render until the thread is there.
  const pendingFocus = useRef<number | null>(null);
  const focusPending = () => {
    const rootId = pendingFocus.current;
    if (rootId === null) return;
    const thread = panel.current?.querySelector<HTMLElement>(`[data-thread-id="${rootId}"]`);
    if (!thread) return;
    pendingFocus.current = null;
    thread.focus();
  };
  useEffect(focusPending);
  const focusThread = (rootId: number) => {
    pendingFocus.current = rootId;
    requestAnimationFrame(focusPending);
  };
  const focusHeading = () => {
    pendingFocus.current = null;
    requestAnimationFrame(() => heading.current?.focus());
  };

  const onFailure = useCallback((error: unknown): string | undefined => {
    if (isSessionLapse(error)) return undefined;
    if (isWorthReporting(error)) report(error);
    const message = messageOf(error);
    if (isGone(error)) {
      // Deleted meanwhile: the list is out of date, and the form that failed may disappear with it.
      setAnnouncement(t('actionFailed', { message }));
      reload();
    }
    return message;
  }, [report, reload, t]);

  const searchUsers = useCallback(async (search: string): Promise<MentionableUser[]> => {
    const page = await fetchMentionableUsers(session, publicId, search, SUGGESTIONS);
    learn(page.items);
    return page.items;
  }, [session, publicId, learn]);

  const postThread = async (body: string) => {
    const root = await postComment(session, publicId, body);
    onPosted?.('thread-created', root, root.id);
    setDraft('new', undefined);
    setAnnouncement(t('commentPosted'));
    // A new thread is open: under Resolved it would not be listed, so the panel shows the open threads.
    if (filter === 'resolved') {
      setFilter('open');
      return;
    }
    update((threads) => (threads.some((thread) => thread.root.id === root.id) ? threads : [{ root, replies: [], resolvedAt: null }, ...threads]));
  };

  const actions: ThreadActions = {
    editDraftOf: (comment) => drafts[editKey(comment)],
    startEdit: (comment) => setDraft(editKey(comment), comment.body),
    changeEdit: (comment, body) => setDraft(editKey(comment), body),
    cancelEdit: (comment) => setDraft(editKey(comment), undefined),
    async save(comment, body) {
      const updated = await editComment(session, publicId, comment.id, body);
      setDraft(editKey(comment), undefined);
      update(replaceComment(updated));
      setAnnouncement(t('commentSaved'));
    },
    async remove(thread, comment) {
      await deleteComment(session, publicId, comment.id);
      setDraft(editKey(comment), undefined);
      // SPEC "Comment deletion": a deleted root takes its whole thread; a deleted reply leaves the thread in place.
      if (comment.id === thread.root.id) {
        setDraft(replyKey(thread), undefined);
        update((threads) => threads.filter((item) => item.root.id !== comment.id));
        setAnnouncement(t('threadDeleted'));
        focusHeading();
      } else {
        update((threads) => threads.map((item) => (
          item.root.id === thread.root.id ? { ...item, replies: item.replies.filter((reply) => reply.id !== comment.id) } : item
        )));
        setAnnouncement(t('commentDeleted'));
        focusThread(thread.root.id);
      }
    },
    replyDraftOf: (thread) => drafts[replyKey(thread)],
    openReply: (thread) => setDraft(replyKey(thread), drafts[replyKey(thread)] ?? ''),
    changeReply: (thread, body) => setDraft(replyKey(thread), body),
    cancelReply: (thread) => setDraft(replyKey(thread), undefined),
    async reply(thread, body) {
      const reply = await postComment(session, publicId, body, thread.root.id);
      onPosted?.('reply-created', reply, thread.root.id);
      setDraft(replyKey(thread), undefined);
      // SPEC B rule 2: replies are oldest first, and replying does not move the thread.
      update((threads) => threads.map((item) => (
        item.root.id === thread.root.id && !item.replies.some((existing) => existing.id === reply.id) ? { ...item, replies: [...item.replies, reply] } : item
      )));
      setAnnouncement(t('replyPosted'));
    },
    async resolve(thread, resolved) {
      const answer = await resolveThread(session, publicId, thread.root.id, resolved);
      const isListed = isListedUnder(filter, answer);
      update((threads) => (isListed
        ? threads.map((item) => (item.root.id === answer.root.id ? answer : item))
        : threads.filter((item) => item.root.id !== answer.root.id)));
      setAnnouncement(t(resolved ? 'threadResolved' : 'threadReopened'));
      if (!isListed) focusHeading();
    },
    onFailure,
    searchUsers,
  };

  const onLoadMore = async () => {
    const firstAdded = await loadMore();
    if (firstAdded !== undefined) focusThread(firstAdded);
  };

  const { threads, status } = state;
  const openCount = state.filter === 'open' && status === 'ready' ? threads.length : undefined;
  const hasMoreOpen = canLoadMore(state);
  useEffect(() => {
    if (openCount !== undefined) onOpenCountChange.current?.(openCount, hasMoreOpen);
  }, [openCount, hasMoreOpen]);
  const isLoading = status === 'loading';
  const emptyMessage = filter === 'open' ? t('noOpenThreads') : filter === 'resolved' ? t('noResolvedThreads') : t('noThreads');

  return (
    <section className="comments" aria-labelledby={headingId} ref={panel} data-testid="comment-panel">
      <h2 id={headingId} ref={heading} tabIndex={-1}>{t('comments')}</h2>
      <Composer
        id={`${baseId}-new`}
        className="composer-new"
        label={t('newThreadLabel')}
        submitLabel={t('post')}
        value={drafts.new ?? ''}
        onChange={(body) => setDraft('new', body)}
        onSubmit={postThread}
        onFailure={onFailure}
        searchUsers={searchUsers}
        hint={t('composeHint')}
        t={t}
      />
      <div className="comments-filter" role="group" aria-label={t('threadFilter')}>
        {FILTERS.map((option) => (
          <button key={option.filter} type="button" aria-pressed={filter === option.filter} onClick={() => setFilter(option.filter)}>
            {t(option.label)}
          </button>
        ))}
      </div>
      <p className="comments-status" role="status">{announcement}</p>
      {state.error !== undefined ? (
        <div className="comments-error" role="alert">
          <p>{status === 'failed' ? t('commentsError', { message: state.error }) : t('actionFailed', { message: state.error })}</p>
          {status === 'failed' ? <button type="button" onClick={reload}>{t('retry')}</button> : null}
        </div>
      ) : null}
      {isLoading && threads.length === 0 ? <p className="comments-loading">{t('loading')}</p> : null}
      {status === 'ready' && threads.length === 0 ? <p className="comments-empty">{emptyMessage}</p> : null}
      {threads.length > 0 ? (
        <ol className="comments-threads" aria-busy={isLoading || undefined} aria-labelledby={headingId}>
          {threads.map((thread) => (
            <li key={thread.root.id}>
              <ThreadView thread={thread} directory={directory} actions={actions} t={t} format={format} />
            </li>
          ))}
        </ol>
      ) : null}
      {canLoadMore(state) && status !== 'stopped' ? (
        <button type="button" className="comments-more" disabled={state.isLoadingMore || isLoading} aria-busy={state.isLoadingMore || undefined} onClick={() => void onLoadMore()}>
          {state.isLoadingMore ? t('loading') : t('loadMore')}
        </button>
      ) : null}
    </section>
  );
}
