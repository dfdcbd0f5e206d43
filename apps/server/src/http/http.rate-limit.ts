import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { digestSecret } from '../accounts/accounts.keys.js';
import { AppError } from './http.errors.js';

/** Requests allowed per client per window on the credential-minting endpoints (docs/operations.md). */
export interface RateLimits {
  /** Generate Session, per API key (default 1200 a minute: one per page view of a busy host). */
  generateSession: number;
  /** Session exchange, per client IP (default 300 a minute: many viewers can share one office IP). */
  exchange: number;
  /** Console login, per client IP and email (default 10 a minute). */
  login: number;
  /** The window in ms (default one minute). */
  windowMs: number;
}

/** Limits from `SVC_RATE_LIMIT_GENERATE_SESSION`, `SVC_RATE_LIMIT_EXCHANGE`, `SVC_RATE_LIMIT_LOGIN` (per minute). */
export function rateLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): RateLimits {
  const read = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of requests per minute >= 1, got ${raw}`);
    return value;
  };
  return {
    generateSession: read('SVC_RATE_LIMIT_GENERATE_SESSION', 1200),
    exchange: read('SVC_RATE_LIMIT_EXCHANGE', 300),
    login: read('SVC_RATE_LIMIT_LOGIN', 10),
    windowMs: 60_000,
  };
}

/**
 * `@fastify/rate-limit`, off by default; routes opt in with `config.rateLimit` (see `rateLimitFor`). Counters
 * live in each process's memory: with N processes a client gets up to N times the limit (docs/operations.md).
 * A refusal is a 429 with the error body and `retry-after`.
 */
export async function registerRateLimiting(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) =>
      new AppError('too_many_requests', `too many requests: at most ${context.max} per ${context.after ? 'window' : 'minute'}; retry in ${Math.ceil(context.ttl / 1000)} s`),
  });
}

/** Per-route settings: `key` names the client the limit counts for (never a raw secret: digests only). */
export function rateLimitFor(max: number, windowMs: number, key: (request: FastifyRequest) => string, hook: 'onRequest' | 'preHandler' = 'onRequest') {
  return { rateLimit: { max, timeWindow: windowMs, hook, keyGenerator: (request: FastifyRequest) => digestSecret(key(request)) } };
}
