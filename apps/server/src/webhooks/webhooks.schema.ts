import { Type } from 'typebox';
import type { Static } from 'typebox';
import { ErrorResponse, Id, Nullable, PageInfo } from '../core/core.schema.js';
import type { WebhookEventType } from '../db/db.schema.js';

/** Issue 23: the event types an endpoint subscribes to (docs/webhooks.md "Events"). */
export const WEBHOOK_EVENT_TYPES = [
  'comment.created', 'comment.edited', 'comment.deleted', 'thread.resolved', 'thread.reopened', 'embed_session.revoked',
] as const satisfies readonly WebhookEventType[];

/** An account has at most this many endpoints. */
export const MAX_ENDPOINTS_PER_ACCOUNT = 20;
export const DEFAULT_DELIVERY_PAGE = 50;
export const MAX_DELIVERY_PAGE = 100;

const Timestamp = Type.String({ format: 'date-time' });
const EventType = Type.Union([
  Type.Literal('comment.created'), Type.Literal('comment.edited'), Type.Literal('comment.deleted'), Type.Literal('thread.resolved'),
  Type.Literal('thread.reopened'), Type.Literal('embed_session.revoked'),
], { description: 'An event type (docs/webhooks.md "Events")' });
const EventTypes = Type.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true, description: 'The events sent to this endpoint' });
const Url = Type.String({ minLength: 1, maxLength: 2000, description: 'http or https; private, loopback and link-local addresses only for accounts allowed them' });
const Description = Nullable(Type.String({ maxLength: 500, description: 'Free text for people' }));
const IncludeCommentBody = Type.Boolean({ description: "Comment events carry the comment's text (`data.body`); off by default" });
const Secret = Type.String({
  minLength: 38, maxLength: 100, pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  description: 'A Standard Webhooks secret: `whsec_` + 24 to 64 bytes in base64. Left out, svc generates one',
});

export const EndpointParams = Type.Object({ endpointId: Id });
export const DeliveryParams = Type.Object({ endpointId: Id, deliveryId: Id });

export const CreateEndpointBody = Type.Object({
  url: Url,
  eventTypes: EventTypes,
  description: Type.Optional(Description),
  includeCommentBody: Type.Optional(IncludeCommentBody),
  secret: Type.Optional(Secret),
}, { additionalProperties: false });
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Type.Object({
  url: Type.Optional(Url),
  eventTypes: Type.Optional(EventTypes),
  description: Type.Optional(Description),
  includeCommentBody: Type.Optional(IncludeCommentBody),
  enabled: Type.Optional(Type.Boolean({ description: 'true re-enables a disabled endpoint (its waiting deliveries resume); false disables it' })),
  secret: Type.Optional(Secret),
  rotateSecret: Type.Optional(Type.Boolean({ description: 'true: svc generates a new secret, shown in this answer only' })),
}, { additionalProperties: false });
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>;

export const Endpoint = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  description: Description,
  eventTypes: Type.Array(EventType),
  includeCommentBody: Type.Boolean(),
  enabled: Type.Boolean({ description: 'false once svc disabled it (disabledReason says why) or the account did' }),
  disabledAt: Nullable(Timestamp),
  disabledReason: Nullable(Type.String({ description: 'Why it was disabled: the failing event and its last error, or "disabled through the API"' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { title: 'WebhookEndpoint' });
export type Endpoint = Static<typeof Endpoint>;

export const EndpointWithSecret = Type.Object({
  ...Endpoint.properties,
  secret: Type.String({ description: 'The signing secret: shown when the endpoint is created or its secret rotated, never again' }),
}, { title: 'WebhookEndpointWithSecret' });
export type EndpointWithSecret = Static<typeof EndpointWithSecret>;

export const EndpointList = Type.Object({ items: Type.Array(Endpoint) }, { title: 'WebhookEndpointList' });

export const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
  description: 'pending: due or waiting for a retry; delivered: a 2xx answer; failed: every attempt failed (replay it)',
});

export const Attempt = Type.Object({
  attempt: Type.Integer({ description: '1 for the first attempt' }),
  attemptedAt: Timestamp,
  statusCode: Nullable(Type.Integer({ description: "The endpoint's HTTP status; null when no answer came" })),
  durationMs: Type.Integer(),
  error: Nullable(Type.String({ description: 'Why the attempt failed: a timeout, a refused address, a connection error, a non-2xx status' })),
}, { title: 'WebhookAttempt' });

export const Delivery = Type.Object({
  id: Type.Integer(),
  eventId: Type.String({ description: 'The stable event id (the `webhook-id` header): the same on every attempt and replay, for de-duplication' }),
  eventType: EventType,
  status: DeliveryStatus,
  attempts: Type.Integer({ description: 'Attempts made so far' }),
  nextAttemptAt: Nullable(Timestamp),
  createdAt: Timestamp,
  deliveredAt: Nullable(Timestamp),
  payload: Type.Unknown({ description: 'The JSON body sent: `{"type", "timestamp", "data"}`' }),
  attemptLog: Type.Array(Attempt, { description: 'Every attempt, oldest first' }),
}, { title: 'WebhookDelivery' });
export type Delivery = Static<typeof Delivery>;

export const DeliveryList = Type.Object({ items: Type.Array(Delivery), pageInfo: PageInfo }, { title: 'WebhookDeliveryList' });
export type DeliveryList = Static<typeof DeliveryList>;

export const DeliveryListQuery = Type.Object({
  status: Type.Optional(DeliveryStatus),
  first: Type.Optional(Type.Integer({ minimum: 1, description: `Page size: default ${DEFAULT_DELIVERY_PAGE}, above ${MAX_DELIVERY_PAGE} clamped` })),
  after: Type.Optional(Type.String({ maxLength: 1024, description: 'The endCursor of the previous page' })),
});
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

export const webhookErrorResponses = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse };
