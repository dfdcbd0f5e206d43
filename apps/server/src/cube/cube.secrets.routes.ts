import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Described, ErrorResponse, Id, NoContent } from '../core/core.schema.js';
import { requirePlatformUser } from '../http/http.auth.js';
import { createCubeSecret, revokeCubeSecret } from './cube.secrets.js';
import type { CubeSecretContext } from './cube.secrets.js';

// Issue 36 (docs/cube.md "A Cube JWT"): admins make, rotate and revoke a deployment's Cube API secret, the HS256 key
// a host's backend signs Cube JWTs with.

const CubeSecret = Type.Object({
  deploymentId: Type.Integer(),
  secret: Type.String({ description: 'The Cube API secret (HS256 key), shown this once: svc keeps it sealed and never shows it again' }),
  createdAt: Type.String({ format: 'date-time' }),
}, { title: 'CubeSecret' });
const Params = Type.Object({ deploymentId: Id });
const ERRORS = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse };

export function cubeSecretRoutes(ctx: CubeSecretContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/v1/deployments/:deploymentId/cube-secret', {
      schema: {
        operationId: 'createCubeSecret', tags: ['Cube'], security: [{ bearerAuth: [] }],
        summary: 'Makes the deployment\'s Cube API secret, or rotates it: tokens signed with the previous one are refused at once (admins)',
        params: Params,
        response: { 201: Described(CubeSecret, 'The new secret, shown once'), ...ERRORS },
      },
    }, async (request, reply) => {
      const made = await createCubeSecret(ctx, requirePlatformUser(request), request.params.deploymentId);
      reply.header('cache-control', 'no-store');
      return reply.status(201).send(made);
    });

    app.delete('/api/v1/deployments/:deploymentId/cube-secret', {
      schema: {
        operationId: 'revokeCubeSecret', tags: ['Cube'], security: [{ bearerAuth: [] }],
        summary: 'Removes the deployment\'s Cube API secret: no Cube JWT is accepted for it until a new one is made (admins)',
        params: Params,
        response: { 204: Described(NoContent, 'The secret is removed (or there was none)'), ...ERRORS },
      },
    }, async (request, reply) => {
      await revokeCubeSecret(ctx, requirePlatformUser(request), request.params.deploymentId);
      return reply.status(204).send(null);
    });
  };
}
