/** One Server-Sent Event as the HTML standard's EventSource dispatches it. */
export interface SseEvent {
  /** The `event` field; `message` when the event named none. */
  type: string;
  /** The `data` lines, joined by newlines. */
  data: string;
  /** The last event id after this event (`id` fields persist across events, as in EventSource). */
  lastEventId: string;
}

export interface SseParser {
  /** Takes the next piece of the answer's text, in any cut (a line may end in the next piece). */
  feed(text: string): void;
}

/**
 * The parsing half of EventSource (HTML standard, "Interpreting an event stream"), for a stream read with `fetch`:
 * svc's comment stream needs an `Authorization` header, which EventSource cannot send. Lines end in CR, LF or
 * CRLF; a blank line dispatches the event; `:` lines are comments (heartbeats); `retry` sets the reconnection time.
 * An event without data is not dispatched, but its `id` still moves the last event id.
 *
 * @example
 * const parser = createSseParser((event) => console.log(event.type, JSON.parse(event.data)));
 * parser.feed('id: 4\nevent: stream.ready\ndata: {"resumed":false}\n\n');
 */
export function createSseParser(onEvent: (event: SseEvent) => void, onRetry: (ms: number) => void = () => undefined): SseParser {
  let buffer = '';
  let type = '';
  let data: string[] = [];
  let lastEventId = '';

  const line = (text: string) => {
    if (text === '') {
      if (data.length > 0) onEvent({ type: type || 'message', data: data.join('\n'), lastEventId });
      type = '';
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\u0000')) lastEventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) onRetry(Number(value));
  };

  return {
    feed(text) {
      buffer += text;
      const endOfLine = /\r\n|\r|\n/g;
      let start = 0;
      for (let match = endOfLine.exec(buffer); match !== null; match = endOfLine.exec(buffer)) {
        // A CR at the very end may be the first half of a CRLF: wait for the next piece.
        if (match[0] === '\r' && match.index === buffer.length - 1) break;
        line(buffer.slice(start, match.index));
        start = match.index + match[0].length;
      }
      buffer = buffer.slice(start);
    },
  };
}
