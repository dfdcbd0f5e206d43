import type { FastifyServerOptions } from 'fastify';
import { pino } from 'pino';
import type { DestinationStream, Logger, LoggerOptions } from 'pino';

/** Headers and fields that carry secrets: never logged. */
export const REDACTED_LOG_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'];

/** svc's logger setting: pino options (with an optional `stream`), true for pino's defaults, false for silence. */
export type LoggingConfig = boolean | (LoggerOptions & { stream?: DestinationStream });

/** What the app logs with: Fastify's own request logger, or none and a logger for failures only. */
export interface Logging {
  /** Fastify's `logger` option. */
  fastify: FastifyServerOptions['logger'];
  /** Where 5xx failures are logged when Fastify has no logger (they carry `reqId` themselves); else undefined. */
  failures: Logger | undefined;
}

/** Query parameters that carry a credential (the embed URL's single-use session id): their values never reach a log. */
const SECRET_QUERY_NAMES = new Set(['session', 'sessionid', 'token']);

const decodedName = (raw: string) => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
};

/** A request URL fit for a log line: the value of every credential parameter, however its name is encoded, is replaced. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const query = url.slice(start + 1).split('&').map((part) => {
    const equals = part.indexOf('=');
    const name = equals === -1 ? part : part.slice(0, equals);
    return SECRET_QUERY_NAMES.has(decodedName(name)) ? `${name}=[Redacted]` : part;
  });
  return `${url.slice(0, start)}?${query.join('&')}`;
}

/** Fastify's request fields, with the URL redacted. */
const serializers = {
  req(request: { method: string; url: string; hostname?: string; ip?: string; socket?: { remotePort?: number } }) {
    return { method: request.method, url: redactUrl(request.url), host: request.hostname, remoteAddress: request.ip, remotePort: request.socket?.remotePort };
  },
};

const REQUEST_LEVELS = new Set(['trace', 'debug', 'info']);

/**
 * Per-request logging ("incoming request", "request completed") is written at `info`. Below that level svc
 * hands Fastify the logger and every line is written. At `warn` and above, where those lines are never written,
 * Fastify runs without a logger (it would still bind a child logger and attach response listeners to every
 * request: about a fifth of a cached listing's throughput, bench/README.md "workspace") and failures go to a pino
 * logger of their own, with the request id in each line.
 *
 * @example
 * const { fastify, failures } = loggingFor({ level: 'warn' }); // fastify: false, failures: a pino logger
 */
export function loggingFor(config: LoggingConfig): Logging {
  if (config === false) return { fastify: false, failures: undefined };
  const { stream, ...options } = config === true ? {} : config;
  const redacted = { ...options, redact: REDACTED_LOG_PATHS, serializers: { ...serializers, ...options.serializers } };
  if (REQUEST_LEVELS.has(options.level ?? 'info')) return { fastify: stream === undefined ? redacted : { ...redacted, stream }, failures: undefined };
  return { fastify: false, failures: stream === undefined ? pino(redacted) : pino(redacted, stream) };
}
