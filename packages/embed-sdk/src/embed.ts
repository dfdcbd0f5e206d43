import { SOURCE, createAction, isCoreEvent } from '@svc/protocol';
import type { ActionPayloads, ActionType, CoreEventType, EmbedTheme, EventMessage, EventPayloads, Surface } from '@svc/protocol';
import { SvcEmbedError } from './errors.js';
import type { SvcEmbedErrorCode } from './errors.js';
import { renewal as startRenewal } from './renewal.js';

/** Event names without their `svc:event:` prefix: `on('ready', ...)`. */
export type EmbedEventName = CoreEventType extends `svc:event:${infer N}` ? N : never;

/** What each handler receives: the payloads of SPEC's events, and the SDK's own `renewal-failed`. */
export type EmbedEventMap = { [N in EmbedEventName]: EventPayloads[`svc:event:${N}`] } & {
  'renewal-failed': SvcEmbedError;
};

export interface EmbedOptions {
  /** The element the iframe goes into. */
  container: HTMLElement;
  /** The tenant's svc address, e.g. `https://analytics.example.com`; its origin is the only one trusted. */
  baseUrl: string;
  surface: Surface;
  /** The dashboard to show (surface `dashboard`). */
  publicId?: string;
  /** An in-embed path to open first (surfaces `app` and `chat`). */
  path?: string;
  /** Asks your backend for a fresh session id (Generate Session); called for the first load and each renewal. */
  getSessionId(): string | Promise<string>;
  allowExport?: boolean;
  colorScheme?: 'light' | 'dark' | 'auto';
  locale?: string;
  timezone?: string;
  theme?: EmbedTheme;
  /**
   * Logs (`console.debug`) every dropped svc message, a handler that threw, a first load that failed and a ready
   * timeout. `true` logs the message or error itself; `debug` from `@svc/embed-sdk/debug` says why in words (the
   * window, the origin, or which check of the event's shape failed), in a second entry that a page in production
   * need not load.
   */
  debug?: boolean | EmbedDebug;
  /**
   * How the comment panel starts: `open`, `collapsed` (its button, with the count of open threads), or `auto` (the
   * default): open only when the frame is wide enough for the grid beside it to keep the dashboard's own layout.
   */
  comments?: 'open' | 'collapsed' | 'auto';
  /**
   * A saved view of the dashboard (its id, from `svc:event:view-saved` or svc's API) to open at load: its filters,
   * grain and swaps (docs/explore.md). For the builder, see `@svc/embed-sdk/explore`.
   */
  view?: string;
  /** How long `setSession()` and other awaited actions wait for the embed's answer (default 30 s). */
  actionTimeoutMs?: number;
  /**
   * How long `ready` may take once the iframe is created (default 15 s; `Infinity` waits for ever). A frame the
   * browser refuses (this page's origin is not in the account's `allowedEmbedOrigins`), an svc out of reach or a
   * wrong `baseUrl` never sends `ready`: after this long, `ready` rejects with an `SvcEmbedError` of code
   * `frame-timeout` that names those causes, and an `error` event says the same.
   */
  readyTimeoutMs?: number;
  /**
   * Fits the iframe's height to the embed's content (svc's `content-size` event), growing and shrinking with it,
   * so that the host page scrolls instead of the frame. The iframe gets no scroll bar of its own, so its width, and
   * with it the content's height, does not change with its height: no layout loop. Default false: the iframe fills
   * the container (`height: 100%`).
   *
   * @example
   * embed({ container, baseUrl, surface: 'dashboard', publicId: 'sales-performance', getSessionId, autoResize: true });
   */
  autoResize?: boolean;
}

/**
 * What `debug` hears: `('dropped', event, frameWindow, origin)` for a dropped svc message (the embed's own window and
 * the origin it trusts, to tell which check it failed), `('handler threw', error)`, `('getSessionId failed', error)`
 * and `(message)` for a ready timeout.
 */
export type EmbedDebug = (...args: unknown[]) => void;

/** The handle `embed()` returns. */
export interface EmbedHandle {
  readonly iframe: HTMLIFrameElement | undefined;
  /**
   * Resolves with the first `ready` event's payload. Rejects with an `SvcEmbedError`: `frame-timeout` when no
   * `ready` came within `readyTimeoutMs`, `load-failed` when `getSessionId()` failed or the embed refused its first
   * session, `destroyed` when `destroy()` came first.
   */
  readonly ready: Promise<EmbedEventMap['ready']>;
  on<N extends keyof EmbedEventMap>(name: N, handler: (payload: EmbedEventMap[N]) => void): () => void;
  off<N extends keyof EmbedEventMap>(name: N, handler: (payload: EmbedEventMap[N]) => void): void;
  once<N extends keyof EmbedEventMap>(name: N): Promise<EmbedEventMap[N]>;
  setColorScheme(scheme: ActionPayloads['svc:action:set-color-scheme']['scheme']): void;
  setTheme(theme: EmbedTheme): void;
  setLocale(locale: string): void;
  setTimezone(timezone: string): void;
  /**
   * Pushes `f_<view>.<dimension>=<JSON of value>` (SPEC `svc:action:set-filter`); `null` clears it. Resolves once the
   * embed applied it; rejects (`action-rejected`, the member named) when svc refuses it: a member the dashboard's
   * model does not declare, a value not of its type, or a member hidden from the viewer. Nothing is applied then, and
   * an `error` event says the same. Awaiting it is optional: an unawaited refusal is not an unhandled rejection.
   */
  setFilter(view: string, dimension: string, value: unknown): Promise<void>;
  navigate(path: string): void;
  refresh(): void;
  /** Swaps in a fresh session (from `getSessionId()` when no id is given); resolves when the embed confirms. */
  setSession(sessionId?: string): Promise<void>;
  /** Removes the iframe, the message listener and every timer; pending promises reject with `destroyed`. */
  destroy(): void;
}


/** The embed URL of SPEC.md: `{base_url}/embed/dashboard/<public_id>?session=<session_id>` (and app, chat). */
export function embedUrl(options: Omit<EmbedOptions, 'container' | 'getSessionId'>, sessionId: string): string {
  const { surface } = options;
  const url = new URL(`${options.baseUrl.replace(/\/+$/, '')}/embed/${surface}${surface === 'dashboard' ? `/${encodeURIComponent(options.publicId ?? '')}` : ''}`);
  const params: Record<string, unknown> = { ...options, session: sessionId, allowExport: options.allowExport && 'true' };
  // The options the embed reads from its URL, in this order (`session` first).
  for (const name of ['session', 'path', 'allowExport', 'colorScheme', 'locale', 'timezone', 'comments', 'view']) {
    if (params[name]) url.searchParams.set(name, params[name] as string);
  }
  return `${url}`;
}

// Every message the SDK writes; the size budget (package.test.ts) counts them, so they say what is needed once.
const DESTROYED = 'this embed was destroyed';

/**
 * Embeds an svc surface: creates the iframe with a first session id, listens to its events (only from that
 * iframe, only from the tenant origin, only valid svc events), sends actions to the tenant origin (never `"*"`)
 * and renews the session before or after it lapses (SPEC "set-session" rules).
 *
 * @example
 * const handle = embed({ container, baseUrl: 'https://analytics.example.com', surface: 'dashboard',
 *   publicId: 'q1-review', getSessionId: () => fetch('/api/svc-session').then((r) => r.text()), autoResize: true });
 * handle.on('dashboard-loaded', ({ widgetCount }) => console.log(widgetCount));
 */
export function embed(options: EmbedOptions): EmbedHandle {
  // `ready` may take 15 s by default: a slow first load on a poor connection stays well within it.
  const { baseUrl, surface, readyTimeoutMs = 15_000, actionTimeoutMs = 30_000 } = options;
  const fail = (code: SvcEmbedErrorCode, message: string, cause?: unknown) => new SvcEmbedError(code, message, { cause });
  let origin: string | undefined;
  try {
    if (/^https?:/i.test(baseUrl)) origin = new URL(baseUrl).origin;
  } catch {
    // refused below, with the same message as any other scheme
  }
  if (!origin) throw fail('invalid-option', `baseUrl must be an http(s) URL, got ${String(baseUrl)}`);
  if (surface === 'dashboard' && !options.publicId) throw fail('invalid-option', 'a dashboard needs publicId');
  if (typeof readyTimeoutMs !== 'number' || !(readyTimeoutMs > 0)) {
    throw fail('invalid-option', `readyTimeoutMs must be a number above 0, got ${String(readyTimeoutMs)}`);
  }
  const log = (...args: unknown[]) => {
    const { debug } = options;
    if (debug === true) console.debug(SOURCE, ...args);
    else if (debug) debug(...args);
  };
  const handlers = new Map<string, Set<(payload: never) => void>>();
  const pending = new Map<string, [resolve: () => void, reject: (error: SvcEmbedError) => void, timer: ReturnType<typeof setTimeout>]>();
  let queue: Array<() => void> | undefined = [];
  let iframe: HTMLIFrameElement | undefined;
  let destroyed = false;
  let requestCounter = 0;
  let readyTimer: ReturnType<typeof setTimeout> | undefined;
  let settleReady: [resolve: (payload: EmbedEventMap['ready']) => void, reject: (error: SvcEmbedError) => void] | undefined;
  // A host that never awaits `ready` (or `setFilter()`) must not get an unhandled rejection; one that does still sees it.
  const quiet = <T>(promise: Promise<T>) => {
    promise.catch(() => undefined);
    return promise;
  };
  const readyPromise = quiet(new Promise<EmbedEventMap['ready']>((resolve, reject) => {
    settleReady = [resolve, reject];
  }));
  /** Settles `ready` (once, and only while it is pending): 0 resolves, 1 rejects. */
  const settle = (how: 0 | 1, value: never) => {
    clearTimeout(readyTimer);
    settleReady?.[how](value);
    settleReady = undefined;
  };

  const emit = (name: string, payload: unknown) => {
    for (const handler of [...(handlers.get(name) ?? [])]) {
      try {
        (handler as (p: unknown) => void)(payload);
      } catch (error) {
        // Reported as a DOM event listener's would be (the console, window.onerror), and the others still run.
        setTimeout(() => {
          throw error;
        });
      }
    }
  };

  // Before `ready` an action waits in the queue; after it, it goes at once.
  const post = <T extends ActionType>(type: T, payload: ActionPayloads[T], requestId?: string) => {
    if (destroyed) throw fail('destroyed', DESTROYED);
    const message = createAction(type, payload, requestId);
    const send = () => iframe?.contentWindow?.postMessage(message, origin);
    if (queue) queue.push(send);
    else send();
  };

  const sendAwaited = <T extends ActionType>(type: T, payload: ActionPayloads[T]): Promise<void> => quiet(new Promise<void>((resolve, reject) => {
    // Unique within this embed, which echoes it back; other embeds' results never reach this handle.
    const requestId = `${++requestCounter}`;
    post(type, payload, requestId);
    pending.set(requestId, [resolve, reject, setTimeout(() => {
      pending.delete(requestId);
      reject(fail('timeout', `${type}: no answer within ${actionTimeoutMs} ms`));
    }, actionTimeoutMs)]);
  }));

  const renewal = startRenewal({
    ...options,
    sendSession: (sessionId) => sendAwaited('svc:action:set-session', { sessionId }),
    // The host hears it as `renewal-failed` (with the cause), debug or not.
    onFailed: (error) => emit('renewal-failed', error),
  });

  const onMessage = (event: MessageEvent) => {
    const { data } = event;
    const frame = iframe?.contentWindow;
    if (frame && event.source === frame && event.origin === origin && isCoreEvent(data)) dispatch(data);
    // Only svc messages are worth a word: a page hears many others.
    else if ((data as { source?: unknown } | null)?.source === SOURCE) log('dropped', event, frame, origin);
  };

  const dispatch = (message: EventMessage) => {
    // Handlers are keyed by the name after `svc:event:` (10 characters).
    const name = message.type.slice(10);
    const p = message.payload as Partial<EventPayloads['svc:event:error'] & EventPayloads['svc:event:session-expiring'] & EventPayloads['svc:event:session-expired']
      & EventPayloads['svc:event:content-size'] & EventPayloads['svc:event:action-result']>;
    if (name === 'ready' && queue) {
      settle(0, p as never);
      for (const send of queue) send();
      queue = undefined;
    }
    // A fatal error before `ready` (the embed could not authenticate) means no `ready` will come.
    if (name === 'error' && queue && p.fatal) settle(1, fail('load-failed', p.message!, p) as never);
    // session-expiring brings `expiresAt`, session-expired `expiredAt`: whichever comes first starts the renewal.
    if (name.startsWith('session-')) renewal.onLapse((p.expiresAt ?? p.expiredAt)!);
    if (name === 'content-size' && options.autoResize && iframe) {
      // The same height again changes nothing (the browser compares before it restyles); a negative one is not a
      // CSS height, and the browser keeps the last.
      iframe.style.height = `${Math.ceil(p.height!)}px`;
    }
    const waiting = name === 'action-result' && pending.get(p.requestId!);
    if (waiting) {
      pending.delete(p.requestId!);
      clearTimeout(waiting[2]);
      if (p.ok) waiting[0]();
      else waiting[1](fail('action-rejected', p.error?.message ?? `${p.action} rejected`, p.error));
    }
    emit(name, p);
  };

  // The browser tells the parent nothing when it refuses a frame (CSP frame-ancestors shows its error page, and
  // `load` fires as for any page), so silence is the only sign; the message names what usually causes it.
  const onReadyTimeout = () => {
    const message = `svc embed: no ready within ${readyTimeoutMs} ms. Is ${location.origin} in allowedEmbedOrigins? Is ${iframe?.src.split("?")[0]} right?`;
    log(message);
    loadFailed(message, 'EmbedFrameTimeoutError', fail('frame-timeout', message));
  };

  /** The first load failed: an `error` event, then `ready` rejects. */
  const loadFailed = (message: string, name: string, error: SvcEmbedError) => {
    emit('error', { message, name, context: 'embed-load', fatal: true });
    settle(1, error as never);
  };

  addEventListener('message', onMessage);
  void Promise.resolve(options.getSessionId()).then((sessionId) => {
    if (destroyed) return;
    iframe = document.createElement('iframe');
    iframe.src = embedUrl(options, sessionId);
    iframe.title = `svc ${surface}`;
    iframe.style.cssText = 'border:0;width:100%;height:100%';
    // No scroll bar inside: one appearing or going would change the content's width, then its height (a loop).
    if (options.autoResize) iframe.setAttribute('scrolling', 'no');
    iframe.allow = 'clipboard-write; fullscreen';
    options.container.appendChild(iframe);
    // setTimeout fires at once for a delay past 2^31 - 1 ms (Infinity included): no timer is what waiting for ever means.
    if (readyTimeoutMs < 2 ** 31) readyTimer = setTimeout(onReadyTimeout, readyTimeoutMs);
    if (options.theme) post('svc:action:set-theme', options.theme);
  }, (error: unknown) => {
    const message = String((error as Error | undefined)?.message ?? error);
    loadFailed(message, 'GetSessionIdError', fail('load-failed', `getSessionId() failed: ${message}`, error));
  });

  const handle: EmbedHandle = {
    get iframe() {
      return iframe;
    },
    ready: readyPromise,
    on(name, handler) {
      handlers.set(name, (handlers.get(name) ?? new Set()).add(handler as never));
      return () => handle.off(name, handler);
    },
    off(name, handler) {
      handlers.get(name)?.delete(handler as never);
    },
    once: (name) => new Promise((resolve) => {
      const off = handle.on(name, (payload) => {
        off();
        resolve(payload);
      });
    }),
    setColorScheme: (scheme) => post('svc:action:set-color-scheme', { scheme }),
    setTheme: (theme) => post('svc:action:set-theme', theme),
    setLocale: (locale) => post('svc:action:set-locale', { locale }),
    setTimezone: (timezone) => post('svc:action:set-timezone', { timezone }),
    // Quiet like every awaited action: awaiting it is optional. (setSession's own promise is not: it is async.)
    setFilter: (view, dimension, value) => sendAwaited('svc:action:set-filter', { filterUrlParameter: `f_${view}.${dimension}=${JSON.stringify(value)}` }),
    navigate: (path) => post('svc:action:navigate', { path }),
    refresh: () => post('svc:action:refresh', {}),
    async setSession(sessionId) {
      return sendAwaited('svc:action:set-session', { sessionId: sessionId ?? (await options.getSessionId()) });
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      removeEventListener('message', onMessage);
      renewal.stop();
      for (const [, [, reject, timer]] of pending) {
        clearTimeout(timer);
        reject(fail('destroyed', DESTROYED));
      }
      pending.clear();
      settle(1, fail('destroyed', DESTROYED) as never);
      handlers.clear();
      queue = [];
      iframe?.remove();
      iframe = undefined;
    },
  };
  return handle;
}
