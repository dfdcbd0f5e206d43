import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requirePlatformUser } from '../http/http.auth.js';
import type { ServiceContext } from '../http/http.context.js';
import { listWorkspace, recordView, setFavorite } from './workspace.service.js';
import { WorkspaceConnectionResponse, WorkspaceItemParams, WorkspaceParams, WorkspaceQuery, workspaceErrorResponses } from './workspace.schema.js';

const security = [{ bearerAuth: [] }];
const NoContent = Type.Null({ description: 'No Content' });

/** SPEC part A: the workspace listing, plus the per-viewer writes that feed it (views and favorites). */
export function workspaceRoutes(ctx: ServiceContext): FastifyPluginAsyncTypebox {
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
    }, async (request) => listWorkspace(ctx, requirePlatformUser(request), request.params.deploymentId, request.query));

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
