import { ByteLru } from '../core/core.byte-lru.js';
import type { FastifyReply } from 'fastify';

/**
 * Serialized pages (workspace listings, comment thread lists), kept per caller and query, valid only for the
 * data version they were computed at. Each feature decides what its version is: the workspace listing's travels
 * with the credential (a write anywhere in the account, or the user's own views and favorites, moves it); a
 * thread list's is its dashboard and tenant's comment stream version. An entry of another version is unreachable.
 * Bodies are kept as UTF-8 bytes, so a hit is written to the socket without encoding the page again.
 * Bounded by bytes, least recently used first out. Callers prefix their keys with their feature.
 */
export class PageCache {
  readonly #entries: ByteLru<{ version: string; body: Buffer }>;

  constructor(maxBytes: number) {
    this.#entries = new ByteLru(maxBytes);
  }

  get enabled(): boolean {
    return this.#entries.enabled;
  }

  /** The body cached under `key` at exactly `version`, or undefined. */
  get(key: string, version: string): Buffer | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.version !== version) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.body;
  }

  set(key: string, version: string, body: Buffer): void {
    this.#entries.set(key, { version, body }, body.length);
  }
}

/**
 * Answers with the page cached under `key` at `version`, or computes it, serializes it with the route's own
 * response schema, keeps it and answers with it. The route's caller has already been checked.
 *
 * @example
 * return sendCachedPage(reply, cache, key, version, () => listWorkspace(ctx, principal, deploymentId, query));
 */
export async function sendCachedPage(reply: FastifyReply, cache: PageCache, key: string, version: string, compute: () => Promise<unknown>): Promise<FastifyReply> {
  let body = cache.get(key, version);
  if (body === undefined) {
    body = Buffer.from(reply.serialize(await compute()) as string);
    cache.set(key, version, body);
  }
  // A Buffer payload is sent as it is: the page was serialized by this route's own response schema.
  return reply.type('application/json; charset=utf-8').send(body);
}
