import { describe, expect, it } from 'vitest';
import type { Comment } from '../api.js';
import { authorNameOf, displayNameOf, isMentionableIn } from './authors.js';

describe('author names', () => {
  const comment = (userId: number | null): Comment => ({ id: 1, dashboardId: 'd', userId, body: 'b', createdAt: '2026-01-01T00:00:00.000Z', isOwn: false });
  const users = new Map([[1, { id: 1, username: 'ann', firstName: 'Ann' }], [2, { id: 2, username: 'annika', firstName: null }]]);

  it('are the first name, else the username', () => {
    expect(displayNameOf(users.get(1)!)).toBe('Ann');
    expect(displayNameOf(users.get(2)!)).toBe('annika');
    expect(displayNameOf({ id: 3, username: 'carl', firstName: '  ' })).toBe('carl');
  });

  it('say "deleted" for a null or unknown author once the directory is loaded, and wait while it loads', () => {
    expect(authorNameOf(comment(null), { users, isLoaded: false }, 'Deleted user')).toBe('Deleted user');
    expect(authorNameOf(comment(2), { users, isLoaded: false }, 'Deleted user')).toBe('annika');
    expect(authorNameOf(comment(9), { users, isLoaded: false }, 'Deleted user')).toBeUndefined();
    expect(authorNameOf(comment(9), { users, isLoaded: true }, 'Deleted user')).toBe('Deleted user');
  });

  it('know who can be mentioned, ignoring case as the server does, and learn new users when the directory changes', () => {
    const directory = { users, isLoaded: true };
    expect(isMentionableIn(directory, 'Ann')).toBe(true);
    expect(isMentionableIn(directory, 'ANNIKA')).toBe(true);
    expect(isMentionableIn(directory, 'an')).toBe(false);
    expect(isMentionableIn(directory, 'be')).toBe(false);
    const learned = { users: new Map([...users, [3, { id: 3, username: 'Be', firstName: null }]]), isLoaded: true };
    expect(isMentionableIn(learned, 'be')).toBe(true);
  });
});
