import type { ServiceContext } from '../db/db.context.js';
import { isoTimestamp } from '../core/core.time.js';
import { AppError } from '../core/core.errors.js';
import { TimerLoop } from '../core/core.timer-loop.js';
import { COMMENT_EVENT_CHANNEL } from '../db/db.database.js';
import type { ChangeFeed, ChangeMark, Dialect, Notifications } from '../db/db.database.js';
import { selectLiveSessions } from '../sessions/sessions.service.js';
import { isEventShown } from './comments.policy.js';
import type { Commenter } from './comments.policy.js';
import type { CommentStreamEventType, StreamEndReason, StreamResetReason } from './comments.schema.js';
import { openCommentStream, presentEvent } from './comments.service.js';
import {
  countEventsAfter, isResumablePosition, pruneCommentEvents, readEventHead, readLatestEventId, selectEventsAfter, selectScopesWithEventsAfter,
} from './comments.store.js';
import type { EventRow, EventScope } from './comments.store.js';

/** The limits of comment streams (their SVC_COMMENT_* settings, core.config.ts). */
export interface CommentStreamSettings {
  /** Streams one embed session may hold open at once in one process; one more is a 429. */
  perSession: number;
  /** How often an idle stream sends a heartbeat comment line (ms). */
  heartbeatMs: number;
  /** Most missed events a resuming stream replays; more is a `stream.reset`. */
  replayMax: number;
  /** How long events are kept for resuming (ms). */
  retentionMs: number;
}

/** Where a stream's text goes (the HTTP response, in the route): never a Fastify object here. */
export interface StreamSink {
  /** Writes Server-Sent Events text (dropped once the client is gone). */
  write(text: string): void;
  /** The bytes written but not yet taken by the client. */
  backlog(): number;
  /** Ends the response. */
  end(): void;
}

/** Who holds a stream: the commenter, the embed session it came with, and when its token stops being accepted. */
export interface StreamCaller {
  commenter: Commenter;
  sessionId: number;
  /** Epoch ms; null: no expiry known (the stream still ends on revocation). */
  tokenExpiresAt: number | null;
}

/** What an EventSource waits before it reconnects (the `retry` field), ms. */
export const STREAM_RETRY_MS = 3000;
/** A client that lets this much text pile up is cut off (`too_slow`): it resumes from its last event when it is back. */
const MAX_BACKLOG_BYTES = 1024 * 1024;
/** A replay writes its next page once the client has taken all but this much of the last. */
const REPLAY_BACKLOG_BYTES = 256 * 1024;
/** How long a replay waits for a client that takes nothing before it gives up on it (`too_slow`). */
const REPLAY_STALL_MS = 30_000;
/** Events one read of a scope takes at most; a burst, or a replay, is read in as many reads as it needs. */
const READ_BATCH = 200;
/** Revocations are looked for this often, at most (and only for accounts whose credentials may have changed). */
const SESSION_CHECK_MS = 1000;
/** A failed read of a scope is tried again after this long. */
const RETRY_READ_MS = 1000;
/** Retention runs at least this often. */
const PRUNE_EVERY_MS = 3_600_000;
/** Node's timers hold at most 2^31 - 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

interface Subscriber {
  caller: StreamCaller;
  publicId: string;
  sessionKey: string;
  sink: StreamSink;
  channel: Channel;
  /** The id of the last event this stream has passed (sent or, hidden, skipped). */
  position: number;
  /** Events the scope's reads delivered while this stream was still catching up; null once it has. */
  pending: EventRow[] | null;
  expiry: NodeJS.Timeout | undefined;
  closed: boolean;
  /** Taken out of the hub's books (once only: the per-session count must not drop twice). */
  detached: boolean;
}

/** The streams of one dashboard in one embed tenant: one read of new events serves all of them. */
interface Channel {
  key: string;
  scope: EventScope;
  publicId: string;
  subscribers: Set<Subscriber>;
  /** The newest event id read for this scope. */
  lastId: number;
  /** Settles once `lastId` holds the scope's head at the channel's start. */
  ready: Promise<void>;
  reading: boolean;
  /** A wake-up arrived during a read: read again when it ends. */
  again: boolean;
}

const keyOf = (scope: EventScope) => `${scope.accountId}:${scope.embedTenantId}:${scope.dashboardId}`;

/** One Server-Sent Event: `id` (when it moves the position), `event`, one `data` line (JSON has no raw newline). */
function frame(type: CommentStreamEventType, id: number | undefined, data: unknown): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Issue 23, the live comment streams of one process (docs/comments.md "Live updates"). A stream is one dashboard in
 * one embed tenant, opened like the thread list; it sends the events of the log (comments.store.ts, migration 0008)
 * that the thread list's rules show (`isEventShown`), each with an `id` a reconnecting client resumes from.
 *
 * - New events: every stream of a scope is served by one read of the scope's new events (`Channel`), woken by the
 *   database: PostgreSQL's NOTIFY names the scope; on SQLite a commit anywhere is noticed by polling, and one read
 *   of every scope's newest id says which scopes to read. Wake-ups during a read coalesce into one more read.
 * - A new stream registers before it reads anything, so what the shared reads deliver while it catches up (its
 *   replay after `Last-Event-ID`, or the scope's head) is kept and sent after, and nothing falls between the two.
 * - A stream ends (`stream.end`) when its session is revoked or its embed user deleted (looked for about once a
 *   second, for accounts whose credentials may have changed), when its token expires, when its dashboard can no
 *   longer be read (checked with each heartbeat), when its client falls too far behind, and on shutdown.
 *
 * @example
 * const hub = new CommentStreamHub({ ctx, notifications: db.notifications, changes: db.changes, settings, onError });
 * const close = await hub.open({ commenter, sessionId, tokenExpiresAt }, 'q1-review', undefined, sink);
 */
export class CommentStreamHub {
  #ctx: ServiceContext;
  #dialect: Dialect;
  #notifications: Notifications;
  #changes: ChangeFeed;
  #settings: CommentStreamSettings;
  #onError: (error: unknown, what: string) => void;
  #liveSessions: typeof selectLiveSessions;
  #channels = new Map<string, Channel>();
  #perSession = new Map<string, number>();
  #byAccount = new Map<number, Set<Subscriber>>();
  #accountMarks = new Map<number, ChangeMark>();
  #unlisten: (() => void) | undefined;
  /** SQLite: the newest event id of any scope the last look saw (undefined: not looked yet). */
  #latestSeen: number | undefined;
  #tailing = false;
  #tailAgain = false;
  /** Removes comment events past their retention, in every process (deleting what another already deleted costs a read of an index). */
  readonly #retention: TimerLoop;
  /** Heartbeats of idle streams, and a check that each channel's dashboard can still be read: from the first stream on. */
  readonly #heartbeats: TimerLoop;
  /** Looks for revoked sessions, about once a second: from the first stream on. */
  readonly #sessionChecks: TimerLoop;
  #closed = false;

  constructor(deps: {
    ctx: ServiceContext;
    notifications: Notifications;
    changes: ChangeFeed;
    settings: CommentStreamSettings;
    onError: (error: unknown, what: string) => void;
    /** Which of an account's sessions are still live (default `selectLiveSessions`); a test delays it to stage a race. */
    liveSessions?: typeof selectLiveSessions;
  }) {
    this.#ctx = deps.ctx;
    this.#dialect = deps.ctx.dialect;
    this.#notifications = deps.notifications;
    this.#changes = deps.changes;
    this.#settings = deps.settings;
    this.#onError = deps.onError;
    this.#liveSessions = deps.liveSessions ?? selectLiveSessions;
    const loop = (intervalMs: number, run: () => unknown, what: string) => new TimerLoop({ intervalMs, run, onError: (error) => this.#onError(error, what) });
    this.#retention = loop(Math.min(deps.settings.retentionMs, PRUNE_EVERY_MS), () => this.#prune(), 'comment streams: removing old comment events failed');
    this.#heartbeats = loop(deps.settings.heartbeatMs, () => this.#heartbeat(), 'comment streams: sending heartbeats failed');
    this.#sessionChecks = loop(Math.min(SESSION_CHECK_MS, deps.settings.heartbeatMs), () => this.#checkSessions(), 'comment streams: checking sessions failed');
    this.#retention.start();
  }

  /**
   * Opens a stream: counts it against its session's limit (429), checks the dashboard like the thread list
   * (404, 403) and writes `retry`; then, right after, `stream.ready` (and the missed events after `lastEventId`) or
   * `stream.reset`, and from then on every new event of the scope. Resolves, once the stream is registered, to the
   * function that closes it when its client goes away; rejects with nothing left behind.
   */
  async open(caller: StreamCaller, publicId: string, lastEventId: number | undefined, sink: StreamSink): Promise<() => void> {
    const shuttingDown = () => new AppError('service_unavailable', 'svc is shutting down; open the stream on another instance');
    if (this.#closed) throw shuttingDown();
    const { commenter } = caller;
    const sessionKey = `${commenter.accountId}:${caller.sessionId}`;
    const held = this.#perSession.get(sessionKey) ?? 0;
    if (held >= this.#settings.perSession) {
      throw new AppError('too_many_requests',
        `at most ${this.#settings.perSession} open comment streams per embed session (SVC_COMMENT_STREAMS_PER_SESSION); this session holds ${held}: close one before opening another`);
    }
    // Counted before the first await, so that concurrent opens cannot pass the limit together.
    this.#perSession.set(sessionKey, held + 1);
    let subscriber: Subscriber | undefined;
    try {
      const scope = await openCommentStream(this.#ctx, commenter, publicId);
      // A stream that registered after close() would never be ended, and would hold up the drain.
      if (this.#closed) throw shuttingDown();
      this.#listen();
      const channel = this.#channelOf(scope, publicId);
      subscriber = { caller, publicId, sessionKey, sink, channel, position: 0, pending: [], expiry: undefined, closed: false, detached: false };
      channel.subscribers.add(subscriber);
      let ofAccount = this.#byAccount.get(commenter.accountId);
      if (ofAccount === undefined) this.#byAccount.set(commenter.accountId, (ofAccount = new Set()));
      ofAccount.add(subscriber);
      this.#armExpiry(subscriber);
      await channel.ready;
      const opened = subscriber;
      // Ended meanwhile (shutdown, expiry...): its `stream.end` is written, and the answer carries just that.
      if (opened.closed) return () => undefined;
      sink.write(`retry: ${STREAM_RETRY_MS}\n\n`);
      // After the answer's headers are out (the route sends them once this resolves): a long replay is paced by
      // what the client takes, which it can only take once the answer flows.
      setImmediate(() => void this.#catchUp(opened, lastEventId).catch((error: unknown) => {
        this.#onError(error, 'comment streams: starting a stream failed');
        // Without a reason: the client reconnects with its Last-Event-ID.
        this.#close(opened, undefined);
      }));
      return () => this.#close(opened, undefined);
    } catch (error) {
      if (subscriber === undefined) this.#release(sessionKey);
      else this.#detach(subscriber);
      throw error;
    }
  }

  /** Ends every stream (`stream.end` with `shutdown`: clients reconnect elsewhere) and stops listening. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const loop of [this.#retention, this.#heartbeats, this.#sessionChecks]) void loop.stop();
    for (const channel of [...this.#channels.values()]) for (const subscriber of [...channel.subscribers]) this.#close(subscriber, 'shutdown');
    this.#unlisten?.();
    this.#unlisten = undefined;
  }

  /** Starts listening (and the heartbeat and session checks) with the first stream. */
  #listen(): void {
    if (this.#unlisten !== undefined) return;
    this.#unlisten = this.#notifications.listen(COMMENT_EVENT_CHANNEL, {
      notified: (payload) => {
        const channel = this.#channels.get(payload);
        if (channel !== undefined) this.#wake(channel);
      },
      resync: () => this.#resync(),
    });
    this.#heartbeats.start();
    this.#sessionChecks.start();
  }

  #channelOf(scope: EventScope, publicId: string): Channel {
    const key = keyOf(scope);
    const existing = this.#channels.get(key);
    if (existing !== undefined) return existing;
    const channel: Channel = { key, scope, publicId, subscribers: new Set(), lastId: 0, ready: Promise.resolve(), reading: false, again: false };
    channel.ready = readEventHead(this.#ctx.db, scope).then((head) => {
      channel.lastId = Math.max(channel.lastId, head);
    });
    // A channel that could not start is dropped: the stream that made it fails, the next one starts afresh.
    channel.ready.catch(() => {
      if (this.#channels.get(key) === channel) this.#channels.delete(key);
    });
    this.#channels.set(key, channel);
    return channel;
  }

  /**
   * Notifications may have been missed (PostgreSQL: the listening connection was (re)established) or cannot name
   * the scope (SQLite). SQLite hands out event ids in commit order across scopes, so one read of every scope's
   * newest id past the last one seen says which scopes to read; on PostgreSQL every open scope is read.
   */
  #resync(): void {
    if (this.#dialect === 'postgres') {
      for (const channel of this.#channels.values()) this.#wake(channel);
      return;
    }
    if (this.#tailing) {
      this.#tailAgain = true;
      return;
    }
    this.#tailing = true;
    void (async () => {
      try {
        do {
          this.#tailAgain = false;
          if (this.#latestSeen === undefined) {
            this.#latestSeen = await readLatestEventId(this.#ctx.db);
            for (const channel of this.#channels.values()) this.#wake(channel);
            continue;
          }
          for (const scope of await selectScopesWithEventsAfter(this.#ctx.db, this.#latestSeen)) {
            this.#latestSeen = Math.max(this.#latestSeen, scope.lastId);
            const channel = this.#channels.get(keyOf(scope));
            if (channel !== undefined) this.#wake(channel);
          }
        } while (this.#tailAgain && !this.#closed);
      } catch (error) {
        this.#onError(error, 'comment streams: looking for new comment events failed');
        this.#retryLater(() => this.#resync());
      } finally {
        this.#tailing = false;
      }
    })();
  }

  #retryLater(run: () => void): void {
    const timer = setTimeout(() => {
      if (!this.#closed) run();
    }, RETRY_READ_MS);
    timer.unref();
  }

  /** Reads the scope's new events once for all of its streams; a wake-up during a read makes one more. */
  #wake(channel: Channel): void {
    if (channel.reading) {
      channel.again = true;
      return;
    }
    channel.reading = true;
    void (async () => {
      try {
        await channel.ready;
        do {
          channel.again = false;
          const rows = await selectEventsAfter(this.#ctx.db, channel.scope, channel.lastId, READ_BATCH);
          if (rows.length > 0) {
            channel.lastId = rows[rows.length - 1]!.id;
            this.#dispatch(channel, rows);
          }
          if (rows.length === READ_BATCH) channel.again = true;
        } while (channel.again && channel.subscribers.size > 0 && !this.#closed);
      } catch (error) {
        this.#onError(error, 'comment streams: reading new comment events failed');
        this.#retryLater(() => this.#wake(channel));
      } finally {
        channel.reading = false;
      }
    })();
  }

  #dispatch(channel: Channel, rows: EventRow[]): void {
    // Each event is written at most twice (for its author's streams and everyone else's: `isOwn`), not once a stream.
    const texts = new Map<string, string>();
    for (const subscriber of channel.subscribers) this.#deliver(subscriber, rows, texts);
  }

  /** Hands new events to a stream: kept while it catches up, else sent. */
  #deliver(subscriber: Subscriber, rows: readonly EventRow[], texts: Map<string, string>): void {
    if (subscriber.closed) return;
    if (subscriber.pending !== null) {
      subscriber.pending.push(...rows);
      return;
    }
    this.#send(subscriber, rows, texts);
    if (subscriber.sink.backlog() > MAX_BACKLOG_BYTES) this.#close(subscriber, 'too_slow');
  }

  /** Writes the events after the stream's position that the thread list's rules show, in one write. */
  #send(subscriber: Subscriber, rows: readonly EventRow[], texts: Map<string, string>): void {
    const { commenter } = subscriber.caller;
    let text = '';
    for (const row of rows) {
      if (row.id <= subscriber.position) continue;
      subscriber.position = row.id;
      if (!isEventShown(row)) continue;
      const key = `${row.id}:${row.embed_user_id !== null && row.embed_user_id === commenter.embedUserId}`;
      let event = texts.get(key);
      if (event === undefined) {
        const presented = presentEvent(row, subscriber.publicId, commenter);
        texts.set(key, (event = frame(presented.type, row.id, presented.data)));
      }
      text += event;
    }
    if (text !== '') subscriber.sink.write(text);
  }

  /**
   * The first events of a stream. Without `lastEventId`: `stream.ready` at the scope's head (the client then loads
   * the thread list). With one the scope still keeps, and at most `replayMax` events after it: `stream.ready`
   * (resumed) and those events, a page at a time as the client takes them. Otherwise `stream.reset` at the head:
   * the client reloads the thread list. Then whatever the shared reads delivered meanwhile, past the position reached.
   */
  async #catchUp(subscriber: Subscriber, lastEventId: number | undefined): Promise<void> {
    const { scope } = subscriber.channel;
    const db = this.#ctx.db;
    let reset: StreamResetReason | undefined;
    if (lastEventId !== undefined) {
      if (!(await isResumablePosition(db, scope, lastEventId))) reset = 'unknown_position';
      else if ((await countEventsAfter(db, scope, lastEventId, this.#settings.replayMax + 1)) > this.#settings.replayMax) reset = 'too_many_missed';
    }
    if (subscriber.closed) return;
    if (lastEventId !== undefined && reset === undefined) {
      subscriber.position = lastEventId;
      subscriber.sink.write(frame('stream.ready', lastEventId, { resumed: true }));
      // Up to what is committed now; what commits meanwhile is also in `pending`, and sent once, by position.
      for (let page = READ_BATCH; page === READ_BATCH && !subscriber.closed;) {
        if (!(await this.#paced(subscriber))) return;
        const rows = await selectEventsAfter(db, scope, subscriber.position, READ_BATCH);
        if (subscriber.closed) return;
        this.#send(subscriber, rows, new Map());
        page = rows.length;
      }
    } else {
      const head = await readEventHead(db, scope);
      if (subscriber.closed) return;
      subscriber.position = head;
      subscriber.sink.write(lastEventId === undefined
        ? frame('stream.ready', head, { resumed: false })
        : frame('stream.reset', head, { reason: reset, replayMax: this.#settings.replayMax }));
    }
    const pending = subscriber.pending!;
    subscriber.pending = null;
    this.#deliver(subscriber, pending, new Map());
  }

  /** Waits until the client has taken most of what was written; false when it took nothing for too long (closed). */
  async #paced(subscriber: Subscriber): Promise<boolean> {
    const since = Date.now();
    while (!subscriber.closed && subscriber.sink.backlog() > REPLAY_BACKLOG_BYTES) {
      if (Date.now() - since > REPLAY_STALL_MS) {
        this.#close(subscriber, 'too_slow');
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return !subscriber.closed;
  }

  /**
   * A heartbeat comment line on every stream (proxies and load balancers keep a connection that speaks), and one
   * look per scope at whether its dashboard can still be read: the session's own bounds (deployment, dashboards)
   * never change, the dashboard's state can.
   */
  #heartbeat(): void {
    for (const channel of this.#channels.values()) {
      for (const subscriber of channel.subscribers) {
        if (subscriber.pending !== null || subscriber.closed) continue;
        subscriber.sink.write(': heartbeat\n\n');
        if (subscriber.sink.backlog() > MAX_BACKLOG_BYTES) this.#close(subscriber, 'too_slow');
      }
      const [first] = channel.subscribers;
      if (first === undefined) continue;
      openCommentStream(this.#ctx, first.caller.commenter, channel.publicId).catch((error: unknown) => {
        if (!(error instanceof AppError)) {
          this.#onError(error, 'comment streams: checking a dashboard failed');
          return;
        }
        for (const subscriber of [...channel.subscribers]) this.#close(subscriber, 'forbidden');
      });
    }
  }

  /**
   * Ends the streams of sessions revoked or gone (their embed user deleted). An account is looked at when the
   * change feed says its credentials may have changed since the last look (on SQLite: any commit), with one query.
   */
  async #checkSessions(): Promise<void> {
    for (const [accountId, subscribers] of [...this.#byAccount]) {
      const mark = this.#accountMarks.get(accountId);
      if (mark !== undefined && this.#changes.unchangedSince(mark, accountId)) continue;
      const next = this.#changes.mark();
      // Only the streams asked about are judged: one that opened during the query is not in its answer (and was
      // authenticated after `next`, so a revocation since is seen by the next look).
      const checked = [...subscribers];
      const live = await this.#liveSessions(this.#ctx, accountId, [...new Set(checked.map((s) => s.caller.sessionId))]);
      if (next === undefined) this.#accountMarks.delete(accountId);
      else this.#accountMarks.set(accountId, next);
      for (const subscriber of checked) if (!live.has(subscriber.caller.sessionId)) this.#close(subscriber, 'revoked');
    }
  }

  /** Ends the stream when its token stops being accepted: the token's `exp`, whole seconds (sessions.credentials.ts). */
  #armExpiry(subscriber: Subscriber): void {
    const expiresAt = subscriber.caller.tokenExpiresAt;
    if (expiresAt === null) return;
    const endsAt = Math.floor(expiresAt / 1000) * 1000;
    const arm = () => {
      const wait = endsAt - this.#ctx.now().getTime();
      if (wait <= 0) {
        this.#close(subscriber, 'expired');
        return;
      }
      subscriber.expiry = setTimeout(arm, Math.min(wait, MAX_TIMER_MS));
      subscriber.expiry.unref();
    };
    arm();
  }

  async #prune(): Promise<void> {
    await pruneCommentEvents(this.#ctx.db, isoTimestamp(new Date(Date.now() - this.#settings.retentionMs)));
  }

  /** Ends a stream: with `stream.end` and its reason when svc ends it, silently when its client went away. */
  #close(subscriber: Subscriber, reason: StreamEndReason | undefined): void {
    if (subscriber.closed) return;
    subscriber.closed = true;
    if (reason !== undefined) subscriber.sink.write(frame('stream.end', undefined, { reason }));
    subscriber.sink.end();
    this.#detach(subscriber);
  }

  #detach(subscriber: Subscriber): void {
    subscriber.closed = true;
    if (subscriber.detached) return;
    subscriber.detached = true;
    clearTimeout(subscriber.expiry);
    const { channel, caller } = subscriber;
    channel.subscribers.delete(subscriber);
    if (channel.subscribers.size === 0 && this.#channels.get(channel.key) === channel) this.#channels.delete(channel.key);
    const ofAccount = this.#byAccount.get(caller.commenter.accountId);
    ofAccount?.delete(subscriber);
    if (ofAccount?.size === 0) {
      this.#byAccount.delete(caller.commenter.accountId);
      this.#accountMarks.delete(caller.commenter.accountId);
    }
    this.#release(subscriber.sessionKey);
  }

  #release(sessionKey: string): void {
    const held = (this.#perSession.get(sessionKey) ?? 1) - 1;
    if (held <= 0) this.#perSession.delete(sessionKey);
    else this.#perSession.set(sessionKey, held);
  }
}
