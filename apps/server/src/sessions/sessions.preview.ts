import { randomBytes } from 'node:crypto';
import { toBase62 } from '../accounts/accounts.keys.js';
import { requireAdmin } from '../accounts/accounts.policy.js';
import { recordChange } from '../audit/audit.store.js';
import { digestSecret } from '../core/core.digest.js';
import { AppError } from '../core/core.errors.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { isoTimestamp } from '../core/core.time.js';
import { findDashboardByPublicId } from '../dashboards/dashboards.store.js';
import { SECURITY_CONTEXT_MAX_BYTES } from './sessions.schema.js';
import type { PreviewSessionBody, PreviewSessionResponse } from './sessions.schema.js';
import { SESSION_ID_PREFIX } from './sessions.service.js';
import type { SessionContext } from './sessions.service.js';
import { findEmbedTenantIdByName, insertEmbedSession } from './sessions.store.js';

/**
 * Issue 34 part 4, "View as a customer" (docs/console.md; docs/decisions.md "Preview sessions"):
 * `POST /api/v1/dashboards/{publicId}/preview-sessions` mints a single-use session id with which the real embed page
 * shows one dashboard as a viewer with this tenant, security context, attributes and groups would see it, through
 * the same policy step as that viewer's own requests. Admins only, as the data preview's `asViewer` (a member could
 * otherwise read any tenant's rows). The session never widens anything:
 * - it opens that one dashboard only, of the admin's account, in its deployment;
 * - it has no embed user and no platform user: nothing is added to the tenant's viewers, and with no author it
 *   cannot comment (the embed shows no comment panel, and the comment routes refuse it);
 * - its id is redeemable for the usual few minutes, and its token lives an hour at most (exchangeSession);
 * - `draft: true` makes it read the dashboard's draft, which no other session ever reads;
 * - its embed page may be framed by svc's own origin (the console) and by nothing else (embed.service.ts).
 * Each one is in the audit log (`dashboard.preview`), with the keys of the security context, not its values.
 */
export async function createPreviewSession(ctx: SessionContext, principal: PlatformUserPrincipal, publicId: string, body: PreviewSessionBody): Promise<PreviewSessionResponse> {
  requireAdmin(principal);
  const { accountId } = principal;
  const dashboard = publicId.includes('\u0000') ? undefined : await findDashboardByPublicId(ctx.db, accountId, publicId);
  if (dashboard === undefined) throw new AppError('not_found', `dashboard ${publicId} not found`, 'publicId');
  const version = body.draft === true ? 'draft' : 'published';
  if (dashboard.status === 'archived') throw new AppError('conflict', `dashboard ${publicId} is archived: no viewer sees it`, 'publicId');
  if (version === 'published' && dashboard.version_number === 0) {
    throw new AppError('conflict', `dashboard ${publicId} was never published: preview its draft (draft: true), or publish it first`, 'draft');
  }
  const securityContext = body.securityContext ?? {};
  const contextBytes = Buffer.byteLength(JSON.stringify(securityContext), 'utf8');
  if (contextBytes > SECURITY_CONTEXT_MAX_BYTES) {
    throw new AppError('invalid_body', `body securityContext is ${contextBytes} bytes of JSON; at most ${SECURITY_CONTEXT_MAX_BYTES} are allowed`, 'securityContext');
  }
  let embedTenantId: number | null = null;
  if (body.embedTenantName !== undefined) {
    embedTenantId = (await findEmbedTenantIdByName(ctx.db, accountId, body.embedTenantName)) ?? null;
    if (embedTenantId === null) throw new AppError('not_found', `no embed tenant named ${body.embedTenantName} in this account`, 'embedTenantName');
  }
  const now = ctx.now();
  const expiresAt = isoTimestamp(new Date(now.getTime() + ctx.lifetimes.sessionTtlMs));
  const sessionId = SESSION_ID_PREFIX + toBase62(randomBytes(32));
  await ctx.db.transaction().execute(async (trx) => {
    await insertEmbedSession(trx, {
      account_id: accountId, deployment_id: dashboard.deployment_id, embed_tenant_id: embedTenantId, embed_user_id: null, user_id: null,
      digest: digestSecret(sessionId), theme: '{}', settings: '{}', created_at: isoTimestamp(now), expires_at: expiresAt,
      access_context: JSON.stringify({ securityContext, userAttributes: body.userAttributes ?? {}, groups: body.groups ?? [] }),
      dashboards: JSON.stringify([dashboard.public_id]), preview: version,
    });
    await recordChange(trx, principal, now.toISOString(), {
      action: 'dashboard.preview', targetType: 'dashboard', targetId: dashboard.public_id,
      detail: { version, embedTenantName: body.embedTenantName ?? null, securityContextKeys: Object.keys(securityContext), groups: body.groups ?? [] },
    });
  });
  return { sessionId, expiresAt, url: `/embed/dashboard/${encodeURIComponent(dashboard.public_id)}`, version };
}
