import { ApiError } from '../session.js';

/**
 * A 401: the session lapsed, the App shows it and tells the host (session.ts), so the panel keeps what it shows,
 * reports nothing and stops.
 */
export function isSessionLapse(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401;
}

/** A 404 on a comment or thread: it was deleted meanwhile, so the list is out of date. */
export function isGone(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

/**
 * Whether the host hears of a failure (`svc:event:error`): not a lapse (reported by the session), not the
 * viewer's own input refused (400, shown inline) and not a comment gone meanwhile (404, the list reloads).
 */
export function isWorthReporting(error: unknown): boolean {
  if (!(error instanceof ApiError)) return true;
  return error.status !== 401 && error.status !== 400 && error.status !== 404;
}

/** The message to show inline: the server's own for an API answer (validation errors name the field). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
