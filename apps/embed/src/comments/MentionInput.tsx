import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { KeyboardEvent, Ref } from 'react';
import type { MentionableUser } from '../api.js';
import { displayNameOf } from './authors.js';
import { findMentionQuery, insertMention } from './mentions.js';
import type { MentionQuery } from './mentions.js';

/** How long typing pauses before the autocomplete asks the server. */
const SEARCH_DEBOUNCE_MS = 150;

export interface MentionInputProps {
  id: string;
  /** The visible label of the text area. */
  label: string;
  value: string;
  onChange(value: string): void;
  /** Ctrl+Enter or ⌘+Enter (when no suggestion list is open). */
  onSubmit(): void;
  /** Mentionable users matching a search (SPEC B mentionable-users); rejects are treated as no suggestions. */
  searchUsers(search: string): Promise<MentionableUser[]>;
  /** The listbox's accessible name. */
  suggestionsLabel: string;
  describedBy?: string | undefined;
  isInvalid?: boolean;
  isDisabled?: boolean;
  rows?: number;
  textareaRef?: Ref<HTMLTextAreaElement>;
}

interface Suggestions {
  query: MentionQuery;
  users: MentionableUser[];
}

/**
 * The users to list for `query`: the server's answer to it, or, while a longer search is on its way, the answer to
 * the shorter one narrowed the way the server matches (SPEC B rule 8: username or email), so the list neither
 * flickers nor offers someone the letters typed since no longer match.
 */
function suggestionsFor(suggestions: Suggestions, query: MentionQuery): MentionableUser[] {
  if (suggestions.query.search === query.search) return suggestions.users;
  const search = query.search.toLowerCase();
  if (!search.startsWith(suggestions.query.search.toLowerCase())) return [];
  return suggestions.users.filter((user) => user.username.toLowerCase().includes(search) || (user.email ?? '').toLowerCase().includes(search));
}

/**
 * A labelled text area with `@` autocomplete: when the caret follows `@` and letters, the matching mentionable
 * users are listed (a listbox tied to the text area by aria-controls and aria-activedescendant, the text area
 * keeping focus); ArrowUp/ArrowDown move, Enter or Tab pick, Escape closes. Picking writes `@username ` as text.
 */
export function MentionInput(props: MentionInputProps) {
  const { id, value, onChange, searchUsers } = props;
  const ownRef = useRef<HTMLTextAreaElement | null>(null);
  const [query, setQuery] = useState<MentionQuery | null>(null);
  const [suggestions, setSuggestions] = useState<Suggestions | null>(null);
  const [activeIndex, setActiveIndex] = useState(0);
  // Escape closes the list for this `@` only; a new `@` opens it again.
  const [dismissedStart, setDismissedStart] = useState<number | null>(null);
  const pendingCaret = useRef<number | null>(null);
  const searchUsersRef = useRef(searchUsers);
  useEffect(() => {
    searchUsersRef.current = searchUsers;
  }, [searchUsers]);

  const listId = `${id}-mentions`;
  const optionId = (user: MentionableUser) => `${id}-mention-${user.id}`;
  const users = query !== null && suggestions !== null && suggestions.query.start === query.start ? suggestionsFor(suggestions, query) : [];
  // The draft can change from outside (cleared once posted): a query no longer in the text shows nothing.
  const isQueryInText = query !== null && value.startsWith(`@${query.search}`, query.start);
  const isOpen = isQueryInText && query.start !== dismissedStart && users.length > 0;
  const active = isOpen ? users[Math.min(activeIndex, users.length - 1)] : undefined;

  const queryStart = query?.start;
  const querySearch = query?.search;
  useEffect(() => {
    if (queryStart === undefined || querySearch === undefined) return;
    let isCurrent = true;
    const timer = setTimeout(() => {
      searchUsersRef.current(querySearch).then((found) => {
        if (!isCurrent) return;
        setSuggestions({ query: { start: queryStart, search: querySearch }, users: found });
        setActiveIndex(0);
      }, () => {
        // Suggestions are a convenience: a failed search (a lapse included) just shows none.
        if (isCurrent) setSuggestions(null);
      });
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      isCurrent = false;
      clearTimeout(timer);
    };
  }, [queryStart, querySearch]);

  // After a pick, the caret goes right after the inserted `@username `.
  useLayoutEffect(() => {
    const caret = pendingCaret.current;
    if (caret === null || ownRef.current === null) return;
    pendingCaret.current = null;
    ownRef.current.setSelectionRange(caret, caret);
  }, [value]);

  useEffect(() => {
    if (active !== undefined) document.getElementById(`${id}-mention-${active.id}`)?.scrollIntoView?.({ block: 'nearest' });
  }, [active, id]);

  const track = (text: string, caret: number | null) => {
    const next = caret === null ? null : findMentionQuery(text, caret);
    if (next === null) setDismissedStart(null);
    setQuery((previous) => (previous?.start === next?.start && previous?.search === next?.search ? previous : next));
  };

  const pick = (user: MentionableUser) => {
    const element = ownRef.current;
    if (query === null || element === null) return;
    const inserted = insertMention(value, query, element.selectionEnd ?? value.length, user.username);
    pendingCaret.current = inserted.caret;
    setQuery(null);
    setSuggestions(null);
    onChange(inserted.text);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (isOpen && active !== undefined) {
      const index = users.indexOf(active);
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        const step = event.key === 'ArrowDown' ? 1 : -1;
        setActiveIndex((index + step + users.length) % users.length);
        return;
      }
      const isPlainKey = !event.shiftKey && !event.ctrlKey && !event.metaKey && !event.altKey;
      if ((event.key === 'Enter' || event.key === 'Tab') && isPlainKey) {
        event.preventDefault();
        pick(active);
        return;
      }
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        setDismissedStart(query.start);
        return;
      }
    }
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      props.onSubmit();
    }
  };

  const onCaret = (event: { currentTarget: HTMLTextAreaElement }) => track(event.currentTarget.value, event.currentTarget.selectionEnd);

  const setRefs = (element: HTMLTextAreaElement | null) => {
    ownRef.current = element;
    const { textareaRef } = props;
    if (typeof textareaRef === 'function') textareaRef(element);
    else if (textareaRef) textareaRef.current = element;
  };

  return (
    <div className="mention-input">
      <label htmlFor={id}>{props.label}</label>
      <textarea
        ref={setRefs}
        id={id}
        value={value}
        rows={props.rows ?? 3}
        disabled={props.isDisabled}
        aria-invalid={props.isInvalid || undefined}
        aria-describedby={props.describedBy}
        aria-autocomplete="list"
        aria-controls={isOpen ? listId : undefined}
        aria-activedescendant={active !== undefined ? optionId(active) : undefined}
        onChange={(event) => {
          onChange(event.currentTarget.value);
          track(event.currentTarget.value, event.currentTarget.selectionEnd);
        }}
        // The caret moving (keys, a click) changes the `@` query as typing does. React's onSelect reported every caret
        // move; the DOM's `select` event (Preact's onSelect) only a selection of text, hence the key and mouse events.
        onSelect={onCaret}
        onKeyUp={onCaret}
        onMouseUp={onCaret}
        onKeyDown={onKeyDown}
        onBlur={() => setQuery(null)}
      />
      {isOpen ? (
        <ul className="mention-list" role="listbox" id={listId} aria-label={props.suggestionsLabel}>
          {users.map((user) => (
            <li
              key={user.id}
              id={optionId(user)}
              role="option"
              aria-selected={user === active}
              className="mention-option"
              // The text area keeps focus (and its caret) while the pointer picks.
              onMouseDown={(event) => event.preventDefault()}
              onClick={() => pick(user)}
            >
              <span className="mention-name">{displayNameOf(user)}</span>
              {displayNameOf(user) !== user.username ? <span className="mention-username">@{user.username}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
