import { createHash } from 'node:crypto';
import { AppError } from '../http/http.errors.js';

/**
 * A keyset position in the listing: which phase of the order (folders, then non-folders, then never-viewed
 * non-folders under viewer_last_viewed_at), the sort value of the last item seen, and its id.
 */
export interface WorkspacePosition {
  phase: number;
  key: string | null;
  id: number;
}

const CURSOR_VERSION = 1;

/**
 * A short fingerprint of everything that shapes the listing. A cursor carries it, so a cursor reused with other
 * filters, another order, another folder or by another user is recognised and refused (DESIGN.md).
 */
export function fingerprintQuery(parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 16);
}

/** Opaque cursor: base64url of a small JSON array. Opaque to clients, not secret. */
export function encodeCursor(fingerprint: string, position: WorkspacePosition): string {
  return Buffer.from(JSON.stringify([CURSOR_VERSION, fingerprint, position.phase, position.key, position.id])).toString('base64url');
}

function invalidCursor(reason: string): AppError {
  return new AppError('invalid_parameter', `query parameter after is not a cursor of this listing: ${reason}`, 'after');
}

/**
 * Decodes `after`, checking its shape and that it was made by the same query. Anything else is a 400:
 * a bogus string, a `null` sent back as text, or a cursor of another query.
 */
export function decodeCursor(after: string, fingerprint: string, phaseCount: number): WorkspacePosition {
  let decoded: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(after)) throw new Error('not base64url');
    decoded = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor('malformed');
  }
  if (!Array.isArray(decoded) || decoded.length !== 5 || decoded[0] !== CURSOR_VERSION) throw invalidCursor('malformed');
  const [, cursorFingerprint, phase, key, id] = decoded as unknown[];
  if (cursorFingerprint !== fingerprint) throw invalidCursor('it was made by a different query (filters, order or folder)');
  const isPhase = typeof phase === 'number' && Number.isInteger(phase) && phase >= 0 && phase < phaseCount;
  const isKey = key === null || (typeof key === 'string' && key.length <= 1024);
  const isId = typeof id === 'number' && Number.isSafeInteger(id) && id > 0;
  if (!isPhase || !isKey || !isId) throw invalidCursor('malformed');
  return { phase, key, id };
}
