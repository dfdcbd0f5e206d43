/**
 * The embed's credential (issue 6, SPEC "Embed session" and "set-session"). Signed mode: the page redeems its
 * single-use session id for an embed token kept in this object only (never storage, never a URL), and arms two
 * best-effort timers: `expiring` (at the server's `expiringAt`, about 30 minutes before the effective end with
 * the default lifetimes) and `expired` (at the effective end, about an hour before the token's nominal expiry).
 * Any API answer 401 also means expired. Private mode: no token; the console cookie goes with each request.
 */

export type SessionMode = 'signed' | 'private';

export interface SessionListener {
  /** The session is about to lapse: `expiresAt` is when it stops working (local clock), once per session. */
  expiring(expiresAt: number, expiresInMs: number): void;
  /** The session lapsed: its end passed, or the server answered 401. Once per session. */
  expired(expiredAt: number): void;
}

/** The exchange refused the id (unknown, redeemed, revoked or expired), or could not be reached. */
export class EmbedSessionExchangeError extends Error {
  override name = 'EmbedSessionExchangeError';
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** An API answer that was not 2xx, with svc's error body (DESIGN "Error body"). */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

interface Grant {
  token: string;
  /** Local-clock epoch ms: when to warn, and when the session stops working. */
  warnAt: number;
  endsAt: number;
  warned: boolean;
  lapsed: boolean;
  timers: Array<ReturnType<typeof setTimeout>>;
}

/** An answer the page's boot script (index.html) received before the bundle ran: its status and JSON body. */
export interface EarlyAnswer {
  status: number;
  body: unknown;
}

/** What the boot script started (window.svcBoot): the exchange (signed mode) and the first reads, keyed by path. */
export interface BootRequests {
  signed: boolean;
  exchange: Promise<EarlyAnswer> | undefined;
  reads: Record<string, { token: string | undefined; answer: Promise<EarlyAnswer> }>;
}

interface ExchangeAnswer {
  token: string;
  expiresAt: string;
  effectiveEnd: string;
  expiringAt: string;
}

/** Server time minus local time, from the token's `iat` (whole seconds): only a skew beyond rounding counts. */
function clockSkewMs(token: string, localNow: number): number {
  try {
    const payload = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as { iat?: unknown };
    if (typeof payload.iat !== 'number') return 0;
    const skew = payload.iat * 1000 - localNow;
    return Math.abs(skew) > 5000 ? skew : 0;
  } catch {
    return 0;
  }
}

// setTimeout holds at most 2^31 - 1 ms; later deadlines are re-armed when they come closer.
const MAX_TIMER_MS = 2_147_483_647;

export class EmbedSession {
  readonly mode: SessionMode;
  #grant: Grant | undefined;
  #listener: SessionListener;
  #now: () => number;
  #early = new Map<string, { token: string | undefined; answer: Promise<EarlyAnswer> }>();

  constructor(mode: SessionMode, listener: SessionListener, now: () => number = Date.now) {
    this.mode = mode;
    this.#listener = listener;
    this.#now = now;
  }

  /** True when a signed session's end has passed (or a 401 said so), until the next successful exchange. */
  get isLapsed(): boolean {
    return this.mode === 'signed' && (this.#grant === undefined || this.#grant.lapsed);
  }

  /** The current session's effective end (local clock), for the host's events. */
  get endsAt(): number | undefined {
    return this.#grant?.endsAt;
  }

  /**
   * Redeems a session id (SPEC C) and, when it works, swaps the new token in place of the old one (set-session
   * rule 1: nothing else changes). A refused id leaves the current token as it was (rule 3).
   */
  async exchange(sessionId: string): Promise<void> {
    await this.adoptExchange(fetch('/api/v1/embed/session/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId }),
      credentials: 'omit',
      cache: 'no-store',
    }).then(async (response) => ({ status: response.status, body: await response.json().catch(() => undefined) as unknown })));
  }

  /** Completes an exchange already under way (the boot script's, or exchange()'s own request). */
  async adoptExchange(request: Promise<EarlyAnswer>): Promise<void> {
    let result: EarlyAnswer;
    try {
      result = await request;
    } catch (error) {
      throw new EmbedSessionExchangeError(`the session exchange could not reach svc: ${error instanceof Error ? error.message : String(error)}`, 0);
    }
    if (result.status < 200 || result.status > 299) {
      const body = result.body as { error?: { message?: string } } | undefined;
      throw new EmbedSessionExchangeError(body?.error?.message ?? `the session exchange answered ${result.status}`, result.status);
    }
    const answer = result.body as ExchangeAnswer;
    const received = this.#now();
    const skew = clockSkewMs(answer.token, received);
    this.#install({
      token: answer.token,
      warnAt: Date.parse(answer.expiringAt) - skew,
      endsAt: Date.parse(answer.effectiveEnd) - skew,
      warned: false,
      lapsed: false,
      timers: [],
    });
  }

  /**
   * Takes the boot script's first reads: each answers the first GET of its path made with the credential it was
   * read with, once; a later GET (a refresh) goes to svc as usual.
   */
  adoptReads(reads: BootRequests['reads']): void {
    for (const [path, read] of Object.entries(reads)) this.#early.set(path, read);
  }

  /** Checks the clock now (a suspended tab's timers run late): call on visibility changes and before requests. */
  checkClock(): void {
    const grant = this.#grant;
    if (grant === undefined || grant.lapsed) return;
    const now = this.#now();
    if (now >= grant.endsAt) this.#lapse(grant, now);
    else if (now >= grant.warnAt) this.#warn(grant, now);
  }

  /** A request to svc's API with this session's credential; a 401 lapses the session (issue 6). */
  async request<T>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
    this.checkClock();
    const grant = this.#grant;
    if (this.mode === 'signed' && (grant === undefined || grant.lapsed)) throw new ApiError(401, 'unauthorized', 'the embed session has expired');
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (grant !== undefined) headers.authorization = `Embed-Token ${grant.token}`;
    // A private embed's cookie writes must prove they come from svc's own page (server CSRF rule).
    else headers['x-requested-with'] = 'svc';
    const early = this.#early.get(path);
    this.#early.delete(path);
    const isEarly = early !== undefined && (init.method ?? 'GET') === 'GET' && init.body === undefined && early.token === grant?.token;
    const { status, body } = isEarly ? await early.answer : await fetch(path, {
      method: init.method ?? 'GET',
      headers,
      body: init.body === undefined ? null : JSON.stringify(init.body),
      credentials: grant === undefined ? 'same-origin' : 'omit',
      cache: 'no-store',
      signal: init.signal ?? null,
    }).then(async (response) => ({ status: response.status, body: response.status === 204 ? undefined : await response.json().catch(() => undefined) as unknown }));
    init.signal?.throwIfAborted();
    if (status === 204) return undefined as T;
    const answer = body as (T & { error?: { code?: string; message?: string } }) | undefined;
    if (status < 200 || status > 299) {
      // Only the token this request carried lapses: a renewal that landed meanwhile stands.
      if (status === 401 && grant !== undefined && grant === this.#grant) this.#lapse(grant, this.#now());
      throw new ApiError(status, answer?.error?.code ?? 'error', answer?.error?.message ?? `svc answered ${status}`);
    }
    return answer as T;
  }

  /**
   * Opens a long-lived GET with this session's credential and resolves to the answer unread (issue 23: the comment
   * stream, which `request` cannot wait for). A non-2xx answer is thrown as `request` throws it, and a 401 lapses
   * the session the same way.
   */
  async openStream(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
    this.checkClock();
    const grant = this.#grant;
    if (this.mode === 'signed' && (grant === undefined || grant.lapsed)) throw new ApiError(401, 'unauthorized', 'the embed session has expired');
    const response = await fetch(path, {
      headers: { ...headers, ...(grant === undefined ? {} : { authorization: `Embed-Token ${grant.token}` }) },
      credentials: grant === undefined ? 'same-origin' : 'omit',
      cache: 'no-store',
      signal,
    });
    if (response.ok) return response;
    const answer = await response.json().catch(() => undefined) as { error?: { code?: string; message?: string } } | undefined;
    if (response.status === 401 && grant !== undefined && grant === this.#grant) this.#lapse(grant, this.#now());
    throw new ApiError(response.status, answer?.error?.code ?? 'error', answer?.error?.message ?? `svc answered ${response.status}`);
  }

  /** Stops the timers (the page is going away). */
  dispose(): void {
    if (this.#grant !== undefined) for (const timer of this.#grant.timers) clearTimeout(timer);
  }

  #install(grant: Grant): void {
    this.dispose();
    this.#grant = grant;
    this.#arm(grant);
  }

  #arm(grant: Grant): void {
    for (const timer of grant.timers.splice(0)) clearTimeout(timer);
    const now = this.#now();
    const at = (deadline: number, run: () => void) => {
      const wait = deadline - now;
      grant.timers.push(setTimeout(() => (wait > MAX_TIMER_MS ? this.#arm(grant) : run()), Math.min(Math.max(wait, 0), MAX_TIMER_MS)));
    };
    if (!grant.warned) at(grant.warnAt, () => this.#warn(grant, this.#now()));
    at(grant.endsAt, () => this.#lapse(grant, this.#now()));
  }

  #warn(grant: Grant, now: number): void {
    if (grant.warned || grant.lapsed || grant !== this.#grant) return;
    grant.warned = true;
    this.#listener.expiring(grant.endsAt, Math.max(0, grant.endsAt - now));
  }

  #lapse(grant: Grant, now: number): void {
    if (grant.lapsed || grant !== this.#grant) return;
    grant.lapsed = true;
    for (const timer of grant.timers) clearTimeout(timer);
    this.#listener.expired(now);
  }
}
