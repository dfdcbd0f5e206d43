import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requirePlatformUser } from '../http/http.auth.js';
import { Described, ErrorResponse, NoContent } from '../core/core.schema.js';
import {
  CreateEndpointBody, Delivery, DeliveryList, DeliveryListQuery, DeliveryParams, Endpoint, EndpointList, EndpointParams, EndpointWithSecret,
  UpdateEndpointBody, webhookErrorResponses,
} from './webhooks.schema.js';
import { Type } from 'typebox';
import { changeEndpoint, createEndpoint, getDelivery, getEndpoint, listDeliveries, listEndpoints, removeEndpoint, replayDelivery } from './webhooks.service.js';
import type { WebhookContext } from './webhooks.service.js';

const security = [{ bearerAuth: [] }];
const tags = ['Webhooks'];
const withConflict = { ...webhookErrorResponses, 409: ErrorResponse };

/**
 * Issue 23 part 3: an account's webhook endpoints and their delivery logs, for admins of the account (API key or
 * console session), under `/api/v1/webhooks/endpoints` (docs/webhooks.md).
 */
export function webhookRoutes(ctx: WebhookContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    const base = '/api/v1/webhooks/endpoints';

    app.post(base, {
      schema: {
        operationId: 'createWebhookEndpoint', tags, security,
        summary: 'Register an endpoint: its URL, the events it receives, and a signing secret (yours, or one svc generates and shows once)',
        body: CreateEndpointBody,
        response: { 201: Described(EndpointWithSecret, 'The endpoint, with its secret: the only answer that shows it'), ...withConflict },
      },
    }, async (request, reply) => reply.status(201).send(await createEndpoint(ctx, requirePlatformUser(request), request.body)));

    app.get(base, {
      schema: {
        operationId: 'listWebhookEndpoints', tags, security,
        summary: "The account's webhook endpoints, oldest first, with why any was disabled (never their secrets)",
        response: { 200: Described(EndpointList, "Every endpoint of the account"), ...webhookErrorResponses },
      },
    }, async (request) => listEndpoints(ctx, requirePlatformUser(request)));

    app.get(`${base}/:endpointId`, {
      schema: {
        operationId: 'getWebhookEndpoint', tags, security,
        summary: 'One webhook endpoint of the account: whether it is enabled, and why not',
        params: EndpointParams,
        response: { 200: Described(Endpoint, 'The endpoint (never its secret)'), ...webhookErrorResponses },
      },
    }, async (request) => getEndpoint(ctx, requirePlatformUser(request), request.params.endpointId));

    app.patch(`${base}/:endpointId`, {
      schema: {
        operationId: 'updateWebhookEndpoint', tags, security,
        summary: 'Change an endpoint: URL, events, description, comment text, enabled (re-enable after svc disabled it), or its secret',
        params: EndpointParams, body: UpdateEndpointBody,
        response: { 200: Described(Type.Union([EndpointWithSecret, Endpoint]), 'The endpoint as changed; with `secret` only when the secret was replaced'), ...webhookErrorResponses },
      },
    }, async (request) => changeEndpoint(ctx, requirePlatformUser(request), request.params.endpointId, request.body));

    app.delete(`${base}/:endpointId`, {
      schema: {
        operationId: 'deleteWebhookEndpoint', tags, security,
        summary: 'Delete an endpoint with its pending deliveries and its delivery log',
        params: EndpointParams,
        response: { 204: Described(NoContent, 'The endpoint is deleted'), ...webhookErrorResponses },
      },
    }, async (request, reply) => {
      await removeEndpoint(ctx, requirePlatformUser(request), request.params.endpointId);
      return reply.status(204).send(null);
    });

    app.get(`${base}/:endpointId/deliveries`, {
      schema: {
        operationId: 'listWebhookDeliveries', tags, security,
        summary: "The endpoint's delivery log, newest first: each event with its state and every attempt (status code, duration, error)",
        params: EndpointParams, querystring: DeliveryListQuery,
        response: { 200: Described(DeliveryList, 'One page of deliveries, newest first'), ...webhookErrorResponses },
      },
    }, async (request) => listDeliveries(ctx, requirePlatformUser(request), request.params.endpointId, request.query));

    app.get(`${base}/:endpointId/deliveries/:deliveryId`, {
      schema: {
        operationId: 'getWebhookDelivery', tags, security,
        summary: 'One delivery: its event, the body sent, its state and every attempt',
        params: DeliveryParams,
        response: { 200: Described(Delivery, 'The delivery with its attempts'), ...webhookErrorResponses },
      },
    }, async (request) => getDelivery(ctx, requirePlatformUser(request), request.params.endpointId, request.params.deliveryId));

    app.post(`${base}/:endpointId/deliveries/:deliveryId/replay`, {
      schema: {
        operationId: 'replayWebhookDelivery', tags, security,
        summary: 'Send a failed (or delivered) delivery again now, with the same event id and body: one more attempt',
        params: DeliveryParams,
        response: { 202: Described(Delivery, 'The delivery, pending again'), ...withConflict },
      },
    }, async (request, reply) => reply.status(202).send(await replayDelivery(ctx, requirePlatformUser(request), request.params.endpointId, request.params.deliveryId)));
  };
}
