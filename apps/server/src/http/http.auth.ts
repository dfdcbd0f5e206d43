import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_KEY_PREFIX, digestSecret } from '../accounts/accounts.keys.js';
import type { PlatformUserPrincipal, Principal } from '../accounts/accounts.principal.js';
import { findPlatformUserByKeyDigest } from '../accounts/accounts.store.js';
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
export async function resolvePrincipal(ctx: ServiceContext, header: string | undefined): Promise<Principal> {
  const parsed = parseAuthorization(header);
  if (parsed === undefined) return ANONYMOUS;
  if ((parsed.scheme === 'Bearer' || parsed.scheme === 'Api-Key') && parsed.credential.startsWith(API_KEY_PREFIX)) {
    return (await findPlatformUserByKeyDigest(ctx.db, digestSecret(parsed.credential))) ?? ANONYMOUS;
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

/** Resolves the principal once per request, for every API route. */
export function registerAuthentication(app: FastifyInstance, ctx: ServiceContext): void {
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (request) => {
    request.principal = request.url.startsWith('/api/') ? await resolvePrincipal(ctx, request.headers.authorization) : ANONYMOUS;
  });
}
