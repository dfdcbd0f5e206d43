/**
 * Values kept by key within a budget of bytes, least recently used first out; a value over a quarter of the
 * budget is not kept (it would push out many others). The caller says what each value weighs. The page cache and
 * the result cache keep their entries in one.
 */
export class ByteLru<V> {
  readonly #maxBytes: number;
  readonly #entries = new Map<string, { value: V; bytes: number }>();
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  get enabled(): boolean {
    return this.#maxBytes > 0;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value under `key`, now the most recently used; undefined when none is kept. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, bytes: number): void {
    if (!this.enabled || bytes > this.#maxBytes / 4) return;
    this.delete(key);
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
    while (this.#bytes > this.#maxBytes) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#bytes -= entry.bytes;
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }
}
