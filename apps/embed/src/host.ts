import { SOURCE, createEvent, parseAction } from '@svc/protocol';
import type { ActionMessage, EventPayloads, EventType, Surface } from '@svc/protocol';

/**
 * The embed's side of SPEC "Embed messaging": events go to the parent window at the host origin only (never
 * `"*"`), and actions are taken only from the parent window at that origin with a valid envelope.
 *
 * The host origin is the parent's origin as the browser reports it (`location.ancestorOrigins`, else the
 * referrer), and it must be one of the account's allowed origins. Where the browser reports neither (a host
 * page with `Referrer-Policy: no-referrer` in a browser without `ancestorOrigins`), each event is posted once per
 * allowed origin: the browser delivers it only to the one the parent really has.
 */
export interface HostChannel {
  /** The host origin, or undefined when it could not be told (see above) or is not allowed. */
  readonly hostOrigin: string | undefined;
  /** Whether a parent at an allowed origin can hear this embed. */
  readonly isConnected: boolean;
  /**
   * Posts an event; events before `ready` wait for it, so that `ready` is always the first (SPEC), except a fatal
   * error, which is sent at once: after it, no `ready` comes.
   */
  emit<T extends EventType>(type: T, payload: EventPayloads[T], surface?: Surface): void;
  /** The surface stamped on events from now on. */
  setSurface(surface: Surface): void;
  onAction(handler: (action: ActionMessage) => void): () => void;
  /** Envelopes that came from the parent at an allowed origin but did not parse (a host bug worth reporting). */
  onInvalidAction(handler: (reason: string) => void): () => void;
}

export function findHostOrigin(win: Window, allowedOrigins: readonly string[]): { origin: string | undefined; candidates: string[] } {
  if (win.parent === win) return { origin: undefined, candidates: [] };
  const ancestors = (win.location as Location & { ancestorOrigins?: DOMStringList }).ancestorOrigins;
  let reported: string | undefined = ancestors !== undefined && ancestors.length > 0 ? ancestors[0]! : undefined;
  if (reported === undefined && win.document.referrer !== '') {
    try {
      reported = new URL(win.document.referrer).origin;
    } catch {
      reported = undefined;
    }
  }
  if (reported !== undefined) return { origin: allowedOrigins.includes(reported) ? reported : undefined, candidates: allowedOrigins.includes(reported) ? [reported] : [] };
  return { origin: undefined, candidates: [...allowedOrigins] };
}

export function createHostChannel(win: Window, allowedOrigins: readonly string[], initialSurface: Surface): HostChannel {
  const { origin, candidates } = findHostOrigin(win, allowedOrigins);
  let surface = initialSurface;
  let isReady = false;
  const held: Array<() => void> = [];
  const actionHandlers = new Set<(action: ActionMessage) => void>();
  const invalidHandlers = new Set<(reason: string) => void>();

  const post = (message: unknown) => {
    for (const target of candidates) win.parent.postMessage(message, target);
  };

  win.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== win.parent || win.parent === win) return;
    if (!candidates.includes(event.origin)) return;
    const data = event.data as { source?: unknown; direction?: unknown } | null;
    if (typeof data !== 'object' || data === null || data.source !== SOURCE || data.direction !== 'action') return;
    const parsed = parseAction(event.data);
    if (!parsed.ok) {
      for (const handler of invalidHandlers) handler(parsed.reason);
      return;
    }
    for (const handler of actionHandlers) handler(parsed.message);
  });

  return {
    hostOrigin: origin,
    isConnected: candidates.length > 0,
    emit(type, payload, stamped) {
      // An event of an embedded app's own doing (SPEC: ai-query "reports surface app when run inside the embedded
      // app") carries its surface, whatever the page's current one.
      const on = stamped ?? surface;
      const send = () => post(createEvent(type, payload, on));
      if (type === 'svc:event:ready') {
        if (isReady) return;
        isReady = true;
        send();
        for (const next of held.splice(0)) next();
      } else if (isReady || (type === 'svc:event:error' && (payload as EventPayloads['svc:event:error']).fatal === true)) {
        // A fatal error before `ready` (the boot could not authenticate) means no `ready` will come: it goes now.
        send();
      } else {
        held.push(send);
      }
    },
    setSurface(next) {
      surface = next;
    },
    onAction(handler) {
      actionHandlers.add(handler);
      return () => actionHandlers.delete(handler);
    },
    onInvalidAction(handler) {
      invalidHandlers.add(handler);
      return () => invalidHandlers.delete(handler);
    },
  };
}
