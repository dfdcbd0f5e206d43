/** One Server-Sent Event as a client sees it: its `event` type ("message" when unnamed), `data` and `id`. */
export interface SseEvent {
  event: string;
  data: string;
  /** The `id` field of this event, when it had one. */
  id: string | undefined;
}

/**
 * Reads a Server-Sent Events answer over real HTTP with fetch (the way the embed panel reads the comment stream, with
 * its Authorization header), parsing the stream as the HTML standard's EventSource does: `event`, `data` (joined by
 * newlines), `id`, `retry`, and comment lines (kept apart, for heartbeats). `lastEventId` follows the standard: an
 * `id` field sets it even on an event without data.
 *
 * @example
 * const stream = await SseStream.open(`${base}/api/v1/embed/dashboard/q1/comments/stream`, ann.headers);
 * expect((await stream.next()).event).toBe('stream.ready');
 */
export class SseStream {
  readonly status: number;
  readonly headers: Headers;
  /** The answer's text when it was not an event stream (an error body). */
  readonly body: string | undefined;
  lastEventId = '';
  retry: number | undefined;
  /** Comment lines received (`: heartbeat`), without the colon. */
  readonly comments: string[] = [];
  /** True once the server ended the answer. */
  ended = false;
  #controller: AbortController;
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #decoder = new TextDecoder();
  #buffer = '';
  #events: SseEvent[] = [];
  #waiters: Array<() => void> = [];
  #eventType = '';
  #data: string[] = [];
  #hasData = false;
  #eventId: string | undefined;

  private constructor(status: number, headers: Headers, body: string | undefined, controller: AbortController, reader: ReadableStreamDefaultReader<Uint8Array> | undefined) {
    this.status = status;
    this.headers = headers;
    this.body = body;
    this.#controller = controller;
    this.#reader = reader;
    if (reader !== undefined) void this.#pump();
    else this.ended = true;
  }

  /** Opens the stream; a non-stream answer (4xx) is read whole into `body`. */
  static async open(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
    const controller = new AbortController();
    const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
    const isStream = res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
    if (!isStream) return new SseStream(res.status, res.headers, await res.text(), controller, undefined);
    return new SseStream(res.status, res.headers, undefined, controller, res.body!.getReader());
  }

  /** The answer's error body, parsed (for a refused open). */
  json(): { error: { status: number; code: string; message: string; field?: string } } {
    return JSON.parse(this.body ?? 'null');
  }

  /** The next event; rejects after `timeoutMs`, or when the stream ended with no event left. */
  async next(timeoutMs = 5000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = this.#events.shift();
      if (event !== undefined) return event;
      if (this.ended) throw new Error('the stream ended');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Events that arrive within `ms` (none expected: proves silence). */
  async drain(ms: number): Promise<SseEvent[]> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.#events.splice(0);
  }

  /** Waits for the server to end the answer; false after `timeoutMs`. */
  async waitForEnd(timeoutMs = 5000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.ended;
  }

  /** Drops the connection, as a closed tab or a lost network does. */
  close(): void {
    this.#controller.abort();
    this.ended = true;
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await this.#reader!.read();
        if (done) break;
        this.#buffer += this.#decoder.decode(value, { stream: true });
        this.#parse();
      }
    } catch {
      // Aborted or reset: the stream is over either way.
    }
    this.ended = true;
    this.#wakeWaiters();
  }

  #parse(): void {
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.#buffer);
      if (match === null) return;
      const line = this.#buffer.slice(0, match.index);
      this.#buffer = this.#buffer.slice(match.index + match[0].length);
      this.#line(line);
    }
  }

  #line(line: string): void {
    if (line === '') {
      if (this.#eventId !== undefined) this.lastEventId = this.#eventId;
      if (this.#hasData) {
        this.#events.push({ event: this.#eventType || 'message', data: this.#data.join('\n'), id: this.#eventId });
        this.#wakeWaiters();
      }
      this.#eventType = '';
      this.#data = [];
      this.#hasData = false;
      this.#eventId = undefined;
      return;
    }
    if (line.startsWith(':')) {
      this.comments.push(line.slice(1).trim());
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.#eventType = value;
    else if (field === 'data') {
      this.#data.push(value);
      this.#hasData = true;
    } else if (field === 'id' && !value.includes('\u0000')) this.#eventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }

  #wakeWaiters(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
