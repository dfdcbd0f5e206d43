import { describe, expect, it } from 'vitest';
import { embed } from './embed.js';
import { SvcEmbedError } from './errors.js';

/** The options embed() refuses before it touches the page (so these run in Node, without a DOM). */
describe('embed() options', () => {
  const base = { container: {} as HTMLElement, baseUrl: 'https://analytics.example.com', surface: 'dashboard' as const, publicId: 'q1', getSessionId: () => 'ses_1' };

  it.each([0, -1, Number.NaN, '15000'])('refuses readyTimeoutMs %s with invalid-option', (readyTimeoutMs) => {
    const call = () => embed({ ...base, readyTimeoutMs: readyTimeoutMs as number });
    expect(call).toThrow(SvcEmbedError);
    expect(call).toThrow(/readyTimeoutMs must be a number above 0/);
  });
});
