// What a typical page does not need, kept out of the main entry (its size budget, package.test.ts): words for
// `debug`, and the pieces of `embed()` for a host that makes its own iframe or speaks the protocol itself.
import { parseEvent } from '@svc/protocol';

export { embedUrl } from './embed.js';
export { RENEWAL_BACKOFF_MS, SessionRenewal } from './renewal.js';
export type { RenewalDeps } from './renewal.js';

/**
 * The `debug` option that says why in words: `embed({ ..., debug })` logs (`console.debug`) each dropped svc
 * message with its reason (another window, another origin, or the check of its shape that failed), and the rest as
 * `debug: true` does.
 *
 * @example
 * import { debug } from '@svc/embed-sdk/tools';
 * embed({ container, baseUrl, surface: 'dashboard', publicId: 'q1-review', getSessionId, debug });
 */
export function debug(...args: unknown[]): void {
  if (args[0] === 'dropped') {
    const [, event, frame, origin] = args as [string, MessageEvent, Window | undefined, string];
    const parsed = parseEvent(event.data);
    const reason = !frame || event.source !== frame ? 'from another window'
      : event.origin !== origin ? `from origin ${event.origin}, expected ${origin}` : parsed.ok ? 'for no reason' : parsed.reason;
    console.debug('[svc-embed]', `dropped a message ${reason}`);
  } else {
    console.debug('[svc-embed]', ...args);
  }
}
