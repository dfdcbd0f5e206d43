import { createHash } from 'node:crypto';
import { ByteLru } from '../../core/core.byte-lru.js';
import { AppError } from '../../core/core.errors.js';
import type { SourceRefreshKey } from '../semantic/semantic.model.js';

/** Where an answer came from: this process's result cache, a pre-aggregation, or the data source itself. */
export type AnswerSource = 'cache' | `rollup:${string}` | 'warehouse';

/** The rows of one statement's answer, as kept: columns are not kept (they come from the model, compiled afresh). */
export interface CachedRows {
  rows: unknown[][];
  truncated: boolean;
}

const UNITS: Record<string, number> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };

/** `"10 seconds"`, `"1 minute"`, `"6 hours"`, `"1 day"` as milliseconds; undefined when it is not one. */
export function parseInterval(text: string): number | undefined {
  const match = /^\s*(\d{1,6})\s+(second|minute|hour|day|week)s?\s*$/.exec(text);
  if (match === null) return undefined;
  const ms = Number(match[1]) * UNITS[match[2]!]!;
  return ms > 0 ? ms : undefined;
}

/** Cube's default refresh key for a source that names none: every 10 seconds. */
export const DEFAULT_REFRESH_MS = 10_000;

export interface CacheCounters {
  /** Answers served from an entry. */
  hits: number;
  /** Answers computed (the first asker of a key). */
  misses: number;
  /** Askers that joined a computation already running for the same key (single flight). */
  waits: number;
  /** Answers computed past the cache by a `force` ask. */
  forced: number;
  /** Statements run on a data source (answers and refresh-key queries), and on pre-aggregations. */
  warehouseQueries: number;
  rollupQueries: number;
}

/**
 * The result cache shared by every viewer of this process: one entry per data source, refresh-key value, compiled
 * statement and bound values. A policy's row filter is part of the statement and its values, so two viewers share
 * an entry exactly when the same rows are theirs to see. One computation per key at a time (single flight): the
 * askers that arrive while it runs wait for it. Bounded in bytes, least recently used first out. Failures are
 * never kept.
 */
export class ResultCache {
  readonly counters: CacheCounters = { hits: 0, misses: 0, waits: 0, forced: 0, warehouseQueries: 0, rollupQueries: 0 };
  readonly #entries: ByteLru<CachedRows>;
  readonly #inflight = new Map<string, Promise<{ value: CachedRows; source: AnswerSource }>>();
  readonly #refreshValues = new Map<string, { value: string; checkedAt: number; pending?: Promise<string> }>();
  constructor(maxBytes: number) {
    this.#entries = new ByteLru(maxBytes);
  }

  get bytes(): number {
    return this.#entries.bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The key of a statement: a digest, so that a long statement costs no more memory than a short one. */
  static key(parts: readonly unknown[]): string {
    return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
  }

  /**
   * The answer under `key`: kept, or being computed (joined), or computed now by `compute` and kept. `force`
   * computes afresh whatever is kept, and keeps the new answer for those who come after.
   */
  async answer(key: string, force: boolean, compute: () => Promise<{ value: CachedRows; source: AnswerSource }>): Promise<{ value: CachedRows; source: AnswerSource }> {
    if (!force) {
      const kept = this.#entries.get(key);
      if (kept !== undefined) {
        this.counters.hits++;
        return { value: kept, source: 'cache' };
      }
      const running = this.#inflight.get(key);
      if (running !== undefined) {
        this.counters.waits++;
        const { value } = await running;
        return { value, source: 'cache' };
      }
      this.counters.misses++;
    } else {
      this.counters.forced++;
    }
    const computation = compute();
    if (!force) this.#inflight.set(key, computation);
    try {
      const answer = await computation;
      this.#keep(key, answer.value);
      return answer;
    } finally {
      if (this.#inflight.get(key) === computation) this.#inflight.delete(key);
    }
  }

  /**
   * The current value of a data source's refresh key (Cube's `refresh_key`). `every` alone: the interval's number since the epoch.
   * With `sql`: what `query` returns, asked again once `every` has passed (one ask at a time; askers meanwhile
   * get the value being replaced). A failing refresh query is an error for its askers, so nothing stale is served.
   */
  async refreshValue(sourceKey: string, refreshKey: SourceRefreshKey | undefined, now: number, query: (sql: string) => Promise<unknown>): Promise<string> {
    const every = refreshKey?.every === undefined ? DEFAULT_REFRESH_MS : parseInterval(refreshKey.every) ?? DEFAULT_REFRESH_MS;
    if (refreshKey?.sql === undefined) return `every:${Math.floor(now / every)}`;
    const known = this.#refreshValues.get(sourceKey);
    if (known !== undefined && (now - known.checkedAt < every || known.pending !== undefined)) return known.pending ?? known.value;
    const pending = query(refreshKey.sql).then((value) => `sql:${JSON.stringify(value)}`);
    const record = { value: known?.value ?? '', checkedAt: known?.checkedAt ?? 0, pending };
    this.#refreshValues.set(sourceKey, record);
    try {
      const value = await pending;
      this.#refreshValues.set(sourceKey, { value, checkedAt: now });
      return value;
    } catch (error) {
      this.#refreshValues.delete(sourceKey);
      throw error instanceof AppError ? error : new AppError('service_unavailable', `the data source's refreshKey query failed: ${String(error)}`);
    }
  }

  #keep(key: string, value: CachedRows): void {
    if (!this.#entries.enabled) return;
    // The rows' size as JSON text: close to what they hold in memory, and what a response will carry.
    this.#entries.set(key, value, Buffer.byteLength(JSON.stringify(value.rows)) + key.length + 64);
  }

  /** Drops every entry (a rollup build or an import changes answers before the refresh key does). */
  clear(): void {
    this.#entries.clear();
  }
}
