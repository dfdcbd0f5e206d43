import type { Principal } from '../core/core.principal.js';
import { AppError } from '../core/core.errors.js';
import type { CommentEventKind } from '../db/db.schema.js';

/**
 * An embed user of an embed tenant: the only caller the comments API serves (SPEC "Authentication", Comments 1
 * and 4). Threads are stored and read per embed tenant (SPEC B rule 6).
 */
export interface Commenter {
  accountId: number;
  deploymentId: number;
  embedTenantId: number;
  embedUserId: number;
  /** The publicIds the session may open (Generate Session's `dashboards`); null: any of its deployment. */
  dashboards: readonly string[] | null;
}

/** What the policy needs to know of a comment. */
export interface CommentFacts {
  embed_user_id: number | null;
  parent_id: number | null;
}

/**
 * SPEC "Authentication", Comments 4: an API key, a console session or an `internalId` session carries no embed
 * tenant, so it gets 403; no credential (or one that did not verify) gets 401.
 */
export function requireCommenter(principal: Principal, hasAuthorization: boolean): Commenter {
  if (principal.kind === 'embed' && principal.embedTenantId !== null && principal.embedUserId !== null) {
    return {
      accountId: principal.accountId, deploymentId: principal.deploymentId, embedTenantId: principal.embedTenantId, embedUserId: principal.embedUserId,
      dashboards: principal.dashboards,
    };
  }
  if (principal.kind === 'anonymous') {
    throw new AppError('unauthorized', hasAuthorization
      ? 'invalid, expired or revoked embed token in the Authorization header'
      : 'missing Authorization header: send Authorization: Embed-Token <embed token>', 'Authorization');
  }
  const what = principal.kind === 'embed' ? (principal.preview !== undefined ? "an admin's preview session (View as a customer)" : principal.userId !== null ? 'an embed session minted with internalId' : 'this embed session') : principal.via === 'console' ? 'a console session' : 'an API key';
  throw new AppError('forbidden', `comments need an embed token of an embed tenant (a session minted with externalId); ${what} has none`, 'Authorization');
}

/** SPEC B rule 5: only the author edits or deletes a comment. A comment whose author was deleted has none. */
export function canEdit(commenter: Commenter, comment: CommentFacts): boolean {
  return comment.embed_user_id !== null && comment.embed_user_id === commenter.embedUserId;
}

export function canDelete(commenter: Commenter, comment: CommentFacts): boolean {
  return canEdit(commenter, comment);
}

/** SPEC "Thread" states: only the author of the thread's root resolves or re-opens it. */
export function canResolve(commenter: Commenter, root: CommentFacts): boolean {
  return root.parent_id === null && canEdit(commenter, root);
}

/** SPEC B rule 5: every embed user of the tenant reads every thread of a dashboard they can read. */
export function isOwnComment(commenter: Commenter, comment: CommentFacts): boolean {
  return canEdit(commenter, comment);
}

/** What a comment stream needs to know of an event and its comment now to decide whether to show it. */
export interface EventFacts {
  kind: CommentEventKind;
  parent_id: number | null;
  removed_at: string | null;
  /** The removal of the comment's thread root (null for a root itself, or while the root lives). */
  root_removed_at: string | null;
}

/**
 * Issue 23: a stream shows what the thread list shows (SPEC B rule 4, and "Comment deletion"). A comment that is
 * deleted, or sits in a deleted thread (a reply that raced its root's deletion), is never shown: its `created` and
 * `edited` events are dropped, and so are a dropped thread's resolutions. Deletions are shown, without the text: a
 * root's (its whole thread goes), and a reply's while its thread lives (once the root is deleted, the root's own
 * deletion says it all).
 */
export function isEventShown(event: EventFacts): boolean {
  const isRoot = event.parent_id === null;
  const threadLives = isRoot || event.root_removed_at === null;
  switch (event.kind) {
    case 'deleted':
      return threadLives;
    case 'created':
    case 'edited':
      return event.removed_at === null && threadLives;
    case 'resolved':
    case 'reopened':
      return isRoot && event.removed_at === null;
  }
}
