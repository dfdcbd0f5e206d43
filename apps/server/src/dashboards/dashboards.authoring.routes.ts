import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Described, ErrorResponse, Id, NoContent, Nullable } from '../core/core.schema.js';
import { requirePlatformUser } from '../http/http.auth.js';
import { ifMatchRevision, sendEtag } from '../http/http.preconditions.js';
import { Dashboard, DashboardConfig, ReportSnapshot } from '../workspace/workspace.dashboard-schema.js';
import { archiveDashboard, createDashboard, listVersions, publishDraft, readAuthoredDashboard, replaceDraft, restoreVersion } from './dashboards.authoring.js';
import type { AuthoredDashboard, AuthoringContext } from './dashboards.authoring.js';

const SnapshotInput = Type.Object({
  ...Type.Omit(ReportSnapshot, ['id', 'reportId', 'versionNumber']).properties,
  reportId: Type.Optional(Nullable(Id)),
}, { additionalProperties: false, title: 'ReportSnapshotInput', description: "A chart's report snapshot; without reportId, publishing makes a REPORT item for it beside the workbook" });

const draftFields = {
  title: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  allowEmbed: Type.Optional(Type.Boolean({ description: 'Whether embeds may show it once published (default true)' })),
  config: DashboardConfig,
  reportSnapshots: Type.Optional(Type.Array(SnapshotInput, { maxItems: 500 })),
};

const DraftBody = Type.Object(draftFields, { additionalProperties: false, title: 'DashboardDraftInput' });

const CreateBody = Type.Object({
  ...draftFields,
  title: Type.String({ minLength: 1, maxLength: 255, description: 'The title, also the workbook item\'s name' }),
  publicId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Default: one svc makes' })),
  folderId: Type.Optional(Id),
}, { additionalProperties: false, title: 'DashboardCreateInput' });

const Draft = Type.Object({
  title: Nullable(Type.String()), description: Nullable(Type.String()), allowEmbed: Type.Boolean(), config: DashboardConfig,
  reportSnapshots: Type.Array(Type.Object({}, { additionalProperties: true })),
}, { title: 'DashboardDraft' });

const AuthoredDashboard = Type.Object({
  publicId: Type.String(),
  deploymentId: Type.Integer(),
  workbookId: Type.Integer(),
  status: Type.Enum(['draft', 'published', 'archived']),
  createdBy: Nullable(Type.Integer()),
  published: Described(Nullable(Dashboard), 'The version viewers see, or null before the first publish'),
  draft: Described(Nullable(Draft), 'The draft, or null when nothing changed since the last publish'),
  draftRevision: Type.Integer({ description: 'The draft\'s ETag is "draft-<draftRevision>"' }),
}, { title: 'AuthoredDashboard' });

const DashboardVersion = Type.Object({
  versionNumber: Type.Integer(), title: Nullable(Type.String()), publishedAt: Type.String({ format: 'date-time' }), publishedBy: Nullable(Type.Integer()), current: Type.Boolean(),
}, { title: 'DashboardVersion' });

const PublicIdParams = Type.Object({ publicId: Type.String({ minLength: 1, maxLength: 200 }) });
const IfMatch = Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 200, description: 'The draft\'s ETag, "draft-<revision>"' })) });
const errors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse };
const security = [{ bearerAuth: [] }];

/**
 * Issue 33's dashboard routes (docs/authoring.md "Dashboards"): create with a draft, read published and draft,
 * replace the draft over its If-Match revision, publish, list and restore versions, archive.
 */
export function dashboardAuthoringRoutes(ctx: AuthoringContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    const answer = (reply: { header(name: string, value: string): unknown }, dashboard: AuthoredDashboard) => {
      reply.header('etag', `"draft-${dashboard.draftRevision}"`);
      return dashboard;
    };
    /** A write's optional If-Match (publish, restore): absent, whatever draft is current. */
    const optionalIfMatch = (request: Parameters<typeof ifMatchRevision>[0]) => (request.headers['if-match'] === undefined ? undefined : ifMatchRevision(request, 'draft'));

    app.post('/api/v1/deployments/:deploymentId/dashboards', {
      schema: {
        operationId: 'createDashboard', tags: ['Authoring'], security,
        summary: 'Create a workbook with a draft dashboard (in folderId, else the root); publish it for viewers to see it',
        params: Type.Object({ deploymentId: Id }), body: CreateBody,
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
        response: { 200: Described(Type.Object({ items: Type.Array(DashboardVersion) }), 'The versions'), ...errors },
      },
    }, async (request) => ({ items: await listVersions(ctx, requirePlatformUser(request), request.params.publicId) }));

    app.post('/api/v1/dashboards/:publicId/versions/:versionNumber/restore', {
      schema: {
        operationId: 'restoreDashboardVersion', tags: ['Authoring'], security,
        summary: 'Copy a version into the draft (publish it to show it)',
        params: Type.Object({ publicId: PublicIdParams.properties.publicId, versionNumber: Id }), headers: IfMatch,
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
