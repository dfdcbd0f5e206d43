import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CONSOLE_COOKIE } from '../accounts/accounts.console.js';
import type { ServiceContext } from '../http/http.context.js';
import { describeEmbedPage, embedContentSecurityPolicy, renderEmbedHtml } from './embed.service.js';
import type { EmbedPageRequest } from './embed.service.js';

/** Where `npm run build` puts apps/embed (Vite): index.html and content-hashed assets/. */
export const EMBED_DIST = fileURLToPath(new URL('../../../embed/dist/', import.meta.url));

const ONE_YEAR_S = 365 * 24 * 3600;

/**
 * The embed runtime's pages (issue 6): every embed URL of SPEC ("Embed URL shape", in-embed paths) answers the one
 * HTML page, which routes itself. The HTML is never cached (it carries the framing account's origins, and a new
 * build must be picked up at once); the hashed assets are cached for a year. No page is listed in the OpenAPI
 * document: they are not API.
 */
export function embedRoutes(ctx: ServiceContext, distDir: string = EMBED_DIST): FastifyPluginAsyncTypebox {
  return async (app) => {
    const indexFile = join(distDir, 'index.html');
    const assetsDir = join(distDir, 'assets');
    const template = existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : undefined;
    if (existsSync(assetsDir)) {
      await app.register(fastifyStatic, {
        root: assetsDir,
        prefix: '/embed/assets/',
        // Hashed file names: a changed file is a new URL, so a year of caching never serves a stale one.
        immutable: true,
        maxAge: ONE_YEAR_S * 1000,
        index: false,
        wildcard: false,
        serveDotFiles: false,
      });
    }

    const page = async (request: FastifyRequest, reply: FastifyReply, named: Omit<EmbedPageRequest, 'sessionId' | 'consoleCookie'>) => {
      const query = request.query as Record<string, unknown>;
      // A repeated parameter counts by its first value, as the page's own URLSearchParams.get() reads it.
      const given = Array.isArray(query.session) ? query.session[0] : query.session;
      const sessionId = typeof given === 'string' ? given : undefined;
      const config = await describeEmbedPage(ctx, { ...named, sessionId, consoleCookie: request.cookies[CONSOLE_COOKIE] });
      reply
        .header('content-security-policy', embedContentSecurityPolicy(config.allowedOrigins))
        .header('cache-control', 'no-store')
        // The URL carries a single-use session id until the page strips it: never hand it on as a referrer.
        .header('referrer-policy', 'no-referrer')
        .header('x-content-type-options', 'nosniff')
        .type('text/html; charset=utf-8');
      if (template === undefined) {
        return reply.status(503).send('<!doctype html><title>svc embed</title><p>The embed UI is not built: run <code>npm run build</code>.</p>');
      }
      return reply.send(renderEmbedHtml(template, config));
    };

    const hide = { schema: { hide: true } };
    app.get<{ Params: { publicId: string } }>('/embed/dashboard/:publicId', hide, (request, reply) =>
      page(request, reply, { publicId: request.params.publicId, deploymentId: undefined }));
    app.get('/embed/chat', hide, (request, reply) => page(request, reply, { publicId: undefined, deploymentId: undefined }));
    app.get('/embed/app', hide, (request, reply) => page(request, reply, { publicId: undefined, deploymentId: undefined }));
    app.get('/embed/app/*', hide, (request, reply) => page(request, reply, { publicId: undefined, deploymentId: undefined }));
    app.get<{ Params: { deploymentId: string } }>('/embed/d/:deploymentId/*', hide, (request, reply) => {
      const id = /^[1-9][0-9]{0,9}$/.test(request.params.deploymentId) ? Number(request.params.deploymentId) : undefined;
      return page(request, reply, { publicId: undefined, deploymentId: id !== undefined && id <= 2147483647 ? id : undefined });
    });
  };
}
