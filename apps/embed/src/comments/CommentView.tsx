import { useEffect, useRef, useState } from 'react';
import type { Comment, MentionableUser } from '../api.js';
import type { Formatters } from '../format.js';
import { Composer } from './Composer.js';
import { splitMentions } from './mentions.js';
import type { Translate } from '../i18n.js';

export interface CommentViewProps {
  comment: Comment;
  /** The author's display name; undefined while the directory loads. */
  authorName: string | undefined;
  /** Whether an `@name` in the body names a mentionable user: only those are shown as mentions. */
  isMentionable(username: string): boolean;
  /** The edit draft while this comment is being edited (kept by the panel), else undefined. */
  editDraft: string | undefined;
  onStartEdit(): void;
  onEditChange(body: string): void;
  onCancelEdit(): void;
  onSave(body: string): Promise<void>;
  onDelete(): Promise<void>;
  onFailure(error: unknown): string | undefined;
  searchUsers(search: string): Promise<MentionableUser[]>;
  t: Translate;
  format: Formatters;
}

/**
 * One comment: author ("you" on the viewer's own), time, "edited", the body as typed, and, on the viewer's own
 * comments only (SPEC B rule 5), Edit (inline, Save/Cancel) and Delete with a confirm step in place.
 */
export function CommentView(props: CommentViewProps) {
  const { comment, t, format } = props;
  const [isConfirming, setConfirming] = useState(false);
  const [isDeleting, setDeleting] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const deleteButton = useRef<HTMLButtonElement | null>(null);
  const editButton = useRef<HTMLButtonElement | null>(null);
  const cancelDeleteButton = useRef<HTMLButtonElement | null>(null);
  // Where focus goes when a step closes: the button that opened it (never lost to the page).
  const returnFocus = useRef<'delete' | 'edit' | null>(null);
  const isEditing = props.editDraft !== undefined;
  // Focus moves into the edit form when the viewer opens it, not when a kept draft shows again after a reload.
  const [isEditOpenedHere, setEditOpenedHere] = useState(false);
  const metaId = `comment-${comment.id}-meta`;

  useEffect(() => {
    if (isConfirming) cancelDeleteButton.current?.focus();
  }, [isConfirming]);
  useEffect(() => {
    if (isConfirming || isEditing || returnFocus.current === null) return;
    (returnFocus.current === 'delete' ? deleteButton : editButton).current?.focus();
    returnFocus.current = null;
  }, [isConfirming, isEditing]);

  const confirmDelete = async () => {
    setDeleting(true);
    setError(undefined);
    try {
      await props.onDelete();
    } catch (failure) {
      setError(props.onFailure(failure));
      setDeleting(false);
    }
  };

  return (
    <div className="comment" data-comment-id={comment.id} data-own={comment.isOwn || undefined}>
      <p className="comment-meta" id={metaId}>
        <span className="comment-author">{props.authorName ?? '…'}</span>
        {comment.isOwn ? <span className="comment-you">({t('you')})</span> : null}
        <time className="comment-time" dateTime={comment.createdAt}>{format.dateTime(comment.createdAt)}</time>
        {comment.editedAt != null ? (
          <span className="comment-edited" title={format.dateTime(comment.editedAt)}>{t('edited')}</span>
        ) : null}
      </p>
      {isEditing ? (
        <Composer
          id={`comment-${comment.id}-edit`}
          className="composer-edit"
          label={t('editLabel')}
          submitLabel={t('save')}
          value={props.editDraft ?? ''}
          onChange={props.onEditChange}
          onSubmit={(body) => {
            // Saved, the form closes: focus goes back to Edit.
            returnFocus.current = 'edit';
            return props.onSave(body);
          }}
          onFailure={props.onFailure}
          onCancel={() => {
            returnFocus.current = 'edit';
            props.onCancelEdit();
          }}
          searchUsers={props.searchUsers}
          focusOnMount={isEditOpenedHere}
          t={t}
        />
      ) : (
        <p className="comment-body">
          {splitMentions(comment.body, props.isMentionable).map((part, index) => (part.isMention ? <span key={index} className="mention">{part.text}</span> : part.text))}
        </p>
      )}
      {comment.isOwn && !isEditing ? (
        isConfirming ? (
          <div className="comment-actions comment-confirm" role="group" aria-label={t('confirmDelete')}>
            <span className="comment-confirm-text">{t('confirmDelete')}</span>
            <button type="button" className="danger" aria-describedby={metaId} disabled={isDeleting} onClick={() => void confirmDelete()}>{t('delete')}</button>
            <button
              type="button"
              ref={cancelDeleteButton}
              disabled={isDeleting}
              onClick={() => {
                returnFocus.current = 'delete';
                setConfirming(false);
                setError(undefined);
              }}
            >
              {t('cancel')}
            </button>
          </div>
        ) : (
          <div className="comment-actions">
            <button type="button" ref={editButton} aria-describedby={metaId} onClick={() => {
              setEditOpenedHere(true);
              props.onStartEdit();
            }}>{t('edit')}</button>
            <button type="button" ref={deleteButton} aria-describedby={metaId} onClick={() => setConfirming(true)}>{t('delete')}</button>
          </div>
        )
      ) : null}
      {error !== undefined ? <p className="comment-error" role="alert">{t('actionFailed', { message: error })}</p> : null}
    </div>
  );
}
