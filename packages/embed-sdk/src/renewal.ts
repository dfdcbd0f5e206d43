import { SvcEmbedError } from './errors.js';

/** What the renewal needs from its surroundings (tests drive its timers with fake ones). */
export interface RenewalDeps {
  /** The host's backend mints a fresh session id (SPEC set-session rule 4: one per renewal, never cached ahead). */
  getSessionId(): string | Promise<string>;
  /** Sends set-session; resolves when the embed confirms, rejects when it refuses the id. */
  sendSession(sessionId: string): Promise<void>;
  /** Called once when every attempt of a renewal failed. */
  onFailed(error: SvcEmbedError): void;
}

/** Waits between attempts after a refused id: 1 s, 2 s, 4 s; then the renewal has failed. */
export const RENEWAL_BACKOFF_MS: readonly number[] = [1000, 2000, 4000];

/**
 * SPEC "set-session" rules 1-4 on the host side: on `session-expiring` or `session-expired`, whichever comes first,
 * renew once for that session with a fresh id; a refused id is retried with backoff and a fresh id each time,
 * then reported once. A late `session-expiring` of a session already renewed (its `expiresAt` is before the
 * renewal) is ignored.
 */
export class SessionRenewal {
  #deps: RenewalDeps;
  #inFlight = false;
  #renewedAt = -Infinity;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(deps: RenewalDeps) {
    this.#deps = deps;
  }

  /**
   * `svc:event:session-expiring` (with its `expiresAt`) or `svc:event:session-expired` (with its `expiredAt`)
   * arrived: the session lapses, or lapsed, at `lapsesAt`. Whichever comes first starts the renewal.
   */
  onLapse(lapsesAt: number): void {
    if (lapsesAt > this.#renewedAt) this.#start();
  }

  /** True while a renewal is being attempted. */
  get renewing(): boolean {
    return this.#inFlight;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #start(): void {
    if (this.#inFlight || this.#stopped) return;
    this.#inFlight = true;
    void this.#attempt(0);
  }

  async #attempt(index: number): Promise<void> {
    if (this.#stopped) return;
    let lastError: unknown;
    try {
      const sessionId = await this.#deps.getSessionId();
      if (this.#stopped) return;
      await this.#deps.sendSession(sessionId);
      this.#renewedAt = Date.now();
      this.#inFlight = false;
      return;
    } catch (error) {
      lastError = error;
    }
    if (this.#stopped) return;
    const wait = RENEWAL_BACKOFF_MS[index];
    if (wait === undefined) {
      this.#inFlight = false;
      this.#deps.onFailed(new SvcEmbedError('renewal-failed', `renewal failed after ${index + 1} attempts`, { cause: lastError }));
      return;
    }
    this.#timer = setTimeout(() => void this.#attempt(index + 1), wait);
  }
}
