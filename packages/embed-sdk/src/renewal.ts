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

/** The renewal as `embed()` drives it: `onLapse`, `stop`, and whether a renewal is being attempted. */
export interface Renewal {
  /**
   * `svc:event:session-expiring` (with its `expiresAt`) or `svc:event:session-expired` (with its `expiredAt`)
   * arrived: the session lapses, or lapsed, at `lapsesAt`. Whichever comes first starts the renewal.
   */
  onLapse(lapsesAt: number): void;
  /** Ends the renewal for good: no further attempt, no `onFailed`. */
  stop(): void;
}

/**
 * SPEC "set-session" rules 1-4 on the host side: on `session-expiring` or `session-expired`, whichever comes first,
 * renew once for that session with a fresh id; a refused id is retried with backoff and a fresh id each time,
 * then reported once. A late `session-expiring` of a session already renewed (its `expiresAt` is before the
 * renewal) is ignored. Closures, not a class: a minifier shortens a local, never a property (the SDK's size budget).
 */
export function renewal(deps: RenewalDeps): Renewal {
  let inFlight = false;
  let renewedAt = -Infinity;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // One renewal: a fresh id per attempt, the backoff's waits between them; `stop()` clears the wait, and the
  // attempt that waited on it never goes on.
  const renew = async () => {
    for (let index = 0; ; index++) {
      try {
        const sessionId = await deps.getSessionId();
        if (stopped) return;
        await deps.sendSession(sessionId);
        renewedAt = Date.now();
        break;
      } catch (error) {
        const wait = RENEWAL_BACKOFF_MS[index];
        if (stopped) return;
        if (wait === undefined) {
          deps.onFailed(new SvcEmbedError('renewal-failed', `renewal failed after ${index + 1} attempts`, { cause: error }));
          break;
        }
        await new Promise((resolve) => (timer = setTimeout(resolve, wait)));
      }
    }
    inFlight = false;
  };
  return {
    onLapse: (lapsesAt) => {
      if (lapsesAt > renewedAt && !inFlight && !stopped) {
        inFlight = true;
        void renew();
      }
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * `renewal()` as a class, for a host that speaks the protocol itself (`@svc/embed-sdk/tools`). It tells whether a
 * renewal is being attempted from the steps it sees: from the first id asked for until one is confirmed or the
 * renewal failed (`embed()` needs no such flag, and its entry carries none).
 */
export class SessionRenewal {
  readonly #renewal: Renewal;
  #renewing = false;

  constructor(deps: RenewalDeps) {
    this.#renewal = renewal({
      getSessionId: () => {
        this.#renewing = true;
        return deps.getSessionId();
      },
      sendSession: async (sessionId) => {
        await deps.sendSession(sessionId);
        this.#renewing = false;
      },
      onFailed: (error) => {
        this.#renewing = false;
        deps.onFailed(error);
      },
    });
  }

  /** See `Renewal.onLapse`. */
  onLapse(lapsesAt: number): void {
    this.#renewal.onLapse(lapsesAt);
  }

  /** True while a renewal is being attempted. */
  get renewing(): boolean {
    return this.#renewing;
  }

  stop(): void {
    this.#renewal.stop();
  }
}
