import { randomInt } from 'node:crypto';
import { beforeEach } from 'vitest';

/** Random choices a test can replay: every draw follows from the seed. */
export interface SeededRandom {
  readonly seed: number;
  /** A number in [0, 1), as Math.random. */
  next(): number;
  /** A whole number in [0, below). */
  int(below: number): number;
}

/**
 * A seeded generator (mulberry32, a small well-known 32-bit generator) for the tests that draw random choices. The
 * seed is SVC_TEST_SEED when set, else a fresh one; a failing test prints it, so that
 * `SVC_TEST_SEED=<seed> npx vitest run <file>` draws the same choices again (as fast-check prints its own).
 * Call it at the top of a test file: the hook it registers covers every test of the file.
 *
 * @example
 * const random = seededRandom();
 * if (random.next() < 0.5) await resolveThread(...);
 */
export function seededRandom(): SeededRandom {
  const given = process.env.SVC_TEST_SEED;
  const seed = given !== undefined && given !== '' ? Number(given) >>> 0 : randomInt(2 ** 32);
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      console.error(`random choices of this file were drawn with seed ${seed}: replay with SVC_TEST_SEED=${seed}`);
    });
  });
  return { seed, next, int: (below) => Math.floor(next() * below) };
}
