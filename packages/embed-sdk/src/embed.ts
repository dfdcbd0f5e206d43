import { SOURCE, createAction, parseEvent } from '@svc/protocol';
import type { ActionPayloads, ActionType, EmbedTheme, EventMessage, EventPayloads, EventType, Surface } from '@svc/protocol';
import { SvcEmbedError } from './errors.js';
import { SessionRenewal } from './renewal.js';

/** Event names without their `svc:event:` prefix: `on('ready', ...)`. */
export type EmbedEventName = EventType extends `svc:event:${infer N}` ? N : never;

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
  /** Logs every dropped message with the reason, and every renewal step. */
  debug?: boolean;
  /**
   * How the comment panel starts: `open`, `collapsed` (its button, with the count of open threads), or `auto` (the
   * default): open only when the frame is wide enough for the grid beside it to keep the dashboard's own layout.
   */
  comments?: 'open' | 'collapsed' | 'auto';
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


/** How long `ready` may take by default (`readyTimeoutMs`): a slow first load on a poor connection stays well within it. */
export const DEFAULT_READY_TIMEOUT_MS = 15_000;
const MAX_TIMER_MS = 2_147_483_647;

/** The embed URL of SPEC.md: `{base_url}/embed/dashboard/<public_id>?session=<session_id>` (and app, chat). */
export function embedUrl(options: Omit<EmbedOptions, 'container' | 'getSessionId'>, sessionId: string): string {
  const base = options.baseUrl.replace(/\/+$/, '');
  const url = new URL(`${base}/embed/${options.surface}${options.surface === 'dashboard' ? `/${encodeURIComponent(options.publicId ?? '')}` : ''}`);
  const params: Record<string, string | undefined> = {
    session: sessionId, path: options.path, allowExport: options.allowExport ? 'true' : undefined,
    colorScheme: options.colorScheme, locale: options.locale, timezone: options.timezone, comments: options.comments,
  };
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

function originOf(baseUrl: string): string {
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    // refused below, with the same message as any other scheme
  }
  if (url?.protocol !== 'https:' && url?.protocol !== 'http:') {
    throw new SvcEmbedError('invalid-option', `baseUrl must be an absolute http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  return url.origin;
}

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
  const origin = originOf(options.baseUrl);
  if (options.surface === 'dashboard' && !options.publicId) throw new SvcEmbedError('invalid-option', 'a dashboard embed needs publicId');
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  if (typeof readyTimeoutMs !== 'number' || !(readyTimeoutMs > 0)) {
    throw new SvcEmbedError('invalid-option', `readyTimeoutMs must be a number above 0, got ${String(readyTimeoutMs)}`);
  }
  const log = (...args: unknown[]) => {
    if (options.debug) console.debug('[svc-embed]', ...args);
  };
  const handlers = new Map<string, Set<(payload: never) => void>>();
  const pending = new Map<string, { resolve(): void; reject(error: SvcEmbedError): void; timer: ReturnType<typeof setTimeout> }>();
  const queue: Array<() => void> = [];
  let iframe: HTMLIFrameElement | undefined;
  let isReady = false;
  let destroyed = false;
  let requestCounter = 0;
  const timeoutMs = options.actionTimeoutMs ?? 30_000;
  let settleReady: { resolve(payload: EmbedEventMap['ready']): void; reject(error: SvcEmbedError): void } | undefined;
  const readyPromise = new Promise<EmbedEventMap['ready']>((resolve, reject) => {
    settleReady = { resolve, reject };
  });
  // A host that never awaits `ready` must not get an unhandled rejection; one that does still sees it.
  readyPromise.catch(() => undefined);
  let readyTimer: ReturnType<typeof setTimeout> | undefined;
  /** Rejects `ready` (once, and only while it is pending). */
  const failReady = (error: SvcEmbedError) => {
    clearTimeout(readyTimer);
    settleReady?.reject(error);
    settleReady = undefined;
  };

  const emit = (name: string, payload: unknown) => {
    for (const handler of [...(handlers.get(name) ?? [])]) {
      try {
        (handler as (p: unknown) => void)(payload);
      } catch (error) {
        log('a handler threw', error);
      }
    }
  };

  const post = (message: unknown) => {
    const send = () => iframe?.contentWindow?.postMessage(message, origin);
    if (isReady) send();
    else queue.push(send);
  };

  const sendAction = <T extends ActionType>(type: T, payload: ActionPayloads[T]) => {
    if (destroyed) throw new SvcEmbedError('destroyed', 'this embed was destroyed');
    post(createAction(type, payload));
  };

  const sendAwaited = <T extends ActionType>(type: T, payload: ActionPayloads[T]): Promise<void> => {
    if (destroyed) return Promise.reject(new SvcEmbedError('destroyed', 'this embed was destroyed'));
    // Unique within this embed, which echoes it back; other embeds' results never reach this handle.
    const requestId = String(++requestCounter);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(requestId);
        reject(new SvcEmbedError('timeout', `${type}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(requestId, { resolve, reject, timer });
      post(createAction(type, payload, requestId));
    });
  };

  const renewal = new SessionRenewal({
    getSessionId: () => options.getSessionId(),
    sendSession: (sessionId) => sendAwaited('svc:action:set-session', { sessionId }),
    // The host hears it as `renewal-failed` (with the cause), debug or not.
    onFailed: (error) => emit('renewal-failed', error),
  });

  const onMessage = (event: MessageEvent) => {
    const parsed = parseEvent(event.data);
    const reason = iframe === undefined || event.source !== iframe.contentWindow ? 'from another window'
      : event.origin !== origin ? `from origin ${event.origin}, expected ${origin}`
        : parsed.ok ? undefined : parsed.reason;
    if (reason !== undefined) {
      // Only svc messages are worth a word: a page hears many others.
      if ((event.data as { source?: unknown } | null)?.source === SOURCE) log(`dropped a message ${reason}`);
    } else if (parsed.ok) {
      dispatch(parsed.message);
    }
  };

  const dispatch = (message: EventMessage) => {
    switch (message.type) {
      case 'svc:event:ready':
        if (!isReady) {
          isReady = true;
          clearTimeout(readyTimer);
          settleReady?.resolve(message.payload);
          settleReady = undefined;
          for (const send of queue.splice(0)) send();
        }
        break;
      case 'svc:event:error':
        // A fatal error before `ready` (the embed could not authenticate) means no `ready` will come.
        if (!isReady && message.payload.fatal === true) {
          failReady(new SvcEmbedError('load-failed', `the svc embed could not load: ${message.payload.message}`, { cause: message.payload }));
        }
        break;
      case 'svc:event:session-expiring':
        renewal.onLapse(message.payload.expiresAt);
        break;
      case 'svc:event:session-expired':
        renewal.onLapse(message.payload.expiredAt);
        break;
      case 'svc:event:content-size':
        if (options.autoResize && iframe !== undefined) {
          const height = `${Math.max(0, Math.ceil(message.payload.height))}px`;
          if (iframe.style.height !== height) iframe.style.height = height;
        }
        break;
      case 'svc:event:action-result': {
        const waiting = pending.get(message.payload.requestId);
        if (waiting !== undefined) {
          pending.delete(message.payload.requestId);
          clearTimeout(waiting.timer);
          if (message.payload.ok) waiting.resolve();
          else waiting.reject(new SvcEmbedError('action-rejected', message.payload.error?.message ?? `${message.payload.action} was rejected`, { cause: message.payload.error }));
        }
        break;
      }
      default:
        break;
    }
    // Handlers are keyed by the name after `svc:event:` (10 characters).
    emit(message.type.slice(10), message.payload);
  };

  // The browser tells the parent nothing when it refuses a frame (CSP frame-ancestors shows its error page, and
  // `load` fires as for any page), so silence is the only sign; the message names what usually causes it.
  const onReadyTimeout = () => {
    if (destroyed || isReady) return;
    const message = `svc embed: no ready within ${readyTimeoutMs} ms. Likely causes: ${location.origin} is not in the account's`
      + ` allowedEmbedOrigins (the browser refused the frame: CSP frame-ancestors); ${origin} is out of reach (network);`
      + ` or baseUrl/publicId is wrong (${iframe?.src.split('?')[0]})`;
    log(message);
    emit('error', { message, name: 'EmbedFrameTimeoutError', context: 'embed-load', fatal: true });
    failReady(new SvcEmbedError('frame-timeout', message));
  };

  window.addEventListener('message', onMessage);
  void Promise.resolve(options.getSessionId()).then((sessionId) => {
    if (destroyed) return;
    iframe = document.createElement('iframe');
    iframe.src = embedUrl(options, sessionId);
    iframe.title = `svc ${options.surface}`;
    iframe.style.cssText = 'border:0;width:100%;height:100%';
    // No scroll bar inside: one appearing or going would change the content's width, then its height (a loop).
    if (options.autoResize) iframe.setAttribute('scrolling', 'no');
    iframe.allow = 'clipboard-write; fullscreen';
    options.container.appendChild(iframe);
    // setTimeout fires at once for a delay past 2^31 - 1 ms (Infinity included): no timer is what waiting for ever means.
    if (readyTimeoutMs <= MAX_TIMER_MS) readyTimer = setTimeout(onReadyTimeout, readyTimeoutMs);
    if (options.theme !== undefined) sendAction('svc:action:set-theme', options.theme);
  }, (error: unknown) => {
    log('getSessionId failed', error);
    const message = error instanceof Error ? error.message : String(error);
    emit('error', { message, name: 'GetSessionIdError', context: 'embed-load', fatal: true });
    failReady(new SvcEmbedError('load-failed', `getSessionId() failed: ${message}`, { cause: error }));
  });

  const handle: EmbedHandle = {
    get iframe() {
      return iframe;
    },
    get ready() {
      return readyPromise;
    },
    on(name, handler) {
      const set = handlers.get(name) ?? new Set();
      set.add(handler as never);
      handlers.set(name, set);
      return () => handle.off(name, handler);
    },
    off(name, handler) {
      handlers.get(name)?.delete(handler as never);
    },
    once(name) {
      return new Promise((resolve) => {
        const off = handle.on(name, (payload) => {
          off();
          resolve(payload);
        });
      });
    },
    setColorScheme: (scheme) => sendAction('svc:action:set-color-scheme', { scheme }),
    setTheme: (theme) => sendAction('svc:action:set-theme', theme),
    setLocale: (locale) => sendAction('svc:action:set-locale', { locale }),
    setTimezone: (timezone) => sendAction('svc:action:set-timezone', { timezone }),
    setFilter: (view, dimension, value) => {
      const applied = sendAwaited('svc:action:set-filter', { filterUrlParameter: `f_${view}.${dimension}=${JSON.stringify(value)}` });
      applied.catch(() => undefined);
      return applied;
    },
    navigate: (path) => sendAction('svc:action:navigate', { path }),
    refresh: () => sendAction('svc:action:refresh', {}),
    async setSession(sessionId) {
      return sendAwaited('svc:action:set-session', { sessionId: sessionId ?? (await options.getSessionId()) });
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      window.removeEventListener('message', onMessage);
      renewal.stop();
      for (const [, waiting] of pending) {
        clearTimeout(waiting.timer);
        waiting.reject(new SvcEmbedError('destroyed', 'this embed was destroyed'));
      }
      pending.clear();
      failReady(new SvcEmbedError('destroyed', 'this embed was destroyed'));
      handlers.clear();
      queue.length = 0;
      iframe?.remove();
      iframe = undefined;
    },
  };
  return handle;
}
