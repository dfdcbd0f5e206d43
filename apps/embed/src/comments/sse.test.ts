import { describe, expect, it } from 'vitest';
import { createSseParser } from './sse.js';
import type { SseEvent } from './sse.js';

function parse(pieces: string[]): { events: SseEvent[]; retries: number[] } {
  const events: SseEvent[] = [];
  const retries: number[] = [];
  const parser = createSseParser((event) => events.push(event), (ms) => retries.push(ms));
  for (const piece of pieces) parser.feed(piece);
  return { events, retries };
}

describe('the Server-Sent Events parser', () => {
  const stream = 'retry: 3000\n\nid: 40\nevent: stream.ready\ndata: {"resumed":false}\n\n: heartbeat\n\nid: 41\nevent: comment.created\ndata: {"threadId":41}\n\n';

  it('dispatches named events with their data and the last event id, skips comments and reads retry', () => {
    const { events, retries } = parse([stream]);
    expect(events).toEqual([
      { type: 'stream.ready', data: '{"resumed":false}', lastEventId: '40' },
      { type: 'comment.created', data: '{"threadId":41}', lastEventId: '41' },
    ]);
    expect(retries).toEqual([3000]);
  });

  it('gives the same events however the text is cut, one character at a time included', () => {
    const whole = parse([stream]).events;
    expect(parse(stream.split('')).events).toEqual(whole);
    for (let cut = 1; cut < stream.length; cut += 7) expect(parse([stream.slice(0, cut), stream.slice(cut)]).events).toEqual(whole);
  });

  it('takes CRLF and CR line ends, also a CRLF split between two pieces', () => {
    const crlf = 'id: 1\r\nevent: a\r\ndata: x\r\n\r\n';
    expect(parse([crlf]).events).toEqual([{ type: 'a', data: 'x', lastEventId: '1' }]);
    expect(parse(['id: 1\r', '\nevent: a\r', '\ndata: x\r', '\n\r', '\n']).events).toEqual([{ type: 'a', data: 'x', lastEventId: '1' }]);
    expect(parse(['id: 1\revent: a\rdata: x\r\r: a CR at the end waits for what follows']).events).toEqual([{ type: 'a', data: 'x', lastEventId: '1' }]);
  });

  it('joins data lines, names an unnamed event "message", and keeps an id given by an event without data', () => {
    expect(parse(['data: a\ndata: b\n\nid: 7\n\ndata:c\n\n']).events).toEqual([
      { type: 'message', data: 'a\nb', lastEventId: '' },
      { type: 'message', data: 'c', lastEventId: '7' },
    ]);
  });

  it('does not dispatch an event the text has not finished', () => {
    expect(parse(['id: 9\nevent: stream.end\ndata: {"reason":"revoked"}\n']).events).toEqual([]);
  });
});
