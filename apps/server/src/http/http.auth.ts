import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ANONYMOUS } from '../core/core.principal.js';
import type { EmbedPrincipal, PlatformUserPrincipal, Principal } from '../core/core.principal.js';
import { AppError } from '../core/core.errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const CSRF_HEADER_VALUE = 'svc';
/** The console session's cookie: set at sign-in (accounts.routes.ts), read here for every API request. */
export const CONSOLE_COOKIE = 'svc_console';

/**
 * Splits an Authorization header into its scheme and credential. The scheme is matched case-sensitively
 * (SPEC "Authentication"): `Bearer`, `Api-Key`, `Embed-Token`.
 */
export function parseAuthorization(header: string | undefined): { scheme: string; credential: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^(Bearer|Api-Key|Embed-Token) ([^\s]+)$/.exec(header);
  return match ? { scheme: match[1]!, credential: match[2]! } : undefined;
}

/**
 * What resolves each kind of credential into its principal, anonymous when it does not resolve. app.ts builds it
 * from the features that issue them (API keys and console sessions: accounts/; embed tokens: sessions/), so http/
 * imports no feature. A credential held in memory resolves without a promise: that is every request but a
 * credential's first, and an awaited hook would cost each of them a turn of the queue.
 */
export interface Authenticator {
  /** Whether a credential has an API key's form; any other credential after `Bearer` is an embed token. */
  isApiKey(credential: string): boolean;
  resolveApiKey(key: string): Principal | Promise<Principal>;
  resolveEmbedToken(token: string): Principal | Promise<Principal>;
  /** The console session cookie's principal (a console session exists only without an Authorization header). */
  resolveConsoleSession(cookie: string): Principal | Promise<Principal>;
}

/**
 * Resolves the request's credential into a principal; an unknown or invalid credential is anonymous.
 * `Bearer` carries an API key (`svc_...`) or an embed token; `Api-Key` only an API key; `Embed-Token` only an
 * embed token. An embed token must verify (pinned algorithm, issuer, audience, expiry) and its session must be
 * neither revoked nor gone.
 */
export function resolvePrincipal(auth: Authenticator, header: string | undefined, consoleCookie?: string): Principal | Promise<Principal> {
  if (header === undefined && consoleCookie !== undefined) return auth.resolveConsoleSession(consoleCookie);
  const parsed = parseAuthorization(header);
  if (parsed === undefined) return ANONYMOUS;
  const { scheme, credential } = parsed;
  if (auth.isApiKey(credential)) return scheme === 'Embed-Token' ? ANONYMOUS : auth.resolveApiKey(credential);
  if (scheme === 'Api-Key') return ANONYMOUS;
  return auth.resolveEmbedToken(credential);
}

/**
 * The credential of a Cube API request (`/cubejs-api/`): the Authorization header with one of svc's schemes, or a
 * bare token as Cube's clients send it (read as `Bearer`). A console cookie is never read there.
 */
export function resolveBareCredential(auth: Authenticator, header: string | undefined): Principal | Promise<Principal> {
  if (header === undefined) return ANONYMOUS;
  if (parseAuthorization(header) !== undefined) return resolvePrincipal(auth, header);
  return /^[^\s]{1,4096}$/.test(header) ? resolvePrincipal(auth, `Bearer ${header}`) : ANONYMOUS;
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

/** Resolves the principal once per request, for every API route, with the credentials' resolvers app.ts gives. */
export function registerAuthentication(app: FastifyInstance, auth: Authenticator): void {
  app.decorateRequest('principal', null as never);
  // The one onRequest hook of svc's own (each hook is a pass of Fastify's hook runner on every request): the
  // request id is echoed to the caller, then the credential resolved. A callback hook, not an async one: a
  // credential held in memory is resolved and the request goes on in the same turn.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (request.url.startsWith('/cubejs-api/')) {
      // Cube's clients send the bare token (`Authorization: <token>`): no scheme, no cookie (docs/cube.md).
      const resolved = resolveBareCredential(auth, request.headers.authorization);
      const admit = (principal: Principal) => {
        request.principal = principal;
        done();
      };
      if (resolved instanceof Promise) resolved.then(admit, done);
      else admit(resolved);
      return;
    }
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
