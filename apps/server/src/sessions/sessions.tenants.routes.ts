import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePlatformUser } from '../http/http.auth.js';
import { Described, ErrorResponse, Id, NoContent } from '../core/core.schema.js';
import { EmbedUser, sessionErrorResponses } from './sessions.schema.js';
import { CreateEmbedTenantBody, CreateEmbedUserBody, EmbedTenant, EmbedTenantList, EmbedTenantParams, UpdateEmbedTenantBody, UpdateEmbedUserBody } from './sessions.tenants.schema.js';
import { changeEmbedUser, createEmbedTenant, createEmbedUser, getEmbedTenant, getEmbedUser, listEmbedTenants, removeEmbedTenant, renameTenant } from './sessions.tenants.js';
import type { SessionContext } from './sessions.service.js';

const security = [{ bearerAuth: [] }];
const tags = ['Embed users'];
const withConflict = { ...sessionErrorResponses, 409: ErrorResponse };

/**
 * Issue 33 part 4: embed tenants and single embed users, for the account's admins (docs/authoring.md "Embed tenants
 * and users"). The list and the removal of embed users are in sessions.routes.ts, where DESIGN put them.
 */
export function embedTenantRoutes(ctx: SessionContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    const base = '/api/v1/embed/tenants';

    app.get(base, {
      schema: { operationId: 'listEmbedTenants', tags, security, summary: "The account's embed tenants (its customers), by name, with how many viewers each has", response: { 200: Described(EmbedTenantList, 'Every embed tenant of the account'), ...sessionErrorResponses } },
    }, async (request) => listEmbedTenants(ctx, requirePlatformUser(request)));

    app.post(base, {
      schema: { operationId: 'createEmbedTenant', tags, security, summary: 'Make an embed tenant ahead of its first session', body: CreateEmbedTenantBody, response: { 201: Described(EmbedTenant, 'The tenant'), ...withConflict } },
    }, async (request, reply) => reply.status(201).send(await createEmbedTenant(ctx, requirePlatformUser(request), request.body.name)));

    app.get(`${base}/:tenantId`, {
      schema: { operationId: 'getEmbedTenant', tags, security, summary: 'One embed tenant', params: EmbedTenantParams, response: { 200: Described(EmbedTenant, 'The tenant'), ...sessionErrorResponses } },
    }, async (request) => getEmbedTenant(ctx, requirePlatformUser(request), request.params.tenantId));

    app.patch(`${base}/:tenantId`, {
      schema: {
        operationId: 'updateEmbedTenant', tags, security, summary: "Rename an embed tenant: its threads and viewers stay; its live sessions are revoked (their tokens carry the old name)",
        params: EmbedTenantParams, body: UpdateEmbedTenantBody, response: { 200: Described(EmbedTenant, 'The tenant as renamed'), ...withConflict },
      },
    }, async (request) => renameTenant(ctx, requirePlatformUser(request), request.params.tenantId, request.body.name));

    app.delete(`${base}/:tenantId`, {
      schema: {
        operationId: 'deleteEmbedTenant', tags, security, summary: 'Offboard a customer: the tenant, its viewers, their sessions and its comment threads are deleted',
        params: EmbedTenantParams, response: { 204: NoContent, ...sessionErrorResponses },
      },
    }, async (request, reply) => {
      await removeEmbedTenant(ctx, requirePlatformUser(request), request.params.tenantId);
      return reply.status(204).send(null);
    });

    app.post('/api/v1/embed/users', {
      schema: {
        operationId: 'createEmbedUser', tags, security, summary: 'Make an embed user ahead of their first session (and their tenant, if new)',
        body: CreateEmbedUserBody, response: { 201: Described(EmbedUser, 'The embed user'), ...withConflict },
      },
    }, async (request, reply) => reply.status(201).send(await createEmbedUser(ctx, requirePlatformUser(request), request.body)));

    app.get('/api/v1/embed/users/:id', {
      schema: { operationId: 'getEmbedUser', tags, security, summary: 'One embed user', params: Type.Object({ id: Id }), response: { 200: Described(EmbedUser, 'The embed user'), ...sessionErrorResponses } },
    }, async (request) => getEmbedUser(ctx, requirePlatformUser(request), request.params.id));

    app.patch('/api/v1/embed/users/:id', {
      schema: {
        operationId: 'updateEmbedUser', tags, security, summary: "Change an embed user's username, email, first name, groups or attributes as svc keeps them",
        params: Type.Object({ id: Id }), body: UpdateEmbedUserBody, response: { 200: Described(EmbedUser, 'The embed user as changed'), ...sessionErrorResponses },
      },
    }, async (request) => changeEmbedUser(ctx, requirePlatformUser(request), request.params.id, request.body));
  };
}
