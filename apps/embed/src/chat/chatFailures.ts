import type { MessageKey, Translate } from '../i18n.js';
import { ApiError } from '../session.js';

/** A failed question as the viewer reads it: a sentence in their language, and svc's error code for support. */
export interface ChatFailure {
  text: string;
  /** svc's `error.code` (DESIGN's error body), when svc answered; never its English message. */
  code?: string;
}

/** The sentence for each kind of failure, by svc's HTTP status (docs/data.md "Questions in plain language"). */
function messageKeyOf(error: unknown): MessageKey {
  if (!(error instanceof ApiError)) return 'chatFailed';
  if (error.status === 503) return 'chatUnavailable';
  if (error.status === 403) return 'chatForbidden';
  if (error.status === 429) return 'chatBusy';
  if (error.status === 502 || error.status === 504) return 'chatModelFailed';
  if (error.code === 'invalid_query') return 'chatNotUnderstood';
  return 'chatFailed';
}

/**
 * What the chat shows for a question that failed: the viewer's language only, with svc's code kept as the detail
 * (issue 31: de-DE showed svc's English message). The host still gets the whole error through `svc:event:error`.
 *
 * @example
 * describeChatFailure(new ApiError(502, 'bad_gateway', 'the AI endpoint answered 500'), translator('de-DE'));
 * // { text: 'Der KI-Dienst hat nicht richtig geantwortet. Versuchen Sie es später erneut.', code: 'bad_gateway' }
 */
export function describeChatFailure(error: unknown, t: Translate): ChatFailure {
  const text = t(messageKeyOf(error));
  return error instanceof ApiError ? { text, code: error.code } : { text };
}
