import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config, TrustProxy } from './core/core.config.js';
import type { Db } from './db/db.database.js';
import { setPreparedStatements } from './db/db.prepared.js';
import { registerAuthentication } from './http/http.auth.js';
import type { ServiceContext } from './db/db.context.js';
import { answerClientError, answerFrameworkError, registerErrorHandling } from './http/http.errors.js';
import { registerInFlight } from './http/http.in-flight.js';
import { registerSecurityHeaders } from './http/http.security-headers.js';
import { healthRoutes } from './http/http.health.js';
import { registerRoot } from './http/http.root.js';
import { loggingFor } from './http/http.logging.js';
import { buildStrictBodyValidator, registerJsonBodyParser } from './http/http.validation.js';
import type { LoggingConfig } from './http/http.logging.js';
import { registerOpenApi } from './http/http.openapi.js';
import cookie from '@fastify/cookie';
import { AccountCredentials } from './accounts/accounts.credentials.js';
import { accountRoutes } from './accounts/accounts.routes.js';
import { accountAdminRoutes } from './accounts/accounts.admin.routes.js';
import { groupRoutes } from './workspace/workspace.groups.routes.js';
import { registerMetrics } from './http/http.metrics.js';
import { registerRateLimiting } from './http/http.rate-limit.js';
import { commentRoutes } from './comments/comments.routes.js';
import { CommentStreamHub } from './comments/comments.stream.js';
import type { CommentStreamSettings } from './comments/comments.stream.js';
import { dashboardRoutes } from './dashboards/dashboards.routes.js';
import { deploymentRoutes } from './deployments/deployments.routes.js';
import { dashboardAuthoringRoutes } from './dashboards/dashboards.authoring.routes.js';
import { draftChecks } from './data/data.views.js';
import { auditRoutes } from './audit/audit.routes.js';
import { ensureDemoWarehouseSqlite } from './data/warehouse/warehouse.demo.js';
import { cubeRoutes } from './cube/cube.routes.js';
import { dataRoutes } from './data/data.routes.js';
// Issue 35 saved charts and views.
import { exploreRoutes } from './explore/explore.routes.js';
import { WarehouseRegistry } from './data/warehouse/warehouse.registry.js';
import { ResultCache } from './data/cache/cache.results.js';
import { MetadataReads } from './data/data.metadata.js';
import { RollupStore } from './data/preagg/preagg.store.js';
import { RollupScheduler, ROLLUP_BUILD_TIMEOUT_MS } from './data/preagg/preagg.scheduler.js';
import { preAggregationRoutes } from './data/preagg/preagg.routes.js';
import { consoleRoutes } from './console/console.routes.js';
import { embedRoutes } from './embed/embed.routes.js';
import { sdkRoutes } from './embed/embed.sdk.js';
import { sessionRoutes } from './sessions/sessions.routes.js';
import { embedTenantRoutes } from './sessions/sessions.tenants.routes.js';
import type { SessionContext } from './sessions/sessions.service.js';
import { EmbedTokenCredentials } from './sessions/sessions.credentials.js';
import { loadTokenSigner } from './sessions/sessions.tokens.js';
import { PageCache } from './http/http.page-cache.js';
import { workspaceRoutes } from './workspace/workspace.routes.js';
import { itemGrantRoutes } from './workspace/workspace.grants.routes.js';
import { workspaceItemRoutes } from './workspace/workspace.items.routes.js';
import { selectReportSnapshots } from './dashboards/dashboards.store.js';
import { resolveWithDns } from './webhooks/webhooks.addresses.js';
import type { ResolveHost } from './webhooks/webhooks.addresses.js';
import { WebhookDispatcher } from './webhooks/webhooks.dispatcher.js';
import { Sealer } from './core/core.sealed.js';
import { webhookRoutes } from './webhooks/webhooks.routes.js';
import { subscribeWebhookOutbox } from './webhooks/webhooks.events.js';
import type { WebhookSourceEvents } from './webhooks/webhooks.events.js';
import { EventBus } from './core/core.events.js';

/**
 * What buildApp takes besides the Config: what is not a setting of the environment. The database, the log, the
 * clock, the sizes of two in-memory caches, the built files' folders, and stand-ins tests use for DNS and chance.
 */
export interface AppOptions {
  /** An open, migrated database. The app never closes it: whoever opened it does. */
  db: Db;
  /** pino options (`level`, `stream`...), true for pino's defaults, or false for silence (tests; the default). */
  logger?: LoggingConfig;
  /** The clock; tests pass a fixed one. */
  now?: () => Date;
  /** API keys whose principals are kept in memory, validated by the database's change feed (default 10,000; 0: off). */
  credentialCacheEntries?: number;
  /** Dashboards, snapshots, models and time zones of widget requests kept in memory, validated the same way (default 10,000; 0: off). */
  metadataCacheEntries?: number;
  /** The built embed runtime (default apps/embed/dist); tests point it elsewhere to check a missing build. */
  embedDistDir?: string;
  /** The built console (default apps/console/dist); tests point it elsewhere to check a missing build. */
  consoleDistDir?: string;
  /** The SDK's files for pages without a bundler (default packages/embed-sdk/dist/browser); tests point it elsewhere. */
  sdkDistDir?: string;
  /** DNS of webhook addresses (default node:dns); tests stand in for it. */
  resolveHost?: ResolveHost;
  /** A number in [0, 1) for the jitter of webhook retries (default Math.random); tests fix it. */
  random?: () => number;
  /**
   * Also called when this app committed webhook deliveries, besides waking its own dispatcher (which delivers only
   * under `webhooks.deliver`): a test's dispatcher of its own.
   */
  wakeWebhookDelivery?: () => void;
}

/** Fastify takes a hop count at run time, but its types do not: the same rule (Fastify's own) as a function. */
function fastifyTrustProxy(trust: TrustProxy): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

/** The data path's settings: the row cap, the statement timeout, the demo warehouse's file and the result cache's bytes. */
export type DataSettings = Config['data'];

/**
 * Assembles svc's HTTP service without listening: tests call `app.inject`, the CLI calls `app.listen`. Every
 * setting comes from `config`, loaded once by its caller (`svc serve`: `loadConfig()`; tests: `testConfig()`).
 * The background work runs as the Config says: webhook delivery (`webhooks.deliver`) and pre-aggregation builds
 * (`data.preAggregationRefresh`).
 *
 * @example
 * const db = openDatabase('sqlite:./data/svc.db');
 * await migrateToLatest(db);
 * const app = await buildApp(loadConfig(), { db });
 * const res = await app.inject({ url: '/healthz' });
 */
export async function buildApp(config: Config, options: AppOptions): Promise<FastifyInstance> {
  const logging = loggingFor(options.logger ?? false);
  const { timeouts } = config;
  const app = Fastify({
    logger: logging.fastify,
    // A slow client cannot hold a connection: its request must arrive within requestMs (headers included; Node
    // checks at most every second), and a silent connection is closed after idleMs.
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.idleMs,
    http: { headersTimeout: timeouts.requestMs, connectionsCheckingInterval: Math.min(1000, timeouts.requestMs) },
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : randomUUID();
    },
    trustProxy: fastifyTrustProxy(config.trustProxy),
    bodyLimit: 1024 * 1024,
    routerOptions: { maxParamLength: 200 },
    frameworkErrors: answerFrameworkError,
    // A request arriving while svc drains gets svc's 503 error body (http.in-flight.ts), not Fastify's.
    return503OnClosing: false,
    clientErrorHandler: answerClientError,
    // A body field the schema does not know is refused (400 naming it), not silently dropped: a misspelt
    // embedTenantName must not mint a session in the default tenant. Query strings keep ignoring unknown names.
    ajv: { customOptions: { removeAdditional: false } },
    schemaController: { compilersFactory: { buildValidator: buildStrictBodyValidator } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const { db } = options;
  setPreparedStatements(db.kysely, config.preparedStatements);
  const ctx: ServiceContext = { db: db.kysely, dialect: db.dialect, now: options.now ?? (() => new Date()) };

  registerErrorHandling(app, logging.failures);
  registerJsonBodyParser(app);
  registerInFlight(app, timeouts.handlerMs);
  registerSecurityHeaders(app);
  // Without its hooks: only the console cookie is read (consoleCookieOf) or set, and other requests skip both passes.
  await app.register(cookie, { hook: false });
  const { rateLimits } = config;
  await registerRateLimiting(app, rateLimits, config.rateLimitStore);

  // The domain events of comments and sessions; the webhook outbox subscribes to them (webhooks.events.ts) and, once a
  // change that wrote deliveries commits, wakes this process's dispatcher.
  const events = new EventBus<WebhookSourceEvents>();
  const { webhooks } = config;
  const resolveHost = options.resolveHost ?? resolveWithDns;
  const sealer = new Sealer(config.encryptionKeys);
  const dispatcher = webhooks.deliver
    ? new WebhookDispatcher({
      db: ctx.db, dialect: ctx.dialect, settings: webhooks, now: ctx.now, resolveHost, sealer, notifications: db.notifications, log: logging.failures ?? app.log,
      ...(options.random === undefined ? {} : { random: options.random }),
    })
    : undefined;
  app.addHook('onClose', async () => {
    await dispatcher?.stop();
  });
  const wakeDelivery = () => {
    dispatcher?.wake();
    options.wakeWebhookDelivery?.();
  };
  subscribeWebhookOutbox(events, wakeDelivery);

  const signer = await loadTokenSigner(ctx.db, config.jwtSecret, ctx.now);
  const sessions: SessionContext = { ...ctx, signer, lifetimes: config.embedLifetimes, changes: db.changes, events };
  const credentialCacheEntries = options.credentialCacheEntries ?? 10_000;
  const accountCredentials = new AccountCredentials(ctx, db.changes, credentialCacheEntries);
  const embedTokens = new EmbedTokenCredentials(ctx, signer, db.changes, credentialCacheEntries);
  registerAuthentication(app, {
    isApiKey: (credential) => accountCredentials.isApiKey(credential),
    resolveApiKey: (key) => accountCredentials.resolveApiKey(key),
    resolveConsoleSession: (cookie) => accountCredentials.resolveConsoleSession(cookie),
    resolveEmbedToken: (token) => embedTokens.resolve(token),
  });
  // One byte budget for every serialized page kept in memory: workspace listings and comment thread lists.
  const pages = new PageCache(config.listingCacheBytes);
  await registerOpenApi(app);
  registerRoot(app);
  const { data } = config;
  const results = new ResultCache(data.resultCacheBytes);
  registerMetrics(app, db, config.metricsToken, () => ({
    ...results.counters, bytes: results.bytes, entries: results.size,
  }));
  await app.register(healthRoutes(db));
  await app.register(accountRoutes(ctx, { max: rateLimits.login, windowMs: rateLimits.windowMs }));
  await app.register(sessionRoutes(sessions, rateLimits));
  await app.register(embedTenantRoutes(sessions));
  await app.register(accountAdminRoutes({ ...ctx, changes: db.changes }));
  await app.register(groupRoutes(ctx));
  await app.register(dashboardRoutes(ctx));
  const streamSettings: CommentStreamSettings = config.commentStreams;
  const streams = new CommentStreamHub({
    ctx,
    notifications: db.notifications,
    changes: db.changes,
    // A heartbeat keeps an idle stream's connection from the idle timeout.
    settings: { ...streamSettings, heartbeatMs: Math.max(1, Math.min(streamSettings.heartbeatMs, Math.floor(timeouts.idleMs / 2))) },
    onError: (error, what) => (logging.failures ?? app.log).error({ err: error }, what),
  });
  // Before the server stops accepting: open streams end now, or the drain would wait for them.
  app.addHook('preClose', (done) => {
    streams.close();
    done();
  });
  await app.register(commentRoutes({ ...ctx, events }, pages, streams));
  await app.register(workspaceRoutes({ ...ctx, selectReportSnapshots }, pages));
  await app.register(webhookRoutes({ ...ctx, allowPrivate: webhooks.allowPrivate, resolveHost, sealer, wakeDelivery }));
  await app.register(deploymentRoutes({ ...ctx, sealer }));
  await app.register(auditRoutes(ctx));
  await app.register(dashboardAuthoringRoutes({ ...ctx, checks: draftChecks(ctx) }));
  // Issue 33, editor grants: an item's grants, read and replaced by admins.
  await app.register(itemGrantRoutes(ctx));
  // Issue 34, the console: folders made, items renamed and moved.
  await app.register(workspaceItemRoutes({ ...ctx, selectReportSnapshots }));
  await app.register(embedRoutes(ctx, { distDir: options.embedDistDir, sourceMaps: config.embedSourceMaps }));
  await app.register(sdkRoutes({ distDir: options.sdkDistDir }));
  await app.register(consoleRoutes({ distDir: options.consoleDistDir }));
  const warehouses = new WarehouseRegistry({ timeoutMs: data.timeoutMs, demoPath: () => ensureDemoWarehouseSqlite(data.demoWarehousePath) });
  const rollups = new RollupStore(data.preAggregationDir);
  // `svc serve` builds due pre-aggregations in the background (SVC_PREAGG_REFRESH); other apps only read them.
  const scheduler = data.preAggregationRefresh
    ? new RollupScheduler({ db, warehouses, store: rollups, timeoutMs: ROLLUP_BUILD_TIMEOUT_MS, now: ctx.now, sealer }, {
      onReport: (reports) => {
        for (const report of reports) {
          if (report.status === 'built') app.log.info({ rollup: report.rollup, deploymentId: report.deploymentId, timezone: report.timezone, reason: report.reason, rows: report.manifest?.rows, ms: report.manifest?.buildMs }, 'pre-aggregation built');
          if (report.status === 'failed') app.log.warn({ rollup: report.rollup, deploymentId: report.deploymentId, timezone: report.timezone, error: report.error }, 'pre-aggregation build failed');
        }
      },
      onError: (error) => app.log.error({ err: error }, 'pre-aggregation check failed'),
    })
    : undefined;
  app.addHook('onClose', async () => {
    await scheduler?.stop();
    rollups.close();
    await warehouses.close();
  });
  // Issue 34, the console's model page: each pre-aggregation's build status (admins).
  await app.register(preAggregationRoutes({ db, warehouses, store: rollups, timeoutMs: ROLLUP_BUILD_TIMEOUT_MS, now: ctx.now, sealer, scheduler }));
  const dataContext = { ...ctx, warehouses, sealer, rowCap: data.rowCap, timeoutMs: data.timeoutMs, cache: results, rollups, reads: new MetadataReads(db.changes, options.metadataCacheEntries ?? 10_000) };
  await app.register(dataRoutes(dataContext, config.ai));
  // Issue 35 saved charts and views.
  await app.register(exploreRoutes(dataContext));
  await app.register(cubeRoutes(dataContext), { prefix: '/cubejs-api' });
  await app.ready();
  scheduler?.start();
  dispatcher?.start();
  return app;
}
