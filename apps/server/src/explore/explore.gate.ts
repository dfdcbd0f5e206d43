import { AppError } from '../core/core.errors.js';

// Issue 35 explore: how many explore queries one embed tenant runs at once (docs/explore.md "Limits"), so that one
// customer's exploration cannot take the data source from another's. Counted in this process.

/** How many queries may wait for a slot, per running slot, before one more is refused. */
export const QUEUE_PER_SLOT = 8;

/**
 * At most `concurrency` calls of `run` per key at once; more wait, first come first served, up to
 * `concurrency * QUEUE_PER_SLOT`, and past that are a 429 (`too_many_requests`) at once, without waiting.
 *
 * @example
 * const gate = new TenantGate(2);
 * const rows = await gate.run(`1:tenant:7`, () => runQuery());
 */
export class TenantGate {
  readonly #running = new Map<string, number>();
  readonly #waiting = new Map<string, Array<() => void>>();
  readonly #queueBound: number;

  constructor(readonly concurrency: number) {
    this.#queueBound = concurrency * QUEUE_PER_SLOT;
  }

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    await this.#enter(key);
    try {
      return await task();
    } finally {
      this.#leave(key);
    }
  }

  /** Queries of `key` running now (for tests and metrics). */
  running(key: string): number {
    return this.#running.get(key) ?? 0;
  }

  #enter(key: string): Promise<void> {
    const running = this.#running.get(key) ?? 0;
    if (running < this.concurrency) {
      this.#running.set(key, running + 1);
      return Promise.resolve();
    }
    const queue = this.#waiting.get(key) ?? [];
    if (queue.length >= this.#queueBound) {
      throw new AppError('too_many_requests', `too many explore queries of this embed tenant at once: ${this.concurrency} run and ${this.#queueBound} wait; retry in 1 s`);
    }
    this.#waiting.set(key, queue);
    return new Promise((resolve) => queue.push(resolve));
  }

  #leave(key: string): void {
    const queue = this.#waiting.get(key);
    const next = queue?.shift();
    if (queue !== undefined && queue.length === 0) this.#waiting.delete(key);
    // The slot passes to the next in line: the running count stays.
    if (next !== undefined) {
      next();
      return;
    }
    const running = (this.#running.get(key) ?? 1) - 1;
    if (running <= 0) this.#running.delete(key);
    else this.#running.set(key, running);
  }
}
