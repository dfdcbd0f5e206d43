import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Described, ErrorResponse } from '../core/core.schema.js';
import type { ServiceContext } from '../db/db.context.js';
import { requirePlatformUser } from '../http/http.auth.js';
import { ItemGrants, ItemGrantsBody } from './workspace.grants.schema.js';
import { listItemGrants, replaceItemGrants } from './workspace.grants.service.js';
import { WorkspaceItemParams, workspaceErrorResponses } from './workspace.schema.js';

const security = [{ bearerAuth: [] }];

/** Issue 33: an item's grants, read and replaced by admins (docs/authoring.md "Who may do what"). */
export function itemGrantRoutes(ctx: ServiceContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/deployments/:deploymentId/workspace/:itemId/grants', {
      schema: {
        operationId: 'listItemGrants', tags: ['Workspace'], security,
        summary: "The grants on an item, each to a user or a group with its role (admins only)",
        params: WorkspaceItemParams,
        response: { 200: Described(ItemGrants, "The item's own grants (those on folders above it reach it too)"), ...workspaceErrorResponses },
      },
    }, async (request) => ({ grants: await listItemGrants(ctx, requirePlatformUser(request), request.params.deploymentId, request.params.itemId) }));

    app.put('/api/v1/deployments/:deploymentId/workspace/:itemId/grants', {
      schema: {
        operationId: 'replaceItemGrants', tags: ['Workspace'], security,
        summary: "Replace an item's grants, in one transaction (admins only); every member's next request is decided on them",
        params: WorkspaceItemParams, body: ItemGrantsBody,
        response: { 200: Described(ItemGrants, "The item's grants as they are now"), ...workspaceErrorResponses, 409: ErrorResponse, 413: ErrorResponse },
      },
    }, async (request) => ({ grants: await replaceItemGrants(ctx, requirePlatformUser(request), request.params.deploymentId, request.params.itemId, request.body.grants) }));
  };
}
