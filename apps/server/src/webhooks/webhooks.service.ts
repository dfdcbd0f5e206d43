import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { isoTimestamp } from '../core/core.time.js';
import type { ServiceContext } from '../db/db.context.js';
import { decodeCursor, encodeCursor, fingerprintQuery, invalidCursor, isCursorId, pageInfoOf } from '../core/core.cursor.js';
import { AppError } from '../core/core.errors.js';
import { isAllowedPrivateWebhookUrls } from '../accounts/accounts.store.js';
import { requireAdmin } from '../accounts/accounts.policy.js';
import { checkWebhookUrl } from './webhooks.addresses.js';
import type { ResolveHost } from './webhooks.addresses.js';
import { parseEventTypes } from './webhooks.outbox.js';
import { DEFAULT_DELIVERY_PAGE, MAX_DELIVERY_PAGE, MAX_ENDPOINTS_PER_ACCOUNT } from './webhooks.schema.js';
import type { CreateEndpointBody, Delivery, DeliveryList, DeliveryListQuery, Endpoint, EndpointWithSecret, UpdateEndpointBody } from './webhooks.schema.js';
import { generateWebhookSecret, webhookKeyOf } from './webhooks.signing.js';
import {
  countEndpoints, deleteEndpoint, findDelivery, findEndpoint, insertEndpoint, markDeliveryForReplay, selectAttempts,
  selectDeliveries, selectEndpoints, updateEndpoint,
} from './webhooks.store.js';
import type { Sealer } from '../core/core.sealed.js';
import type { EndpointChanges, WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from './webhooks.store.js';

/** What the webhook endpoints' rules need besides the database: which addresses every account may use, and DNS. */
export interface WebhookContext extends ServiceContext {
  /** SVC_WEBHOOKS_ALLOW_PRIVATE: every account may use private addresses. */
  allowPrivate: boolean;
  resolveHost: ResolveHost;
  /** Seals signing secrets at rest (SVC_ENCRYPTION_KEY); the answers show them as given or generated. */
  sealer: Sealer;
  /** Tells this process's dispatcher that deliveries are due now (app.ts gives its wake-up; none: nothing). */
  wakeDelivery: () => void;
}

/** The reason recorded when an account disables its endpoint itself. */
export const DISABLED_BY_ACCOUNT = 'disabled through the API';

function presentEndpoint(row: WebhookEndpointRow): Endpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: parseEventTypes(row.event_types),
    includeCommentBody: row.include_comment_body === 1,
    enabled: row.disabled_at === null,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function presentDelivery(row: WebhookDeliveryRow, attempts: readonly WebhookAttemptRow[]): Delivery {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
    payload: JSON.parse(row.payload) as unknown,
    attemptLog: attempts.map((a) => ({ attempt: a.attempt, attemptedAt: a.attempted_at, statusCode: a.status_code, durationMs: a.duration_ms, error: a.error })),
  };
}

/** A caller-given secret, checked beyond its schema: its base64 must decode to 24 to 64 bytes. */
function requireSecret(secret: string): string {
  if (webhookKeyOf(secret) === undefined) {
    throw new AppError('invalid_body', 'secret must be whsec_ followed by 24 to 64 bytes in base64 (padded): leave it out and svc generates one', 'secret');
  }
  return secret;
}

async function requireAllowedUrl(ctx: WebhookContext, accountId: number, url: string): Promise<string> {
  const allowPrivate = ctx.allowPrivate || await isAllowedPrivateWebhookUrls(ctx.db, accountId);
  return checkWebhookUrl(url, allowPrivate, ctx.resolveHost);
}

const notFound = (endpointId: number) => new AppError('not_found', `webhook endpoint ${endpointId} not found`, 'endpointId');

async function requireEndpoint(ctx: ServiceContext, accountId: number, endpointId: number): Promise<WebhookEndpointRow> {
  const row = await findEndpoint(ctx.db, accountId, endpointId);
  if (row === undefined) throw notFound(endpointId);
  return row;
}

/**
 * Registers an endpoint of the caller's account (admins only): its URL checked (http(s), no private address unless
 * the account may), its events, and a secret: the caller's, or a new one. The answer is the only one that shows
 * the secret.
 */
export async function createEndpoint(ctx: WebhookContext, principal: PlatformUserPrincipal, body: CreateEndpointBody): Promise<EndpointWithSecret> {
  requireAdmin(principal);
  const secret = body.secret === undefined ? generateWebhookSecret() : requireSecret(body.secret);
  const url = await requireAllowedUrl(ctx, principal.accountId, body.url);
  if (await countEndpoints(ctx.db, principal.accountId) >= MAX_ENDPOINTS_PER_ACCOUNT) {
    throw new AppError('conflict', `an account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints: delete one first`, 'url');
  }
  const now = isoTimestamp(ctx.now());
  const row = await insertEndpoint(ctx.db, {
    account_id: principal.accountId, url, description: body.description ?? null, event_types: JSON.stringify(body.eventTypes),
    include_comment_body: body.includeCommentBody === true ? 1 : 0, secret: ctx.sealer.seal(secret), created_at: now, updated_at: now,
  });
  return { ...presentEndpoint(row), secret };
}

export async function listEndpoints(ctx: ServiceContext, principal: PlatformUserPrincipal): Promise<{ items: Endpoint[] }> {
  requireAdmin(principal);
  return { items: (await selectEndpoints(ctx.db, principal.accountId)).map(presentEndpoint) };
}

export async function getEndpoint(ctx: ServiceContext, principal: PlatformUserPrincipal, endpointId: number): Promise<Endpoint> {
  requireAdmin(principal);
  return presentEndpoint(await requireEndpoint(ctx, principal.accountId, endpointId));
}

/**
 * Changes an endpoint: any of its fields; `enabled: true` re-enables it (clearing why it was disabled, and its
 * failure streak), `enabled: false` disables it; `rotateSecret` or `secret` replaces its secret, and the answer
 * then shows the new one. An empty body is a 400.
 */
export async function changeEndpoint(ctx: WebhookContext, principal: PlatformUserPrincipal, endpointId: number, body: UpdateEndpointBody): Promise<Endpoint | EndpointWithSecret> {
  requireAdmin(principal);
  if (Object.keys(body).length === 0) throw new AppError('invalid_body', 'send at least one of url, eventTypes, description, includeCommentBody, enabled, secret, rotateSecret', 'body');
  if (body.rotateSecret !== undefined && body.secret !== undefined) throw new AppError('invalid_body', 'send either secret or rotateSecret, not both', 'rotateSecret');
  if (body.rotateSecret === false) throw new AppError('invalid_body', 'rotateSecret can only be true (leave it out to keep the secret)', 'rotateSecret');
  const existing = await requireEndpoint(ctx, principal.accountId, endpointId);
  const now = isoTimestamp(ctx.now());
  const changes: EndpointChanges = { updated_at: now };
  if (body.url !== undefined) changes.url = await requireAllowedUrl(ctx, principal.accountId, body.url);
  if (body.eventTypes !== undefined) changes.event_types = JSON.stringify(body.eventTypes);
  if (body.description !== undefined) changes.description = body.description;
  if (body.includeCommentBody !== undefined) changes.include_comment_body = body.includeCommentBody ? 1 : 0;
  if (body.enabled === true) Object.assign(changes, { disabled_at: null, disabled_reason: null, failing_since: null });
  if (body.enabled === false && existing.disabled_at === null) Object.assign(changes, { disabled_at: now, disabled_reason: DISABLED_BY_ACCOUNT });
  const secret = body.rotateSecret === true ? generateWebhookSecret() : body.secret === undefined ? undefined : requireSecret(body.secret);
  if (secret !== undefined) changes.secret = ctx.sealer.seal(secret);
  const row = await updateEndpoint(ctx.db, principal.accountId, endpointId, changes);
  if (row === undefined) throw notFound(endpointId);
  if (body.enabled === true) ctx.wakeDelivery();
  return secret === undefined ? presentEndpoint(row) : { ...presentEndpoint(row), secret };
}

export async function removeEndpoint(ctx: ServiceContext, principal: PlatformUserPrincipal, endpointId: number): Promise<void> {
  requireAdmin(principal);
  if (!await deleteEndpoint(ctx.db, principal.accountId, endpointId)) throw notFound(endpointId);
}

function decodeDeliveryCursor(after: string, fingerprint: string): number {
  const [id] = decodeCursor(after, fingerprint, 1);
  if (!isCursorId(id)) throw invalidCursor('malformed');
  return id;
}

/** The delivery log of an endpoint, newest first, each delivery with its attempts; optionally of one status. */
export async function listDeliveries(ctx: ServiceContext, principal: PlatformUserPrincipal, endpointId: number, query: DeliveryListQuery): Promise<DeliveryList> {
  requireAdmin(principal);
  await requireEndpoint(ctx, principal.accountId, endpointId);
  const fingerprint = fingerprintQuery(['webhook-deliveries', principal.accountId, endpointId, query.status ?? null]);
  const before = query.after === undefined ? null : decodeDeliveryCursor(query.after, fingerprint);
  const size = Math.min(query.first ?? DEFAULT_DELIVERY_PAGE, MAX_DELIVERY_PAGE);
  const rows = await selectDeliveries(ctx.db, principal.accountId, endpointId, query.status, before, size + 1);
  const page = rows.slice(0, size);
  const attempts = await selectAttempts(ctx.db, principal.accountId, page.map((row) => row.id));
  return {
    items: page.map((row) => presentDelivery(row, attempts.filter((a) => a.delivery_id === row.id))),
    pageInfo: pageInfoOf(page, rows.length > size, before !== null, (row) => encodeCursor(fingerprint, [row.id])),
  };
}

const deliveryNotFound = (endpointId: number, deliveryId: number) =>
  new AppError('not_found', `delivery ${deliveryId} of webhook endpoint ${endpointId} not found (finished deliveries are removed from the log after the retention period)`, 'deliveryId');

async function requireDelivery(ctx: ServiceContext, accountId: number, endpointId: number, deliveryId: number): Promise<WebhookDeliveryRow> {
  await requireEndpoint(ctx, accountId, endpointId);
  const row = await findDelivery(ctx.db, accountId, endpointId, deliveryId);
  if (row === undefined) throw deliveryNotFound(endpointId, deliveryId);
  return row;
}

export async function getDelivery(ctx: ServiceContext, principal: PlatformUserPrincipal, endpointId: number, deliveryId: number): Promise<Delivery> {
  requireAdmin(principal);
  const row = await requireDelivery(ctx, principal.accountId, endpointId, deliveryId);
  return presentDelivery(row, await selectAttempts(ctx.db, principal.accountId, [row.id]));
}

/**
 * Sends a delivery again, now, with the same event id and body (a failed one, or a delivered one the receiver lost):
 * one more attempt, without a new retry schedule. A delivery still pending is a 409 (it is on its way), and so is
 * one of a disabled endpoint (re-enable it first).
 */
export async function replayDelivery(ctx: WebhookContext, principal: PlatformUserPrincipal, endpointId: number, deliveryId: number): Promise<Delivery> {
  requireAdmin(principal);
  const existing = await requireDelivery(ctx, principal.accountId, endpointId, deliveryId);
  const endpoint = await requireEndpoint(ctx, principal.accountId, endpointId);
  if (endpoint.disabled_at !== null) throw new AppError('conflict', `webhook endpoint ${endpointId} is disabled: re-enable it (PATCH {"enabled": true}) before replaying`, 'endpointId');
  if (existing.status === 'pending') throw new AppError('conflict', `delivery ${deliveryId} is still pending: it will be attempted at ${existing.next_attempt_at}`, 'deliveryId');
  const row = await markDeliveryForReplay(ctx.db, principal.accountId, endpointId, deliveryId, isoTimestamp(ctx.now()));
  if (row === undefined) {
    // Changed since it was read: replayed by another call, or removed by retention in between.
    if (await findDelivery(ctx.db, principal.accountId, endpointId, deliveryId) === undefined) throw deliveryNotFound(endpointId, deliveryId);
    throw new AppError('conflict', `delivery ${deliveryId} is already pending again`, 'deliveryId');
  }
  ctx.wakeDelivery();
  return presentDelivery(row, await selectAttempts(ctx.db, principal.accountId, [row.id]));
}
