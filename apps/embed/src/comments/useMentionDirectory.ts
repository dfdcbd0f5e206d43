import { useCallback, useEffect, useRef, useState } from 'react';
import { fetchMentionableUsers } from '../api.js';
import type { MentionableUser } from '../api.js';
import type { EmbedSession } from '../session.js';
import type { MentionDirectory } from './authors.js';
import { isSessionLapse } from './failures.js';

/** Users per page of the directory load (SPEC Limits: the maximum of `first`). */
const DIRECTORY_PAGE_SIZE = 200;
/** How many pages the directory loads at most (1,000 users); authors beyond show as unknown. */
const DIRECTORY_MAX_PAGES = 5;

export interface UseMentionDirectory {
  directory: MentionDirectory;
  /** Adds users met elsewhere (the autocomplete's answers) to the directory. */
  learn(users: readonly MentionableUser[]): void;
}

const sameUser = (a: MentionableUser | undefined, b: MentionableUser) =>
  a !== undefined && a.username === b.username && (a.firstName ?? null) === (b.firstName ?? null);

/**
 * The tenant's mentionable users by id (SPEC B rule 8), to name comment authors: loaded once per dashboard and
 * refresh, a few pages at most, and completed with every user the autocomplete finds.
 *
 * @example
 * const { directory } = useMentionDirectory(session, 'q1-review', refreshKey, report);
 * directory.users.get(comment.userId);
 */
export function useMentionDirectory(session: EmbedSession, publicId: string, refreshKey: number, report: (error: unknown) => void): UseMentionDirectory {
  const [directory, setDirectory] = useState<MentionDirectory>({ users: new Map(), isLoaded: false });
  const reportRef = useRef(report);
  useEffect(() => {
    reportRef.current = report;
  }, [report]);

  useEffect(() => {
    let isCurrent = true;
    const loadAll = async () => {
      const users = new Map<number, MentionableUser>();
      let after: string | undefined;
      for (let page = 0; page < DIRECTORY_MAX_PAGES; page++) {
        const answer = await fetchMentionableUsers(session, publicId, '', DIRECTORY_PAGE_SIZE, after);
        for (const user of answer.items) users.set(user.id, user);
        // SPEC B rule 7: only a next page with a cursor is followed; a null cursor is never sent back.
        const cursor = answer.pageInfo.endCursor;
        if (!answer.pageInfo.hasNextPage || typeof cursor !== 'string') break;
        after = cursor;
      }
      return users;
    };
    loadAll().then((users) => {
      if (isCurrent) setDirectory((previous) => ({ users: new Map([...previous.users, ...users]), isLoaded: true }));
    }, (error: unknown) => {
      if (!isCurrent) return;
      // Without the directory, authors read as unknown rather than the panel failing.
      setDirectory((previous) => ({ ...previous, isLoaded: true }));
      if (!isSessionLapse(error)) reportRef.current(error);
    });
    return () => {
      isCurrent = false;
    };
  }, [session, publicId, refreshKey]);

  const learn = useCallback((users: readonly MentionableUser[]) => {
    if (users.length === 0) return;
    setDirectory((previous) => {
      if (users.every((user) => sameUser(previous.users.get(user.id), user))) return previous;
      const next = new Map(previous.users);
      for (const user of users) next.set(user.id, user);
      return { ...previous, users: next };
    });
  }, []);

  return { directory, learn };
}
