import type { Comment, MentionableUser } from '../api.js';

/** The mentionable users known so far, by embed user id, and whether the first load of them is done. */
export interface MentionDirectory {
  users: ReadonlyMap<number, MentionableUser>;
  isLoaded: boolean;
}

/**
 * The name shown for a mentionable user: the first name, else the username (SPEC "Mentionable user": only
 * `username` is guaranteed).
 */
export function displayNameOf(user: MentionableUser): string {
  const firstName = user.firstName?.trim();
  return firstName ? firstName : user.username;
}

/**
 * A comment's author as shown: their display name; `deleted` when the comment outlived its author (a null
 * `userId`, SPEC "Comment") or the author is not among the tenant's mentionable users; `undefined` while the
 * directory is still loading.
 *
 * @example
 * authorNameOf({ userId: 7, ... }, directory, 'Deleted user'); // 'Ann'
 */
export function authorNameOf(comment: Comment, directory: MentionDirectory, deleted: string): string | undefined {
  if (comment.userId == null) return deleted;
  const user = directory.users.get(comment.userId);
  if (user !== undefined) return displayNameOf(user);
  return directory.isLoaded ? deleted : undefined;
}

// The directory by folded username, made once per directory (its map is replaced, never changed, on every update).
const byUsername = new WeakMap<ReadonlyMap<number, MentionableUser>, ReadonlySet<string>>();

/**
 * Whether `username` names a mentionable user of the directory, ignoring case as the server does when it resolves
 * a comment's mentions (comments.mentions.ts, `foldSearchKey`).
 *
 * @example
 * isMentionableIn(directory, 'Ann'); // true when the tenant has a user "ann"
 */
export function isMentionableIn(directory: MentionDirectory, username: string): boolean {
  let usernames = byUsername.get(directory.users);
  if (usernames === undefined) {
    usernames = new Set([...directory.users.values()].map((user) => user.username.toLowerCase()));
    byUsername.set(directory.users, usernames);
  }
  return usernames.has(username.toLowerCase());
}
