import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Described, ErrorResponse } from '../core/core.schema.js';
import { requirePlatformUser } from '../http/http.auth.js';
import { CreateFolderBody, UpdateItemBody } from './workspace.items.schema.js';
import { changeItem, createFolder } from './workspace.items.js';
import { readPermissions } from './workspace.permissions.js';
import { WorkspacePermissions, WorkspacePermissionsQuery } from './workspace.permissions.schema.js';
import type { ListingContext } from './workspace.service.js';
import { WorkspaceItem, WorkspaceItemParams, WorkspaceParams, workspaceErrorResponses } from './workspace.schema.js';

const security = [{ bearerAuth: [] }];

/** Issue 34 (the console): folders made, items renamed and moved (docs/authoring.md "Folders"). */
export function workspaceItemRoutes(ctx: ListingContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/deployments/:deploymentId/workspace/permissions', {
      schema: {
        operationId: 'workspacePermissions', tags: ['Workspace'], security,
        summary: 'What the caller may do with listed items (rename, move, edit the dashboard) and in the folder shown (make things)',
        params: WorkspaceParams, querystring: WorkspacePermissionsQuery,
        response: { 200: Described(WorkspacePermissions, "The caller's permissions; items the caller cannot access are left out"), ...workspaceErrorResponses },
      },
    }, async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return readPermissions(ctx, requirePlatformUser(request), request.params.deploymentId, request.query);
    });

    app.post('/api/v1/deployments/:deploymentId/workspace/folders', {
      schema: {
        operationId: 'createWorkspaceFolder', tags: ['Workspace'], security,
        summary: 'Make a folder at the root or in parentId (admins anywhere; a member at the root or in a folder they may change)',
        params: WorkspaceParams, body: CreateFolderBody,
        response: { 201: Described(WorkspaceItem, 'The folder, as the workspace listing shows it'), ...workspaceErrorResponses, 413: ErrorResponse },
      },
    }, async (request, reply) => reply.status(201).send(await createFolder(ctx, requirePlatformUser(request), request.params.deploymentId, request.body)));

    app.patch('/api/v1/deployments/:deploymentId/workspace/:itemId', {
      schema: {
        operationId: 'updateWorkspaceItem', tags: ['Workspace'], security,
        summary: 'Rename an item, or move it (with everything below it) into another folder; a folder never goes inside itself',
        params: WorkspaceItemParams, body: UpdateItemBody,
        response: { 200: Described(WorkspaceItem, 'The item as changed, as the workspace listing shows it'), ...workspaceErrorResponses, 413: ErrorResponse },
      },
    }, async (request) => changeItem(ctx, requirePlatformUser(request), request.params.deploymentId, request.params.itemId, request.body));
  };
}
