import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../core/core.errors.js';
import { Described, ErrorResponse } from '../core/core.schema.js';
import { requireAuthenticated } from '../http/http.auth.js';
import { rateLimitFor } from '../http/http.rate-limit.js';
import { EmbedMeta, ExploreQueryBody, ExploreQueryResult } from './explore.schema.js';
import { readEmbedMeta, runExploreQuery } from './explore.service.js';
import type { ExploreContext, ExploreQueryRequest } from './explore.service.js';

/** Issue 35, exploration in the embed: the meta a viewer builds with, and their explore queries (docs/explore.md). */
export function exploreRoutes(ec: ExploreContext, limit: { max: number; windowMs: number }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/embed/meta', {
      schema: {
        operationId: 'getEmbedMeta', tags: ['Embed'], security: [{ embedToken: [] }],
        summary: "The views and members the viewer's access policies show, in the shape of the console's deployment meta (settings.explore view or create)",
        response: {
          200: Described(EmbedMeta, 'The views (cubes) with the measures and dimensions this viewer may use; a hidden member is not listed'),
          401: ErrorResponse, 403: ErrorResponse, 503: ErrorResponse,
        },
      },
    }, async (request) => readEmbedMeta(ec.data, requireAuthenticated(request)));

    app.post('/api/v1/embed/explore/query', {
      schema: {
        operationId: 'runExploreQuery', tags: ['Embed'], security: [{ embedToken: [] }],
        summary: "Run a viewer's own semantic query (settings.explore create) or a saved chart's (view), answered as widget data under the viewer's policies",
        description: 'At most SVC_EXPLORE_MAX_ROWS rows (`truncated`); a statement past SVC_EXPLORE_TIMEOUT_MS is a 504. A data source marked exploreRequiresRollup refuses a query no pre-aggregation answers (400 `query_too_broad`). Too many explore queries of the session (a minute) or of its embed tenant (at once) are a 429 with Retry-After.',
        body: ExploreQueryBody,
        response: {
          200: Described(ExploreQueryResult, "The rows, in the widget data answer's shape"),
          400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 422: ErrorResponse, 429: ErrorResponse, 503: ErrorResponse, 504: ErrorResponse,
        },
      },
      // Per embed session: how many previews a viewer's builder may ask for a minute.
      config: rateLimitFor(limit.max, limit.windowMs, (request) => {
        const principal = request.principal;
        return principal.kind === 'embed' ? `explore:${principal.accountId}:${principal.sessionId}` : `explore-other:${request.ip}`;
      }),
    }, async (request, reply) => {
      try {
        return await runExploreQuery(ec, requireAuthenticated(request), request.body as ExploreQueryRequest);
      } catch (error) {
        // The tenant's queue is full: a 429 that says when to come back, as the rate limits' do.
        if (error instanceof AppError && error.code === 'too_many_requests') void reply.header('retry-after', 1);
        throw error;
      }
    });
  };
}
