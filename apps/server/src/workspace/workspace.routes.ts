import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePlatformUser } from '../http/http.auth.js';
import type { ServiceContext } from '../http/http.context.js';
import type { ListingCache } from './workspace.cache.js';
import { listWorkspace, recordView, setFavorite } from './workspace.service.js';
import { WorkspaceConnectionResponse, WorkspaceItemParams, WorkspaceParams, WorkspaceQuery, workspaceErrorResponses } from './workspace.schema.js';

const security = [{ bearerAuth: [] }];
const NoContent = Type.Null({ description: 'No Content' });

/** SPEC part A: the workspace listing, plus the per-viewer writes that feed it (views and favorites). */
export function workspaceRoutes(ctx: ServiceContext, cache: ListingCache): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/deployments/:deploymentId/workspace', {
      schema: {
        operationId: 'workspaceObjects',
        tags: ['Workspace'],
        summary: 'List the folders, workbooks and reports of a deployment the caller can access',
        security,
        params: WorkspaceParams,
        querystring: WorkspaceQuery,
        response: { 200: WorkspaceConnectionResponse, ...workspaceErrorResponses },
      },
    }, async (request, reply) => {
      const principal = requirePlatformUser(request);
      const { deploymentId } = request.params;
      const q = request.query;
      const key = JSON.stringify([
        principal.accountId, principal.userId, deploymentId, q.folderId, q.types === undefined ? null : [...new Set(q.types)].sort(),
        q.orderByField, q.orderByDirection, q.search, q.after, q.first,
      ]);
      let body = cache.get(key, principal.dataVersion);
      if (body === undefined) {
        body = reply.serialize(await listWorkspace(ctx, principal, deploymentId, q)) as string;
        cache.set(key, principal.dataVersion, body);
      }
      // A string payload is sent as it is: the page was serialized by this route's own response schema.
      return reply.type('application/json; charset=utf-8').send(body as never);
    });

    app.post('/api/v1/deployments/:deploymentId/workspace/:itemId/view', {
      schema: {
        operationId: 'recordWorkspaceItemView',
        tags: ['Workspace'],
        summary: "Record that the caller viewed an item (feeds orderByField=viewer_last_viewed_at)",
        security,
        params: WorkspaceItemParams,
        response: { 204: NoContent, ...workspaceErrorResponses },
      },
    }, async (request, reply) => {
      await recordView(ctx, requirePlatformUser(request), request.params.deploymentId, request.params.itemId);
      return reply.status(204).send(null);
    });

    app.put('/api/v1/deployments/:deploymentId/workspace/:itemId/favorite', {
      schema: {
        operationId: 'favoriteWorkspaceItem',
        tags: ['Workspace'],
        summary: "Mark an item as the caller's favorite (idempotent)",
        security,
        params: WorkspaceItemParams,
        response: { 204: NoContent, ...workspaceErrorResponses },
      },
    }, async (request, reply) => {
      await setFavorite(ctx, requirePlatformUser(request), request.params.deploymentId, request.params.itemId, true);
      return reply.status(204).send(null);
    });

    app.delete('/api/v1/deployments/:deploymentId/workspace/:itemId/favorite', {
      schema: {
        operationId: 'unfavoriteWorkspaceItem',
        tags: ['Workspace'],
        summary: "Clear the caller's favorite mark on an item (idempotent)",
        security,
        params: WorkspaceItemParams,
        response: { 204: NoContent, ...workspaceErrorResponses },
      },
    }, async (request, reply) => {
      await setFavorite(ctx, requirePlatformUser(request), request.params.deploymentId, request.params.itemId, false);
      return reply.status(204).send(null);
    });
  };
}
