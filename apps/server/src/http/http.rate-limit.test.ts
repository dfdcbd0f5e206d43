import { describe, expect, it } from 'vitest';
import { rateLimitsFromEnv } from './http.rate-limit.js';

describe('rate limits from the environment (docs/operations.md)', () => {
  it('defaults to 1200 generate-session, 300 exchange and 10 login requests a minute', () => {
    expect(rateLimitsFromEnv({})).toEqual({ generateSession: 1200, exchange: 300, login: 10, windowMs: 60_000 });
  });

  it('reads SVC_RATE_LIMIT_* and refuses a bad value by name', () => {
    expect(rateLimitsFromEnv({ SVC_RATE_LIMIT_GENERATE_SESSION: '5', SVC_RATE_LIMIT_EXCHANGE: '6', SVC_RATE_LIMIT_LOGIN: '7' }))
      .toEqual({ generateSession: 5, exchange: 6, login: 7, windowMs: 60_000 });
    expect(() => rateLimitsFromEnv({ SVC_RATE_LIMIT_LOGIN: '0' })).toThrow(/SVC_RATE_LIMIT_LOGIN must be a whole number/);
  });
});
