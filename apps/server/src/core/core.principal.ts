// The principal (DESIGN "Credentials and principals"): who is calling, resolved once per request by http/auth and
// handed to services as a value. It lives in core/ because http/ must name it and imports no feature; accounts/
// and sessions/ build it.
import { AppError } from './core.errors.js';

/** A platform user's role (the `users.role` column). */
export type UserRole = 'admin' | 'member';

/** A platform user resolved from an API key or a console session. */
export interface PlatformUserPrincipal {
  kind: 'platform-user';
  accountId: number;
  userId: number;
  role: UserRole;
  email: string;
  /**
   * The account's data version and the user's personal version, read with the credential. Cached listings are
   * valid only for the versions they were computed at.
   */
  dataVersion: string;
  /** The credential: an API key, or a console session cookie (DESIGN "Credentials and principals"). */
  via: 'api-key' | 'console';
  /** The row id of that credential (an API key's, or a console session's): what a per-credential limit counts by. */
  credentialId: number;
}

/**
 * The holder of an embed token (SPEC "Authentication"): an embed user of an embed tenant (`externalId` session),
 * or a platform user (`internalId` session: no embed tenant). Scoped to the session's deployment.
 */
export interface EmbedPrincipal {
  kind: 'embed';
  accountId: number;
  deploymentId: number;
  /** The embed session's row id (never the secret session id). */
  sessionId: number;
  embedTenantId: number | null;
  embedTenantName: string | null;
  embedUserId: number | null;
  userId: number | null;
  /** The role of the platform user of an `internalId` session (their workspace grants bound what it opens); null otherwise. */
  userRole: UserRole | null;
  /** What the session was minted with for access policies (issue 20): securityContext, userAttributes, groups. */
  access: EmbedAccessContext;
  /** The publicIds this session may open (Generate Session's `dashboards`); null: every embeddable dashboard of its deployment. */
  dashboards: readonly string[] | null;
  /**
   * When the session's embed token stops being accepted (its `exp`, epoch ms; svc accepts a token until then): what
   * ends a long-lived request such as a comment stream. Null only for a session never redeemed, which has no token.
   */
  tokenExpiresAt: number | null;
  /**
   * An admin's "View as a customer" session (issue 34; sessions.preview.ts): which version of its one dashboard it
   * reads, `draft` being the only way any session reads a draft. Absent for every viewer's session.
   */
  preview?: 'published' | 'draft';
  /**
   * Generate Session's settings.explore (issue 35; sessions/sessions.explore.ts), read with the session's row:
   * `view` or `create`. Absent: `none`, today's embed.
   */
  explore?: 'view' | 'create';
}

/**
 * An embed session's access context: what its Generate Session call sent (a field left out is empty here, though
 * the embed user keeps its stored value). For an `internalId` session the groups are the platform user's, read when
 * data is asked.
 */
export interface EmbedAccessContext {
  securityContext: Readonly<Record<string, unknown>>;
  userAttributes: Readonly<Record<string, unknown>>;
  groups: readonly string[];
  /**
   * Generate Session's filters when it locked them (settings.lockedFilters; issue 38), in the viewer filter format:
   * every query of the session applies them (data.scope), and the viewer's own filters may not name their members.
   */
  lockedFilters: Readonly<Record<string, LockedFilterValue>>;
}

/** A locked filter's value, in the viewer filter format: a value, a list, or a range. */
export type LockedFilterValue = string | number | boolean | Array<string | number | boolean> | { gte?: string | number | boolean; lte?: string | number | boolean };

/** No credential, or none that resolved. */
export interface AnonymousPrincipal {
  kind: 'anonymous';
}

/** Who is calling, resolved once per request by http/auth and handed to services as a value. */
export type Principal = PlatformUserPrincipal | EmbedPrincipal | AnonymousPrincipal;

/** The principal of a request without a credential, or whose credential did not resolve. */
export const ANONYMOUS: AnonymousPrincipal = { kind: 'anonymous' };

/**
 * Operations for admins of the account only (DESIGN "Credentials"): Generate Session, Revoke, the embed-user admin,
 * webhook endpoints, the admin API, the audit log. A member's key is a 403 naming the Authorization header. Here,
 * in core/, so that a low room (audit/) checks it without importing accounts/; accounts.policy re-exports it.
 */
export function requireAdmin(principal: Pick<PlatformUserPrincipal, 'role'>): void {
  if (principal.role !== 'admin') throw new AppError('forbidden', 'this needs the API key of an admin; this key belongs to a member', 'Authorization');
}
