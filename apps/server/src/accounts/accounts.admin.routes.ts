import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requirePlatformUser } from '../http/http.auth.js';
import { Described, ErrorResponse, NoContent } from '../core/core.schema.js';
import {
  AccountSettings, ApiKeyList, ApiKeyParams, CreateApiKeyBody, CreateUserBody, NewApiKey, UpdateAccountSettingsBody, UpdateUserBody, User, UserList,
  UserParams, adminErrorResponses,
} from './accounts.admin.schema.js';
import { changeUser, createApiKey, createUser, getUser, listApiKeys, listUsers, removeApiKey, removeUser } from './accounts.users.js';
import type { AccountAdminContext } from './accounts.users.js';
import { changeAccountSettings, readAccountSettings } from './accounts.settings.js';

const security = [{ bearerAuth: [] }];
const tags = ['Users and groups'];
const withConflict = { ...adminErrorResponses, 409: ErrorResponse };

/**
 * Issue 33 part 4: an account's platform users, API keys and settings (its groups: workspace.groups.routes.ts), for its admins (API key or console
 * session): docs/authoring.md "Users, groups and API keys" and "Account settings".
 */
export function accountAdminRoutes(ctx: AccountAdminContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/users', {
      schema: { operationId: 'listUsers', tags, security, summary: "The account's platform users, oldest first", response: { 200: Described(UserList, 'Every platform user of the account'), ...adminErrorResponses } },
    }, async (request) => listUsers(ctx, requirePlatformUser(request)));

    app.post('/api/v1/users', {
      schema: {
        operationId: 'createUser', tags, security, summary: 'Add a platform user (admin or member), with a console password if given',
        body: CreateUserBody, response: { 201: Described(User, 'The user'), ...withConflict },
      },
    }, async (request, reply) => reply.status(201).send(await createUser(ctx, requirePlatformUser(request), request.body)));

    app.get('/api/v1/users/:userId', {
      schema: { operationId: 'getUser', tags, security, summary: 'One platform user of the account', params: UserParams, response: { 200: Described(User, 'The user'), ...adminErrorResponses } },
    }, async (request) => getUser(ctx, requirePlatformUser(request), request.params.userId));

    app.patch('/api/v1/users/:userId', {
      schema: {
        operationId: 'updateUser', tags, security,
        summary: "Change a user's email, first name, role or console password (null: no console sign-in); the account keeps one admin",
        params: UserParams, body: UpdateUserBody, response: { 200: Described(User, 'The user as changed'), ...withConflict },
      },
    }, async (request) => changeUser(ctx, requirePlatformUser(request), request.params.userId, request.body));

    app.delete('/api/v1/users/:userId', {
      schema: {
        operationId: 'deleteUser', tags, security,
        summary: 'Delete a user: their API keys and console sessions stop working at once; what they made stays',
        params: UserParams, response: { 204: NoContent, ...withConflict },
      },
    }, async (request, reply) => {
      await removeUser(ctx, requirePlatformUser(request), request.params.userId);
      return reply.status(204).send(null);
    });

    app.get('/api/v1/users/:userId/api-keys', {
      schema: {
        operationId: 'listApiKeys', tags, security, summary: "A user's API keys: name, last four characters, when made (never the keys)",
        params: UserParams, response: { 200: Described(ApiKeyList, "The user's keys"), ...adminErrorResponses },
      },
    }, async (request) => listApiKeys(ctx, requirePlatformUser(request), request.params.userId));

    app.post('/api/v1/users/:userId/api-keys', {
      schema: {
        operationId: 'createApiKey', tags, security, summary: 'Make an API key for a user: the key is in this answer only',
        params: UserParams, body: CreateApiKeyBody, response: { 201: Described(NewApiKey, 'The key, shown once'), ...adminErrorResponses },
      },
    }, async (request, reply) => reply.status(201).header('cache-control', 'no-store').send(await createApiKey(ctx, requirePlatformUser(request), request.params.userId, request.body)));

    app.delete('/api/v1/users/:userId/api-keys/:keyId', {
      schema: {
        operationId: 'deleteApiKey', tags, security, summary: 'Delete an API key: refused on its next request, in every process',
        params: ApiKeyParams, response: { 204: NoContent, ...adminErrorResponses },
      },
    }, async (request, reply) => {
      await removeApiKey(ctx, requirePlatformUser(request), request.params.userId, request.params.keyId);
      return reply.status(204).send(null);
    });

    app.get('/api/v1/account/settings', {
      schema: {
        operationId: 'getAccountSettings', tags, security, summary: 'The settings embeds read: allowed origins, comments, time zone, locale',
        response: { 200: Described(AccountSettings, "The account's settings"), ...adminErrorResponses },
      },
    }, async (request) => readAccountSettings(ctx, requirePlatformUser(request)));

    app.patch('/api/v1/account/settings', {
      schema: {
        operationId: 'updateAccountSettings', tags, security, summary: 'Change the settings named in the body; embeds read them on their next load',
        body: UpdateAccountSettingsBody, response: { 200: Described(AccountSettings, 'The settings as changed'), ...adminErrorResponses },
      },
    }, async (request) => changeAccountSettings(ctx, requirePlatformUser(request), request.body));
  };
}
