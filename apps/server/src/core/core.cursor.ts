import { createHash } from 'node:crypto';
import { AppError } from './core.errors.js';
import { MAX_ROW_ID } from './core.schema.js';
import type { PageInfo } from './core.schema.js';

const CURSOR_VERSION = 1;
const MAX_CURSOR_LENGTH = 1024;

/** A value a cursor position may hold: keyset sort keys and ids. */
export type CursorPart = string | number | null;

/**
 * A short fingerprint of everything that shapes a listing (its filters, order, scope and caller). A cursor carries
 * it, so a cursor reused with another query or by another caller is recognised and refused.
 */
export function fingerprintQuery(parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

/**
 * An opaque keyset cursor: base64url of a small JSON array (version, fingerprint, position). Opaque to clients,
 * not secret: it holds nothing the caller could not see in the page it came from.
 *
 * @example
 * const cursor = encodeCursor(fingerprintQuery(['threads', tenantId]), ['2026-01-05T10:00:00.000Z', 42]);
 */
export function encodeCursor(fingerprint: string, position: readonly CursorPart[]): string {
  return Buffer.from(JSON.stringify([CURSOR_VERSION, fingerprint, ...position])).toString('base64url');
}

/** The 400 for an `after` that is not a cursor of this listing, naming the field. */
export function invalidCursor(reason: string): AppError {
  return new AppError('invalid_parameter', `query parameter after is not a cursor of this listing: ${reason}`, 'after');
}

/**
 * Decodes `after` into its position parts, checking its shape, its length and that it was made by the same query.
 * Anything else is a 400: a bogus string, an empty one, `null` or `undefined` sent back as text, or a cursor of
 * another query. The caller checks the types of the parts.
 */
export function decodeCursor(after: string, fingerprint: string, partCount: number): unknown[] {
  let decoded: unknown;
  try {
    if (after.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(after)) throw new Error('not base64url');
    decoded = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor('malformed');
  }
  if (!Array.isArray(decoded) || decoded.length !== partCount + 2 || decoded[0] !== CURSOR_VERSION) throw invalidCursor('malformed');
  if (decoded[1] !== fingerprint) throw invalidCursor('it was made by a different query (filters, order, scope or caller)');
  const position = decoded.slice(2) as unknown[];
  // Cursors are opaque, not signed: a caller can edit the position. It stays inside the caller's own scope (the
  // query's WHERE), but must not carry what the database cannot compare (PostgreSQL text holds no U+0000).
  if (position.some((part) => typeof part === 'string' && part.includes('\u0000'))) throw invalidCursor('malformed');
  return position;
}

/** Whether a decoded part is a row id: a positive integer that fits the id columns (32 bits on PostgreSQL). */
export function isCursorId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= MAX_ROW_ID;
}

/**
 * SPEC PageInfo of a page of rows: cursors of its first and last rows, null on an empty page.
 *
 * @example
 * pageInfoOf(rows, rows.length > size, after !== null, (row) => encodeCursor(fingerprint, [row.created_at, row.id]));
 */
export function pageInfoOf<T>(rows: readonly T[], hasNextPage: boolean, hasPreviousPage: boolean, cursorOf: (row: T) => string): PageInfo {
  const first = rows[0];
  const last = rows[rows.length - 1];
  return {
    hasNextPage,
    hasPreviousPage,
    startCursor: first === undefined ? null : cursorOf(first),
    endCursor: last === undefined ? null : cursorOf(last),
  };
}
