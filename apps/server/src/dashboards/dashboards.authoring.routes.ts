import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Described, ErrorResponse, NoContent } from '../core/core.schema.js';
import { requirePlatformUser } from '../http/http.auth.js';
import { ifMatchRevision, sendEtag } from '../http/http.preconditions.js';
import { AuthoredDashboard, CreateBody, DashboardVersionList, DeploymentParams, DraftBody, IfMatch, PublicIdParams, VersionParams } from './dashboards.authoring.schema.js';
import { archiveDashboard, createDashboard, listVersions, publishDraft, readAuthoredDashboard, replaceDraft, restoreVersion } from './dashboards.authoring.js';
import type { AuthoredDashboard as AuthoredDashboardAnswer, AuthoringContext } from './dashboards.authoring.js';

const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse };
const security = [{ bearerAuth: [] }];

/**
 * Issue 33's dashboard routes (docs/authoring.md "Dashboards"): create with a draft, read published and draft,
 * replace the draft over its If-Match revision, publish, list and restore versions, archive.
 */
export function dashboardAuthoringRoutes(ctx: AuthoringContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    const answer = (reply: { header(name: string, value: string): unknown }, dashboard: AuthoredDashboardAnswer) => {
      reply.header('etag', `"draft-${dashboard.draftRevision}"`);
      return dashboard;
    };
    /** A write's optional If-Match (publish, restore): absent, whatever draft is current. */
    const optionalIfMatch = (request: Parameters<typeof ifMatchRevision>[0]) => (request.headers['if-match'] === undefined ? undefined : ifMatchRevision(request, 'draft'));

    app.post('/api/v1/deployments/:deploymentId/dashboards', {
      schema: {
        operationId: 'createDashboard', tags: ['Authoring'], security,
        summary: 'Create a workbook with a draft dashboard (in folderId, else the root); publish it for viewers to see it',
        params: DeploymentParams, body: CreateBody,
        response: { 201: Described(AuthoredDashboard, 'The new dashboard with its draft; the ETag names the draft\'s revision'), ...errors, 409: ErrorResponse, 413: ErrorResponse },
      },
    }, async (request, reply) => {
      const dashboard = await createDashboard(ctx, requirePlatformUser(request), request.params.deploymentId, request.body);
      sendEtag(reply, 'draft', dashboard.draftRevision);
      return reply.status(201).send(dashboard);
    });

    app.get('/api/v1/dashboards/:publicId', {
      schema: {
        operationId: 'getAuthoredDashboard', tags: ['Authoring'], security,
        summary: 'A dashboard\'s published version and its draft; the ETag names the draft\'s revision',
        params: PublicIdParams,
        response: { 200: Described(AuthoredDashboard, 'The dashboard, published and draft'), ...errors },
      },
    }, async (request, reply) => answer(reply, await readAuthoredDashboard(ctx, requirePlatformUser(request), request.params.publicId)));

    app.put('/api/v1/dashboards/:publicId/draft', {
      schema: {
        operationId: 'replaceDashboardDraft', tags: ['Authoring'], security,
        summary: 'Replace the draft, over the revision If-Match names; viewers never see a draft',
        params: PublicIdParams, headers: IfMatch, body: DraftBody,
        response: { 200: Described(AuthoredDashboard, 'The dashboard with its new draft'), ...errors, 412: ErrorResponse, 413: ErrorResponse, 428: ErrorResponse },
      },
    }, async (request, reply) => {
      const principal = requirePlatformUser(request);
      return answer(reply, await replaceDraft(ctx, principal, request.params.publicId, ifMatchRevision(request, 'draft'), request.body));
    });

    app.post('/api/v1/dashboards/:publicId/publish', {
      schema: {
        operationId: 'publishDashboard', tags: ['Authoring'], security,
        summary: 'Make the draft the next version, atomically; every process serves it on its next request',
        params: PublicIdParams, headers: IfMatch,
        response: { 200: Described(AuthoredDashboard, 'The dashboard, its new version published and no draft'), ...errors, 409: ErrorResponse, 412: ErrorResponse },
      },
    }, async (request, reply) => answer(reply, await publishDraft(ctx, requirePlatformUser(request), request.params.publicId, optionalIfMatch(request))));

    app.get('/api/v1/dashboards/:publicId/versions', {
      schema: {
        operationId: 'listDashboardVersions', tags: ['Authoring'], security,
        summary: 'The published versions, newest first',
        params: PublicIdParams,
        response: { 200: Described(DashboardVersionList, 'The versions'), ...errors },
      },
    }, async (request) => ({ items: await listVersions(ctx, requirePlatformUser(request), request.params.publicId) }));

    app.post('/api/v1/dashboards/:publicId/versions/:versionNumber/restore', {
      schema: {
        operationId: 'restoreDashboardVersion', tags: ['Authoring'], security,
        summary: 'Copy a version into the draft (publish it to show it)',
        params: VersionParams, headers: IfMatch,
        response: { 200: Described(AuthoredDashboard, 'The dashboard with the version as its draft'), ...errors, 412: ErrorResponse },
      },
    }, async (request, reply) => answer(reply, await restoreVersion(ctx, requirePlatformUser(request), request.params.publicId, request.params.versionNumber, optionalIfMatch(request))));

    app.delete('/api/v1/dashboards/:publicId', {
      schema: {
        operationId: 'archiveDashboard', tags: ['Authoring'], security,
        summary: 'Archive the dashboard: viewers no longer open it; its comments, versions and draft stay',
        params: PublicIdParams,
        response: { 204: Described(NoContent, 'Archived (or already archived)'), ...errors },
      },
    }, async (request, reply) => {
      await archiveDashboard(ctx, requirePlatformUser(request), request.params.publicId);
      return reply.status(204).send(null);
    });
  };
}
