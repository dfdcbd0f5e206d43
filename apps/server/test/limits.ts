import type { RateLimits } from '../src/http/http.rate-limit.js';

/**
 * Rate limits raised out of the way of a test whose load is its point (fuzzing, concurrency, crashes, browsers):
 * the limits themselves are tested in http.limits.test.ts and sessions.test.ts.
 */
export const RAISED_RATE_LIMITS: RateLimits = {
  generateSession: 1_000_000_000, exchange: 1_000_000_000, login: 1_000_000_000, embedPerSession: 1_000_000_000, embedPerIp: 1_000_000_000, explorePerSession: 1_000_000_000, windowMs: 60_000,
};

/** The same for a `svc serve` child, as its environment (SVC_RATE_LIMIT_*). */
export const RAISED_RATE_LIMIT_ENV: Record<string, string> = {
  SVC_RATE_LIMIT_GENERATE_SESSION: '1000000000',
  SVC_RATE_LIMIT_EXCHANGE: '1000000000',
  SVC_RATE_LIMIT_LOGIN: '1000000000',
  SVC_RATE_LIMIT_EMBED_SESSION: '1000000000',
  SVC_RATE_LIMIT_EMBED_IP: '1000000000',
  SVC_RATE_LIMIT_EXPLORE: '1000000000',
};
