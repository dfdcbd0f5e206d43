import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { AppError, errorBody } from '../core/core.errors.js';
import type { AppErrorCode } from '../core/core.errors.js';
import { isDatabaseUnavailable } from '../db/db.database.js';

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/**
 * Turns Fastify's schema validation failure into an AppError naming the field: `querystring.first`,
 * `params.deploymentId`, `body.sessionId`.
 */
function fromValidation(issues: ValidationIssue[], context: string | undefined): AppError {
  const issue = issues[0];
  const part = context ?? 'request';
  if (!issue) return new AppError('invalid_parameter', `${part} is invalid`);
  const path = issue.instancePath.split('/').filter(Boolean);
  if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') {
    path.push(issue.params.missingProperty);
  }
  if (issue.keyword === 'additionalProperties' && typeof issue.params.additionalProperty === 'string') {
    path.push(issue.params.additionalProperty);
  }
  const field = path.join('.');
  const code: AppErrorCode = part === 'body' ? 'invalid_body' : 'invalid_parameter';
  const allowed = Array.isArray(issue.params.allowedValues) ? `: one of ${issue.params.allowedValues.join(', ')}` : '';
  const what = field === '' ? part : `${part === 'querystring' ? 'query parameter' : part} ${field}`;
  const reason = issue.keyword === 'required' ? 'is required' : `${issue.message ?? 'is invalid'}${allowed}`;
  return new AppError(code, `${what} ${reason}`, field === '' ? undefined : field);
}

export function toAppError(error: FastifyError | AppError | Error): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fastifyError.validation) return fromValidation(fastifyError.validation, fastifyError.validationContext);
  const status = fastifyError.statusCode ?? 500;
  if (status === 408) return new AppError('request_timeout', 'the request did not arrive within the request timeout');
  if (status === 413) return new AppError('payload_too_large', 'request body is too large');
  if (status === 415) return new AppError('unsupported_media_type', 'unsupported Content-Type; send application/json');
  if (status === 400) {
    return new AppError('invalid_body', fastifyError.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
      ? 'request body is empty but Content-Type is application/json'
      : 'request body is not valid JSON');
  }
  if (status === 404) return new AppError('not_found', 'not found');
  if (status > 400 && status < 500) return new AppError('invalid_parameter', error.message);
  if (isDatabaseUnavailable(error)) return new AppError('service_unavailable', 'the database cannot be reached right now; try again shortly');
  return new AppError('internal_error', 'internal error');
}

/**
 * Errors Fastify raises before routing (a URL it cannot decode, a path parameter over the router's limit), in
 * the same error body as everything else. Passed to Fastify's `frameworkErrors` option.
 */
export function answerFrameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const appError = error.code === 'FST_ERR_MAX_PARAM_LENGTH'
    ? new AppError('uri_too_long', 'a path parameter is too long')
    : new AppError('invalid_parameter', 'the URL is not valid (bad percent-encoding?)');
  void reply.status(appError.status).send(errorBody(appError));
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (bytes that are not HTTP, a header over 16 KiB, a
 * request that did not arrive within the request timeout): the same error body, then the connection is closed.
 * Passed to Fastify's `clientErrorHandler` option.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const appError = error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? new AppError('request_timeout', 'the request did not arrive within the request timeout')
    : error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('header_fields_too_large', 'the request line and headers exceed 16 KiB')
      : new AppError('invalid_request', 'the request is not valid HTTP/1.1');
  if (socket.writable) {
    const body = JSON.stringify(errorBody(appError));
    socket.write(`HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}

/**
 * How an error answer is logged, if at all. 5xx is svc's own failure (`error`). A 422 `invalid_query` is a query
 * svc was given or has stored but could not run (a report snapshot with no query, SQL the warehouse refused): the
 * viewer of an embedded dashboard only sees a friendly sentence, so the detail must reach the operator (`warn`).
 * Every other 4xx is the caller's mistake, told to the caller in the body, and not logged.
 *
 * @example logLevelOf(new AppError('invalid_query', 'report snapshot 15 has neither meta.query nor sqlQuery')) // 'warn'
 */
export function logLevelOf(error: AppError): 'error' | 'warn' | undefined {
  if (error.status >= 500) return 'error';
  if (error.code === 'invalid_query') return 'warn';
  return undefined;
}

/**
 * Installs the single error handler and the 404 handler that produce the error body everywhere. Failures (see
 * `logLevelOf`) are logged to `failures` when given (Fastify then has no logger of its own), else to the request's
 * logger, with the error's detail.
 */
export function registerErrorHandling(app: FastifyInstance, failures?: Logger): void {
  app.setErrorHandler((error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    const level = logLevelOf(appError);
    if (level !== undefined) {
      const message = level === 'error' ? 'request failed' : 'query could not run';
      // request.log is bound to the request id; a failures-only logger is given it here.
      if (failures === undefined) request.log[level]({ err: error }, message);
      else failures[level]({ reqId: request.id, err: error }, message);
    }
    return reply.status(appError.status).send(errorBody(appError));
  });
  app.setNotFoundHandler((request, reply) => {
    const appError = new AppError('not_found', `no route for ${request.method} ${request.url.split('?')[0]}`);
    return reply.status(404).send(errorBody(appError));
  });
}
