import { useEffect, useRef, useState } from 'react';
import type { Comment, MentionableUser, Thread } from '../api.js';
import type { Formatters } from '../format.js';
import { authorNameOf, isMentionableIn } from './authors.js';
import type { MentionDirectory } from './authors.js';
import { CommentView } from './CommentView.js';
import { Composer } from './Composer.js';
import type { Translate } from '../i18n.js';

/** What a thread asks of the panel: drafts (kept by the panel) and the mutations (server, then the list). */
export interface ThreadActions {
  editDraftOf(comment: Comment): string | undefined;
  startEdit(comment: Comment): void;
  changeEdit(comment: Comment, body: string): void;
  cancelEdit(comment: Comment): void;
  save(comment: Comment, body: string): Promise<void>;
  remove(thread: Thread, comment: Comment): Promise<void>;
  replyDraftOf(thread: Thread): string | undefined;
  openReply(thread: Thread): void;
  changeReply(thread: Thread, body: string): void;
  cancelReply(thread: Thread): void;
  reply(thread: Thread, body: string): Promise<void>;
  resolve(thread: Thread, resolved: boolean): Promise<void>;
  onFailure(error: unknown): string | undefined;
  searchUsers(search: string): Promise<MentionableUser[]>;
}

export interface ThreadViewProps {
  thread: Thread;
  directory: MentionDirectory;
  actions: ThreadActions;
  t: Translate;
  format: Formatters;
}

/**
 * A thread (SPEC "Thread"): its root, its replies oldest first, a reply form, and Resolve / Re-open for the
 * root's author only (SPEC "States and transitions": the server refuses anyone else with 403).
 */
export function ThreadView({ thread, directory, actions, t, format }: ThreadViewProps) {
  const { root } = thread;
  // SPEC "Thread": an open thread may omit resolvedAt, so null and absent are alike.
  const isResolved = thread.resolvedAt != null;
  const [isResolving, setResolving] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const replyDraft = actions.replyDraftOf(thread);
  // Focus moves into the reply form when the viewer opens it (not when a kept draft shows again after a reload),
  // and back to Reply when the form closes.
  const [isReplyOpenedHere, setReplyOpenedHere] = useState(false);
  const replyButton = useRef<HTMLButtonElement | null>(null);
  const isReturningFocus = useRef(false);
  const isReplying = replyDraft !== undefined;
  useEffect(() => {
    if (isReplying || !isReturningFocus.current) return;
    isReturningFocus.current = false;
    replyButton.current?.focus();
  }, [isReplying]);
  const name = (comment: Comment) => authorNameOf(comment, directory, t('deletedUser'));
  const rootName = name(root) ?? (root.isOwn ? t('you') : '…');

  const toggleResolved = async () => {
    setResolving(true);
    setError(undefined);
    try {
      await actions.resolve(thread, !isResolved);
    } catch (failure) {
      setError(actions.onFailure(failure));
    } finally {
      setResolving(false);
    }
  };

  const commentView = (comment: Comment) => (
    <CommentView
      comment={comment}
      authorName={name(comment)}
      // The tenant's directory, and the users svc resolved when this comment was posted here (its 201's `mentions`).
      isMentionable={(username) => isMentionableIn(directory, username)
        || (comment.mentions ?? []).some((mention) => mention.username.toLowerCase() === username.toLowerCase())}
      editDraft={actions.editDraftOf(comment)}
      onStartEdit={() => actions.startEdit(comment)}
      onEditChange={(body) => actions.changeEdit(comment, body)}
      onCancelEdit={() => actions.cancelEdit(comment)}
      onSave={(body) => actions.save(comment, body)}
      onDelete={() => actions.remove(thread, comment)}
      onFailure={actions.onFailure}
      searchUsers={actions.searchUsers}
      t={t}
      format={format}
    />
  );

  return (
    <article
      className={`thread${isResolved ? ' resolved' : ''}`}
      data-thread-id={root.id}
      data-resolved={isResolved || undefined}
      aria-label={t('threadBy', { name: rootName, time: format.dateTime(root.createdAt) })}
      tabIndex={-1}
    >
      {isResolved ? (
        <p className="thread-badge" title={thread.resolvedAt ? format.dateTime(thread.resolvedAt) : undefined}>{t('resolved')}</p>
      ) : null}
      {commentView(root)}
      {thread.replies.length > 0 ? (
        <ol className="thread-replies">
          {thread.replies.map((reply) => <li key={reply.id}>{commentView(reply)}</li>)}
        </ol>
      ) : null}
      {isReplying ? (
        <Composer
          id={`thread-${root.id}-reply`}
          className="composer-reply"
          label={t('replyLabel')}
          submitLabel={t('reply')}
          value={replyDraft ?? ''}
          onChange={(body) => actions.changeReply(thread, body)}
          onSubmit={(body) => {
            isReturningFocus.current = true;
            return actions.reply(thread, body);
          }}
          onFailure={actions.onFailure}
          onCancel={() => {
            isReturningFocus.current = true;
            actions.cancelReply(thread);
          }}
          searchUsers={actions.searchUsers}
          focusOnMount={isReplyOpenedHere}
          t={t}
        />
      ) : null}
      <div className="thread-actions">
        {!isReplying ? (
          <button
            type="button"
            ref={replyButton}
            onClick={() => {
              setReplyOpenedHere(true);
              actions.openReply(thread);
            }}
          >
            {t('reply')}
          </button>
        ) : null}
        {root.isOwn ? (
          <button type="button" disabled={isResolving} onClick={() => void toggleResolved()}>
            {isResolved ? t('reopen') : t('resolve')}
          </button>
        ) : null}
      </div>
      {error !== undefined ? <p className="thread-error" role="alert">{t('actionFailed', { message: error })}</p> : null}
    </article>
  );
}
