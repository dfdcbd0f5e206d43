import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { isIP } from 'node:net';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Db } from './db/db.database.js';
import { registerAuthentication } from './http/http.auth.js';
import type { ServiceContext } from './http/http.context.js';
import { answerClientError, answerFrameworkError, registerErrorHandling } from './http/http.errors.js';
import { registerDrain } from './http/http.drain.js';
import { registerSecurityHeaders } from './http/http.security-headers.js';
import { healthRoutes } from './http/http.health.js';
import { loggingFor } from './http/http.logging.js';
import { buildStrictBodyValidator, registerJsonBodyParser } from './http/http.validation.js';
import type { LoggingConfig } from './http/http.logging.js';
import { registerOpenApi } from './http/http.openapi.js';
import cookie from '@fastify/cookie';
import { positiveFromEnv } from './app.env.js';
import { accountRoutes } from './accounts/accounts.routes.js';
import { registerMetrics } from './http/http.metrics.js';
import { rateLimitsFromEnv, registerRateLimiting } from './http/http.rate-limit.js';
import type { RateLimits, RateLimitStore } from './http/http.rate-limit.js';
import { commentRoutes } from './comments/comments.routes.js';
import { dashboardRoutes } from './dashboards/dashboards.routes.js';
import { ensureDemoWarehouseSqlite } from './data/data.demo-warehouse.js';
import { aiSettingsFromEnv } from './data/data.ai.js';
import type { AiSettings } from './data/data.ai.js';
import { dataRoutes } from './data/data.routes.js';
import { WarehouseRegistry } from './data/data.warehouse.js';
import { embedRoutes } from './embed/embed.routes.js';
import { embedLifetimesFromEnv } from './sessions/sessions.config.js';
import type { EmbedLifetimes } from './sessions/sessions.config.js';
import { sessionRoutes } from './sessions/sessions.routes.js';
import type { SessionContext } from './sessions/sessions.service.js';
import { loadTokenSigner } from './sessions/sessions.tokens.js';
import { PageCache } from './http/http.page-cache.js';
import { workspaceRoutes } from './workspace/workspace.routes.js';

export interface AppConfig {
  /** An open, migrated database. The app never closes it: whoever opened it does. */
  db: Db;
  /** pino options (`level`, `stream`...), true for pino's defaults, or false for silence (tests; the default). */
  logger?: LoggingConfig;
  /** The clock; tests pass a fixed one. */
  now?: () => Date;
  /** Bytes of serialized workspace listings kept in memory (default 32 MiB; 0 turns the cache off). */
  listingCacheBytes?: number;
  /** API keys whose principals are kept in memory, validated by the database's change feed (default 10,000; 0: off). */
  credentialCacheEntries?: number;
  /** Session id and token lifetimes (default from SVC_EMBED_SESSION_TTL_MS / SVC_EMBED_TOKEN_TTL_MS). */
  embedLifetimes?: EmbedLifetimes;
  /** Per-minute limits of generate-session, exchange, login and the embed API (each default from SVC_RATE_LIMIT_*). */
  rateLimits?: Partial<RateLimits>;
  /** HS256 secret for embed tokens (default SVC_JWT_SECRET); without one, EdDSA with the key kept in the database. */
  jwtSecret?: string;
  /** The built embed runtime (default apps/embed/dist); tests point it elsewhere to check a missing build. */
  embedDistDir?: string;
  /** The data path of dashboards (default from SVC_DATA_ROW_CAP, SVC_DATA_TIMEOUT_MS, SVC_DEMO_WAREHOUSE). */
  data?: Partial<DataSettings>;
  /** The OpenAI-compatible endpoint of the AI surfaces (default from SVC_AI_BASE_URL, SVC_AI_MODEL, SVC_AI_API_KEY). */
  ai?: Partial<AiSettings>;
  /** How long a client may take to send a request, and a connection may stay silent (default from SVC_*_TIMEOUT_MS). */
  timeouts?: Partial<Timeouts>;
  /** The bearer token `GET /metrics` requires (default SVC_METRICS_TOKEN; unset: the endpoint is off). */
  metricsToken?: string;
  /**
   * Which proxies' `X-Forwarded-For` names the client (default SVC_TRUST_PROXY; unset: none, the socket's peer is
   * the client). Per-IP rate limits and logs use the client it gives.
   */
  trustProxy?: TrustProxy;
  /** Where rate-limit counters live (default SVC_REDIS_URL, SVC_REDIS_PREFIX; unset: in this process). */
  rateLimitStore?: RateLimitStore;
}

/** Fastify's `trustProxy`: none (false), every proxy (true), a number of hops, or proxy addresses and CIDRs. */
export type TrustProxy = boolean | number | string;

/** Fastify takes a hop count at run time, but its types do not: the same rule (Fastify's own) as a function. */
function fastifyTrustProxy(trust: TrustProxy): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

/**
 * SVC_TRUST_PROXY: unset or `false`, `true`, a whole number of hops (`1`: the nearest proxy), or a comma-separated
 * list of proxy addresses and CIDRs (`10.0.0.0/8,127.0.0.1`).
 */
export function trustProxyFromEnv(env: NodeJS.ProcessEnv = process.env): TrustProxy {
  const raw = env.SVC_TRUST_PROXY?.trim();
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const addresses = raw.split(',').map((part) => part.trim());
  const bad = addresses.find((part) => !/^[0-9A-Fa-f.:]+(\/\d{1,3})?$/.test(part) || isIP(part.split('/')[0]!) === 0);
  if (bad !== undefined) throw new Error(`SVC_TRUST_PROXY must be true, false, a number of hops or a comma-separated list of addresses and CIDRs; "${bad}" is none of these`);
  return addresses.join(',');
}

/** Limits on slow clients (docs/operations.md "Limits"). */
export interface Timeouts {
  /** The whole request, headers and body, must arrive within this (default 30,000 ms); else 408 and the socket is closed. */
  requestMs: number;
  /** A connection with no traffic either way for this long is closed (default 120,000 ms: above any data query's timeout). */
  idleMs: number;
  /** A request not answered within this is answered 503 and its work told to stop (default 60,000 ms). */
  handlerMs: number;
}

/** Timeouts from SVC_REQUEST_TIMEOUT_MS and SVC_IDLE_TIMEOUT_MS. */
export function timeoutsFromEnv(env: NodeJS.ProcessEnv = process.env): Timeouts {
  return {
    requestMs: positiveFromEnv('SVC_REQUEST_TIMEOUT_MS', 30_000, env),
    idleMs: positiveFromEnv('SVC_IDLE_TIMEOUT_MS', 120_000, env),
    handlerMs: positiveFromEnv('SVC_HANDLER_TIMEOUT_MS', 60_000, env),
  };
}

export interface DataSettings {
  /** Most rows a widget's result carries (default 10,000). */
  rowCap: number;
  /** Longest a data source statement may run, in ms (default 30,000). */
  timeoutMs: number;
  /** The bundled demo warehouse's SQLite file, written at first use (default ./data/demo-warehouse.db). */
  demoWarehousePath: string;
}

/** The data path's settings from the environment. */
export function dataSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): DataSettings {
  return {
    rowCap: positiveFromEnv('SVC_DATA_ROW_CAP', 10_000, env),
    timeoutMs: positiveFromEnv('SVC_DATA_TIMEOUT_MS', 30_000, env),
    demoWarehousePath: resolve(env.SVC_DEMO_WAREHOUSE ?? 'data/demo-warehouse.db'),
  };
}

/** The listing cache size from `SVC_LISTING_CACHE_MB` (0 turns it off), else 32 MiB. */
export function listingCacheBytesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const mb = env.SVC_LISTING_CACHE_MB === undefined ? 32 : Number(env.SVC_LISTING_CACHE_MB);
  if (!Number.isFinite(mb) || mb < 0) throw new Error(`SVC_LISTING_CACHE_MB must be a number of MiB >= 0, got ${env.SVC_LISTING_CACHE_MB}`);
  return Math.round(mb * 1024 * 1024);
}

/**
 * Assembles svc's HTTP service without listening: tests call `app.inject`, the CLI calls `app.listen`.
 *
 * @example
 * const db = openDatabase('sqlite:./data/svc.db');
 * await migrateToLatest(db);
 * const app = await buildApp({ db });
 * const res = await app.inject({ url: '/healthz' });
 */
export async function buildApp(config: AppConfig): Promise<FastifyInstance> {
  const logging = loggingFor(config.logger ?? false);
  const timeouts: Timeouts = { ...timeoutsFromEnv(), ...config.timeouts };
  const app = Fastify({
    logger: logging.fastify,
    // A slow client cannot hold a connection: its request must arrive within requestMs (headers included; Node
    // checks at most every second), and a silent connection is closed after idleMs.
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.idleMs,
    handlerTimeout: timeouts.handlerMs,
    http: { headersTimeout: timeouts.requestMs, connectionsCheckingInterval: Math.min(1000, timeouts.requestMs) },
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : randomUUID();
    },
    trustProxy: fastifyTrustProxy(config.trustProxy ?? trustProxyFromEnv()),
    bodyLimit: 1024 * 1024,
    routerOptions: { maxParamLength: 200 },
    frameworkErrors: answerFrameworkError,
    // A request arriving while svc drains gets svc's 503 error body (http.drain.ts), not Fastify's.
    return503OnClosing: false,
    clientErrorHandler: answerClientError,
    // A body field the schema does not know is refused (400 naming it), not silently dropped: a misspelt
    // embedTenantName must not mint a session in the default tenant. Query strings keep ignoring unknown names.
    ajv: { customOptions: { removeAdditional: false } },
    schemaController: { compilersFactory: { buildValidator: buildStrictBodyValidator } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const ctx: ServiceContext = { db: config.db.kysely, dialect: config.db.dialect, now: config.now ?? (() => new Date()) };

  registerErrorHandling(app, logging.failures);
  registerJsonBodyParser(app);
  registerDrain(app);
  registerSecurityHeaders(app);
  // Without its hooks: only the console cookie is read (consoleCookieOf) or set, and other requests skip both passes.
  await app.register(cookie, { hook: false });
  const rateLimits: RateLimits = { ...rateLimitsFromEnv(), ...config.rateLimits };
  const rateLimitStore = config.rateLimitStore ?? { redisUrl: process.env.SVC_REDIS_URL, redisPrefix: process.env.SVC_REDIS_PREFIX };
  await registerRateLimiting(app, rateLimits, rateLimitStore);

  const signer = await loadTokenSigner(ctx.db, config.jwtSecret ?? process.env.SVC_JWT_SECRET, ctx.now);
  const sessions: SessionContext = { ...ctx, signer, lifetimes: config.embedLifetimes ?? embedLifetimesFromEnv(), changes: config.db.changes };
  registerAuthentication(app, ctx, signer, config.db.changes, config.credentialCacheEntries ?? 10_000);
  // One byte budget for every serialized page kept in memory: workspace listings and comment thread lists.
  const pages = new PageCache(config.listingCacheBytes ?? listingCacheBytesFromEnv());
  await registerOpenApi(app);
  registerMetrics(app, config.db, config.metricsToken ?? process.env.SVC_METRICS_TOKEN);
  await app.register(healthRoutes(config.db));
  await app.register(accountRoutes(ctx, { max: rateLimits.login, windowMs: rateLimits.windowMs }));
  await app.register(sessionRoutes(sessions, rateLimits));
  await app.register(dashboardRoutes(ctx));
  await app.register(commentRoutes(ctx, pages));
  await app.register(workspaceRoutes(ctx, pages));
  await app.register(embedRoutes(ctx, config.embedDistDir));
  const data = { ...dataSettingsFromEnv(), ...config.data };
  const warehouses = new WarehouseRegistry({ timeoutMs: data.timeoutMs, demoPath: () => ensureDemoWarehouseSqlite(data.demoWarehousePath) });
  app.addHook('onClose', () => warehouses.close());
  await app.register(dataRoutes({ ...ctx, warehouses, rowCap: data.rowCap, timeoutMs: data.timeoutMs }, { ...aiSettingsFromEnv(), ...config.ai }));
  await app.ready();
  return app;
}
