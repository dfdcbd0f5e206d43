import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CredentialCache } from '../accounts/accounts.credential-cache.js';
import { API_KEY_PREFIX, digestSecret } from '../accounts/accounts.keys.js';
import type { PlatformUserPrincipal, Principal } from '../accounts/accounts.principal.js';
import { findPlatformUserByKeyDigest } from '../accounts/accounts.store.js';
import type { ChangeFeed } from '../db/db.database.js';
import type { ServiceContext } from './http.context.js';
import { AppError } from './http.errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

const ANONYMOUS: Principal = { kind: 'anonymous' };

/**
 * Splits an Authorization header into its scheme and credential. The scheme is matched case-sensitively
 * (SPEC "Authentication"): `Bearer`, `Api-Key`, `Embed-Token`.
 */
export function parseAuthorization(header: string | undefined): { scheme: string; credential: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^(Bearer|Api-Key|Embed-Token) ([^\s]+)$/.exec(header);
  return match ? { scheme: match[1]!, credential: match[2]! } : undefined;
}

/** Resolves the request's credential into a principal; an unknown credential is anonymous. */
export async function resolvePrincipal(
  ctx: ServiceContext,
  apiKeys: CredentialCache<PlatformUserPrincipal>,
  header: string | undefined,
): Promise<Principal> {
  const parsed = parseAuthorization(header);
  if (parsed === undefined) return ANONYMOUS;
  if ((parsed.scheme === 'Bearer' || parsed.scheme === 'Api-Key') && parsed.credential.startsWith(API_KEY_PREFIX)) {
    const digest = digestSecret(parsed.credential);
    return (await apiKeys.resolve(digest, () => findPlatformUserByKeyDigest(ctx.db, digest))) ?? ANONYMOUS;
  }
  return ANONYMOUS;
}

/** The platform user calling, or a 401 that says what to send. */
export function requirePlatformUser(request: FastifyRequest): PlatformUserPrincipal {
  const principal = request.principal;
  if (principal.kind === 'platform-user') return principal;
  const message = request.headers.authorization === undefined
    ? 'missing Authorization header: send Authorization: Bearer <API key>'
    : 'invalid or unknown credential in the Authorization header';
  throw new AppError('unauthorized', message, 'Authorization');
}

/**
 * Resolves the principal once per request, for every API route. API keys resolved before are served from memory
 * while the database's change feed says nothing they depend on changed (`credentialCacheEntries` 0: never).
 */
export function registerAuthentication(app: FastifyInstance, ctx: ServiceContext, feed: ChangeFeed, credentialCacheEntries: number): void {
  const apiKeys = new CredentialCache<PlatformUserPrincipal>(feed, credentialCacheEntries);
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (request) => {
    request.principal = request.url.startsWith('/api/') ? await resolvePrincipal(ctx, apiKeys, request.headers.authorization) : ANONYMOUS;
  });
}
