import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { CONSOLE_COOKIE, consoleCookieOf, requirePlatformUser } from '../http/http.auth.js';
import type { ServiceContext } from '../db/db.context.js';
import { rateLimitFor } from '../http/http.rate-limit.js';
import { Described, ErrorResponse } from '../core/core.schema.js';
import { login, logout, whoAmI } from './accounts.console.js';
import { normalizeEmail } from './accounts.identity.js';

const LoginBody = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  tenantName: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The account, when the email is in several' })),
}, { additionalProperties: false });

const LoginResponse = Type.Object({
  expiresAt: Type.String({ format: 'date-time' }),
  user: Type.Object({ id: Type.Integer(), email: Type.String(), firstName: Type.Union([Type.String(), Type.Null()]), role: Type.String(), tenantName: Type.String() }),
});

const MeResponse = Type.Object({
  user: Type.Object({ id: Type.Integer(), email: Type.String(), firstName: Type.Union([Type.String(), Type.Null()]), role: Type.Enum(['admin', 'member']) }),
  account: Type.Object({ id: Type.Integer(), tenantName: Type.String() }),
  signedInWith: Type.Enum(['console', 'api-key'], { description: 'A console session (the cookie) or an API key; never the credential itself' }),
}, { title: 'Me' });

/**
 * The cookie's attributes: `SameSite=None; Secure` so that a private embed (a cross-site iframe) sends it, except
 * on plain-http localhost, where browsers drop Secure cookies and Lax is what works.
 */
export function consoleCookieOptions(request: FastifyRequest, expires: Date) {
  const localPlainHttp = request.protocol === 'http' && ['localhost', '127.0.0.1', '[::1]'].includes(request.hostname.replace(/:\d+$/, ''));
  return {
    httpOnly: true,
    path: '/',
    expires,
    sameSite: localPlainHttp ? ('lax' as const) : ('none' as const),
    secure: !localPlainHttp,
  };
}

/** Sets the console cookie; an expiry in the past clears it. */
function setConsoleCookie(reply: FastifyReply, value: string, options: ReturnType<typeof consoleCookieOptions> & { maxAge?: number }): void {
  void reply.header('set-cookie', reply.server.serializeCookie(CONSOLE_COOKIE, value, options));
}

/** Console sign-in for platform users (DESIGN "Credentials": console session, an httpOnly cookie). */
export function accountRoutes(ctx: ServiceContext, loginLimit: { max: number; windowMs: number }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post('/api/v1/auth/login', {
      schema: {
        operationId: 'login', tags: ['Console'], security: [],
        summary: 'Sign a platform user in with email and password; sets the httpOnly console cookie',
        body: LoginBody,
        response: { 200: Described(LoginResponse, 'Signed in: the console cookie is set'), 400: ErrorResponse, 401: ErrorResponse, 429: ErrorResponse },
      },
      config: rateLimitFor(loginLimit.max, loginLimit.windowMs, (request) => {
        const body = request.body as { email?: unknown } | undefined;
        return `login:${request.ip}:${typeof body?.email === 'string' ? normalizeEmail(body.email) : ''}`;
      }, 'preHandler'),
    }, async (request, reply) => {
      const result = await login(ctx, request.body);
      setConsoleCookie(reply, result.sessionId, consoleCookieOptions(request, new Date(result.expiresAt)));
      return { expiresAt: result.expiresAt, user: result.user };
    });

    app.get('/api/v1/me', {
      schema: {
        operationId: 'getMe', tags: ['Console'], security: [{ bearerAuth: [] }],
        summary: 'Who is calling: the platform user, their account, and whether through a console session or an API key',
        response: {
          200: Described(MeResponse, 'The caller'),
          401: Described(ErrorResponse, 'No credential, or one that does not resolve (signed out, expired, deleted)'),
          403: Described(ErrorResponse, 'An embed token: viewers do not use the platform API'),
        },
      },
    }, async (request, reply) => {
      void reply.header('cache-control', 'no-store');
      return whoAmI(ctx, requirePlatformUser(request));
    });

    app.post('/api/v1/auth/logout', {
      schema: {
        operationId: 'logout', tags: ['Console'], security: [],
        summary: 'End the console session of the cookie and clear the cookie (idempotent)',
        response: { 204: Type.Null({ description: 'Signed out: the cookie is cleared' }), '4xx': ErrorResponse },
      },
    }, async (request, reply) => {
      await logout(ctx, consoleCookieOf(request));
      setConsoleCookie(reply, '', { ...consoleCookieOptions(request, new Date(0)), maxAge: 0 });
      return reply.status(204).send(null);
    });
  };
}
