/**
 * Serialized pages (workspace listings, comment thread lists), kept per caller and query, valid only for the
 * data version they were computed at. Each feature decides what its version is: the workspace listing's travels
 * with the credential (a write anywhere in the account, or the user's own views and favorites, moves it); a
 * thread list's is its dashboard and tenant's comment stream version. An entry of another version is unreachable.
 * Bodies are kept as UTF-8 bytes, so a hit is written to the socket without encoding the page again.
 * Bounded by bytes, least recently used first out. Callers prefix their keys with their feature.
 */
export class PageCache {
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
