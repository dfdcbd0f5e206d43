import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../core/core.errors.js';

/** Where `npm run build` puts apps/console (Vite): index.html and content-hashed assets/. */
export const CONSOLE_DIST = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

const ONE_YEAR_S = 365 * 24 * 3600;

/**
 * The console page's CSP (issue 34): everything from svc's own origin, no inline script, and never framed
 * (`frame-ancestors 'none'`, with X-Frame-Options DENY for older browsers): the console signs a platform user in
 * with the console cookie, so a page of another origin must not be able to lay it under a user's clicks. The
 * embed's page differs only where the embed must be framed by its hosts and frame its app sandbox. The console frames
 * svc's own pages only (`frame-src 'self'`): "View as a customer" shows the embed page of a preview session, which
 * in turn lets only svc's own origin frame it (embed.service.ts `frameAncestorsOf`).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self' data:",
  "object-src 'none'",
  "frame-src 'self'",
  "child-src 'none'",
  "worker-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Where the console is built (tests point it elsewhere to check a missing build). */
export interface ConsoleAssets {
  distDir?: string | undefined;
}

/**
 * The console's pages (issue 34): `/console` and every path below it answer the one HTML page, which routes
 * itself; its hashed assets are served from `/console/assets/` with a year of caching. Not listed in the OpenAPI
 * document: they are not API. The page reads everything through the API with the console cookie.
 */
export function consoleRoutes(assets: ConsoleAssets = {}): FastifyPluginAsyncTypebox {
  const distDir = assets.distDir ?? CONSOLE_DIST;
  return async (app) => {
    const indexFile = join(distDir, 'index.html');
    const assetsDir = join(distDir, 'assets');
    const html = existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : undefined;
    if (existsSync(assetsDir)) {
      await app.register(fastifyStatic, {
        root: assetsDir,
        prefix: '/console/assets/',
        decorateReply: false,
        immutable: true,
        maxAge: ONE_YEAR_S * 1000,
        index: false,
        wildcard: false,
        serveDotFiles: false,
        allowedPath: (path) => !path.endsWith('.map'),
      });
    }

    const page = (reply: FastifyReply) => {
      reply
        .header('content-security-policy', CONSOLE_CSP)
        .header('x-frame-options', 'DENY')
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .header('x-content-type-options', 'nosniff')
        .type('text/html; charset=utf-8');
      if (html === undefined) {
        return reply.status(503).send('<!doctype html><title>svc console</title><p>The console is not built: run <code>npm run build</code>.</p>');
      }
      return reply.send(html);
    };

    const hide = { schema: { hide: true } };
    app.get('/console', hide, (_request, reply) => page(reply));
    app.get('/console/*', hide, (request, reply) => {
      // A missing asset is a 404, not the page: a stale tab asking for an old chunk must see it fail.
      if ((request.params as { '*': string })['*'].startsWith('assets/')) {
        throw new AppError('not_found', `no console asset ${request.url.split('?')[0]}`);
      }
      return page(reply);
    });
  };
}
