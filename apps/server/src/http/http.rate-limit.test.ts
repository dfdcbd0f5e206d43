import { describe, expect, it } from 'vitest';
import { rateLimitsFromEnv } from './http.rate-limit.js';

describe('rate limits from the environment (docs/operations.md)', () => {
  it('defaults to 1200 generate-session, 300 exchange, 10 login, and 1200 embed requests per session and 6000 per IP a minute', () => {
    expect(rateLimitsFromEnv({})).toEqual({ generateSession: 1200, exchange: 300, login: 10, embedPerSession: 1200, embedPerIp: 6000, windowMs: 60_000 });
  });

  it('reads SVC_RATE_LIMIT_* and refuses a bad value by name', () => {
    expect(rateLimitsFromEnv({ SVC_RATE_LIMIT_GENERATE_SESSION: '5', SVC_RATE_LIMIT_EXCHANGE: '6', SVC_RATE_LIMIT_LOGIN: '7', SVC_RATE_LIMIT_EMBED_SESSION: '8', SVC_RATE_LIMIT_EMBED_IP: '9' }))
      .toEqual({ generateSession: 5, exchange: 6, login: 7, embedPerSession: 8, embedPerIp: 9, windowMs: 60_000 });
    expect(() => rateLimitsFromEnv({ SVC_RATE_LIMIT_LOGIN: '0' })).toThrow(/SVC_RATE_LIMIT_LOGIN must be a whole number/);
  });
});
