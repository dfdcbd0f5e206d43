import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requirePlatformUser } from '../http/http.auth.js';
import type { ServiceContext } from '../db/db.context.js';
import { Described, ErrorResponse, NoContent } from '../core/core.schema.js';
import { adminErrorResponses } from '../accounts/accounts.admin.schema.js';
import { CreateGroupBody, Group, GroupList, GroupParams, UpdateGroupBody } from './workspace.groups.schema.js';
import { changeGroup, createGroup, getGroup, listGroups, removeGroup } from './workspace.groups.js';

const security = [{ bearerAuth: [] }];
const tags = ['Users and groups'];
const withConflict = { ...adminErrorResponses, 409: ErrorResponse };

/** Issue 33 part 4: an account's groups of platform users, for its admins (docs/authoring.md "Users, groups and API keys"). */
export function groupRoutes(ctx: ServiceContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/groups', {
      schema: { operationId: 'listGroups', tags, security, summary: "The account's groups and their members", response: { 200: Described(GroupList, 'Every group of the account'), ...adminErrorResponses } },
    }, async (request) => listGroups(ctx, requirePlatformUser(request)));

    app.post('/api/v1/groups', {
      schema: {
        operationId: 'createGroup', tags, security, summary: 'Make a group of platform users (grants can name it)',
        body: CreateGroupBody, response: { 201: Described(Group, 'The group'), ...withConflict },
      },
    }, async (request, reply) => reply.status(201).send(await createGroup(ctx, requirePlatformUser(request), request.body)));

    app.get('/api/v1/groups/:groupId', {
      schema: { operationId: 'getGroup', tags, security, summary: 'One group and its members', params: GroupParams, response: { 200: Described(Group, 'The group'), ...adminErrorResponses } },
    }, async (request) => getGroup(ctx, requirePlatformUser(request), request.params.groupId));

    app.patch('/api/v1/groups/:groupId', {
      schema: {
        operationId: 'updateGroup', tags, security, summary: 'Rename a group or replace its members (memberIds is the whole membership)',
        params: GroupParams, body: UpdateGroupBody, response: { 200: Described(Group, 'The group as changed'), ...withConflict },
      },
    }, async (request) => changeGroup(ctx, requirePlatformUser(request), request.params.groupId, request.body));

    app.delete('/api/v1/groups/:groupId', {
      schema: {
        operationId: 'deleteGroup', tags, security, summary: 'Delete a group: its members lose what was granted to the group',
        params: GroupParams, response: { 204: NoContent, ...adminErrorResponses },
      },
    }, async (request, reply) => {
      await removeGroup(ctx, requirePlatformUser(request), request.params.groupId);
      return reply.status(204).send(null);
    });

  };
}
