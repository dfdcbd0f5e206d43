import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuthenticated } from '../http/http.auth.js';
import type { ServiceContext } from '../db/db.context.js';
import { Described, ErrorResponse, Id } from '../core/core.schema.js';
import { Dashboard } from '../workspace/workspace.dashboard-schema.js';
import { readDashboard, readWorkbookDashboard } from './dashboards.service.js';

/** DESIGN: `GET /api/v1/embed/dashboard/{publicId}`, the dashboard an embed shows. */
export function dashboardRoutes(ctx: ServiceContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/embed/dashboard/:publicId', {
      schema: {
        operationId: 'getEmbedDashboard', tags: ['Embed'], security: [{ embedToken: [] }, { bearerAuth: [] }],
        summary: 'Read a published, embeddable dashboard with its config and report snapshots',
        params: Type.Object({ publicId: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: Described(Dashboard, 'The published dashboard: its title, layout and widgets'), 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse },
      },
    }, async (request) => readDashboard(ctx, requireAuthenticated(request), request.params.publicId));

    app.get('/api/v1/embed/deployments/:deploymentId/workbooks/:workbookId/dashboard', {
      schema: {
        operationId: 'getEmbedWorkbookDashboard', tags: ['Embed'], security: [{ embedToken: [] }, { bearerAuth: [] }],
        summary: "A workbook's published, embeddable dashboard (the in-embed path /embed/d/{deploymentId}/app/workbook/{workbookId})",
        params: Type.Object({ deploymentId: Id, workbookId: Id }),
        response: { 200: Described(Dashboard, "The workbook's dashboard: its title, layout and widgets"), 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse },
      },
    }, async (request) => readWorkbookDashboard(ctx, requireAuthenticated(request), request.params.deploymentId, request.params.workbookId));
  };
}
