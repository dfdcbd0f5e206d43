import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Described, ErrorResponse } from '../core/core.schema.js';
import { requirePlatformUser } from '../http/http.auth.js';
import { ifMatchRevision, sendEtag } from '../http/http.preconditions.js';
import { checkModelChange, listDeployments, readDeployment, readMeta, replaceModel } from './deployments.service.js';
import type { AuthoringContext } from './deployments.service.js';
import { Deployment, DeploymentList, DeploymentParams, ModelBody, ModelCheck, ModelIfMatch, ModelMeta, ModelQuery } from './deployments.schema.js';

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
        response: { 200: Described(DeploymentList, 'The deployments, by id'), 401: ErrorResponse, 403: ErrorResponse },
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

    app.post('/api/v1/deployments/:deploymentId/model/check', {
      schema: {
        operationId: 'checkDeploymentModel', tags: ['Authoring'], security: [{ bearerAuth: [] }],
        summary: 'Check a model as a replace would, writing nothing: what it changes and the published widgets it breaks (admins only)',
        description: "The body is a replace's. A model the import's checks refuse is a 400 at the JSON path of the problem, as a replace's would be.",
        params: DeploymentParams,
        body: ModelBody,
        response: {
          200: Described(ModelCheck, 'It passes the checks: what it changes, and what it breaks'),
          400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 413: ErrorResponse,
        },
      },
    }, async (request) => checkModelChange(ctx, requirePlatformUser(request), request.params.deploymentId, request.body));

    app.put('/api/v1/deployments/:deploymentId/model', {
      schema: {
        operationId: 'replaceDeploymentModel', tags: ['Authoring'], security: [{ bearerAuth: [] }],
        summary: "Replace the deployment's semantic views (and data source), over the revision If-Match names (admins only)",
        description: 'A stale If-Match is a 412, none a 428. A model that would break a widget of a published dashboard is a 409 listing each in error.details, unless force=true.',
        params: DeploymentParams,
        headers: ModelIfMatch,
        querystring: ModelQuery,
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
