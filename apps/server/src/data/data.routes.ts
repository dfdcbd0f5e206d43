import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuthenticated, requirePlatformUser } from '../http/http.auth.js';
import { Described, ErrorResponse, Id } from '../core/core.schema.js';
import { answerQuestion } from './data.ai.js';
import type { AiQueryRequest, AiSettings } from './data.ai.js';
import { AiAnswer, AiQueryBody, AppQueryBody, AppQueryResult, CheckedFilters, CheckFiltersBody, PreviewBody, PreviewResult, WidgetDataBody, WidgetDataResponse } from './data.schema.js';
import { previewQuery } from './data.preview.js';
import type { PreviewRequest } from './data.preview.js';
import { appQuery, checkFilters, widgetData } from './data.service.js';
import type { WidgetDataRequest } from './data.service.js';
import type { ViewerFilterValue } from './data.viewer.js';
import type { DataContext } from './data.scope.js';

/** Issue 7: the widget data endpoint of the embed API, and questions in plain language. */
export function dataRoutes(dc: DataContext, ai: AiSettings): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/v1/embed/dashboard/:publicId/widgets/:widgetId/data', {
      schema: {
        operationId: 'getWidgetData', tags: ['Embed'], security: [{ embedToken: [] }, { bearerAuth: [] }],
        summary: "Run one widget's query (a CHART's report snapshot, a FILTER's values) with the viewer's filters and time zone",
        params: Type.Object({ publicId: Type.String({ minLength: 1, maxLength: 200 }), widgetId: Type.String({ minLength: 1, maxLength: 200 }) }),
        body: WidgetDataBody,
        response: {
          200: WidgetDataResponse, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse,
          422: ErrorResponse, 503: ErrorResponse, 504: ErrorResponse,
        },
      },
    }, async (request) => widgetData(dc, requireAuthenticated(request), request.params.publicId, request.params.widgetId, request.body as WidgetDataRequest));

    app.post('/api/v1/embed/dashboard/:publicId/filters/check', {
      schema: {
        operationId: 'checkDashboardFilters', tags: ['Embed'], security: [{ embedToken: [] }, { bearerAuth: [] }],
        summary: "Check filters as the dashboard's widget data requests would (declared dimensions the viewer may see, values of their type), running nothing",
        params: Type.Object({ publicId: Type.String({ minLength: 1, maxLength: 200 }) }),
        body: CheckFiltersBody,
        response: { 200: CheckedFilters, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 503: ErrorResponse },
      },
    }, async (request) => checkFilters(dc, requireAuthenticated(request), request.params.publicId, request.body as { filters: Record<string, ViewerFilterValue>; timezone?: string }));

    app.post('/api/v1/deployments/:deploymentId/query', {
      schema: {
        operationId: 'previewQuery', tags: ['Authoring'], security: [{ bearerAuth: [] }],
        summary: 'Run a semantic query or a report snapshot on a deployment, as yourself or (admins) as a viewer would see it',
        params: Type.Object({ deploymentId: Id }),
        body: PreviewBody,
        response: {
          200: Described(PreviewResult, 'The rows, in the widget data answer\'s shape; the statement that ran, for admins'),
          400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 422: ErrorResponse, 503: ErrorResponse, 504: ErrorResponse,
        },
      },
    }, async (request) => previewQuery(dc, requirePlatformUser(request), request.params.deploymentId, request.body as PreviewRequest));

    app.post('/api/v1/embed/dashboard/:publicId/query', {
      schema: {
        operationId: 'runAppQuery', tags: ['Embed'], security: [{ embedToken: [] }, { bearerAuth: [] }],
        summary: "An APP dashboard's semantic query (the app asks through the embed's bridge); other dashboards: 403",
        params: Type.Object({ publicId: Type.String({ minLength: 1, maxLength: 200 }) }),
        body: AppQueryBody,
        response: {
          200: AppQueryResult,
          400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 503: ErrorResponse, 504: ErrorResponse,
        },
      },
    }, async (request) => appQuery(dc, requireAuthenticated(request), request.params.publicId, request.body));

    app.post('/api/v1/embed/ai/query', {
      schema: {
        operationId: 'askQuestion', tags: ['Embed'], security: [{ embedToken: [] }, { bearerAuth: [] }],
        summary: 'Answer a question in plain language: the configured OpenAI-compatible model picks a semantic query (tool call), svc checks and runs it',
        body: AiQueryBody,
        response: {
          200: AiAnswer, 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 422: ErrorResponse,
          502: ErrorResponse, 503: ErrorResponse, 504: ErrorResponse,
        },
      },
    }, async (request) => answerQuestion(dc, ai, requireAuthenticated(request), request.body as AiQueryRequest));
  };
}
