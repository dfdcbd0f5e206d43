import { createHash } from 'node:crypto';
import { AppError } from '../core/core.errors.js';

// Issue 36, Cube's "Continue wait" (docs/cube.md): a `load` that runs longer than the continue-wait timeout is
// answered `{"error": "Continue wait"}` (HTTP 200, as Cube's API gateway answers it), the query goes on, and the
// same caller asking the same query again picks it up; @cubejs-client/core asks again by itself. A query nobody
// asks for again within the orphan timeout is dropped.

export interface CubeWaitSettings {
  /** How long a `load` waits for its answer before answering "Continue wait" (Cube's `continueWaitTimeout`). */
  continueWaitMs: number;
  /** How long a query waits for its caller to ask again before it is dropped. */
  orphanTimeoutMs: number;
  /** Most queries held at once (running, or answered and not yet picked up). */
  maxEntries: number;
}

/** What answers "Continue wait" to the caller; the routes turn it into Cube's body. */
export class ContinueWait extends Error {
  override name = 'ContinueWait';
}

interface Entry {
  answer: Promise<unknown>;
  /** Set once the query has settled: picked up (and removed) by the next ask. */
  settled: boolean;
  orphan: NodeJS.Timeout | undefined;
  /** Ends the query when nobody asks for it again (the warehouses have no cancel: see docs/cube.md). */
  abort: AbortController;
}

/**
 * The queries of this process that answered "Continue wait", keyed by account, caller (a platform user, an embed
 * session, or a Cube JWT's claims) and query, so that only the same caller's same query picks one up.
 */
export class CubeWaits {
  readonly #entries = new Map<string, Entry>();
  readonly #settings: CubeWaitSettings;

  constructor(settings: CubeWaitSettings) {
    this.#settings = settings;
  }

  /** The key of a caller's query: its parts, hashed (a query can be long, and the key is held in memory). */
  static keyOf(accountId: number, caller: string, query: unknown): string {
    return createHash('sha256').update(JSON.stringify([accountId, caller, canonical(query)])).digest('base64url');
  }

  /** How many queries are held (tests). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The answer of `run` for `key`, the running or answered one when the same key asked before: within the
   * continue-wait timeout, or a ContinueWait thrown while it goes on. A full map is a 503 (nothing is evicted: a
   * caller polling for its answer must find it).
   */
  async load<T>(key: string, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      if (this.#entries.size >= this.#settings.maxEntries) {
        throw new AppError('service_unavailable', `${this.#entries.size} long queries are running or waiting to be picked up: try again later`);
      }
      const abort = new AbortController();
      const created: Entry = { answer: run(abort.signal), settled: false, orphan: undefined, abort };
      created.answer.then(() => { created.settled = true; }, () => { created.settled = true; });
      this.#entries.set(key, created);
      entry = created;
    }
    if (entry.orphan !== undefined) clearTimeout(entry.orphan);
    entry.orphan = undefined;
    const waited = await waitFor(entry.answer, this.#settings.continueWaitMs);
    if (waited.done) {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
      return waited.answer as Promise<T>;
    }
    const held = entry;
    held.orphan = setTimeout(() => {
      if (this.#entries.get(key) === held) this.#entries.delete(key);
      held.abort.abort();
    }, this.#settings.orphanTimeoutMs);
    held.orphan.unref();
    throw new ContinueWait('Continue wait');
  }

  /** Drops every held query (shutdown). */
  clear(): void {
    for (const entry of this.#entries.values()) {
      if (entry.orphan !== undefined) clearTimeout(entry.orphan);
      entry.abort.abort();
    }
    this.#entries.clear();
  }
}

/** Whether `answer` settles within `ms`; its settling (a rejection too) is handed back, not thrown, here. */
async function waitFor(answer: Promise<unknown>, ms: number): Promise<{ done: true; answer: Promise<unknown> } | { done: false }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ done: false }>((resolve) => {
    timer = setTimeout(() => resolve({ done: false }), ms);
  });
  try {
    return await Promise.race([answer.then(() => ({ done: true as const, answer }), () => ({ done: true as const, answer })), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A JSON value with its object keys sorted, so that `{a, b}` and `{b, a}` are one query. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
  }
  return value;
}
