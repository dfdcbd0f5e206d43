import { useCallback, useEffect, useId, useRef, useState } from 'react';
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

/** SPEC B rule 3: which threads a filter lists. */
const isListedUnder = (filter: ThreadFilter, thread: Thread) => filter === 'all' || (filter === 'open') === (thread.resolvedAt == null);

/**
 * The built-in comment panel (issue 6 scope 4, SPEC B): the dashboard's threads newest first with their replies,
 * Open / Resolved / All, more by cursor, a new thread, replies, and edit, delete and resolve on the viewer's own
 * comments and threads, with `@` autocomplete over the tenant's mentionable users. Every mutation updates the
 * list from the server's answer. Drafts live here, so a refresh or a token swap keeps them; a 401 stops the panel
 * as it is (the App shows the lapse and tells the host).
 */
export function CommentPanel(props: CommentPanelProps) {
  const { session, publicId, t, format, refreshKey } = props;
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

  const { state, loadMore, reload, update } = useThreads(session, publicId, filter, refreshKey, report);
  const { directory, learn } = useMentionDirectory(session, publicId, refreshKey, report);

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
