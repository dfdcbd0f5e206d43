import type { ChangeFeed, ChangeMark } from './db.database.js';

/**
 * Values of one account each, kept in memory while the database's change feed vouches that nothing of their account
 * changed since they were read (docs/decisions.md, "Credential cache"). It holds the principals resolved from
 * credentials (accounts.credentials.ts, sessions.credentials.ts: keys are credential digests, never the credentials)
 * and a widget request's metadata (data.metadata.ts). A load that finds nothing is not kept, so random keys cannot
 * fill it. Bounded by entries, least recently used first out.
 *
 * @example
 * const principals = new AccountCache<PlatformUserPrincipal>(db.changes, 10_000);
 * const principal = await principals.resolve(digest, () => findPlatformUserByKeyDigest(db.kysely, digest));
 */
export class AccountCache<T extends { accountId: number }> {
  #feed: ChangeFeed;
  #maxEntries: number;
  #entries = new Map<string, { value: T; mark: ChangeMark }>();

  /** `maxEntries` 0 turns the cache off: every call reads the database. */
  constructor(feed: ChangeFeed, maxEntries: number) {
    this.#feed = feed;
    this.#maxEntries = maxEntries;
  }

  /**
   * The value held for `key` while the feed says its account is unchanged, else `load()`'s. The mark is taken
   * before loading, so a change that raced the read leaves nothing stale behind.
   */
  async resolve(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    return this.held(key) ?? this.#load(key, load);
  }

  /**
   * The value held for `key` while the feed says its account is unchanged, without waiting: the request's hot
   * path resolves a known credential synchronously (an awaited hook costs every request a turn of the queue).
   */
  held(key: string): T | undefined {
    if (this.#maxEntries === 0) return undefined;
    const held = this.#entries.get(key);
    if (held === undefined) return undefined;
    this.#entries.delete(key);
    if (!this.#feed.unchangedSince(held.mark, held.value.accountId)) return undefined;
    this.#entries.set(key, held);
    return held.value;
  }

  async #load(key: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    if (this.#maxEntries === 0) return load();
    const mark = this.#feed.mark();
    const value = await load();
    if (value === undefined || mark === undefined || !this.#feed.unchangedSince(mark, value.accountId)) return value;
    this.#entries.delete(key);
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { value, mark });
    return value;
  }
}
