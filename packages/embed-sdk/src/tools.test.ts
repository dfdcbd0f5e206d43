import { createEvent } from '@svc/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { debug } from './tools.js';

/** `debug` of `@svc/embed-sdk/tools`: the words for what `embed()` drops (issue 37 item 4 moved them out of the main entry). */
describe('tools debug', () => {
  const frame = {} as Window;
  const origin = 'https://analytics.example.com';
  const navigate = createEvent('svc:event:navigate', { path: '/d/1' }, 'dashboard');
  const said = () => (console.debug as unknown as { mock: { calls: unknown[][] } }).mock.calls.map((args) => args.join(' '));

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([
    ['another window', { data: navigate, source: {}, origin }, 'dropped a message from another window'],
    ['no frame yet', { data: navigate, source: frame, origin }, 'dropped a message from another window'],
    ['another origin', { data: navigate, source: frame, origin: 'https://evil.example' }, `dropped a message from origin https://evil.example, expected ${origin}`],
    ['a payload off the catalogue', { data: { ...navigate, payload: { path: 7 } }, source: frame, origin }, 'dropped a message svc:event:navigate: payload.path must be a string'],
  ])('says why a message was dropped: %s', (label, event, words) => {
    vi.spyOn(console, 'debug').mockImplementation(() => undefined);
    debug('dropped', event, label === 'no frame yet' ? undefined : frame, origin);
    expect(said()).toEqual([`[svc-embed] ${words}`]);
  });

  it('logs anything else as it comes, after the prefix', () => {
    vi.spyOn(console, 'debug').mockImplementation(() => undefined);
    debug('svc embed: no ready within 5 ms');
    expect(said()).toEqual(['[svc-embed] svc embed: no ready within 5 ms']);
  });
});
