/**
 * Serialized listing pages, kept per caller and query, valid only for the data version they were computed at.
 *
 * The version travels with the credential (one query reads both), so a hit costs no further query, and a write
 * anywhere in the account (or, for views and favorites, by the same user) makes every older entry unreachable.
 * Bodies are kept as UTF-8 bytes, so a hit is written to the socket without encoding 14 KB of text again.
 * Bounded by bytes, least recently used first out.
 */
export class ListingCache {
  readonly #maxBytes: number;
  readonly #entries = new Map<string, { version: string; body: Buffer }>();
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  get enabled(): boolean {
    return this.#maxBytes > 0;
  }

  /** The body cached under `key` at exactly `version`, or undefined. */
  get(key: string, version: string): Buffer | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.version !== version) {
      this.#remove(key);
      return undefined;
    }
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.body;
  }

  set(key: string, version: string, body: Buffer): void {
    const size = body.length;
    if (!this.enabled || size > this.#maxBytes / 4) return;
    this.#remove(key);
    this.#entries.set(key, { version, body });
    this.#bytes += size;
    while (this.#bytes > this.#maxBytes) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#remove(oldest);
    }
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#bytes -= entry.body.length;
    this.#entries.delete(key);
  }
}
