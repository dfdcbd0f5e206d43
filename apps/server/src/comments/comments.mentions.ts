import type { Kysely } from 'kysely';
import type { Database } from '../db/db.schema.js';
import { foldSearchKey } from '../db/db.search-key.js';
import { selectEmbedUsersByUsernameKey } from '../sessions/sessions.store.js';

/** An embed user a comment mentions: what the 201 of a post, the webhooks and the host's events carry. */
export interface Mention {
  userId: number;
  username: string;
  /** The embed user's id in the host's own system (Generate Session's `externalId`). */
  externalId: string;
}

/**
 * A mention as the embed's panel writes and shows it (apps/embed/src/comments/mentions.ts, `splitMentions`): `@`
 * at the start of the body or after whitespace or an opening bracket or quote (so `ann@a.test` is none), then
 * letters, digits and `._+-`, ending on a letter, digit or `_` (so `@ann.` mentions `ann`).
 */
const MENTION = /(^|[\s([{"'])@([\p{L}\p{N}._+-]*[\p{L}\p{N}_])/gu;

/** At most this many distinct names are looked up per comment. */
export const MAX_MENTIONS = 50;

/**
 * The usernames a body mentions, folded as usernames are for search (`foldSearchKey`), each once, in the order they
 * first appear; at most MAX_MENTIONS.
 *
 * @example
 * parseMentionKeys('@Ann and @ben, see ann@a.test and @ann'); // ['ann', 'ben']
 */
export function parseMentionKeys(body: string): string[] {
  const keys: string[] = [];
  for (const match of body.matchAll(MENTION)) {
    const key = foldSearchKey(match[2]!);
    if (!keys.includes(key)) keys.push(key);
    if (keys.length === MAX_MENTIONS) break;
  }
  return keys;
}

/**
 * The embed users of this account's embed tenant a body mentions (issue 23), never another tenant's: each
 * `@username` matched case-insensitively against the tenant's usernames. Usernames are not unique, so a name two
 * embed users share mentions both. In the order of the body, then by id.
 *
 * @example
 * await resolveMentions(db, 1, 7, 'Why did March drop? @ben'); // [{ userId: 12, username: 'ben', externalId: 'ben-1' }]
 */
export async function resolveMentions(db: Kysely<Database>, accountId: number, embedTenantId: number, body: string): Promise<Mention[]> {
  const keys = parseMentionKeys(body);
  if (keys.length === 0) return [];
  const rows = await selectEmbedUsersByUsernameKey(db, accountId, embedTenantId, keys);
  const order = (key: string) => keys.indexOf(key);
  return rows
    .sort((a, b) => order(a.username_key) - order(b.username_key) || a.id - b.id)
    .map((row) => ({ userId: row.id, username: row.username, externalId: row.external_id }));
}
