import { expect } from 'vitest';

/**
 * Asserts two result sets equal, numbers to 1e-9 relative: a rollup adds a sum's doubles in another order than
 * the warehouse does.
 */
export function expectSameRows(actual: unknown[][], expected: unknown[][], context: string): void {
  const same = (x: unknown, y: unknown): boolean => {
    if (typeof x === 'number' && typeof y === 'number') return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
    if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => same(v, y[i]));
    return x === y;
  };
  expect(same(actual, expected), `${context}\nrollup:    ${JSON.stringify(actual)}\nwarehouse: ${JSON.stringify(expected)}`).toBe(true);
}
