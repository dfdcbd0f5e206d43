import { describe, expect, it } from 'vitest';
import { loadConfig } from '../core/core.config.js';
import { DEFAULT_EMBED_LIFETIMES, tokenTimeline } from './sessions.config.js';

const embedLifetimesFromEnv = (env: NodeJS.ProcessEnv) => loadConfig(env).embedLifetimes;

describe('embed lifetimes (DESIGN "Lifetimes come from configuration")', () => {
  it('defaults to 5 minutes for session ids and 24 hours for tokens', () => {
    expect(embedLifetimesFromEnv({})).toEqual({ sessionTtlMs: 300_000, tokenTtlMs: 86_400_000 });
    expect(DEFAULT_EMBED_LIFETIMES).toEqual({ sessionTtlMs: 300_000, tokenTtlMs: 86_400_000 });
  });

  it('reads SVC_EMBED_SESSION_TTL_MS and SVC_EMBED_TOKEN_TTL_MS', () => {
    expect(embedLifetimesFromEnv({ SVC_EMBED_SESSION_TTL_MS: '2000', SVC_EMBED_TOKEN_TTL_MS: '48000' })).toEqual({ sessionTtlMs: 2000, tokenTtlMs: 48_000 });
  });

  it.each(['abc', '10.5', '999', '-5'])('refuses %j, naming the variable', (value) => {
    expect(() => embedLifetimesFromEnv({ SVC_EMBED_TOKEN_TTL_MS: value })).toThrow(/SVC_EMBED_TOKEN_TTL_MS must be a whole number/);
  });

  it('derives SPEC\'s timeline: usable about 23 of 24 hours, the warning 30 minutes before the effective end', () => {
    const t = tokenTimeline(DEFAULT_EMBED_LIFETIMES, 0);
    expect(t).toEqual({ expiresAt: 86_400_000, effectiveEnd: 82_800_000, warnAt: 81_000_000 });
    // Scaled down for tests: the same proportions.
    expect(tokenTimeline({ sessionTtlMs: 1000, tokenTtlMs: 48_000 }, 1000)).toEqual({ expiresAt: 49_000, effectiveEnd: 47_000, warnAt: 46_000 });
  });
});
