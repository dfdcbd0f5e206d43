import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../core/core.errors.js';
import { Described } from '../core/core.schema.js';
import type { DataContext } from '../data/data.scope.js';
import { toAppError } from '../http/http.errors.js';
import { Sealer } from '../core/core.sealed.js';
import { DEPLOYMENT_HEADER, resolveCubeJwt } from './cube.secrets.js';
import { cubeDeployment, cubeDryRun, cubeLoad, cubeMeta, cubeSql } from './cube.service.js';
import type { CubePrincipal } from './cube.service.js';
import { ContinueWait, CubeWaits } from './cube.waits.js';
import type { CubeWaitSettings } from './cube.waits.js';

// Cube's REST API at `/cubejs-api/v1` (issue 36; docs/cube.md), so that `@cubejs-client/core`, Grafana's Cube data
// source and other tools written for Cube read svc as they read Cube: its paths, its parameters, its answers and
// its error shape (`{"error": "..."}`, here with svc's `code` and `field` beside it).

/** Cube's error body: `error` is the message (naming the field at fault), as @cubejs-client/core reads it. */
const CubeError = Type.Object({ error: Type.String(), code: Type.Optional(Type.String()), field: Type.Optional(Type.String()) }, { title: 'CubeError' });
const CubeAnswer = Type.Object({}, { additionalProperties: true });
const LoadQuerystring = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 100_000, description: 'The query as JSON: one query, or an array of them (a blending query)' })),
  queryType: Type.Optional(Type.String({ maxLength: 20, description: '`multi`: answer `{queryType, results[], pivotQuery}` (what @cubejs-client/core sends)' })),
}, { additionalProperties: true });
const LoadBody = Type.Object({
  query: Type.Unknown({ description: 'One query, or an array of them (a blending query)' }),
  queryType: Type.Optional(Type.String({ maxLength: 20 })),
}, { additionalProperties: true });
const Headers = Type.Object({ [DEPLOYMENT_HEADER]: Type.Optional(Type.String({ maxLength: 20, description: 'The deployment a platform user reads (needed when the account has several), or a Cube JWT\'s deployment' })) });
const RESPONSES = { 400: CubeError, 401: CubeError, 403: CubeError, 404: CubeError, 422: CubeError, 503: CubeError, 504: CubeError };
const LOAD_ANSWER = 'With queryType=multi: `{queryType, results[], pivotQuery}`; else the one result (`query`, `data`, `annotation`, `lastRefreshTime`). '
  + 'A query still running after the continue-wait timeout: `{"error": "Continue wait"}` (as Cube): ask again for its answer';
const SECURITY: Array<Record<string, string[]>> = [{ embedToken: [] }, { bearerAuth: [] }];

/** Who is calling, and the part of the continue-wait key that tells callers apart. */
interface Caller {
  principal: CubePrincipal;
  /** A platform user, an embed session, or a Cube JWT's deployment and claims (docs/cube.md "Continue wait"). */
  scope: string;
}

/**
 * The caller: an embed token or an API key (resolved by http.auth, with or without a scheme: Cube's clients send the
 * bare token), else a Cube JWT signed with its deployment's Cube API secret (cube.secrets.ts).
 */
async function callerOf(request: FastifyRequest, sealer: Sealer, dc: DataContext): Promise<Caller> {
  const principal = request.principal;
  if (principal.kind === 'platform-user') return { principal, scope: `user:${principal.userId}` };
  if (principal.kind === 'embed') return { principal, scope: `session:${principal.sessionId}` };
  const header = request.headers.authorization;
  if (header === undefined) throw AppError.at('unauthorized', 'Authorization', 'Authorization header isn\'t set: send an embed token, an API key or a Cube JWT');
  const jwt = await resolveCubeJwt({ ...dc, sealer }, header, request.headers[DEPLOYMENT_HEADER] as string | undefined);
  if (jwt === undefined) throw AppError.at('unauthorized', 'Authorization', 'invalid, expired or revoked credential in the Authorization header');
  // The claims that say who the caller is, not when the token was minted: a poll with a token minted afresh for the
  // same caller picks up its query.
  const { exp: _exp, iat: _iat, nbf: _nbf, jti: _jti, ...context } = jwt.access.securityContext;
  const { groups, userAttributes } = jwt.access;
  return { principal: jwt, scope: `jwt:${jwt.deploymentId}:${JSON.stringify([context, groups, userAttributes, jwt.embedTenantName])}` };
}

/** The query of a GET (`?query=<JSON>`) or a POST (`{"query": ...}`). */
function queryOf(request: FastifyRequest): { raw: unknown; multi: boolean } {
  if (request.method === 'POST') {
    const body = request.body as { query?: unknown; queryType?: string };
    if (body.query === undefined) throw AppError.at('invalid_parameter', 'query', 'send the query in the body: {"query": {...}}');
    return { raw: body.query, multi: body.queryType === 'multi' };
  }
  const params = request.query as { query?: string; queryType?: string };
  if (params.query === undefined) throw AppError.at('invalid_parameter', 'query', 'send the query as JSON in the query parameter');
  let raw: unknown;
  try {
    raw = JSON.parse(params.query);
  } catch {
    throw AppError.at('invalid_parameter', 'query', 'is not valid JSON');
  }
  return { raw, multi: params.queryType === 'multi' };
}

/** The Cube API's own settings: continue wait (issue 36). */
export interface CubeRoutesOptions extends Omit<CubeWaitSettings, 'maxEntries'> {
  /** Most queries held for continue wait at once (default 1,000). */
  maxWaiting?: number;
}

export function cubeRoutes(dc: DataContext, options: CubeRoutesOptions): FastifyPluginAsyncTypebox {
  const sealer = dc.sealer ?? new Sealer([]);
  return async (app) => {
    const waits = new CubeWaits({ continueWaitMs: options.continueWaitMs, orphanTimeoutMs: options.orphanTimeoutMs, maxEntries: options.maxWaiting ?? 1000 });
    app.addHook('onClose', async () => waits.clear());

    app.setErrorHandler((error: FastifyError | AppError | ContinueWait, _request: FastifyRequest, reply: FastifyReply) => {
      // Cube's API gateway answers a query still running with HTTP 200 and this body; its client asks again.
      if (error instanceof ContinueWait) return reply.status(200).send({ error: 'Continue wait' });
      const appError = toAppError(error);
      return reply.status(appError.status).send({ error: appError.message, code: appError.code, ...(appError.field !== undefined ? { field: appError.field } : {}) });
    });

    app.setNotFoundHandler((request, reply) => reply.status(404).send({ error: `no route for ${request.method} ${request.url.split('?')[0]}`, code: 'not_found' }));

    const load = async (request: FastifyRequest) => {
      const { principal, scope } = await callerOf(request, sealer, dc);
      const { raw, multi } = queryOf(request);
      const deploymentId = await cubeDeployment(dc, principal, request.headers[DEPLOYMENT_HEADER] as string | undefined);
      // The same caller's same query on the same deployment picks up the one running (continue wait).
      const key = CubeWaits.keyOf(principal.accountId, `${scope}:${deploymentId}`, raw);
      const answer = await waits.load(key, (signal) => cubeLoad(dc, principal, deploymentId, raw, signal));
      if (multi) return answer;
      // Without `queryType=multi` Cube answers one result alone, and refuses the kinds that have several.
      if (answer.queryType !== 'regularQuery') throw AppError.at('invalid_parameter', 'queryType', `a ${answer.queryType} needs queryType=multi`);
      return answer.results[0];
    };
    const summary = 'Cube\'s `load`: run a query (or a blending or compareDateRange query) under the caller\'s policies, answered in Cube\'s shape';
    app.get('/v1/load', {
      schema: { operationId: 'cubeLoad', tags: ['Cube'], security: SECURITY, summary, querystring: LoadQuerystring, headers: Headers, response: { 200: Described(CubeAnswer, LOAD_ANSWER), ...RESPONSES } },
    }, load);
    app.post('/v1/load', {
      schema: { operationId: 'cubeLoadPost', tags: ['Cube'], security: SECURITY, summary, body: LoadBody, headers: Headers, response: { 200: Described(CubeAnswer, LOAD_ANSWER), ...RESPONSES } },
    }, load);

    const deploymentOf = (request: FastifyRequest, principal: CubePrincipal) => cubeDeployment(dc, principal, request.headers[DEPLOYMENT_HEADER] as string | undefined);
    const sqlSummary = 'Cube\'s `sql`, admins only: the statement each query compiles to under the caller\'s policies, and the rollup that answers it; nothing runs';
    const sql = async (request: FastifyRequest) => {
      const { principal } = await callerOf(request, sealer, dc);
      return cubeSql(dc, principal, await deploymentOf(request, principal), queryOf(request).raw);
    };
    const SqlAnswer = Described(Type.Union([CubeAnswer, Type.Array(CubeAnswer)]), 'One query: `{sql: {sql: [statement, values], order, limit, aliasNameToMember, external, preAggregations}}`; several: an array of them');
    app.get('/v1/sql', { schema: { operationId: 'cubeSql', tags: ['Cube'], security: SECURITY, summary: sqlSummary, querystring: LoadQuerystring, headers: Headers, response: { 200: SqlAnswer, ...RESPONSES } } }, sql);
    app.post('/v1/sql', { schema: { operationId: 'cubeSqlPost', tags: ['Cube'], security: SECURITY, summary: sqlSummary, body: LoadBody, headers: Headers, response: { 200: SqlAnswer, ...RESPONSES } } }, sql);

    const dryRunSummary = 'Cube\'s `dry-run`: the queries normalized as `load` runs them, checked against the model and the caller\'s policies, their pivot query and order; nothing runs';
    const dryRun = async (request: FastifyRequest) => {
      const { principal } = await callerOf(request, sealer, dc);
      return cubeDryRun(dc, principal, await deploymentOf(request, principal), queryOf(request).raw);
    };
    const DryRunAnswer = Described(CubeAnswer, '`{queryType, normalizedQueries[], pivotQuery, queryOrder[], transformedQueries[]}`');
    app.get('/v1/dry-run', { schema: { operationId: 'cubeDryRun', tags: ['Cube'], security: SECURITY, summary: dryRunSummary, querystring: LoadQuerystring, headers: Headers, response: { 200: DryRunAnswer, ...RESPONSES } } }, dryRun);
    app.post('/v1/dry-run', { schema: { operationId: 'cubeDryRunPost', tags: ['Cube'], security: SECURITY, summary: dryRunSummary, body: LoadBody, headers: Headers, response: { 200: DryRunAnswer, ...RESPONSES } } }, dryRun);

    app.get('/v1/meta', {
      schema: {
        operationId: 'cubeMeta', tags: ['Cube'], security: SECURITY, headers: Headers,
        summary: 'Cube\'s `meta`: the cubes (svc\'s views) with the measures and dimensions the caller\'s policies show',
        response: { 200: Described(CubeAnswer, 'Cube\'s meta: `cubes[]` with their visible measures, dimensions and segments'), ...RESPONSES },
      },
    }, async (request) => {
      const { principal } = await callerOf(request, sealer, dc);
      return cubeMeta(dc, principal, await cubeDeployment(dc, principal, request.headers[DEPLOYMENT_HEADER] as string | undefined));
    });
  };
}
