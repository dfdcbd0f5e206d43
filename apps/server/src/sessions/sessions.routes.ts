import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePlatformUser } from '../http/http.auth.js';
import { rateLimitFor } from '../http/http.rate-limit.js';
import type { RateLimits } from '../http/http.rate-limit.js';
import { describeCurrentSession, exchangeSession, generateSession, listEmbedUsers, removeEmbedUser, revokeSessions } from './sessions.service.js';
import type { SessionContext } from './sessions.service.js';
import { createPreviewSession } from './sessions.preview.js';
import {
  CurrentSessionResponse, EmbedUsersQuery, EmbedUsersResponse, ExchangeBody, ExchangeResponse, GenerateSessionBody, GenerateSessionResponse, PreviewSessionBody,
  PreviewSessionResponse, RevokeBody, sessionErrorResponses,
} from './sessions.schema.js';
import { Described, ErrorResponse, Id, NoContent } from '../core/core.schema.js';

const adminSecurity = [{ bearerAuth: [] }];

/** DESIGN "What SPEC.md leaves not shown": Generate Session, exchange, revoke, and the embed-user admin. */
export function sessionRoutes(ctx: SessionContext, limits: RateLimits): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/v1/embed/generate-session', {
      schema: {
        operationId: 'generateEmbedSession', tags: ['Embed sessions'], security: adminSecurity,
        summary: "Mint a single-use session id for one viewer (call it from your backend with an admin's API key)",
        body: GenerateSessionBody,
        response: { 200: GenerateSessionResponse, ...sessionErrorResponses },
      },
      // Counted per resolved credential (after authentication): one key sent as `Bearer` and as `Api-Key` is one
      // client, and so is one key however its header is spelt. A caller without a valid credential counts by IP.
      config: rateLimitFor(limits.generateSession, limits.windowMs, (request) => {
        const principal = request.principal;
        return principal.kind === 'platform-user' ? `generate:${principal.via}:${principal.credentialId}` : `generate-anonymous:${request.ip}`;
      }, 'preHandler'),
    }, async (request) => generateSession(ctx, requirePlatformUser(request), request.body));

    app.post('/api/v1/dashboards/:publicId/preview-sessions', {
      schema: {
        operationId: 'createPreviewSession', tags: ['Embed sessions'], security: adminSecurity,
        summary: "View as a customer: a single-use session id with which the embed page shows one dashboard (published, or its draft) as a viewer with this tenant and context would see it, framed by the console only",
        params: Type.Object({ publicId: Type.String({ minLength: 1, maxLength: 200 }) }),
        body: PreviewSessionBody,
        response: { 201: Described(PreviewSessionResponse, 'The preview session: its single-use id, until when it can be redeemed, and the embed page to open with it'), ...sessionErrorResponses, 409: ErrorResponse },
      },
      // As Generate Session: counted per resolved credential.
      config: rateLimitFor(limits.generateSession, limits.windowMs, (request) => {
        const principal = request.principal;
        return principal.kind === 'platform-user' ? `generate:${principal.via}:${principal.credentialId}` : `generate-anonymous:${request.ip}`;
      }, 'preHandler'),
    }, async (request, reply) => reply.status(201).send(await createPreviewSession(ctx, requirePlatformUser(request), request.params.publicId, request.body)));

    app.post('/api/v1/embed/session/token', {
      schema: {
        operationId: 'exchangeEmbedSession', tags: ['Embed sessions'], security: [],
        summary: 'Exchange a session id for an embed token, once (no Authorization: the session id is the credential)',
        body: ExchangeBody,
        response: { 200: ExchangeResponse, ...sessionErrorResponses },
      },
      config: rateLimitFor(limits.exchange, limits.windowMs, (request) => `exchange:${request.ip}`),
    }, async (request) => {
      const answer = await exchangeSession(ctx, request.body.sessionId);
      const include = request.body.include;
      if (include === undefined) return answer;
      // Each read goes through the same route, hooks and checks as the embed's own GET with this token would, and
      // from the caller's address: injected without one, every viewer of every account would share one per-IP
      // rate-limit bucket (127.0.0.1's). `request.ip` already went through SVC_TRUST_PROXY, so no forwarded header
      // is passed on for the inner request to read again.
      const read = async (url: string) => {
        const response = await app.inject({ method: 'GET', url, remoteAddress: request.ip, headers: { authorization: `Embed-Token ${answer.token}`, accept: 'application/json' } });
        return { status: response.statusCode, body: response.json() as unknown };
      };
      const [session, dashboard] = await Promise.all([
        include.session === true ? read('/api/v1/embed/session') : undefined,
        include.dashboard !== undefined ? read(`/api/v1/embed/dashboard/${encodeURIComponent(include.dashboard)}`) : undefined,
      ]);
      return { ...answer, included: { ...(session === undefined ? {} : { session }), ...(dashboard === undefined ? {} : { dashboard }) } };
    });

    app.post('/api/v1/embed/session/revoke', {
      schema: {
        operationId: 'revokeEmbedSession', tags: ['Embed sessions'], security: adminSecurity,
        summary: 'Revoke one session (sessionId), or every session of a viewer (externalId, embedTenantName) on logout',
        body: RevokeBody,
        response: { 204: NoContent, ...sessionErrorResponses },
      },
    }, async (request, reply) => {
      await revokeSessions(ctx, requirePlatformUser(request), request.body);
      return reply.status(204).send(null);
    });

    app.get('/api/v1/embed/session', {
      schema: {
        operationId: 'currentEmbedSession', tags: ['Embed sessions'], security: [{ embedToken: [] }, {}],
        summary: 'The embed session of the token sent, or null',
        response: { 200: CurrentSessionResponse },
      },
    }, async (request) => describeCurrentSession(ctx, request.principal));

    app.get('/api/v1/embed/users', {
      schema: {
        operationId: 'listEmbedUsers', tags: ['Embed users'], security: adminSecurity,
        summary: 'List the embed users of the account, or of one embed tenant',
        querystring: EmbedUsersQuery,
        response: { 200: EmbedUsersResponse, ...sessionErrorResponses },
      },
    }, async (request) => ({ users: await listEmbedUsers(ctx, requirePlatformUser(request), request.query.embedTenantName) }));

    app.delete('/api/v1/embed/users/:id', {
      schema: {
        operationId: 'deleteEmbedUser', tags: ['Embed users'], security: adminSecurity,
        summary: 'Delete an embed user: their sessions are revoked, their comments stay without an author',
        params: Type.Object({ id: Id }),
        response: { 204: NoContent, ...sessionErrorResponses },
      },
    }, async (request, reply) => {
      await removeEmbedUser(ctx, requirePlatformUser(request), request.params.id);
      return reply.status(204).send(null);
    });
  };
}
