import { useEffect, useRef, useState } from 'react';
import { checkFilters } from '../api.js';
import type { Filter } from '../preferences.js';
import type { EmbedSession } from '../session.js';

/**
 * The model's titles of filters that came without one (the embed URL's `f_*`), asked of svc once per member. A
 * member svc does not answer for keeps its name.
 */
export function useMemberTitles(session: EmbedSession, publicId: string, filters: readonly Filter[]): Record<string, string> {
  const [titles, setTitles] = useState<Record<string, string>>({});
  const asked = useRef(new Set<string>());
  const missing = filters.filter((f) => f.title === undefined && !asked.current.has(`${f.view}.${f.dimension}`)).map((f) => `${f.view}.${f.dimension}`);
  const key = missing.join(',');
  useEffect(() => {
    if (key === '') return;
    const members = key.split(',');
    for (const member of members) asked.current.add(member);
    // A null value asks about the member alone: its value is checked where it applies.
    checkFilters(session, publicId, Object.fromEntries(members.map((member) => [member, null]))).then(
      ({ filters: checked }) => setTitles((previous) => ({ ...previous, ...Object.fromEntries(checked.map((c) => [c.member, c.title])) })),
      () => undefined,
    );
  }, [session, publicId, key]);
  return titles;
}
