import type { ChangeFeed, ChangeMark } from '../db/db.database.js';

/**
 * Principals resolved from credentials, kept in memory while the database's change feed vouches that nothing
 * of their account changed since they were read (docs/decisions.md, "Credential cache"). Keys are credential
 * digests, never the credentials. Unknown credentials are not kept, so random keys cannot fill it. Bounded by
 * entries, least recently used first out.
 */
export class CredentialCache<T extends { accountId: number }> {
  #feed: ChangeFeed;
  #maxEntries: number;
  #entries = new Map<string, { value: T; mark: ChangeMark }>();

  /** `maxEntries` 0 turns the cache off: every call reads the database. */
  constructor(feed: ChangeFeed, maxEntries: number) {
    this.#feed = feed;
    this.#maxEntries = maxEntries;
  }

  /**
   * The value held for `digest` while the feed says its account is unchanged, else `load()`'s. The mark is taken
   * before loading, so a change that raced the read leaves nothing stale behind.
   */
  async resolve(digest: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    return this.held(digest) ?? this.#load(digest, load);
  }

  /**
   * The value held for `digest` while the feed says its account is unchanged, without waiting: the request's hot
   * path resolves a known credential synchronously (an awaited hook costs every request a turn of the queue).
   */
  held(digest: string): T | undefined {
    if (this.#maxEntries === 0) return undefined;
    const held = this.#entries.get(digest);
    if (held === undefined) return undefined;
    this.#entries.delete(digest);
    if (!this.#feed.unchangedSince(held.mark, held.value.accountId)) return undefined;
    this.#entries.set(digest, held);
    return held.value;
  }

  async #load(digest: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    if (this.#maxEntries === 0) return load();
    const mark = this.#feed.mark();
    const value = await load();
    if (value === undefined || mark === undefined || !this.#feed.unchangedSince(mark, value.accountId)) return value;
    this.#entries.delete(digest);
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(digest, { value, mark });
    return value;
  }
}
