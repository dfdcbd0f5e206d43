import { ApiError, OfflineError } from './api.js';
import type { Translate } from './i18n.js';

/** An error of a call, in words for the page: svc's own message for an API error, a hint when svc is unreachable. */
export function describeError(t: Translate, error: unknown): string {
  if (error instanceof OfflineError) return t('offline');
  if (error instanceof ApiError) return error.message.charAt(0).toUpperCase() + error.message.slice(1) + (/[.!?]$/.test(error.message) ? '' : '.');
  return t('unexpected', { message: error instanceof Error ? error.message : String(error) });
}
