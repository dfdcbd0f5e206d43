import type { Comment } from '../api.js';
import { ApiError } from '../session.js';
import type { EmbedSession } from '../session.js';
import { createSseParser } from './sse.js';

/** A change to the tenant's threads on the dashboard, as the stream tells it (docs/comments.md "Live updates"). */
export type ThreadEvent =
  | { type: 'comment.created' | 'comment.edited'; threadId: number; comment: Comment }
  | { type: 'comment.deleted'; threadId: number; commentId: number }
  | { type: 'thread.resolved' | 'thread.reopened'; threadId: number; resolvedAt: string | null; resolvedBy: number | null };

/** Why a stream stopped for good: the session is over or refused, or the dashboard cannot be read. */
export type StreamStop = 'revoked' | 'expired' | 'forbidden' | 'unauthorized';

export interface CommentStreamListener {
  /**
   * The stream is live. `resumed` false: it starts at the newest event, so the thread list must be read now (from
   * here on, nothing is missed); true: it picked up after the last event received, with nothing missed.
   */
  ready(resumed: boolean): void;
  /** Too much was missed (or the position is unknown): read the thread list again; the events that follow apply to it. */
  reset(): void;
  event(event: ThreadEvent): void;
  /** The stream gave up for good (see StreamStop); `connect()` tries again (a new session). */
  stopped(reason: StreamStop): void;
  /** The stream could not be opened or was cut; it tries again on its own after `retryInMs`. */
  interrupted(retryInMs: number): void;
}

/** The server's `retry` until it sends its own (ms). */
const DEFAULT_RETRY_MS = 3000;
/** The longest wait between two attempts (ms). */
const MAX_RETRY_MS = 60_000;
/** After a 429 (this session holds its limit of streams elsewhere), wait at least this long (ms). */
const TOO_MANY_RETRY_MS = 30_000;

const THREAD_EVENTS = new Set(['comment.created', 'comment.edited', 'comment.deleted', 'thread.resolved', 'thread.reopened']);

/**
 * The wait before attempt `failures + 1`: the server's `retry`, doubled with each failure in a row up to a minute,
 * with half of it random so that viewers cut off together (a restarted svc) do not come back together.
 */
export function retryDelay(retryMs: number, failures: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_RETRY_MS, retryMs * 2 ** Math.min(failures, 16));
  return Math.round(ceiling * (0.5 + random() / 2));
}

/**
 * The live comment stream of one dashboard for the comment panel (issue 23; server: comments.stream.ts). It reads
 * `GET .../comments/stream` with `fetch` (the token goes in a header, which EventSource cannot send) and:
 * - reconnects after a cut (network, proxy, `shutdown`, `too_slow`, 5xx) with the last event id as `Last-Event-ID`,
 *   so nothing is missed, waiting `retryDelay` (doubling, jittered; a 429 waits at least 30 s);
 * - stops for good on `stream.end` `revoked`, `expired` or `forbidden` and on 401, 403 and 404: the session or the
 *   dashboard is gone, and asking again would only be refused again. `connect()` starts it anew (a new session);
 * - keeps its position across `connect()`, so a session swap resumes where the old token left off.
 *
 * @example
 * const stream = new CommentStream(session, 'q1-review', listener);
 * stream.connect();
 * // later
 * stream.close();
 */
export class CommentStream {
  #session: EmbedSession;
  #path: string;
  #listener: CommentStreamListener;
  #lastEventId = '';
  #retryMs = DEFAULT_RETRY_MS;
  #failures = 0;
  #run = 0;
  #controller: AbortController | undefined;
  #wake: (() => void) | undefined;
  #onOnline = () => this.#wake?.();

  constructor(session: EmbedSession, publicId: string, listener: CommentStreamListener) {
    this.#session = session;
    this.#path = `/api/v1/embed/dashboard/${encodeURIComponent(publicId)}/comments/stream`;
    this.#listener = listener;
  }

  /** (Re)opens the stream now, from the last event received if any; a stream already open is replaced. */
  connect(): void {
    this.#stop();
    const run = ++this.#run;
    this.#failures = 0;
    addEventListener('online', this.#onOnline);
    void this.#loop(run);
  }

  /** Closes the stream for good (the panel is going away). */
  close(): void {
    this.#stop();
    this.#run++;
  }

  #stop(): void {
    this.#controller?.abort();
    this.#controller = undefined;
    this.#wake?.();
    removeEventListener('online', this.#onOnline);
  }

  async #loop(run: number): Promise<void> {
    while (run === this.#run) {
      const controller = new AbortController();
      this.#controller = controller;
      let wait: number;
      try {
        const end = await this.#read(controller.signal);
        if (run !== this.#run) return;
        if (end === 'revoked' || end === 'expired' || end === 'forbidden') {
          this.#listener.stopped(end);
          return;
        }
        // `shutdown`, `too_slow`, or an answer that just ended: come back after the server's `retry`.
        wait = retryDelay(this.#retryMs, this.#failures++);
      } catch (error) {
        if (run !== this.#run) return;
        if (error instanceof ApiError && (error.status === 401 || error.status === 403 || error.status === 404)) {
          this.#listener.stopped(error.status === 401 ? 'unauthorized' : 'forbidden');
          return;
        }
        // A position the server refuses (400 on Last-Event-ID): start afresh; the panel reloads on `ready`.
        if (error instanceof ApiError && error.status === 400) this.#lastEventId = '';
        wait = retryDelay(this.#retryMs, this.#failures++);
        if (error instanceof ApiError && error.status === 429) wait = Math.max(wait, TOO_MANY_RETRY_MS);
      }
      this.#listener.interrupted(wait);
      await this.#sleep(wait);
    }
  }

  /** One answer, read to its end; resolves to the `stream.end` reason, if the server gave one. */
  async #read(signal: AbortSignal): Promise<string | undefined> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.#lastEventId !== '') headers['last-event-id'] = this.#lastEventId;
    const response = await this.#session.openStream(this.#path, headers, signal);
    let end: string | undefined;
    const parser = createSseParser((event) => {
      if (signal.aborted) return;
      this.#lastEventId = event.lastEventId;
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(event.data) as Record<string, unknown>;
      } catch {
        return;
      }
      if (event.type === 'stream.ready') {
        this.#failures = 0;
        this.#listener.ready(data.resumed === true);
      } else if (event.type === 'stream.reset') {
        this.#failures = 0;
        this.#listener.reset();
      } else if (event.type === 'stream.end') {
        end = typeof data.reason === 'string' ? data.reason : 'unknown';
      } else if (THREAD_EVENTS.has(event.type)) {
        // Unknown event types are ignored (docs/comments.md: more may come).
        this.#listener.event({ ...data, type: event.type } as ThreadEvent);
      }
    }, (ms) => {
      this.#retryMs = ms;
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) parser.feed(read.value);
    } finally {
      reader.releaseLock();
    }
    return end;
  }

  /** Waits `ms`, or less when the stream is closed or the browser is back online. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}
