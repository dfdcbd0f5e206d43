import type { Kysely } from 'kysely';
import type { AfterCommit } from '../core/core.events.js';
import type { Database } from '../db/db.schema.js';
import type { Mention } from './comments.mentions.js';
import type { CommentRow, CommentScope } from './comments.store.js';

/**
 * What every event of comments carries. A subscriber that writes does so with `transaction`, inside the change's
 * transaction, so that its write commits or rolls back with the change (webhooks/ writes its outbox so); what must
 * wait for the commit (a wake-up) it hands to `afterCommit`.
 */
export interface CommentEventContext {
  transaction: Kysely<Database>;
  afterCommit: AfterCommit;
  /** The account, embed tenant and dashboard of the comment. */
  scope: CommentScope;
  /** The dashboard's publicId. */
  publicId: string;
  /** When the change was made, by the service's clock. */
  at: Date;
}

/**
 * The events comments publish, after SPEC B's writes (docs/webhooks.md "Events" says what a webhook endpoint is sent
 * of each). The ids of people are embed user ids.
 */
export interface CommentEvents {
  /** A thread was started or a reply posted (`comment.parent_id` tells which), mentioning `mentions`. */
  'comment.created': CommentEventContext & { comment: CommentRow; mentions: readonly Mention[] };
  /** Its author replaced a comment's body. */
  'comment.edited': CommentEventContext & { comment: CommentRow; mentions: readonly Mention[] };
  /** Its author deleted a comment of thread `threadId` (the thread root takes the thread with it). */
  'comment.deleted': CommentEventContext & { threadId: number; commentId: number; actorId: number | null };
  /** The root's author resolved a thread. */
  'thread.resolved': CommentEventContext & { threadId: number; actorId: number | null; resolvedAt: string | null };
  /** The root's author re-opened a thread. */
  'thread.reopened': CommentEventContext & { threadId: number; actorId: number | null };
}
