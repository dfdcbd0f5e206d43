import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Described, ErrorResponse, Id, Nullable } from '../core/core.schema.js';
import { requirePlatformUser } from '../http/http.auth.js';
import { ifMatchRevision, sendEtag } from '../http/http.preconditions.js';
import { listDeployments, readDeployment, readMeta, replaceModel } from './deployments.service.js';
import type { AuthoringContext } from './deployments.service.js';

const AnyObject = Type.Object({}, { additionalProperties: true });

const DeploymentSummary = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  modelRevision: Type.Integer({ description: 'The revision of its model: its ETag is "model-<modelRevision>"' }),
}, { title: 'DeploymentSummary' });

const Deployment = Type.Object({
  ...DeploymentSummary.properties,
  dataSource: Type.Object({ type: Type.String() }, { additionalProperties: true, description: 'The data source, its secrets (a PostgreSQL password) shown as ****' }),
  semanticViews: Type.Array(AnyObject, { description: 'The semantic views, as the import file writes them' }),
  demoModel: Type.Boolean({ description: 'True while the deployment runs on the bundled demo views (none of its own stored yet)' }),
}, { title: 'Deployment' });

const MetaMember = Type.Object({
  name: Type.String(), title: Type.String(), shortTitle: Type.String(), type: Type.String(),
  aggType: Type.Optional(Type.String()), format: Type.Optional(Type.String()), decimalPlaces: Type.Optional(Nullable(Type.Integer())), primaryKey: Type.Optional(Type.Boolean()),
}, { title: 'MetaMember' });

const ModelMeta = Type.Object({
  modelRevision: Type.Integer(),
  cubes: Type.Array(Type.Object({
    name: Type.String(), title: Type.String(), type: Type.String(),
    measures: Type.Array(MetaMember), dimensions: Type.Array(MetaMember), segments: Type.Array(MetaMember),
    joins: Type.Array(Type.Object({ name: Type.String(), relationship: Type.String() })),
    drillMembers: Type.Array(Type.String()),
    preAggregations: Type.Array(Type.Object({
      name: Type.String(), measures: Type.Array(Type.String()), dimensions: Type.Array(Type.String()), timeDimension: Nullable(Type.String()), granularity: Nullable(Type.String()),
    })),
  }, { title: 'MetaCube' })),
}, { title: 'ModelMeta' });

const ModelBody = Type.Object({
  semanticViews: Type.Array(AnyObject, { description: 'The semantic views (docs/data.md): checked as the import checks a deployment\'s, errors at their JSON path' }),
  dataSource: Type.Optional(Type.Object({ type: Type.String() }, { additionalProperties: true, description: 'The data source; left out: unchanged. A password sent back as **** keeps the current one' })),
}, { additionalProperties: true, title: 'ModelBody' });

const DeploymentParams = Type.Object({ deploymentId: Id });

/**
 * Issue 33's model routes (docs/authoring.md "The model"): the account's deployments, one with its model, its meta
 * for authors, and the model replaced over the revision its If-Match names.
 */
export function deploymentRoutes(ctx: AuthoringContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/deployments', {
      schema: {
        operationId: 'listDeployments', tags: ['Authoring'], security: [{ bearerAuth: [] }],
        summary: "The account's deployments",
        response: { 200: Described(Type.Object({ items: Type.Array(DeploymentSummary) }), 'The deployments, by id'), 401: ErrorResponse, 403: ErrorResponse },
      },
    }, async (request) => ({ items: await listDeployments(ctx, requirePlatformUser(request)) }));

    app.get('/api/v1/deployments/:deploymentId', {
      schema: {
        operationId: 'getDeployment', tags: ['Authoring'], security: [{ bearerAuth: [] }],
        summary: 'A deployment with its data source (secrets redacted) and semantic views; its ETag names the model revision',
        params: DeploymentParams,
        response: { 200: Described(Deployment, 'The deployment and its model'), 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse },
      },
    }, async (request, reply) => {
      const deployment = await readDeployment(ctx, requirePlatformUser(request), request.params.deploymentId);
      sendEtag(reply, 'model', deployment.modelRevision);
      return deployment;
    });

    app.get('/api/v1/deployments/:deploymentId/meta', {
      schema: {
        operationId: 'getDeploymentMeta', tags: ['Authoring'], security: [{ bearerAuth: [] }],
        summary: "What the deployment's model offers authors, in the shape of Cube's /v1/meta",
        params: DeploymentParams,
        response: { 200: Described(ModelMeta, 'The views (cubes) with their measures, dimensions, segments, joins and pre-aggregations'), 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse },
      },
    }, async (request, reply) => {
      const meta = await readMeta(ctx, requirePlatformUser(request), request.params.deploymentId);
      sendEtag(reply, 'model', meta.modelRevision);
      return meta;
    });

    app.put('/api/v1/deployments/:deploymentId/model', {
      schema: {
        operationId: 'replaceDeploymentModel', tags: ['Authoring'], security: [{ bearerAuth: [] }],
        summary: "Replace the deployment's semantic views (and data source), over the revision If-Match names (admins only)",
        description: 'A stale If-Match is a 412, none a 428. A model that would break a widget of a published dashboard is a 409 listing each in error.details, unless force=true.',
        params: DeploymentParams,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 200, description: 'The ETag of the model you changed, as its GET answered: "model-<revision>"' })) }),
        querystring: Type.Object({ force: Type.Optional(Type.Boolean({ description: 'Replace it even though published widgets break (each is named in the audit log)' })) }, { additionalProperties: false }),
        body: ModelBody,
        response: {
          200: Described(Deployment, 'The deployment with its new model; the ETag names the new revision'),
          400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 409: ErrorResponse, 412: ErrorResponse, 413: ErrorResponse, 428: ErrorResponse,
        },
      },
    }, async (request, reply) => {
      const principal = requirePlatformUser(request);
      const over = ifMatchRevision(request, 'model');
      const deployment = await replaceModel(ctx, principal, request.params.deploymentId, over, request.body, request.query.force === true);
      sendEtag(reply, 'model', deployment.modelRevision);
      return deployment;
    });
  };
}
