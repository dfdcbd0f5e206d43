import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { requirePlatformUser } from '../http/http.auth.js';
import { sendCachedPage } from '../http/http.page-cache.js';
import type { PageCache } from '../http/http.page-cache.js';
import { listWorkspace, recordView, setFavorite } from './workspace.service.js';
import type { ListingContext } from './workspace.service.js';
import { WorkspaceConnectionResponse, WorkspaceItemParams, WorkspaceParams, WorkspaceQuery, workspaceErrorResponses } from './workspace.schema.js';
import { Described, NoContent } from '../core/core.schema.js';

const security = [{ bearerAuth: [] }];

/** SPEC part A: the workspace listing, plus the per-viewer writes that feed it (views and favorites). */
export function workspaceRoutes(ctx: ListingContext, cache: PageCache): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/deployments/:deploymentId/workspace', {
      schema: {
        operationId: 'workspaceObjects',
        tags: ['Workspace'],
        summary: 'List the folders, workbooks and reports of a deployment the caller can access',
        security,
        params: WorkspaceParams,
        querystring: WorkspaceQuery,
        response: { 200: Described(WorkspaceConnectionResponse, 'One page of workspace items, with the cursors of the next and previous pages'), ...workspaceErrorResponses },
      },
    }, async (request, reply) => {
      const principal = requirePlatformUser(request);
      const { deploymentId } = request.params;
      const q = request.query;
      const key = JSON.stringify([
        'workspace', principal.accountId, principal.userId, deploymentId, q.folderId, q.types === undefined ? null : [...new Set(q.types)].sort(),
        q.orderByField, q.orderByDirection, q.search, q.after, q.first,
      ]);
      return sendCachedPage(reply, cache, key, principal.dataVersion, () => listWorkspace(ctx, principal, deploymentId, q));
    });

    // The caller's own writes on one item: each answers 204, or 404/403 for an item they cannot reach.
    const itemWrites: Array<{
      method: 'POST' | 'PUT' | 'DELETE';
      path: string;
      operationId: string;
      summary: string;
      /** What the 204 means, for the OpenAPI document. */
      done: string;
      run: (principal: PlatformUserPrincipal, deploymentId: number, itemId: number) => Promise<void>;
    }> = [
      {
        method: 'POST', path: 'view', operationId: 'recordWorkspaceItemView',
        summary: 'Record that the caller viewed an item (feeds orderByField=viewer_last_viewed_at)',
        done: 'The view is recorded',
        run: (principal, deploymentId, itemId) => recordView(ctx, principal, deploymentId, itemId),
      },
      {
        method: 'PUT', path: 'favorite', operationId: 'favoriteWorkspaceItem',
        summary: "Mark an item as the caller's favorite (idempotent)",
        done: 'The item is a favorite of the caller',
        run: (principal, deploymentId, itemId) => setFavorite(ctx, principal, deploymentId, itemId, true),
      },
      {
        method: 'DELETE', path: 'favorite', operationId: 'unfavoriteWorkspaceItem',
        summary: "Clear the caller's favorite mark on an item (idempotent)",
        done: 'The item is no favorite of the caller',
        run: (principal, deploymentId, itemId) => setFavorite(ctx, principal, deploymentId, itemId, false),
      },
    ];
    for (const write of itemWrites) {
      app.route({
        method: write.method,
        url: `/api/v1/deployments/:deploymentId/workspace/:itemId/${write.path}`,
        schema: {
          operationId: write.operationId,
          tags: ['Workspace'],
          summary: write.summary,
          security,
          params: WorkspaceItemParams,
          response: { 204: Described(NoContent, write.done), ...workspaceErrorResponses },
        },
        handler: async (request, reply) => {
          await write.run(requirePlatformUser(request), request.params.deploymentId, request.params.itemId);
          return reply.status(204).send(null);
        },
      });
    }
  };
}
