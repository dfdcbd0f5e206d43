import { AppError } from '../core/core.errors.js';
import type { EmbedPrincipal, Principal } from '../core/core.principal.js';
import type { SavedVisibility } from '../db/db.schema.js';

// Issue 35 parts 3 and 4 (docs/explore.md "Saved charts and views"): who may read, save, rename and delete saved
// charts and views. The same credentials as comments (SPEC "Authentication", Comments 4), and the same author rule
// (SPEC B rule 5); the explore level (settings.explore) is asked by the service (sessions.explore.ts).

/** An embed user of an embed tenant on one deployment: the only caller saved charts and views serve. */
export interface Explorer {
  accountId: number;
  deploymentId: number;
  embedTenantId: number;
  embedUserId: number;
  principal: EmbedPrincipal;
}

/** What the policy needs to know of a saved chart or view. */
export interface SavedFacts {
  embed_user_id: number;
  visibility: SavedVisibility;
}

/**
 * As comments: an API key, a console session, an `internalId` session or an admin's preview session has no embed
 * user to save as, so it gets 403; no credential (or one that did not verify) gets 401.
 */
export function requireExplorer(principal: Principal, hasAuthorization: boolean): Explorer {
  if (principal.kind === 'embed' && principal.embedTenantId !== null && principal.embedUserId !== null) {
    return { accountId: principal.accountId, deploymentId: principal.deploymentId, embedTenantId: principal.embedTenantId, embedUserId: principal.embedUserId, principal };
  }
  if (principal.kind === 'anonymous') {
    throw new AppError('unauthorized', hasAuthorization
      ? 'invalid, expired or revoked embed token in the Authorization header'
      : 'missing Authorization header: send Authorization: Embed-Token <embed token>', 'Authorization');
  }
  const what = principal.kind === 'embed'
    ? (principal.preview !== undefined ? "an admin's preview session (View as a customer)" : principal.userId !== null ? 'an embed session minted with internalId' : 'this embed session')
    : principal.via === 'console' ? 'a console session' : 'an API key';
  throw new AppError('forbidden', `saved charts and views need an embed token of an embed tenant (a session minted with externalId); ${what} has none`, 'Authorization');
}

/** Issue 35: a private item is its author's alone; a `tenant` item every viewer of the tenant reads. */
export function canSee(explorer: Pick<Explorer, 'embedUserId'>, item: SavedFacts): boolean {
  return item.visibility === 'tenant' || item.embed_user_id === explorer.embedUserId;
}

/** As SPEC B rule 5 for comments: only the author changes (renames, re-shares) or deletes a saved item. */
export function canEdit(explorer: Pick<Explorer, 'embedUserId'>, item: SavedFacts): boolean {
  return item.embed_user_id === explorer.embedUserId;
}

export function canDelete(explorer: Pick<Explorer, 'embedUserId'>, item: SavedFacts): boolean {
  return canEdit(explorer, item);
}
