import { randomBytes } from 'node:crypto';
import { toBase62 } from '../accounts/accounts.keys.js';
import { digestSecret } from '../core/core.digest.js';
import { requireAdmin } from '../accounts/accounts.policy.js';
import type { EmbedPrincipal, PlatformUserPrincipal, Principal } from '../core/core.principal.js';
import { findDeploymentInAccount, findEmbedAccountSettings, findTenantName, findUserIdByEmail, findUserRole } from '../accounts/accounts.store.js';
import { selectPublicIdsOfDeployment } from '../dashboards/dashboards.store.js';
import { AppError } from '../core/core.errors.js';
import { isoTimestamp } from '../core/core.time.js';
import type { ServiceContext } from '../db/db.context.js';
import type { Kysely } from 'kysely';
import type { ChangeFeed } from '../db/db.database.js';
import type { Database } from '../db/db.schema.js';
import { tokenTimeline } from './sessions.config.js';
import type { EmbedLifetimes } from './sessions.config.js';
import { readExploreLevel } from './sessions.explore.js';
import { SECURITY_CONTEXT_MAX_BYTES } from './sessions.schema.js';
import type { CurrentSessionResponse, EmbedUser, ExploreLevel, ExchangeResponse, GenerateSessionBody, GenerateSessionResponse, RevokeBody } from './sessions.schema.js';
import {
  deleteEmbedUser,
  findSessionPresentation,
  findEmbedTenantName,
  findEmbedUserId,
  findLiveSession,
  insertEmbedSession,
  selectLiveSessionIds,
  redeemEmbedSession,
  countUnrevokedSessions,
  findEmbedIdentity,
  revokeSessionByDigest,
  revokeSessionsOfEmbedUser,
  selectEmbedUsers,
  shortenTokenExpiry,
  upsertEmbedTenant,
  upsertEmbedUser,
} from './sessions.store.js';
import type { EmbedUserRow, RevokedSession } from './sessions.store.js';
import { AfterCommit } from '../core/core.events.js';
import { parseJsonObject } from '../core/core.json.js';
import { writeAndPropagate } from '../db/db.propagation.js';
import type { EventPublisher } from '../core/core.events.js';
import type { RevocationReason, SessionEvents } from './sessions.events.js';
import type { TokenSigner } from './sessions.tokens.js';
import { normalizeEmail, normalizeExternalId } from '../accounts/accounts.identity.js';

/** What the session services need beyond the database: lifetimes, the token signer, and where their events go. */
export interface SessionContext extends ServiceContext {
  lifetimes: EmbedLifetimes;
  signer: TokenSigner;
  changes: ChangeFeed;
  events: EventPublisher<SessionEvents>;
  /**
   * Checks Generate Session's filters against the deployment's model (each a dimension, each value of its type): a
   * 400 naming `filters.<member>`. Given by app.ts: sessions/ sits below data/, which reads sessions.
   */
  checkFilters: (accountId: number, deploymentId: number, filters: Readonly<Record<string, unknown>>) => Promise<void>;
}

export const SESSION_ID_PREFIX = 'ses_';

/** The longest an admin's preview session's token lives ("View as a customer", sessions.preview.ts). */
export const PREVIEW_TOKEN_TTL_MS = 3_600_000;

/** The embed tenant a call names, or the account's default one (its tenant name). */
async function tenantNameOf(db: Kysely<Database>, accountId: number, given: string | undefined): Promise<string> {
  return given ?? findTenantName(db, accountId);
}

/**
 * DESIGN "Generate Session": mints a single-use session id for one viewer of one deployment, creating or updating
 * the embed tenant and the embed user (`externalId`), or naming a platform user (`internalId`, no embed tenant).
 * Only the id's digest is stored; the id is returned once.
 */
export async function generateSession(ctx: SessionContext, principal: PlatformUserPrincipal, body: GenerateSessionBody): Promise<GenerateSessionResponse> {
  requireAdmin(principal);
  const { accountId } = principal;
  if ((body.externalId === undefined) === (body.internalId === undefined)) {
    const field = body.externalId === undefined ? 'externalId' : 'internalId';
    throw new AppError('invalid_body', 'send exactly one of externalId (a viewer of your product) or internalId (a platform user\'s email)', field);
  }
  const externalId = (body.externalId === undefined ? undefined : normalizeExternalId(body.externalId));
  if (externalId === '') throw new AppError('invalid_body', 'body externalId must not be blank', 'externalId');
  if (body.internalId !== undefined && body.embedTenantName !== undefined) {
    throw new AppError('invalid_body', 'an internalId session has no embed tenant: leave embedTenantName out', 'embedTenantName');
  }
  if (body.internalId !== undefined && body.groups !== undefined) {
    throw new AppError('invalid_body', "an internalId session's groups are the platform user's own groups: leave groups out", 'groups');
  }
  const securityContext = (body.securityContext ?? {}) as Record<string, unknown>;
  const contextBytes = Buffer.byteLength(JSON.stringify(securityContext), 'utf8');
  if (contextBytes > SECURITY_CONTEXT_MAX_BYTES) {
    throw new AppError('invalid_body', `body securityContext is ${contextBytes} bytes of JSON; at most ${SECURITY_CONTEXT_MAX_BYTES} are allowed`, 'securityContext');
  }
  if ((await findDeploymentInAccount(ctx.db, accountId, body.deploymentId)) === undefined) {
    throw new AppError('not_found', `deployment ${body.deploymentId} not found`, 'deploymentId');
  }
  const dashboards = body.dashboards === undefined ? null : [...new Set(body.dashboards)];
  if (dashboards !== null) {
    const found = new Set(await selectPublicIdsOfDeployment(ctx.db, accountId, body.deploymentId, dashboards));
    const missing = body.dashboards!.findIndex((publicId) => !found.has(publicId));
    if (missing >= 0) {
      throw new AppError('invalid_body', `body dashboards[${missing}]: deployment ${body.deploymentId} has no dashboard ${JSON.stringify(body.dashboards![missing])}`, `dashboards[${missing}]`);
    }
  }
  // The filters the embed starts with (issue 38), locked with settings.lockedFilters; a null value sets nothing.
  const filters = Object.fromEntries(Object.entries(body.filters ?? {}).filter(([, value]) => value !== null));
  if (Object.keys(filters).length > 0) await ctx.checkFilters(accountId, body.deploymentId, filters);
  const lockedFilters = body.settings?.lockedFilters === true ? filters : {};
  const now = ctx.now();
  const nowIso = isoTimestamp(now);
  const expiresAt = isoTimestamp(new Date(now.getTime() + ctx.lifetimes.sessionTtlMs));
  const sessionId = SESSION_ID_PREFIX + toBase62(randomBytes(32));

  await ctx.db.transaction().execute(async (trx) => {
    let embedTenantId: number | null = null;
    let embedUserId: number | null = null;
    let userId: number | null = null;
    let access: { userAttributes: unknown; groups: unknown };
    if (externalId !== undefined) {
      embedTenantId = await upsertEmbedTenant(trx, accountId, await tenantNameOf(trx, accountId, body.embedTenantName), nowIso);
      embedUserId = await upsertEmbedUser(trx, accountId, embedTenantId, externalId, {
        username: body.username, email: body.email, firstName: body.firstName, groups: body.groups, userAttributes: body.userAttributes as Record<string, unknown> | undefined,
      }, nowIso);
      // Policies read the groups and attributes sent with this call only: a field left out keeps the embed user's
      // stored value (DESIGN), but an earlier session's groups must never widen this one's rows (fail closed).
      access = { userAttributes: body.userAttributes ?? {}, groups: body.groups ?? [] };
    } else {
      const email = normalizeEmail(body.internalId!);
      userId = (await findUserIdByEmail(trx, accountId, email)) ?? null;
      if (userId === null) throw new AppError('not_found', `no platform user with email ${email} in this account`, 'internalId');
      access = { userAttributes: body.userAttributes ?? {}, groups: [] };
    }
    await insertEmbedSession(trx, {
      account_id: accountId, deployment_id: body.deploymentId, embed_tenant_id: embedTenantId, embed_user_id: embedUserId, user_id: userId,
      digest: digestSecret(sessionId), theme: JSON.stringify(body.embedTheme ?? {}), settings: JSON.stringify(body.settings ?? {}),
      created_at: nowIso, expires_at: expiresAt,
      access_context: JSON.stringify({ securityContext, ...access, filters, lockedFilters }), dashboards: dashboards === null ? null : JSON.stringify(dashboards), preview: null,
    });
  });
  return { sessionId, expiresAt };
}

const REFUSED_EXCHANGE = 'session id is unknown, already redeemed, revoked or expired';

/**
 * SPEC C: exchanges a session id for an embed token, once. The id itself is the credential; every refusal is the
 * same 401 so that the answer tells nothing about which ids exist.
 */
export async function exchangeSession(ctx: SessionContext, sessionId: string): Promise<ExchangeResponse> {
  const now = ctx.now();
  let timeline = tokenTimeline(ctx.lifetimes, now.getTime());
  const row = sessionId.startsWith(SESSION_ID_PREFIX)
    ? await redeemEmbedSession(ctx.db, digestSecret(sessionId), isoTimestamp(now), isoTimestamp(new Date(timeline.expiresAt)))
    : undefined;
  if (row === undefined) throw new AppError('unauthorized', REFUSED_EXCHANGE, 'sessionId');
  if (row.preview !== null) {
    // An admin's preview is a look, not a viewer's day: its token lives an hour at most.
    timeline = tokenTimeline({ ...ctx.lifetimes, tokenTtlMs: Math.min(ctx.lifetimes.tokenTtlMs, PREVIEW_TOKEN_TTL_MS) }, now.getTime());
    await shortenTokenExpiry(ctx.db, row.account_id, row.id, isoTimestamp(new Date(timeline.expiresAt)));
  }
  const tenantName = row.embed_tenant_id === null ? null : await findEmbedTenantName(ctx.db, row.account_id, row.embed_tenant_id);
  const token = await ctx.signer.sign({
    sid: row.id, acc: row.account_id, dep: row.deployment_id, ten: tenantName, eu: row.embed_user_id, pu: row.user_id,
    eff: timeline.effectiveEnd, wrn: timeline.warnAt, ...(row.preview === null ? {} : { pv: row.preview }),
  }, now.getTime(), timeline.expiresAt);
  return {
    token,
    expiresAt: isoTimestamp(new Date(timeline.expiresAt)),
    effectiveEnd: isoTimestamp(new Date(timeline.effectiveEnd)),
    expiringAt: isoTimestamp(new Date(timeline.warnAt)),
  };
}

/**
 * The principal of a verified embed token's claims, or undefined when its session was revoked or is gone (its
 * embed user deleted). Scoped by the token's account.
 */
export async function loadEmbedPrincipal(ctx: ServiceContext, claims: { sid: number; acc: number }): Promise<EmbedPrincipal | undefined> {
  const row = await findLiveSession(ctx.db, claims.acc, claims.sid);
  if (row === undefined || row.redeemed_at === null) return undefined;
  // A session of no viewer is an admin's preview, or nothing.
  if (row.preview === null && row.embed_user_id === null && row.user_id === null) return undefined;
  // An internalId session opens what its platform user could: their role is read with the session.
  const userRole = row.user_id === null ? null : (await findUserRole(ctx.db, row.account_id, row.user_id)) ?? null;
  if (row.user_id !== null && userRole === null) return undefined;
  const context = parseJsonObject(row.access_context ?? undefined);
  const dashboards: unknown = row.dashboards === null ? null : JSON.parse(row.dashboards);
  // A live session's tenant comes with it (one query per cache miss).
  return {
    kind: 'embed',
    accountId: row.account_id,
    deploymentId: row.deployment_id,
    sessionId: row.id,
    embedTenantId: row.embed_tenant_id,
    embedTenantName: row.embed_tenant_name,
    embedUserId: row.embed_user_id,
    userId: row.user_id,
    userRole,
    access: {
      securityContext: objectOrEmpty(context.securityContext),
      userAttributes: objectOrEmpty(context.userAttributes),
      groups: Array.isArray(context.groups) ? context.groups.filter((g): g is string => typeof g === 'string') : [],
      lockedFilters: objectOrEmpty(context.lockedFilters) as EmbedPrincipal['access']['lockedFilters'],
    },
    // Anything but a list of names opens nothing: a session is never widened by a bad row.
    dashboards: dashboards === null ? null : Array.isArray(dashboards) ? dashboards.filter((d): d is string => typeof d === 'string') : [],
    tokenExpiresAt: row.token_expires_at === null ? null : Date.parse(row.token_expires_at),
    ...(row.preview === 'published' || row.preview === 'draft' ? { preview: row.preview } : {}),
    ...exploreOf(readExploreLevel(parseJsonObject(row.settings))),
  };
}

const exploreOf = (level: ExploreLevel): Pick<EmbedPrincipal, 'explore'> => (level === 'none' ? {} : { explore: level });

/**
 * Which of these embed sessions of the account are still live (redeemed, neither revoked nor gone with their
 * embed user): what a long-lived request, such as a comment stream, re-checks while it runs.
 */
export async function selectLiveSessions(ctx: ServiceContext, accountId: number, sessionIds: readonly number[]): Promise<Set<number>> {
  return new Set(await selectLiveSessionIds(ctx.db, accountId, sessionIds));
}

const objectOrEmpty = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {};

/**
 * DESIGN "Revoke": one session by id (idempotent: unknown and already revoked ids are fine), or every session of
 * one viewer by `externalId` (+ `embedTenantName`, default the account's tenant) for logout.
 */
export async function revokeSessions(ctx: SessionContext, principal: PlatformUserPrincipal, body: RevokeBody): Promise<void> {
  requireAdmin(principal);
  const { accountId } = principal;
  const now = ctx.now();
  if ((body.sessionId === undefined) === (body.externalId === undefined)) {
    throw new AppError('invalid_body', 'send either sessionId (one session) or externalId (every session of that viewer)', body.sessionId === undefined ? 'sessionId' : 'externalId');
  }
  if (body.sessionId !== undefined) {
    if (body.embedTenantName !== undefined) throw new AppError('invalid_body', 'embedTenantName goes with externalId, not with sessionId', 'embedTenantName');
    await writeAndPropagate(ctx, accountId, () => revokeWithEvent(ctx, accountId, now, 'revoked', (trx) => revokeSessionByDigest(trx, accountId, digestSecret(body.sessionId!), isoTimestamp(now))));
    return;
  }
  const tenantName = await tenantNameOf(ctx.db, accountId, body.embedTenantName);
  const embedUserId = await findEmbedUserId(ctx.db, accountId, tenantName, normalizeExternalId(body.externalId!));
  if (embedUserId !== undefined) {
    await writeAndPropagate(ctx, accountId, () => revokeWithEvent(ctx, accountId, now, 'logout', (trx) => revokeSessionsOfEmbedUser(trx, accountId, embedUserId, isoTimestamp(now))));
  }
}

/**
 * Runs a revocation and publishes its `embed_session.revoked` events in its transaction (so the webhook outbox
 * writes them in it: issue 23): one event per embed user (or platform user, for `internalId` sessions) whose
 * sessions it revoked. How many were revoked.
 */
async function revokeWithEvent(
  ctx: SessionContext, accountId: number, now: Date, reason: RevocationReason, revoke: (trx: Kysely<Database>) => Promise<RevokedSession[]>,
): Promise<number> {
  const afterCommit = new AfterCommit();
  const revoked = await ctx.db.transaction().execute(async (trx) => {
    const sessions = await revoke(trx);
    const byViewer = new Map<string, RevokedSession[]>();
    for (const session of sessions) {
      const key = `${session.embed_user_id ?? ''}:${session.user_id ?? ''}`;
      byViewer.set(key, [...(byViewer.get(key) ?? []), session]);
    }
    for (const group of byViewer.values()) {
      const [first] = group;
      await ctx.events.publish('embed_session.revoked', {
        transaction: trx, afterCommit, accountId, at: now, reason,
        embedTenantId: first!.embed_tenant_id, embedUserId: first!.embed_user_id, userId: first!.user_id, sessions: group.length,
      });
    }
    return sessions.length;
  });
  afterCommit.run();
  return revoked;
}

/** DESIGN "Embed users": the account's embed users, optionally of one tenant. */
export async function listEmbedUsers(ctx: ServiceContext, principal: PlatformUserPrincipal, tenantName: string | undefined): Promise<EmbedUser[]> {
  requireAdmin(principal);
  const rows = await selectEmbedUsers(ctx.db, principal.accountId, tenantName);
  return rows.map(presentEmbedUser);
}

/** An embed user as the API shows it. */
export function presentEmbedUser(row: EmbedUserRow): EmbedUser {
  return {
    id: row.id,
    externalId: row.external_id,
    embedTenantName: row.embed_tenant_name,
    username: row.username,
    email: row.email,
    firstName: row.first_name,
    groups: JSON.parse(row.groups) as string[],
    userAttributes: JSON.parse(row.user_attributes) as Record<string, unknown>,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Deletes an embed user of the account; their sessions go with them, so their tokens stop working. */
export async function removeEmbedUser(ctx: SessionContext, principal: PlatformUserPrincipal, embedUserId: number): Promise<void> {
  requireAdmin(principal);
  // Their sessions go with them (ON DELETE CASCADE), which notifies like a revocation; their comments stay, with
  // no author (ON DELETE SET NULL, whose update moves the cached thread lists' version like any comment write).
  const now = ctx.now();
  const afterCommit = new AfterCommit();
  await writeAndPropagate(ctx, principal.accountId, () => ctx.db.transaction().execute(async (trx) => {
    // Read before the deletion: the event names whom the revoked sessions belonged to.
    const live = await countUnrevokedSessions(trx, principal.accountId, embedUserId);
    const identity = await findEmbedIdentity(trx, principal.accountId, null, embedUserId);
    const tenantId = await deleteEmbedUser(trx, principal.accountId, embedUserId);
    if (tenantId === undefined) throw new AppError('not_found', `embed user ${embedUserId} not found`, 'id');
    if (live > 0) {
      const tenant = await findEmbedIdentity(trx, principal.accountId, tenantId, null);
      await ctx.events.publish('embed_session.revoked', {
        transaction: trx, afterCommit, accountId: principal.accountId, at: now, reason: 'embed_user_deleted',
        embedTenantId: tenantId, embedUserId, userId: null, sessions: live, viewer: { tenantName: tenant.tenantName, externalId: identity.externalId },
      });
    }
    return 1;
  }));
  afterCommit.run();
}

const textOrNull = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

/**
 * What the embed runtime needs for svc:event:ready; like NextAuth's /api/auth/session, `{ session: null }` when the
 * request carries no embed credential, so the embed can tell "signed out" from a failure. A signed session (embed
 * token) comes with its embedTheme and settings; the console cookie of a signed-in platform user is a private
 * embed (SPEC "Embed messaging": `mode` = `private`). `allowEmbedComments` tells the embed whether to show the
 * comment panel.
 */
export async function describeCurrentSession(ctx: ServiceContext, principal: Principal): Promise<CurrentSessionResponse> {
  if (principal.kind === 'anonymous' || (principal.kind === 'platform-user' && principal.via !== 'console')) return { session: null };
  const account = await findEmbedAccountSettings(ctx.db, principal.accountId);
  if (principal.kind === 'platform-user') {
    return {
      session: {
        mode: 'private', deploymentId: null, embedTenant: null, embedUserId: null, userId: principal.userId,
        allowEmbedComments: account.allowEmbedComments, embedTheme: {}, defaults: { timezone: account.timezone, locale: account.locale }, commentEventText: false, explore: 'none',
        filters: {}, lockedFilters: [],
      },
    };
  }
  const row = await findSessionPresentation(ctx.db, principal.accountId, principal.sessionId);
  const settings = parseJsonObject(row?.settings);
  return {
    session: {
      mode: 'signed',
      deploymentId: principal.deploymentId,
      embedTenant: principal.embedTenantName,
      embedUserId: principal.embedUserId,
      userId: principal.userId,
      allowEmbedComments: account.allowEmbedComments,
      embedTheme: parseJsonObject(row?.theme),
      defaults: { timezone: textOrNull(settings.timezone) ?? account.timezone, locale: textOrNull(settings.locale) ?? account.locale },
      commentEventText: settings.commentEventText === true,
      explore: principal.explore ?? 'none',
      filters: objectOrEmpty(parseJsonObject(row?.access_context).filters),
      lockedFilters: Object.keys(principal.access.lockedFilters),
    },
  };
}
