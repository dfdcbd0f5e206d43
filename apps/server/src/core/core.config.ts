import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { Type } from 'typebox';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { MIN_KEY_BYTES } from './core.sealed.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A whole number at least `minimum`. */
const whole = (minimum: number, fallback: number | undefined, description: string) =>
  Type.Integer({ minimum, ...(fallback === undefined ? {} : { default: fallback }), description });
/** A string that may be unset. */
const optional = (description: string) => Type.Optional(Type.String({ minLength: 1, description }));

/**
 * Every environment variable svc reads, with its type, default and the line that documents it. `svc serve --help`
 * and the table of docs/operations.md are written from this schema (a test compares the table with it), so none
 * can drift from what the code reads. `docs` links to the section that says more.
 */
export const SETTINGS = Type.Object({
  SVC_DATABASE_URL: Type.String({ default: 'sqlite:./data/svc.db', description: '`sqlite:PATH` or `postgres://...`: the database' }),
  SVC_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'the port svc listens on (`0`: any free one)' }),
  SVC_HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'the address svc listens on (`0.0.0.0`: every interface)' }),
  SVC_LOG_LEVEL: Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)), { default: 'info', description: 'pino level; at `info` and below every request is logged with its request id; at `warn` and above only failures are (each with its request id), and requests pay nothing for logging' }),
  SVC_SQLITE_CACHE_MB: whole(1, 8, "SQLite's page cache in MiB (one connection). Reads go through a memory map of the database file; the cache holds written pages and those still in the WAL. Raise it for very large imports, which spill to the WAL past it"),
  SVC_PREPARED_STATEMENTS: Type.Boolean({ default: true, description: "compile svc's hot statements once per database and run them with new values; `false` builds every query afresh (slower: only to measure the difference, bench/README.md)" }),
  SVC_LISTING_CACHE_MB: Type.Number({ minimum: 0, default: 32, description: 'memory for cached pages, in MiB: workspace listings and comment thread lists; `0` turns the cache off' }),
  SVC_ENCRYPTION_KEY: optional('seals secrets svc must use again (webhook signing secrets, data sources) in the database with AES-256-GCM: at least 32 bytes, e.g. `openssl rand -base64 32`; a comma-separated list changes keys (the first seals, each opens). Unset: they are stored as they are; set but empty: svc does not start'),
  SVC_JWT_SECRET: optional('HS256 secret (at least 32 bytes) for embed tokens; unset: EdDSA with a key generated at first start and kept in the database (`server_keys`); every process sharing the database must use the same setting'),
  SVC_EMBED_SESSION_TTL_MS: whole(1000, 300_000, 'how long a minted session id can be exchanged (ms; 5 min)'),
  SVC_EMBED_TOKEN_TTL_MS: whole(1000, 86_400_000, 'nominal embed token lifetime (ms; 24 h); the effective end is 1/24 earlier, the expiring warning 1/48 before that'),
  SVC_EMBED_SOURCE_MAPS: Type.Boolean({ default: false, description: "serve the embed runtime's source maps (`.js.map`, the full source) under `/embed/assets/`; off: they answer 404" }),
  SVC_COMMENT_STREAMS_PER_SESSION: whole(1, 5, 'open comment streams (`GET .../comments/stream`) one embed session may hold at once in one process; one more is a 429'),
  SVC_COMMENT_STREAM_HEARTBEAT_MS: whole(100, 15_000, 'how often an open comment stream sends a heartbeat comment line when idle (ms); kept below half of `SVC_IDLE_TIMEOUT_MS`'),
  SVC_COMMENT_STREAM_REPLAY_MAX: whole(1, 1000, 'most missed events a reconnecting comment stream replays after its `Last-Event-ID`; more sends `stream.reset` (reload the list)'),
  SVC_COMMENT_EVENT_RETENTION_MS: whole(1000, 86_400_000, 'how long comment events are kept for streams to resume from (ms; 24 h); a stream that resumes from before gets `stream.reset`'),
  SVC_WEBHOOKS_ALLOW_PRIVATE: Type.Boolean({ default: false, description: 'let every account register webhook URLs on private, loopback and link-local addresses (else only accounts whose `allowPrivateWebhookUrls` setting is on); for development and tests' }),
  SVC_WEBHOOK_DELIVERY: Type.Boolean({ default: true, description: '`svc serve` delivers due webhooks in the background, and removes finished ones from the delivery log after `SVC_WEBHOOK_RETENTION_MS`; `false` leaves both to other processes' }),
  SVC_WEBHOOK_TIMEOUT_MS: whole(100, 10_000, 'how long one webhook delivery attempt may take (ms), connection included; longer is a failed attempt'),
  SVC_WEBHOOK_POLL_MS: whole(10, 1000, 'how often each process looks for due webhook deliveries (ms), besides looking at once after its own writes, when a retry it scheduled comes due, and on PostgreSQL after any process commits new deliveries (NOTIFY); the poll finds the rest, such as retries another process scheduled'),
  SVC_WEBHOOK_CONCURRENCY: whole(1, 8, 'webhook deliveries one process attempts at once'),
  SVC_WEBHOOK_RETRY_SCHEDULE: Type.String({ minLength: 1, default: '5s,5m,30m,2h,5h,10h,10h', description: 'the waits before each retry of a failed webhook delivery (`ms`, `s`, `m`, `h`), each drawn at random between 0 and the step (full jitter); after the last, the delivery has failed' }),
  SVC_WEBHOOK_RETENTION_MS: Type.Integer({ minimum: 1000, maximum: 315_360_000_000, default: 2_592_000_000, description: 'how long a webhook delivery stays in the delivery log after it finished, delivered or failed for good (ms; 30 days; at most 10 years); then it is removed with its attempts. A pending delivery is never removed' }),
  SVC_DATA_ROW_CAP: whole(1, 10_000, "most rows a widget's result carries; `truncated` says when more matched"),
  SVC_DATA_TIMEOUT_MS: whole(1, 30_000, "longest a data source statement runs (ms): a SQLite statement's process is killed, PostgreSQL's `statement_timeout` stops it, a DuckDB statement is interrupted; 504 `query_timeout`"),
  // Issue 36, Cube's "Continue wait" (docs/cube.md).
  SVC_CUBE_CONTINUE_WAIT_MS: whole(1, 5000, 'how long a Cube API `load` waits for its answer before answering `{"error": "Continue wait"}` (HTTP 200, as Cube) while the query goes on; the same caller asking the same query again picks it up (Cube\'s `continueWaitTimeout`)'),
  SVC_CUBE_ORPHAN_TIMEOUT_MS: whole(1, 120_000, 'how long a Cube API query that answered "Continue wait" waits for its caller to ask again (ms); then it is dropped (the statement in flight runs until it ends or SVC_DATA_TIMEOUT_MS stops it)'),
  SVC_RESULT_CACHE_MB: Type.Number({ minimum: 0, default: 64, description: "memory for data answers shared by every viewer of a process (the result cache), in MiB; an entry lasts until its data source's `refreshKey` changes; `0` turns the cache off" }),
  SVC_PREAGG_DIR: Type.String({ minLength: 1, default: 'data/preaggregations', description: 'where built pre-aggregations are kept (Parquet files): a directory every svc process can read' }),
  SVC_PREAGG_REFRESH: Type.Boolean({ default: true, description: '`svc serve` builds due pre-aggregations in the background; `false` leaves building to `svc preagg build` (or another process)' }),
  SVC_DEMO_WAREHOUSE: Type.String({ minLength: 1, default: 'data/demo-warehouse.db', description: 'the bundled demo warehouse (SQLite), written once (`serve --demo` writes it at start), for deployments without a `dataSource`' }),
  SVC_SQL_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, description: "the port of svc's SQL API (the Postgres wire protocol, for psql and BI tools; `0`: any free one) on `SVC_HOST`; unset: off" })),
  SVC_SQL_TLS_CERT: optional('a PEM certificate file for the SQL API; with `SVC_SQL_TLS_KEY`, clients that ask for TLS (`sslmode=require`) get it. Without both, the password (an API key or embed token) travels in the clear: keep the port local'),
  SVC_SQL_TLS_KEY: optional("the PEM private key file of `SVC_SQL_TLS_CERT`"),
  SVC_SQL_MAX_CONNECTIONS_PER_ACCOUNT: whole(1, 20, 'SQL API connections one account may hold at once in one process; one more is refused (SQLSTATE 53300)'),
  SVC_SQL_STATEMENT_TIMEOUT_MS: whole(1, 30_000, 'longest one SQL API statement may take (ms); longer is SQLSTATE 57014 and the connection stays usable'),
  SVC_SQL_ROW_CAP: whole(1, 50_000, "most rows one SQL API SELECT answers (a larger LIMIT is cut to it; Cube's own cap is 50,000)"),
  SVC_REQUEST_TIMEOUT_MS: whole(1, 30_000, "a request's headers and body must arrive within this (ms), else 408 and the connection is closed"),
  SVC_IDLE_TIMEOUT_MS: whole(1, 120_000, 'a connection silent both ways for this long (ms) is closed'),
  SVC_HANDLER_TIMEOUT_MS: whole(1, 60_000, 'a request not answered within this (ms) gets 503 `service_unavailable`'),
  SVC_SHUTDOWN_TIMEOUT_MS: whole(1, 10_000, 'how long SIGTERM waits for requests in flight (ms) before the process exits anyway (exit code 1)'),
  SVC_RATE_LIMIT_GENERATE_SESSION: whole(1, 1200, 'generate-session calls a minute per credential'),
  SVC_RATE_LIMIT_EXCHANGE: whole(1, 300, 'session exchanges a minute per client IP'),
  SVC_RATE_LIMIT_LOGIN: whole(1, 10, 'console logins a minute per client IP and email'),
  SVC_RATE_LIMIT_EMBED_SESSION: whole(1, 1200, 'embed API calls a minute per embed session'),
  SVC_RATE_LIMIT_EMBED_IP: whole(1, 6000, 'embed API calls a minute per client IP'),
  // Issue 35 explore: the limits that protect the warehouse from viewers' own queries (docs/explore.md "Limits").
  SVC_EXPLORE_MAX_ROWS: whole(1, 5000, 'most rows an explore query (`POST /api/v1/embed/explore/query`) answers; `truncated` says when more matched'),
  SVC_EXPLORE_TIMEOUT_MS: whole(1, 15_000, 'longest an explore query\'s statement runs on the data source (ms), stopped as `SVC_DATA_TIMEOUT_MS` stops a widget\'s; 504 `query_timeout`'),
  SVC_RATE_LIMIT_EXPLORE: whole(1, 60, 'explore queries a minute per embed session (on top of the embed API\'s own limits); one more is a 429 with `Retry-After`'),
  SVC_EXPLORE_TENANT_CONCURRENCY: whole(1, 2, 'explore queries of one embed tenant running at once in one process; more wait in a queue of 8 per running slot, and past it are a 429 with `Retry-After`'),
  SVC_REDIS_URL: optional('Redis for the rate-limit counters, shared by every process; unset: each process counts alone'),
  SVC_REDIS_PREFIX: Type.String({ minLength: 1, default: 'svc:rate-limit:', description: "prefix of svc's keys in that Redis" }),
  SVC_TRUST_PROXY: optional('proxies whose `X-Forwarded-For` names the client: a comma-separated list of addresses and CIDRs, a number of hops, `true` (any peer) or `false`; unset: none'),
  SVC_METRICS_TOKEN: optional('`GET /metrics` needs `Authorization: Bearer <token>`; unset: the endpoint is off (403)'),
  SVC_AI_BASE_URL: optional('an OpenAI-compatible endpoint (e.g. `https://api.openai.com/v1`) for the chat surface and the AI widget; unset: those surfaces say they are not set up'),
  SVC_AI_MODEL: Type.String({ minLength: 1, default: 'gpt-4o-mini', description: 'the model asked at that endpoint' }),
  SVC_AI_API_KEY: optional('the API key sent to that endpoint'),
  SVC_API_KEY: optional('for `svc promote` only (`svc serve` does not read it): an API key of an admin of the account it promotes into. An environment variable, not a flag, because a command line shows in `ps`'),
});

export type SettingName = keyof Static<typeof SETTINGS>;
export type Settings = Static<typeof SETTINGS>;

/** The section of docs/operations.md that says more about a variable. */
export const SETTING_DOCS: Partial<Record<SettingName, string>> = {
  SVC_DATABASE_URL: '#databases', SVC_REQUEST_TIMEOUT_MS: '#limits', SVC_IDLE_TIMEOUT_MS: '#limits', SVC_HANDLER_TIMEOUT_MS: '#limits',
  SVC_SHUTDOWN_TIMEOUT_MS: '#shutdown', SVC_RATE_LIMIT_GENERATE_SESSION: '#rate-limits', SVC_RATE_LIMIT_EXCHANGE: '#rate-limits',
  SVC_RATE_LIMIT_LOGIN: '#rate-limits', SVC_RATE_LIMIT_EMBED_SESSION: '#rate-limits', SVC_RATE_LIMIT_EMBED_IP: '#rate-limits',
  SVC_REDIS_URL: '#rate-limits', SVC_TRUST_PROXY: '#rate-limits', SVC_METRICS_TOKEN: '#metrics',
  SVC_SQL_PORT: 'cube-sql.md', SVC_SQL_TLS_CERT: 'cube-sql.md#tls', SVC_SQL_TLS_KEY: 'cube-sql.md#tls', SVC_SQL_MAX_CONNECTIONS_PER_ACCOUNT: 'cube-sql.md#limits',
  SVC_SQL_STATEMENT_TIMEOUT_MS: 'cube-sql.md#limits', SVC_SQL_ROW_CAP: 'cube-sql.md#limits',
  SVC_COMMENT_STREAMS_PER_SESSION: 'comments.md#live-updates', SVC_COMMENT_STREAM_HEARTBEAT_MS: 'comments.md#live-updates',
  SVC_COMMENT_STREAM_REPLAY_MAX: 'comments.md#live-updates', SVC_COMMENT_EVENT_RETENTION_MS: 'comments.md#live-updates',
  SVC_WEBHOOKS_ALLOW_PRIVATE: 'webhooks.md#addresses', SVC_WEBHOOK_DELIVERY: 'webhooks.md#delivery', SVC_WEBHOOK_TIMEOUT_MS: 'webhooks.md#delivery',
  SVC_WEBHOOK_POLL_MS: 'webhooks.md#delivery', SVC_WEBHOOK_CONCURRENCY: 'webhooks.md#delivery', SVC_WEBHOOK_RETRY_SCHEDULE: 'webhooks.md#retries',
  SVC_WEBHOOK_RETENTION_MS: 'webhooks.md#retention',
  SVC_EXPLORE_MAX_ROWS: 'explore.md#limits', SVC_EXPLORE_TIMEOUT_MS: 'explore.md#limits', SVC_RATE_LIMIT_EXPLORE: 'explore.md#limits',
  SVC_EXPLORE_TENANT_CONCURRENCY: 'explore.md#limits', SVC_ENCRYPTION_KEY: '#secrets-at-rest', SVC_API_KEY: 'import.md#promoting-from-staging-to-production',
  // Issue 36.
  SVC_CUBE_CONTINUE_WAIT_MS: 'cube.md#continue-wait', SVC_CUBE_ORPHAN_TIMEOUT_MS: 'cube.md#continue-wait',
};

/** Fastify's `trustProxy`: none (false), every proxy (true), a number of hops, or proxy addresses and CIDRs. */
export type TrustProxy = boolean | number | string;

/** What svc runs with: every setting of the environment, parsed, in the shapes the code uses. */
export interface Config {
  settings: Settings;
  databaseUrl: string;
  port: number;
  host: string;
  logLevel: Settings['SVC_LOG_LEVEL'];
  sqliteCacheMiB: number;
  listingCacheBytes: number;
  jwtSecret: string | undefined;
  /** SVC_ENCRYPTION_KEY split at commas: the first seals, each opens (core.sealed.ts); none: nothing is sealed. */
  encryptionKeys: string[];
  embedLifetimes: { sessionTtlMs: number; tokenTtlMs: number };
  embedSourceMaps: boolean;
  preparedStatements: boolean;
  data: { rowCap: number; timeoutMs: number; demoWarehousePath: string; resultCacheBytes: number; preAggregationDir: string; preAggregationRefresh: boolean };
  /** Issue 36: Cube API's continue wait and orphan timeouts. */
  cube: { continueWaitMs: number; orphanTimeoutMs: number };
  timeouts: { requestMs: number; idleMs: number; handlerMs: number };
  shutdownTimeoutMs: number;
  rateLimits: { generateSession: number; exchange: number; login: number; embedPerSession: number; embedPerIp: number; explorePerSession: number; windowMs: number };
  /** Issue 35: explore queries' row cap, statement timeout and concurrency per embed tenant (docs/explore.md "Limits"). */
  explore: { maxRows: number; timeoutMs: number; tenantConcurrency: number };
  rateLimitStore: { redisUrl: string | undefined; redisPrefix: string };
  trustProxy: TrustProxy;
  metricsToken: string | undefined;
  ai: { baseUrl: string | undefined; model: string; apiKey: string | undefined; timeoutMs: number };
  commentStreams: { perSession: number; heartbeatMs: number; replayMax: number; retentionMs: number };
  webhooks: WebhookSettings;
  /** The SQL API (issue 36 part 3; cube/sql/): undefined unless SVC_SQL_PORT is set. */
  sql: SqlSettings | undefined;
}

/** The SQL API's settings (issue 36 part 3; docs/cube-sql.md). */
export interface SqlSettings {
  port: number;
  host: string;
  tlsCert: string | undefined;
  tlsKey: string | undefined;
  maxConnectionsPerAccount: number;
  statementTimeoutMs: number;
  rowCap: number;
}

/** Issue 23's webhooks: which addresses every account may use, and how `svc serve` delivers. */
export interface WebhookSettings {
  /** Every account may register private, loopback and link-local addresses. */
  allowPrivate: boolean;
  /** This process delivers due webhooks (`svc serve`). */
  deliver: boolean;
  timeoutMs: number;
  pollMs: number;
  concurrency: number;
  /** The waits before each retry (ms): at most this many retries, each waiting up to its step. */
  retryScheduleMs: number[];
  /** How long a finished delivery (delivered, or failed for good) is kept in the delivery log (ms). */
  retentionMs: number;
}

const DURATION = /^(0|[1-9][0-9]*)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/**
 * A retry schedule as SVC_WEBHOOK_RETRY_SCHEDULE writes it: comma-separated durations (`500ms`, `5s`, `5m`, `2h`),
 * 1 to 20 of them; undefined when it is not one.
 *
 * @example
 * parseRetrySchedule('5s,5m,2h'); // [5000, 300000, 7200000]
 */
export function parseRetrySchedule(text: string): number[] | undefined {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length === 0 || parts.length > 20) return undefined;
  const steps: number[] = [];
  for (const part of parts) {
    const match = DURATION.exec(part);
    if (match === null) return undefined;
    steps.push(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
  }
  return steps;
}

/** What a person reads about the expected form, from the schema (`a whole number >= 1`). */
function expected(schema: TSchema & Record<string, unknown>): string {
  if (schema.type === 'integer') {
    const range = [schema.minimum === undefined ? '' : `>= ${schema.minimum}`, schema.maximum === undefined ? '' : `<= ${schema.maximum}`].filter(Boolean).join(' and ');
    return `a whole number${range === '' ? '' : ` ${range}`}`;
  }
  if (schema.type === 'number') return `a number${schema.minimum === undefined ? '' : ` >= ${schema.minimum}`}`;
  if (schema.type === 'boolean') return '`true` or `false`';
  if (Array.isArray(schema.anyOf)) return `one of ${(schema.anyOf as Array<{ const: string }>).map((option) => option.const).join(', ')}`;
  return 'a non-empty string';
}

/**
 * The text of a variable as its type: strictly, where TypeBox's own conversion is lenient on purpose (it reads
 * `0x10` as 16 and an empty string as 0). An empty variable counts as unset.
 */
function convert(schema: TSchema & Record<string, unknown>, raw: string): unknown {
  if (schema.type === 'integer') return /^-?(0|[1-9][0-9]*)$/.test(raw) ? Number(raw) : raw;
  if (schema.type === 'number') return /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(raw) ? Number(raw) : raw;
  if (schema.type === 'boolean') return raw === 'true' || raw === '1' ? true : raw === 'false' || raw === '0' ? false : raw;
  return raw;
}

/** Optional settings are wrapped by TypeBox; their inner schema is what the value is checked against. */
function schemaOf(name: SettingName): TSchema & Record<string, unknown> {
  return SETTINGS.properties[name] as unknown as TSchema & Record<string, unknown>;
}

/**
 * One setting from the environment, parsed and checked; a bad value stops the start with an error naming the
 * variable, what it must be, and what it was.
 *
 * @example
 * const cacheMiB = readSetting('SVC_SQLITE_CACHE_MB', process.env); // 8 when unset
 */
export function readSetting<N extends SettingName>(name: N, env: NodeJS.ProcessEnv = process.env): Settings[N] {
  const schema = schemaOf(name);
  const raw = env[name];
  // A key set but empty is most likely a secret that failed to arrive (an unset CI variable, a bad template):
  // taking it as unset would store secrets in plaintext without a word, so it stops the start instead.
  if (name === 'SVC_ENCRYPTION_KEY' && raw !== undefined) checkEncryptionKeys(raw);
  if (raw === undefined || raw === '') return schema.default as Settings[N];
  const value = convert(schema, raw);
  if (!Value.Check(schema, value)) throw new Error(`${name} must be ${expected(schema)}, got ${JSON.stringify(raw)}`);
  if (name === 'SVC_TRUST_PROXY') checkTrustProxy(raw);
  if (name === 'SVC_WEBHOOK_RETRY_SCHEDULE' && parseRetrySchedule(raw) === undefined) {
    throw new Error(`SVC_WEBHOOK_RETRY_SCHEDULE must be 1 to 20 comma-separated durations such as 5s,5m,2h (units ms, s, m, h), got ${JSON.stringify(raw)}`);
  }
  return value as Settings[N];
}

/** Every setting from the environment (see readSetting). */
export function readSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const names = Object.keys(SETTINGS.properties) as SettingName[];
  return Object.fromEntries(names.map((name) => [name, readSetting(name, env)])) as Settings;
}

/** SVC_ENCRYPTION_KEY's keys, in order (none when unset). */
function encryptionKeysOf(raw: string | undefined): string[] {
  return raw === undefined || raw === '' ? [] : raw.split(',').map((key) => key.trim());
}

function checkEncryptionKeys(raw: string): void {
  if (raw.split(',').every((key) => key.trim() === '')) {
    throw new Error(`SVC_ENCRYPTION_KEY is set but holds no key (${JSON.stringify(raw)}); give keys of at least ${MIN_KEY_BYTES} bytes (e.g. openssl rand -base64 32), or unset it to store secrets as they are`);
  }
  const short = encryptionKeysOf(raw).findIndex((key) => Buffer.byteLength(key, 'utf8') < MIN_KEY_BYTES);
  // Never the key itself in the message: it is a secret.
  if (short !== -1) throw new Error(`SVC_ENCRYPTION_KEY must be keys of at least ${MIN_KEY_BYTES} bytes each (e.g. openssl rand -base64 32), separated by commas; key ${short + 1} is shorter`);
}

function checkTrustProxy(raw: string): void {
  const value = raw.trim();
  if (value === 'true' || value === 'false' || /^\d+$/.test(value)) return;
  const bad = value.split(',').map((part) => part.trim()).find((part) => !/^[0-9A-Fa-f.:]+(\/\d{1,3})?$/.test(part) || isIP(part.split('/')[0]!) === 0);
  if (bad !== undefined) throw new Error(`SVC_TRUST_PROXY must be true, false, a number of hops or a comma-separated list of addresses and CIDRs; "${bad}" is none of these`);
}

/** SVC_TRUST_PROXY as Fastify takes it: false, true, a number of hops, or `addresses,CIDRs`. */
function trustProxyOf(raw: string | undefined): TrustProxy {
  const value = raw?.trim();
  if (value === undefined || value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((part) => part.trim()).join(',');
}

/**
 * svc's whole configuration from the environment. `svc serve` reads it once and builds its app from it; tests
 * build theirs with `testConfig` (apps/server/test/config.ts).
 *
 * @example
 * const config = loadConfig(process.env);
 * const app = await buildApp(config, { db, logger: { level: config.logLevel } });
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const s = readSettings(env);
  return {
    settings: s,
    databaseUrl: s.SVC_DATABASE_URL,
    port: s.SVC_PORT,
    host: s.SVC_HOST,
    logLevel: s.SVC_LOG_LEVEL,
    sqliteCacheMiB: s.SVC_SQLITE_CACHE_MB,
    listingCacheBytes: Math.round(s.SVC_LISTING_CACHE_MB * 1024 * 1024),
    jwtSecret: s.SVC_JWT_SECRET,
    encryptionKeys: encryptionKeysOf(s.SVC_ENCRYPTION_KEY),
    embedLifetimes: { sessionTtlMs: s.SVC_EMBED_SESSION_TTL_MS, tokenTtlMs: s.SVC_EMBED_TOKEN_TTL_MS },
    embedSourceMaps: s.SVC_EMBED_SOURCE_MAPS,
    preparedStatements: s.SVC_PREPARED_STATEMENTS,
    data: { rowCap: s.SVC_DATA_ROW_CAP, timeoutMs: s.SVC_DATA_TIMEOUT_MS, demoWarehousePath: resolve(s.SVC_DEMO_WAREHOUSE), resultCacheBytes: Math.round(s.SVC_RESULT_CACHE_MB * 1024 * 1024),
      preAggregationDir: resolve(s.SVC_PREAGG_DIR), preAggregationRefresh: s.SVC_PREAGG_REFRESH },
    cube: { continueWaitMs: s.SVC_CUBE_CONTINUE_WAIT_MS, orphanTimeoutMs: s.SVC_CUBE_ORPHAN_TIMEOUT_MS },
    timeouts: { requestMs: s.SVC_REQUEST_TIMEOUT_MS, idleMs: s.SVC_IDLE_TIMEOUT_MS, handlerMs: s.SVC_HANDLER_TIMEOUT_MS },
    shutdownTimeoutMs: s.SVC_SHUTDOWN_TIMEOUT_MS,
    rateLimits: {
      generateSession: s.SVC_RATE_LIMIT_GENERATE_SESSION,
      exchange: s.SVC_RATE_LIMIT_EXCHANGE,
      login: s.SVC_RATE_LIMIT_LOGIN,
      embedPerSession: s.SVC_RATE_LIMIT_EMBED_SESSION,
      embedPerIp: s.SVC_RATE_LIMIT_EMBED_IP,
      explorePerSession: s.SVC_RATE_LIMIT_EXPLORE,
      windowMs: 60_000,
    },
    explore: { maxRows: s.SVC_EXPLORE_MAX_ROWS, timeoutMs: s.SVC_EXPLORE_TIMEOUT_MS, tenantConcurrency: s.SVC_EXPLORE_TENANT_CONCURRENCY },
    rateLimitStore: { redisUrl: s.SVC_REDIS_URL, redisPrefix: s.SVC_REDIS_PREFIX },
    trustProxy: trustProxyOf(s.SVC_TRUST_PROXY),
    metricsToken: s.SVC_METRICS_TOKEN,
    ai: { baseUrl: s.SVC_AI_BASE_URL, model: s.SVC_AI_MODEL, apiKey: s.SVC_AI_API_KEY, timeoutMs: 60_000 },
    commentStreams: {
      perSession: s.SVC_COMMENT_STREAMS_PER_SESSION, heartbeatMs: s.SVC_COMMENT_STREAM_HEARTBEAT_MS,
      replayMax: s.SVC_COMMENT_STREAM_REPLAY_MAX, retentionMs: s.SVC_COMMENT_EVENT_RETENTION_MS,
    },
    webhooks: {
      allowPrivate: s.SVC_WEBHOOKS_ALLOW_PRIVATE, deliver: s.SVC_WEBHOOK_DELIVERY, timeoutMs: s.SVC_WEBHOOK_TIMEOUT_MS, pollMs: s.SVC_WEBHOOK_POLL_MS,
      concurrency: s.SVC_WEBHOOK_CONCURRENCY, retryScheduleMs: parseRetrySchedule(s.SVC_WEBHOOK_RETRY_SCHEDULE)!, retentionMs: s.SVC_WEBHOOK_RETENTION_MS,
    },
    sql: s.SVC_SQL_PORT === undefined ? undefined : {
      port: s.SVC_SQL_PORT, host: s.SVC_HOST, tlsCert: s.SVC_SQL_TLS_CERT, tlsKey: s.SVC_SQL_TLS_KEY,
      maxConnectionsPerAccount: s.SVC_SQL_MAX_CONNECTIONS_PER_ACCOUNT, statementTimeoutMs: s.SVC_SQL_STATEMENT_TIMEOUT_MS, rowCap: s.SVC_SQL_ROW_CAP,
    },
  };
}

/** The default shown for a variable: its default value, or "unset". */
function shownDefault(name: SettingName): string {
  const fallback = schemaOf(name).default;
  return fallback === undefined ? 'unset' : `\`${String(fallback)}\``;
}

/** The variables as `svc serve --help` prints them: name, default, description, one block each. */
export function describeSettingsForHelp(): string {
  return (Object.keys(SETTINGS.properties) as SettingName[]).map((name) => {
    const fallback = shownDefault(name).replaceAll('`', '');
    const description = String(schemaOf(name).description).replaceAll('`', '');
    return `  ${name} (default: ${fallback})\n      ${description}`;
  }).join('\n');
}

/** The Markdown table of docs/operations.md "Settings", row for row. */
export function describeSettingsAsMarkdown(): string {
  const rows = (Object.keys(SETTINGS.properties) as SettingName[]).map((name) => {
    const more = SETTING_DOCS[name];
    const description = String(schemaOf(name).description) + (more === undefined ? '' : ` ([more](${more}))`);
    return `| \`${name}\` | ${shownDefault(name)} | ${description} |`;
  });
  return ['| variable | default | what |', '|---|---|---|', ...rows].join('\n');
}
