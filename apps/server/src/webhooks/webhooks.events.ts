import type { Kysely } from 'kysely';
import type { CommentEventContext, CommentEvents } from '../comments/comments.events.js';
import type { AfterCommit, EventBus } from '../core/core.events.js';
import { isoTimestamp } from '../core/core.time.js';
import type { Database, WebhookEventType } from '../db/db.schema.js';
import type { SessionEvents } from '../sessions/sessions.events.js';
import { findEmbedIdentity } from '../sessions/sessions.store.js';
import { enqueueWebhookEvent } from './webhooks.outbox.js';
import type { WebhookEventContent } from './webhooks.outbox.js';

/** The domain events webhook deliveries are made of: those of comments and of sessions. */
export type WebhookSourceEvents = CommentEvents & SessionEvents;

/** What the outbox needs of any event: the change's transaction, what runs after its commit, and its time. */
interface OutboxEvent {
  transaction: Kysely<Database>;
  afterCommit: AfterCommit;
  at: Date;
}

/**
 * Subscribes the webhook outbox to the domain events (issue 23; docs/webhooks.md "Events" is what each becomes): an
 * event is written as its deliveries with the transaction it carries, so that a delivery exists exactly when its
 * change commits, and rolls back with it. Once a change that wrote deliveries has committed, `wakeDelivery` tells
 * this process's dispatcher to look at once rather than at its next poll. The people's identities (tenant name,
 * external id) are read only when some endpoint wants the event.
 *
 * @example
 * const events = new EventBus<WebhookSourceEvents>();
 * subscribeWebhookOutbox(events, () => dispatcher.wake());
 */
export function subscribeWebhookOutbox(events: Pick<EventBus<WebhookSourceEvents>, 'subscribe'>, wakeDelivery: () => void): void {
  const write = async (event: OutboxEvent, accountId: number, type: WebhookEventType, content: () => Promise<WebhookEventContent>) => {
    if (await enqueueWebhookEvent(event.transaction, accountId, event.at, type, content) > 0) event.afterCommit.add(wakeDelivery);
  };
  for (const type of ['comment.created', 'comment.edited'] as const) {
    events.subscribe(type, (event) => write(event, event.scope.accountId, type, async () => {
      const { comment } = event;
      const identity = await findEmbedIdentity(event.transaction, event.scope.accountId, event.scope.embedTenantId, comment.embed_user_id);
      return {
        data: {
          embedTenant: identity.tenantName, dashboardId: event.publicId, threadId: comment.parent_id ?? comment.id, commentId: comment.id,
          author: comment.embed_user_id === null ? null : { userId: comment.embed_user_id, externalId: identity.externalId },
          createdAt: comment.created_at, editedAt: comment.edited_at, mentions: event.mentions,
        },
        commentBody: comment.body,
      };
    }));
  }
  events.subscribe('comment.deleted', (event) =>
    write(event, event.scope.accountId, 'comment.deleted', threadContent(event, { commentId: event.commentId, deletedAt: isoTimestamp(event.at) })));
  events.subscribe('thread.resolved', (event) =>
    write(event, event.scope.accountId, 'thread.resolved', threadContent(event, { resolvedAt: event.resolvedAt })));
  events.subscribe('thread.reopened', (event) =>
    write(event, event.scope.accountId, 'thread.reopened', threadContent(event, { reopenedAt: isoTimestamp(event.at) })));
  events.subscribe('embed_session.revoked', (event) => write(event, event.accountId, 'embed_session.revoked', async () => {
    const viewer = event.viewer ?? await findEmbedIdentity(event.transaction, event.accountId, event.embedTenantId, event.embedUserId);
    return {
      data: {
        reason: event.reason, embedTenant: viewer.tenantName, embedUserId: event.embedUserId, externalId: viewer.externalId, userId: event.userId,
        sessions: event.sessions, revokedAt: isoTimestamp(event.at),
      },
    };
  }));
}

/** The `data` of a thread's event or a deletion: the tenant, the dashboard and the thread, `fields`, and who did it. */
function threadContent(event: CommentEventContext & { threadId: number; actorId: number | null }, fields: Record<string, unknown>): () => Promise<WebhookEventContent> {
  return async () => {
    const identity = await findEmbedIdentity(event.transaction, event.scope.accountId, event.scope.embedTenantId, event.actorId);
    return {
      data: {
        embedTenant: identity.tenantName, dashboardId: event.publicId, threadId: event.threadId, ...fields,
        by: event.actorId === null ? null : { userId: event.actorId, externalId: identity.externalId },
      },
    };
  };
}
