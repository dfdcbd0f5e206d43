import type { Kysely } from 'kysely';
import { isoTimestamp } from '../core/core.time.js';
import type { Database, WebhookEventType } from '../db/db.schema.js';
import { generateEventId } from './webhooks.signing.js';
import { insertDeliveries, selectEnabledEndpoints } from './webhooks.store.js';

/** What an event says (its `data`), and the comment's text, which only endpoints that opted in receive (`body`). */
export interface WebhookEventContent {
  data: Record<string, unknown>;
  commentBody?: string;
}

/**
 * Writes an event of the account to the outbox: one delivery for each enabled endpoint subscribed to its type, each
 * with the exact body it will send (`{"type", "timestamp", "data"}`; `data.body` only for an endpoint with
 * `includeCommentBody`). Call it with the transaction that makes the change, so that the event exists exactly when
 * the change commits (webhooks.events.ts calls it so, for each domain event). `content` is read only when some
 * endpoint wants the event. The number of deliveries written.
 *
 * @example
 * await db.transaction().execute(async (trx) => {
 *   const row = await insertComment(trx, scope, values);
 *   await enqueueWebhookEvent(trx, accountId, now, 'comment.created', async () => ({ data: { commentId: row.id } }));
 * });
 */
export async function enqueueWebhookEvent(
  db: Kysely<Database>, accountId: number, now: Date, type: WebhookEventType, content: () => Promise<WebhookEventContent>,
): Promise<number> {
  const endpoints = (await selectEnabledEndpoints(db, accountId)).filter((endpoint) => parseEventTypes(endpoint.event_types).includes(type));
  if (endpoints.length === 0) return 0;
  const { data, commentBody } = await content();
  const timestamp = isoTimestamp(now);
  const eventId = generateEventId();
  await insertDeliveries(db, endpoints.map((endpoint) => ({
    account_id: accountId, endpoint_id: endpoint.id, event_id: eventId, event_type: type,
    payload: JSON.stringify({ type, timestamp, data: endpoint.include_comment_body === 1 && commentBody !== undefined ? { ...data, body: commentBody } : data }),
    status: 'pending' as const, final_attempt: null, next_attempt_at: timestamp, created_at: timestamp,
  })));
  return endpoints.length;
}

/** An endpoint's `event_types` column. */
export function parseEventTypes(json: string): WebhookEventType[] {
  try {
    const value = JSON.parse(json) as unknown;
    return Array.isArray(value) ? value.filter((type): type is WebhookEventType => typeof type === 'string') : [];
  } catch {
    return [];
  }
}
