import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AccountCache } from '../db/db.account-cache.js';
import { API_KEY_PREFIX, digestSecret } from '../accounts/accounts.keys.js';
import type { EmbedPrincipal, PlatformUserPrincipal, Principal } from '../accounts/accounts.principal.js';
import { CONSOLE_COOKIE, CONSOLE_SESSION_PREFIX } from '../accounts/accounts.console.js';
import { findConsoleSession, findPlatformUserByKeyDigest } from '../accounts/accounts.store.js';
import type { ConsoleSession } from '../accounts/accounts.store.js';
import { isoTimestamp } from '../core/core.context.js';
import type { ChangeFeed } from '../db/db.database.js';
import { loadEmbedPrincipal } from '../sessions/sessions.service.js';
import type { EmbedTokenClaims, TokenSigner } from '../sessions/sessions.tokens.js';
import type { ServiceContext } from '../core/core.context.js';
import { AppError } from '../core/core.errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

const ANONYMOUS: Principal = { kind: 'anonymous' };
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const CSRF_HEADER_VALUE = 'svc';

/**
 * Splits an Authorization header into its scheme and credential. The scheme is matched case-sensitively
 * (SPEC "Authentication"): `Bearer`, `Api-Key`, `Embed-Token`.
 */
export function parseAuthorization(header: string | undefined): { scheme: string; credential: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^(Bearer|Api-Key|Embed-Token) ([^\s]+)$/.exec(header);
  return match ? { scheme: match[1]!, credential: match[2]! } : undefined;
}

/** What resolving credentials needs: the database, the token signer and the in-memory credential caches. */
export interface Authenticator {
  ctx: ServiceContext;
  signer: TokenSigner;
  apiKeys: AccountCache<PlatformUserPrincipal>;
  embedSessions: AccountCache<EmbedPrincipal>;
  consoleSessions: AccountCache<ConsoleSession>;
  verifiedTokens: VerifiedTokens;
}

/**
 * Embed tokens that verified, so that a token's signature is checked once per process rather than on
 * every request (an Ed25519 verification costs about as much as the rest of a small request). Only the signature
 * check is skipped: expiry is compared on every request, and revocation is the session cache's business.
 */
export class VerifiedTokens {
  #signer: TokenSigner;
  #maxEntries: number;
  #entries = new Map<string, EmbedTokenClaims>();

  constructor(signer: TokenSigner, maxEntries: number) {
    this.#signer = signer;
    this.#maxEntries = maxEntries;
  }

  /** The claims of a token that verified before and has not expired; undefined says nothing (verify() decides). */
  held(token: string, nowMs: number): EmbedTokenClaims | undefined {
    const held = this.#entries.get(token);
    return held !== undefined && held.exp * 1000 > nowMs ? held : undefined;
  }

  async verify(token: string, nowMs: number): Promise<EmbedTokenClaims | undefined> {
    // Keyed by the whole token (a forged token differs somewhere, so it never finds another's entry).
    const held = this.#entries.get(token);
    if (held !== undefined) return held.exp * 1000 > nowMs ? held : undefined;
    const claims = await this.#signer.verify(token, nowMs);
    if (claims !== undefined && this.#maxEntries > 0) {
      if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(token, claims);
    }
    return claims;
  }
}

/**
 * Resolves the request's credential into a principal; an unknown or invalid credential is anonymous.
 * `Bearer` carries an API key (`svc_...`) or an embed token; `Api-Key` only an API key; `Embed-Token` only an
 * embed token. An embed token must verify (pinned algorithm, issuer, audience, expiry) and its session must be
 * neither revoked nor gone. A credential held in memory resolves without waiting (no promise): that is every
 * request but a credential's first, and an awaited hook would cost each of them a turn of the queue.
 */
export function resolvePrincipal(auth: Authenticator, header: string | undefined, consoleCookie?: string): Principal | Promise<Principal> {
  if (header === undefined && consoleCookie !== undefined && consoleCookie.startsWith(CONSOLE_SESSION_PREFIX)) {
    return resolveConsoleSession(auth, digestSecret(consoleCookie));
  }
  const parsed = parseAuthorization(header);
  if (parsed === undefined) return ANONYMOUS;
  const { scheme, credential } = parsed;
  if (credential.startsWith(API_KEY_PREFIX)) {
    if (scheme === 'Embed-Token') return ANONYMOUS;
    const digest = digestSecret(credential);
    return auth.apiKeys.held(digest) ?? orAnonymous(auth.apiKeys.resolve(digest, () => findPlatformUserByKeyDigest(auth.ctx.db, digest)));
  }
  if (scheme === 'Api-Key') return ANONYMOUS;
  const nowMs = auth.ctx.now().getTime();
  const claims = auth.verifiedTokens.held(credential, nowMs);
  const held = claims === undefined ? undefined : auth.embedSessions.held(sessionKeyOf(claims));
  return held ?? resolveEmbedToken(auth, credential, nowMs);
}

const sessionKeyOf = (claims: EmbedTokenClaims) => `${claims.acc}:${claims.sid}`;

async function orAnonymous(principal: Promise<Principal | undefined>): Promise<Principal> {
  return (await principal) ?? ANONYMOUS;
}

async function resolveConsoleSession(auth: Authenticator, digest: string): Promise<Principal> {
  const session = await auth.consoleSessions.resolve(digest, () => findConsoleSession(auth.ctx.db, digest));
  // Checked on every request, so that a session held in memory still ends at its expiry.
  return session !== undefined && session.expiresAt > isoTimestamp(auth.ctx.now()) ? session.principal : ANONYMOUS;
}

async function resolveEmbedToken(auth: Authenticator, token: string, nowMs: number): Promise<Principal> {
  const claims = await auth.verifiedTokens.verify(token, nowMs);
  if (claims === undefined) return ANONYMOUS;
  return (await auth.embedSessions.resolve(sessionKeyOf(claims), () => loadEmbedPrincipal(auth.ctx, claims))) ?? ANONYMOUS;
}

/**
 * The console session cookie of the request. Cookies are read here only (the cookie plugin's hooks are off, so
 * no request pays for parsing a header it never reads).
 */
export function consoleCookieOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  return header === undefined ? undefined : request.server.parseCookie(header)[CONSOLE_COOKIE];
}

/** The platform user calling with an API key, or a 401 that says what to send (403 for an embed token). */
export function requirePlatformUser(request: FastifyRequest): PlatformUserPrincipal {
  const principal = request.principal;
  if (principal.kind === 'platform-user') return principal;
  if (principal.kind === 'embed') throw new AppError('forbidden', 'an embed token cannot call the platform API: send an API key', 'Authorization');
  const message = request.headers.authorization === undefined
    ? 'missing Authorization header: send Authorization: Bearer <API key>'
    : 'invalid or unknown credential in the Authorization header';
  throw new AppError('unauthorized', message, 'Authorization');
}

/** The holder of an embed token, or a platform user (API key, console session), else a 401. */
export function requireAuthenticated(request: FastifyRequest): PlatformUserPrincipal | EmbedPrincipal {
  const principal = request.principal;
  if (principal.kind !== 'anonymous') return principal;
  const message = request.headers.authorization === undefined
    ? 'missing Authorization header: send Authorization: Embed-Token <embed token>'
    : 'invalid, expired or revoked credential in the Authorization header';
  throw new AppError('unauthorized', message, 'Authorization');
}

/**
 * Resolves the principal once per request, for every API route. API keys resolved before are served from memory
 * while the database's change feed says nothing they depend on changed (`credentialCacheEntries` 0: never).
 */
export function registerAuthentication(app: FastifyInstance, ctx: ServiceContext, signer: TokenSigner, feed: ChangeFeed, credentialCacheEntries: number): void {
  const auth: Authenticator = {
    ctx,
    signer,
    apiKeys: new AccountCache<PlatformUserPrincipal>(feed, credentialCacheEntries),
    embedSessions: new AccountCache<EmbedPrincipal>(feed, credentialCacheEntries),
    consoleSessions: new AccountCache<ConsoleSession>(feed, credentialCacheEntries),
    verifiedTokens: new VerifiedTokens(signer, credentialCacheEntries),
  };
  app.decorateRequest('principal', null as never);
  // The one onRequest hook of svc's own (each hook is a pass of Fastify's hook runner on every request): the
  // request id is echoed to the caller, then the credential resolved. A callback hook, not an async one: a
  // credential held in memory is resolved and the request goes on in the same turn.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!request.url.startsWith('/api/')) {
      request.principal = ANONYMOUS;
      done();
      return;
    }
    const admit = (principal: Principal) => {
      request.principal = principal;
      done(csrfRefusal(request));
    };
    const resolved = resolvePrincipal(auth, request.headers.authorization, consoleCookieOf(request));
    if (resolved instanceof Promise) resolved.then(admit, done);
    else admit(resolved);
  });
}

/**
 * A cookie rides along on cross-site requests (SameSite=None, for private embeds): a write authenticated by it
 * must prove it comes from svc's own pages with a header no cross-site form or image can send.
 */
function csrfRefusal(request: FastifyRequest): AppError | undefined {
  const principal = request.principal;
  if (principal.kind === 'platform-user' && principal.via === 'console'
    && !SAFE_METHODS.has(request.method) && request.headers['x-requested-with'] !== CSRF_HEADER_VALUE
    && !request.url.startsWith('/api/v1/auth/')) {
    return new AppError('forbidden', `a write with the console cookie needs the header X-Requested-With: ${CSRF_HEADER_VALUE}`, 'X-Requested-With');
  }
  return undefined;
}
