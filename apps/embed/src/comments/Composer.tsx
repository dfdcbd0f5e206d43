import { useEffect, useRef, useState } from 'react';
import type { MentionableUser } from '../api.js';
import { bodyLength, canSendBody, COUNTER_FROM, MAX_BODY_CHARACTERS } from './bodyLimits.js';
import { MentionInput } from './MentionInput.js';
import type { Translate } from '../i18n.js';

export interface ComposerProps {
  /** The text area's id (unique in the page); other ids derive from it. */
  id: string;
  label: string;
  submitLabel: string;
  /** The draft: owned by the panel, so it outlives this form (a refresh, a token swap). */
  value: string;
  onChange(value: string): void;
  /** Sends the body; a rejection is passed to `onFailure`, and the draft stays. */
  onSubmit(body: string): Promise<void>;
  /** The inline message for a failure, or undefined when nothing is to be shown (the session lapsed). */
  onFailure(error: unknown): string | undefined;
  onCancel?(): void;
  searchUsers(search: string): Promise<MentionableUser[]>;
  hint?: string;
  /** Focus the text area when the form appears (a reply or an edit just opened). */
  focusOnMount?: boolean;
  className?: string;
  t: Translate;
}

/**
 * A comment form: a labelled text area with `@` autocomplete, the body limits of SPEC Limits (nothing blank is
 * sent, a counter near 10,000 characters), the server's 400 message shown inline, and a submit button reachable
 * by keyboard (or Ctrl+Enter from the text area).
 */
export function Composer(props: ComposerProps) {
  const { id, value, t } = props;
  const [isBusy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const textarea = useRef<HTMLTextAreaElement | null>(null);
  const focusOnMount = props.focusOnMount === true;
  useEffect(() => {
    if (focusOnMount) textarea.current?.focus();
  }, [focusOnMount]);

  const length = bodyLength(value);
  const isTooLong = length > MAX_BODY_CHARACTERS;
  const canSend = canSendBody(value) && !isBusy;
  const counterId = `${id}-counter`;
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const describedBy = [props.hint ? hintId : '', length >= COUNTER_FROM ? counterId : '', error || isTooLong ? errorId : ''].filter(Boolean).join(' ') || undefined;

  const submit = async () => {
    if (!canSend) return;
    setBusy(true);
    setError(undefined);
    try {
      await props.onSubmit(value);
    } catch (failure) {
      setError(props.onFailure(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className={`composer${props.className ? ` ${props.className}` : ''}`}
      aria-busy={isBusy || undefined}
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <MentionInput
        id={id}
        label={props.label}
        value={value}
        onChange={(next) => {
          props.onChange(next);
          if (error !== undefined) setError(undefined);
        }}
        onSubmit={() => void submit()}
        searchUsers={props.searchUsers}
        suggestionsLabel={t('mentionSuggestions')}
        describedBy={describedBy}
        isInvalid={isTooLong || error !== undefined}
        textareaRef={textarea}
      />
      {props.hint ? <p className="composer-hint" id={hintId}>{props.hint}</p> : null}
      <div className="composer-footer">
        {length >= COUNTER_FROM ? (
          <span className={`composer-counter${isTooLong ? ' over' : ''}`} id={counterId}>
            {t('characterCount', { count: length, max: MAX_BODY_CHARACTERS })}
          </span>
        ) : null}
        <span className="composer-buttons">
          {props.onCancel ? <button type="button" onClick={props.onCancel} disabled={isBusy}>{t('cancel')}</button> : null}
          <button type="submit" className="primary" disabled={!canSend}>{props.submitLabel}</button>
        </span>
      </div>
      {error !== undefined || isTooLong ? (
        <p className="composer-error" id={errorId} role="alert">
          {isTooLong ? t('bodyTooLong', { max: MAX_BODY_CHARACTERS }) : t('actionFailed', { message: error ?? '' })}
        </p>
      ) : null}
    </form>
  );
}
