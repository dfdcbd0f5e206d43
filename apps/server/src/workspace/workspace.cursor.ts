import { decodeCursor as decodeCursorParts, encodeCursor as encodeCursorParts, invalidCursor, isCursorId } from '../core/core.cursor.js';

export { fingerprintQuery } from '../core/core.cursor.js';

/**
 * A keyset position in the listing: which phase of the order (folders, then non-folders, then never-viewed
 * non-folders under viewer_last_viewed_at), the sort value of the last item seen, and its id.
 */
export interface WorkspacePosition {
  phase: number;
  key: string | null;
  id: number;
}

/** Opaque cursor of a workspace listing position (DESIGN.md: bound to the query that made it). */
export function encodeCursor(fingerprint: string, position: WorkspacePosition): string {
  return encodeCursorParts(fingerprint, [position.phase, position.key, position.id]);
}

/**
 * Decodes `after`, checking its shape and that it was made by the same query. Anything else is a 400:
 * a bogus string, a `null` sent back as text, or a cursor of another query.
 */
export function decodeCursor(after: string, fingerprint: string, phaseCount: number): WorkspacePosition {
  const [phase, key, id] = decodeCursorParts(after, fingerprint, 3);
  const isPhase = typeof phase === 'number' && Number.isInteger(phase) && phase >= 0 && phase < phaseCount;
  const isKey = key === null || (typeof key === 'string' && key.length <= 1024);
  if (!isPhase || !isKey || !isCursorId(id)) throw invalidCursor('malformed');
  return { phase, key, id };
}
