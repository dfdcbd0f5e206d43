import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { LookupFunction } from 'node:net';
import { request as httpsRequest } from 'node:https';
import type { Kysely } from 'kysely';
import type { WebhookSettings } from '../core/core.config.js';
import { isoTimestamp } from '../core/core.time.js';
import { TimerLoop } from '../core/core.timer-loop.js';
import { WEBHOOK_DELIVERY_CHANNEL } from '../db/db.database.js';
import type { Dialect, Notifications } from '../db/db.database.js';
import type { Database } from '../db/db.schema.js';
import { hostOf, resolveDeliveryAddress, resolveWithDns } from './webhooks.addresses.js';
import type { ResolvedAddress, ResolveHost } from './webhooks.addresses.js';
import { Sealer } from '../core/core.sealed.js';
import { signWebhook } from './webhooks.signing.js';
import { settingsAllowPrivateWebhookUrls } from '../accounts/accounts.store.js';
import { claimDueDeliveries, deleteFinishedDeliveries, recordAttempt, releaseClaims, replaceEndpointSecret, selectEndpointSecrets } from './webhooks.store.js';
import type { ClaimedDelivery } from './webhooks.store.js';

/** What the dispatcher logs: an endpoint disabled (warn), and its own failures (error). Never a secret. */
export interface DispatcherLog {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface DispatcherOptions {
  db: Kysely<Database>;
  dialect: Dialect;
  settings: WebhookSettings;
  /** The clock of due times, timestamps and the log (tests pass a fake one). */
  now: () => Date;
  /** A number in [0, 1) for the jitter (default Math.random). */
  random?: () => number;
  /** DNS (default node:dns); tests pass a stand-in to show a name that turns private (DNS rebinding). */
  resolveHost?: ResolveHost;
  log: DispatcherLog;
  /** Opens the endpoints' signing secrets (SVC_ENCRYPTION_KEY); default: none sealed. */
  sealer?: Sealer;
  /**
   * The database's wake-ups (`Db.notifications`). On PostgreSQL the dispatcher listens to WEBHOOK_DELIVERY_CHANNEL,
   * so that a delivery any process commits is looked for at once; without it (and on SQLite, one process, whose
   * own writes wake it: `wake()`) only the wake-ups, its own retries' due times and the poll.
   */
  notifications?: Notifications;
  /**
   * Deliver only these accounts' events, and remove only their old deliveries (tests and benchmarks that share a
   * database with other work); default all.
   */
  accountIds?: readonly number[];
  /** Deliveries retention removes per statement (default PRUNE_BATCH); a test makes it small to see the batches. */
  pruneBatch?: number;
}

/** The most of an answer's body read (and dropped) before the connection is released. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** A claim outlives its wait for a slot and the attempt's timeout by this much, so no other process takes over a live attempt. */
const LEASE_MARGIN_MS = 30_000;
/** Retention runs at start and then at least this often (more often when the retention is shorter). */
const PRUNE_EVERY_MS = 3_600_000;
/**
 * Deliveries one retention statement removes at most, with their attempts (up to 8 each by default): about 30 ms
 * (median of a 20,000-delivery backlog of 8 attempts each, on a busy 2-core machine, both databases), so a backlog
 * of millions goes in many short statements instead of one that holds the lock for minutes.
 */
export const PRUNE_BATCH = 1000;
/** Retry times a dispatcher keeps a timer for at most; later ones are found by the poll. */
const MAX_DUE_TIMES = 1000;
/** Node's timers hold at most 2^31 - 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;
/** Endpoints read per page when resealing their secrets. */
const RESEAL_PAGE = 500;

/**
 * The reason `stop()` aborts the attempts in flight with: not the endpoint's failure, so such an attempt is not
 * recorded (it would spend one of the delivery's attempts) but given back, to be made again (`releaseClaims`).
 */
const SHUTTING_DOWN = new Error('svc is shutting down');

/** The outcome of posting one delivery. */
interface PostResult {
  statusCode: number | null;
  error: string | null;
  /** Cut off by `stop()` before an answer came: no outcome to record. */
  interrupted?: true;
}

/**
 * The wait before retry `retry` (1 for the first retry) under full jitter: uniform between 0 and the schedule's
 * step (at least 1 ms), so that the deliveries of an endpoint that came back do not all return at once.
 *
 * @example
 * retryDelayMs([5000, 300000], 1, () => 0.5); // 2500
 */
export function retryDelayMs(scheduleMs: readonly number[], retry: number, random: () => number): number {
  const step = scheduleMs[Math.min(retry, scheduleMs.length) - 1] ?? 0;
  return Math.max(1, Math.floor(random() * step));
}

/** A duration for people: `45 s`, `12 min`, `3.5 h`. */
function spoken(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}

/**
 * Issue 23's webhook delivery worker, one per `svc serve` process: it claims due deliveries from the outbox (each
 * attempt made by one process: `claimDueDeliveries`), posts each to its endpoint signed as Standard Webhooks says,
 * with a timeout and to an address checked at delivery time, and records the attempt. A failure is retried after
 * the schedule's next step under full jitter; after the last, the delivery has failed, and an endpoint that failed
 * all that time without one success is disabled with the reason (and a log line).
 *
 * It looks for due deliveries when this process commits some (`wake()`), on PostgreSQL when any process does (a
 * NOTIFY, migration 0012), when a retry it scheduled comes due, and every `pollMs` (the fallback: other processes'
 * retries, lapsed leases, a lost notification connection, SQLite).
 *
 * It also keeps the delivery log to its retention: at start and then periodically it removes the deliveries that
 * finished (delivered, or failed for good) more than `retentionMs` ago, in every process (removing what another
 * already removed costs an index read).
 *
 * @example
 * const dispatcher = new WebhookDispatcher({ db, dialect: 'sqlite', settings, now: () => new Date(), log: app.log });
 * dispatcher.start();
 * await dispatcher.stop();
 */
export class WebhookDispatcher {
  readonly #options: DispatcherOptions;
  readonly #random: () => number;
  readonly #resolveHost: ResolveHost;
  readonly #sealer: Sealer;
  /** The poll: due deliveries are looked for every `pollMs`, and at once when woken. */
  readonly #deliveries: TimerLoop;
  /** The delivery log's retention, now and then. */
  readonly #retention: TimerLoop;
  #started = false;
  #unlisten: (() => void) | undefined;
  /** The due times (epoch ms, by `now`) of retries this dispatcher scheduled, ascending, and the timer of the first. */
  readonly #dueTimes: number[] = [];
  #dueTimer: NodeJS.Timeout | undefined;
  #resealing: Promise<number> | undefined;
  #stopped = false;
  readonly #inFlight = new Set<AbortController>();

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#random = options.random ?? Math.random;
    this.#resolveHost = options.resolveHost ?? resolveWithDns;
    this.#sealer = options.sealer ?? new Sealer([]);
    const { settings, log } = options;
    this.#deliveries = new TimerLoop({ intervalMs: settings.pollMs, run: () => this.drain(), onError: (error) => log.error({ err: error }, 'webhook delivery failed to run') });
    this.#retention = new TimerLoop({
      intervalMs: Math.min(settings.retentionMs, PRUNE_EVERY_MS),
      run: () => this.prune(),
      onError: (error) => log.error({ err: error }, 'webhook delivery log retention failed to run'),
    });
  }

  /**
   * Polls every `pollMs`, and looks at once when this process commits deliveries (`wake()`), on PostgreSQL when any
   * process does (a notification; also after the listening connection is back, for what it missed), and when a retry
   * it scheduled comes due; applies the retention now and then every `retentionMs` (at most an hour apart), so that
   * a process restarted more often than that still does.
   */
  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    const { dialect, notifications } = this.#options;
    this.#deliveries.start();
    if (dialect === 'postgres' && notifications !== undefined) {
      const { accountIds } = this.#options;
      this.#unlisten = notifications.listen(WEBHOOK_DELIVERY_CHANNEL, {
        // The payload is the account id: a dispatcher of some accounts only (tests, benchmarks) skips the others'.
        notified: (payload) => {
          if (accountIds === undefined || !/^[0-9]+$/.test(payload) || accountIds.includes(Number(payload))) this.wake();
        },
        resync: () => this.wake(),
      });
    }
    this.#retention.start();
    this.#deliveries.wake();
    this.#retention.wake();
    if (this.#sealer.isSealing) {
      this.#resealing = this.reseal().catch((error: unknown) => {
        this.#options.log.error({ err: error }, 'resealing webhook secrets failed');
        return 0;
      });
    }
  }

  /**
   * Looks for due deliveries at once, not at the next poll: this process committed some (app.ts wires the webhook
   * outbox and the endpoints' writes to this). Nothing before `start()` or after `stop()`.
   */
  wake(): void {
    this.#deliveries.wake();
  }

  /**
   * Seals the endpoints' secrets that are not sealed with SVC_ENCRYPTION_KEY's first key: stored before a key was
   * set, or under a key listed after it (a key change); how many. Each is rewritten only if it is still the value
   * read, so a rotation meanwhile wins. Secrets that do not open are left as they are (their deliveries say why).
   */
  async reseal(): Promise<number> {
    const { db, accountIds } = this.#options;
    let resealed = 0;
    for (let afterId = 0; !this.#stopped;) {
      const page = await selectEndpointSecrets(db, afterId, RESEAL_PAGE, accountIds);
      for (const endpoint of page) {
        if (!this.#sealer.needsResealing(endpoint.secret)) continue;
        let secret: string;
        try {
          secret = this.#sealer.open(endpoint.secret);
        } catch {
          continue;
        }
        if (await replaceEndpointSecret(db, endpoint.account_id, endpoint.id, endpoint.secret, this.#sealer.seal(secret))) resealed++;
      }
      if (page.length < RESEAL_PAGE) break;
      afterId = page[page.length - 1]!.id;
    }
    return resealed;
  }

  /**
   * Removes the deliveries that finished (delivered, or failed for good) more than `retentionMs` ago by this
   * dispatcher's clock, with their attempts, batch after batch until none is left; how many. Pending deliveries stay.
   */
  async prune(): Promise<number> {
    const { db, dialect, settings, now, accountIds } = this.#options;
    const batch = this.#options.pruneBatch ?? PRUNE_BATCH;
    const cutoff = isoTimestamp(new Date(now().getTime() - settings.retentionMs));
    let total = 0;
    for (;;) {
      const removed = await deleteFinishedDeliveries(db, dialect, cutoff, batch, accountIds);
      total += removed;
      if (removed < batch || this.#stopped) return total;
    }
  }

  /**
   * Wakes at a retry this dispatcher scheduled (once started): the poll would find it up to `pollMs` late. Only this
   * process's own retries; the times past MAX_DUE_TIMES (a large failing backlog) are left to the poll.
   */
  #wakeAt(at: number): void {
    if (!this.#started || this.#stopped) return;
    const times = this.#dueTimes;
    let low = 0;
    let high = times.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (times[middle]! < at) low = middle + 1;
      else high = middle;
    }
    if (times[low] === at) return;
    if (times.length >= MAX_DUE_TIMES) {
      if (low === times.length) return;
      times.pop();
    }
    times.splice(low, 0, at);
    if (low === 0) this.#armDueTimer();
  }

  #armDueTimer(): void {
    clearTimeout(this.#dueTimer);
    this.#dueTimer = undefined;
    const next = this.#dueTimes[0];
    if (next === undefined || this.#stopped) return;
    const wait = Math.min(MAX_TIMER_MS, Math.max(0, next - this.#options.now().getTime()));
    this.#dueTimer = setTimeout(() => {
      const now = this.#options.now().getTime();
      const due = this.#dueTimes.findIndex((time) => time > now);
      this.#dueTimes.splice(0, due === -1 ? this.#dueTimes.length : due);
      this.wake();
      this.#armDueTimer();
    }, wait);
    this.#dueTimer.unref();
  }

  /**
   * Attempts every delivery due now, until none is left, with up to `concurrency` attempts in flight. Deliveries are
   * claimed `concurrency` at a time into a queue, and a slot that frees takes the next one at once: a slow endpoint
   * holds up one slot rather than the deliveries claimed beside it, and a claim still serves many attempts. How many
   * attempts were made. An attempt whose outcome cannot be written is logged; its lease lapses and it is tried again.
   */
  async drain(): Promise<number> {
    const { concurrency } = this.#options.settings;
    const inFlight = new Set<Promise<void>>();
    const queue: Array<{ delivery: ClaimedDelivery; token: string }> = [];
    let total = 0;
    let more = true;
    while (!this.#stopped) {
      while (inFlight.size < concurrency && queue.length > 0) {
        const { delivery, token } = queue.shift()!;
        const attempt = this.#attempt(delivery, token)
          .catch((error: unknown) => this.#options.log.error({ err: error, deliveryId: delivery.id }, 'recording a webhook attempt failed'))
          .finally(() => inFlight.delete(attempt));
        inFlight.add(attempt);
        total++;
      }
      if (more && queue.length === 0 && inFlight.size < concurrency) {
        const { claimed, token } = await this.#claim(concurrency);
        more = claimed.length === concurrency;
        for (const delivery of claimed) queue.push({ delivery, token });
        if (claimed.length > 0) continue;
      }
      if (inFlight.size === 0) break;
      await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    // Stopped with claims not yet attempted: given back now rather than held until their leases lapse.
    for (const token of new Set(queue.map((entry) => entry.token))) {
      const claims = queue.filter((entry) => entry.token === token).map(({ delivery }) => ({ accountId: delivery.account_id, deliveryId: delivery.id }));
      await releaseClaims(this.#options.db, token, claims)
        .catch((error: unknown) => this.#options.log.error({ err: error }, 'giving back unattempted webhook deliveries failed; their leases will lapse'));
    }
    return total;
  }

  /** Claims up to `limit` due deliveries under a new lease token. */
  async #claim(limit: number): Promise<{ claimed: ClaimedDelivery[]; token: string }> {
    const { db, dialect, settings, now } = this.#options;
    const start = now();
    const token = randomBytes(12).toString('base64url');
    // A claimed delivery may wait for a slot (at most one attempt's timeout) before its own attempt starts.
    const lockedUntil = isoTimestamp(new Date(start.getTime() + 2 * settings.timeoutMs + LEASE_MARGIN_MS));
    return { claimed: await claimDueDeliveries(db, dialect, isoTimestamp(start), lockedUntil, token, limit, this.#options.accountIds), token };
  }

  async #attempt(delivery: ClaimedDelivery, token: string): Promise<void> {
    const { settings, now } = this.#options;
    const attempt = delivery.attempts + 1;
    const attemptedAt = now();
    const started = performance.now();
    // Whether the account may use private addresses, as the claim read it: each attempt checks the address now.
    const allowPrivate = settings.allowPrivate || settingsAllowPrivateWebhookUrls(delivery.account_settings);
    const result = await this.#post(delivery, attemptedAt, allowPrivate);
    if (result.interrupted === true) {
      // Shutting down: the attempt counts for nothing, and the delivery is pending for the next process (or this
      // one restarted). Should the write fail, the lease lapses and the delivery is claimed again all the same.
      await releaseClaims(this.#options.db, token, [{ accountId: delivery.account_id, deliveryId: delivery.id }]);
      return;
    }
    const durationMs = Math.round(performance.now() - started);
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const finalAttempt = delivery.final_attempt ?? settings.retryScheduleMs.length + 1;
    const failedForGood = !ok && attempt >= finalAttempt;
    const error = ok ? null : result.error ?? `HTTP ${result.statusCode}`;
    const at = isoTimestamp(attemptedAt);
    // Disabled when its schedule ran out and the endpoint has not answered once since this delivery was made.
    const failingSince = delivery.failing_since ?? at;
    const disable = failedForGood && delivery.final_attempt === null && failingSince <= delivery.created_at
      ? `every attempt failed for ${spoken(attemptedAt.getTime() - Date.parse(failingSince))}: ${attempt} attempts of ${delivery.event_type} event ${delivery.event_id}, the last: ${error}`
      : null;
    const retryAt = ok || failedForGood ? null : attemptedAt.getTime() + retryDelayMs(settings.retryScheduleMs, attempt, this.#random);
    const written = await recordAttempt(this.#options.db, this.#options.dialect, {
      deliveryId: delivery.id, accountId: delivery.account_id, endpointId: delivery.endpoint_id, token, attempt, attemptedAt: at,
      statusCode: result.statusCode, durationMs, error,
      status: ok ? 'delivered' : failedForGood ? 'failed' : 'pending',
      nextAttemptAt: retryAt === null ? null : isoTimestamp(new Date(retryAt)),
      disableReason: disable,
    });
    if (written && retryAt !== null) this.#wakeAt(retryAt);
    if (written && disable !== null) {
      this.#options.log.warn({ accountId: delivery.account_id, endpointId: delivery.endpoint_id, host: safeHost(delivery.url), reason: disable }, 'webhook endpoint disabled');
    }
  }

  /** Posts the delivery once: the status code, or why no answer came. */
  async #post(delivery: ClaimedDelivery, attemptedAt: Date, allowPrivate: boolean): Promise<PostResult> {
    const { settings } = this.#options;
    let url: URL;
    try {
      url = new URL(delivery.url);
    } catch {
      return { statusCode: null, error: 'the endpoint URL is not valid' };
    }
    // Created before the lookup, so that `stop()` cuts off an attempt at any stage, DNS included.
    const controller = new AbortController();
    this.#inFlight.add(controller);
    if (this.#stopped) controller.abort(SHUTTING_DOWN);
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${settings.timeoutMs} ms`)), settings.timeoutMs);
    try {
      return await this.#send(url, delivery, attemptedAt, allowPrivate, controller.signal);
    } finally {
      clearTimeout(timer);
      this.#inFlight.delete(controller);
    }
  }

  /** `#post` past the URL check: the address, the signature and the request, all cut off when `signal` aborts. */
  async #send(url: URL, delivery: ClaimedDelivery, attemptedAt: Date, allowPrivate: boolean, signal: AbortSignal): Promise<PostResult> {
    const abortedWith = (): PostResult => (signal.reason === SHUTTING_DOWN
      ? { statusCode: null, error: SHUTTING_DOWN.message, interrupted: true }
      : { statusCode: null, error: (signal.reason as Error).message });
    let address: ResolvedAddress;
    try {
      address = await raceAbort(resolveDeliveryAddress(url, allowPrivate, this.#resolveHost), signal);
    } catch (error) {
      if (signal.aborted) return abortedWith();
      return { statusCode: null, error: error instanceof Error ? error.message : String(error) };
    }
    let secret: string;
    try {
      secret = this.#sealer.open(delivery.secret);
    } catch (error) {
      // A failed attempt, whose error the delivery log shows (and, kept up, the endpoint's disabled reason).
      return { statusCode: null, error: `the endpoint's signing secret cannot be read: ${error instanceof Error ? error.message : String(error)}` };
    }
    const timestamp = Math.floor(attemptedAt.getTime() / 1000);
    const body = Buffer.from(delivery.payload, 'utf8');
    const headers = {
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': 'svc-webhooks/1',
      'webhook-id': delivery.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secret, delivery.event_id, timestamp, delivery.payload),
    };
    // The connection goes to the address just checked, whatever DNS answers next (no second lookup to rebind).
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all === true) (callback as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [address]);
      else callback(null, address.address, address.family);
    };
    return new Promise<PostResult>((resolve) => {
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const request = send(url, { method: 'POST', headers, lookup, signal, servername: url.protocol === 'https:' ? hostOf(url) : undefined }, (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        // An answer's status, once its head is in, is the outcome, even if its body is then cut off.
        const done = () => resolve({ statusCode: response.statusCode ?? null, error: null });
        response.once('end', done);
        response.once('close', done);
        response.once('error', done);
      });
      request.once('error', (error: Error) => resolve(signal.aborted ? abortedWith() : { statusCode: null, error: error.message }));
      request.end(body);
    });
  }

  /**
   * Stops polling and retention, cuts off the attempts in flight (a receiver that never answers must not hold up
   * SIGTERM: they are given back, pending, uncounted, to be made again later, since delivery is at least once), gives
   * back the claims not yet attempted, and waits for that and for the retention statement under way.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const controller of this.#inFlight) controller.abort(SHUTTING_DOWN);
    clearTimeout(this.#dueTimer);
    this.#unlisten?.();
    await Promise.all([this.#deliveries.stop(), this.#retention.stop(), this.#resealing]);
  }
}

/** `promise`, or a rejection as soon as `signal` aborts (a DNS lookup cannot be cancelled, only left behind). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The host of an endpoint URL, for a log line (its path or query may carry a token). */
function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid URL)';
  }
}
