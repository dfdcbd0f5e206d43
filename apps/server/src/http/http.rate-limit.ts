import rateLimit from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { digestSecret } from '../core/core.digest.js';
import type { Config } from '../core/core.config.js';
import { AppError } from '../core/core.errors.js';
import { ErrorResponse } from '../core/core.schema.js';

/**
 * Requests allowed per client per window (docs/operations.md "Rate limits"): generate-session per credential, the
 * exchange per client IP, console login per client IP and email, the embed API per embed session and per client
 * IP; the window is a minute. From SVC_RATE_LIMIT_* (core.config.ts).
 */
export type RateLimits = Config['rateLimits'];

/** Where the counters live: in this process (the default), or in Redis, shared by every process using it. */
export interface RateLimitStore {
  /** `redis://...` (SVC_REDIS_URL); unset: each process counts on its own. */
  redisUrl?: string;
  /** The prefix of svc's counter keys in Redis (default `svc:rate-limit:`), for a Redis shared with other services. */
  redisPrefix?: string;
}

/** Connects to Redis for the counters; a Redis that does not answer stops the start, with its address named. */
async function connectRedis(app: FastifyInstance, url: string): Promise<Redis> {
  // No offline queue and one retry: while Redis is unreachable a count fails at once, and the request goes on
  // uncounted (skipOnError below), instead of waiting on reconnection.
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  let lastError = '';
  redis.on('error', (error: Error) => {
    // Once per distinct failure, not once per reconnection attempt.
    if (error.message !== lastError) app.log.warn({ err: error.message }, 'rate limits: Redis failed; requests go uncounted until it is back');
    lastError = error.message;
  });
  redis.on('ready', () => { lastError = ''; });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`SVC_REDIS_URL: Redis at ${redactedUrl(url)} does not answer (${error instanceof Error ? error.message : String(error)})`);
  }
  app.addHook('onClose', async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  return redis;
}

/** A Redis URL without its password, for messages. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * `@fastify/rate-limit`, off by default; routes opt in with `config.rateLimit` (see `rateLimitFor`). With
 * `store.redisUrl` the counters live in Redis, so N processes together allow each limit once; without, in each
 * process's memory, and N processes allow up to N times each limit (docs/operations.md "Rate limits").
 * A refusal is a 429 with the error body and `retry-after`. Should Redis fail while svc runs, requests go on
 * uncounted (and svc logs it) rather than failing: the limits guard against floods, not against correctness.
 *
 * Every route of the embed API (`isEmbedApiRoute`) gets two limits more, checked after the credential is
 * resolved: one per embed session, one per client IP. Register this before the routes.
 */
export async function registerRateLimiting(app: FastifyInstance, limits: RateLimits, store: RateLimitStore = {}): Promise<void> {
  const redis = store.redisUrl === undefined || store.redisUrl === '' ? undefined : await connectRedis(app, store.redisUrl);
  await app.register(rateLimit, {
    global: false,
    ...(redis === undefined ? {} : { redis, nameSpace: store.redisPrefix ?? 'svc:rate-limit:', skipOnError: true }),
    errorResponseBuilder: (_request, context) =>
      new AppError('too_many_requests', `too many requests: at most ${context.max} per ${context.after ? 'window' : 'minute'}; retry in ${Math.ceil(context.ttl / 1000)} s`),
  });
  // Two counters per request: the plugin's own route hook runs one limiter per request only, so both are checked
  // here with its `createRateLimit` (the same store and window logic).
  const perIp = app.createRateLimit({ max: limits.embedPerIp, timeWindow: limits.windowMs, keyGenerator: (request) => `embed-ip:${request.ip}` });
  const perSession = app.createRateLimit({
    max: limits.embedPerSession,
    timeWindow: limits.windowMs,
    keyGenerator: (request) => (request.principal.kind === 'embed' ? `embed-session:${request.principal.accountId}:${request.principal.sessionId}` : ''),
  });
  const limitEmbedApi = async (request: FastifyRequest, reply: FastifyReply) => {
    // Only embed sessions count per session; other callers (console sessions of private embeds, anonymous) meet the IP limit.
    const [ip, session] = await Promise.all([perIp(request), request.principal.kind === 'embed' ? perSession(request) : undefined]);
    let per = 'from one IP';
    let exceeded = ip.isAllowed || !ip.isExceeded ? undefined : ip;
    if (exceeded === undefined && session !== undefined && !session.isAllowed && session.isExceeded) {
      exceeded = session;
      per = 'per embed session';
    }
    if (exceeded === undefined) return;
    const { max, ttlInSeconds } = exceeded;
    void reply.header('retry-after', ttlInSeconds);
    throw new AppError('too_many_requests', `too many requests: at most ${max} a minute ${per} on the embed API; retry in ${ttlInSeconds} s`);
  };
  app.addHook('onRoute', (route) => {
    if (!isEmbedApiRoute(route.url)) return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [...own, limitEmbedApi];
    // The route can answer this limit's 429: its schema (so the OpenAPI document) says so.
    if (route.schema?.response !== undefined) route.schema = { ...route.schema, response: { ...(route.schema.response as object), 429: ErrorResponse } };
  });
}

/**
 * The routes an embed viewer calls: dashboards, widget data and queries, comments, the AI surface and the session
 * read. Not the host backend's calls under /api/v1/embed (generate-session, revoke, embed users: API keys, where
 * one host IP carries every viewer) nor the exchange (limited per IP on its own).
 */
export function isEmbedApiRoute(url: string): boolean {
  return url.startsWith('/api/v1/embed/dashboard/') || url.startsWith('/api/v1/embed/deployments/')
    || url.startsWith('/api/v1/embed/ai/') || url === '/api/v1/embed/session'
    // Issue 35 saved charts and views (a dashboard's views are under /dashboard/ already).
    || url === '/api/v1/embed/charts' || url.startsWith('/api/v1/embed/charts/');
}

/** Per-route settings: `key` names the client the limit counts for (never a raw secret: digests only). */
export function rateLimitFor(max: number, windowMs: number, key: (request: FastifyRequest) => string, hook: 'onRequest' | 'preHandler' = 'onRequest') {
  return { rateLimit: { max, timeWindow: windowMs, hook, keyGenerator: (request: FastifyRequest) => digestSecret(key(request)) } };
}
