/** Every way the SDK can fail, as a closed union (STYLE.md: one error class with a code). */
export type SvcEmbedErrorCode =
  | 'invalid-option'
  | 'destroyed'
  | 'renewal-failed'
  | 'action-rejected'
  | 'timeout'
  /** No `ready` from the frame within `readyTimeoutMs`: refused by frame-ancestors, unreachable, or not an svc embed. */
  | 'frame-timeout'
  /** The first load failed before `ready`: `getSessionId()` threw, or the embed refused its session (a fatal error). */
  | 'load-failed';

/**
 * The SDK's one error class. `code` says what failed; `cause` keeps the underlying error when there is one.
 *
 * @example
 * handle.setSession().catch((e) => { if (e instanceof SvcEmbedError && e.code === 'action-rejected') ... });
 */
export class SvcEmbedError extends Error {
  // Declared, not a class field: set once in the constructor, with no field initialiser emitted before it.
  declare readonly code: SvcEmbedErrorCode;

  constructor(code: SvcEmbedErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SvcEmbedError';
    this.code = code;
  }
}
