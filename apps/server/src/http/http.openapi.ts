import swagger from '@fastify/swagger';
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';

/**
 * The OpenAPI 3.1 document, generated from the route schemas, at /api/v1/openapi.json, and the API reference
 * page rendered from it at /docs.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc platform and embed API',
        version: '1.0.0',
        description: 'Workspace listing (platform API), embed sessions and dashboard comments of svc.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (Authorization: Bearer svc_... or Api-Key svc_...), or an embed token on embed endpoints' },
          embedToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Authorization: Embed-Token <embed token>, from POST /api/v1/embed/session/token' },
        },
      },
      tags: [{ name: 'Workspace' }, { name: 'Console' }, { name: 'Embed sessions' }, { name: 'Embed users' }, { name: 'Embed' }, { name: 'Operations' }],
    },
  });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(apiReference, { routePrefix: '/docs', configuration: { url: '/api/v1/openapi.json' } });
}
