import { expect } from 'vitest';

/**
 * Asserts an answer is DESIGN.md's error body with this status, and names `field` when one is given.
 *
 * @example
 * expectErrorBody({ status: res.statusCode, text: res.body }, 400, 'query.measures[0]');
 */
export function expectErrorBody(answer: { status: number; text: string }, status: number, field?: string): void {
  expect(answer.status, answer.text).toBe(status);
  const body = JSON.parse(answer.text) as { error: { status: number; message: unknown; field?: string } };
  expect(body.error.status).toBe(status);
  expect(typeof body.error.message).toBe('string');
  if (field !== undefined) expect(body.error.field).toBe(field);
}
