import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Described, NoContent } from '../core/core.schema.js';
import type { DataContext } from '../data/data.scope.js';
import { requireExplorer } from './explore.policy.js';
import type { Explorer } from './explore.policy.js';
import {
  ChartIdParams, CreateChartBody, CreateViewBody, SavedChart, SavedChartList, SavedListQuery, SavedView, SavedViewList, UpdateChartBody, UpdateViewBody,
  ViewIdParams, ViewsParams, exploreErrorResponses,
} from './explore.schema.js';
import { createChart, createView, editChart, editView, getChart, getView, listCharts, listViews, removeChart, removeView } from './explore.service.js';

const security: Record<string, string[]>[] = [{ embedToken: [] }, { bearerAuth: [] }];
const tags = ['Embed exploration'];

const explorerOf = (request: FastifyRequest): Explorer => requireExplorer(request.principal, request.headers.authorization !== undefined);

/**
 * Issue 35 parts 3 and 4: saved charts (`/api/v1/embed/charts`) and saved views of a dashboard
 * (`/api/v1/embed/dashboard/{publicId}/views`), for the embed viewers of a session with settings.explore.
 */
export function exploreRoutes(dc: DataContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    const charts = '/api/v1/embed/charts';
    app.get(charts, {
      schema: {
        operationId: 'listSavedCharts', tags, security,
        summary: "The caller's private saved charts and their embed tenant's shared ones on the session's deployment, newest first (settings.explore view or create)",
        querystring: SavedListQuery,
        response: { 200: Described(SavedChartList, 'One page of saved charts'), ...exploreErrorResponses },
      },
    }, async (request) => listCharts(dc, explorerOf(request), request.query));

    app.post(charts, {
      schema: {
        operationId: 'createSavedChart', tags, security,
        summary: "Save a chart (a semantic query, its kind and spec), private or shared with the caller's embed tenant (settings.explore create)",
        body: CreateChartBody,
        response: { 201: Described(SavedChart, 'The saved chart'), ...exploreErrorResponses },
      },
    }, async (request, reply) => reply.status(201).send(await createChart(dc, explorerOf(request), request.body)));

    app.get(`${charts}/:chartId`, {
      schema: {
        operationId: 'getSavedChart', tags, security,
        summary: 'One saved chart the caller may see: theirs, or one shared with their embed tenant',
        params: ChartIdParams,
        response: { 200: Described(SavedChart, 'The saved chart, with its query (never rows)'), ...exploreErrorResponses },
      },
    }, async (request) => getChart(dc, explorerOf(request), request.params.chartId));

    app.patch(`${charts}/:chartId`, {
      schema: {
        operationId: 'updateSavedChart', tags, security,
        summary: 'Rename, re-share or change your own saved chart',
        params: ChartIdParams, body: UpdateChartBody,
        response: { 200: Described(SavedChart, 'The saved chart as changed'), ...exploreErrorResponses },
      },
    }, async (request) => editChart(dc, explorerOf(request), request.params.chartId, request.body));

    app.delete(`${charts}/:chartId`, {
      schema: {
        operationId: 'deleteSavedChart', tags, security,
        summary: 'Delete your own saved chart',
        params: ChartIdParams,
        response: { 204: Described(NoContent, 'The saved chart is deleted'), ...exploreErrorResponses },
      },
    }, async (request, reply) => {
      await removeChart(dc, explorerOf(request), request.params.chartId);
      return reply.status(204).send(null);
    });

    const views = '/api/v1/embed/dashboard/:publicId/views';
    app.get(views, {
      schema: {
        operationId: 'listSavedViews', tags, security,
        summary: "The caller's private saved views of a dashboard and their embed tenant's shared ones, newest first (settings.explore view or create)",
        params: ViewsParams, querystring: SavedListQuery,
        response: { 200: Described(SavedViewList, 'One page of saved views'), ...exploreErrorResponses },
      },
    }, async (request) => listViews(dc, explorerOf(request), request.params.publicId, request.query));

    app.post(views, {
      schema: {
        operationId: 'createSavedView', tags, security,
        summary: 'Save the filters, grain, field swaps and a personal layout of saved charts of a dashboard as a named view (settings.explore create)',
        params: ViewsParams, body: CreateViewBody,
        response: { 201: Described(SavedView, 'The saved view'), ...exploreErrorResponses },
      },
    }, async (request, reply) => reply.status(201).send(await createView(dc, explorerOf(request), request.params.publicId, request.body)));

    app.get(`${views}/:viewId`, {
      schema: {
        operationId: 'getSavedView', tags, security,
        summary: 'One saved view of a dashboard the caller may see: theirs, or one shared with their embed tenant',
        params: ViewIdParams,
        response: { 200: Described(SavedView, 'The saved view'), ...exploreErrorResponses },
      },
    }, async (request) => getView(dc, explorerOf(request), request.params.publicId, request.params.viewId));

    app.patch(`${views}/:viewId`, {
      schema: {
        operationId: 'updateSavedView', tags, security,
        summary: 'Rename, re-share or change your own saved view',
        params: ViewIdParams, body: UpdateViewBody,
        response: { 200: Described(SavedView, 'The saved view as changed'), ...exploreErrorResponses },
      },
    }, async (request) => editView(dc, explorerOf(request), request.params.publicId, request.params.viewId, request.body));

    app.delete(`${views}/:viewId`, {
      schema: {
        operationId: 'deleteSavedView', tags, security,
        summary: 'Delete your own saved view',
        params: ViewIdParams,
        response: { 204: Described(NoContent, 'The saved view is deleted'), ...exploreErrorResponses },
      },
    }, async (request, reply) => {
      await removeView(dc, explorerOf(request), request.params.publicId, request.params.viewId);
      return reply.status(204).send(null);
    });
  };
}
