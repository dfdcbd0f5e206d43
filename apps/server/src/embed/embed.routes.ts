import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { consoleCookieOf } from '../http/http.auth.js';
import type { ServiceContext } from '../db/db.context.js';
import { bootScriptHashes, describeEmbedPage, embedContentSecurityPolicy, frameAncestorsOf, renderEmbedHtml } from './embed.service.js';
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
export const APP_FRAME_CSP = [
  'sandbox allow-scripts',
  "default-src 'none'",
  "script-src 'unsafe-inline' 'unsafe-eval'",
  "style-src 'unsafe-inline'",
  'img-src data: blob:',
  'font-src data:',
  "connect-src 'none'",
  "frame-src 'none'",
  "child-src 'none'",
  "worker-src 'none'",
  "media-src 'none'",
  "object-src 'none'",
  "manifest-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** Waits for the app's HTML from the embed (its parent, and only it), then writes it as the frame's document. */
export const APP_FRAME_HTML = `<!doctype html><html><head><meta charset="utf-8"><title>svc app</title></head><body><script>
addEventListener('message', function onSource(event) {
  if (event.source !== parent || !event.data || event.data.svcApp !== 'source' || typeof event.data.html !== 'string') return;
  removeEventListener('message', onSource);
  document.open();
  document.write(event.data.html);
  document.close();
  parent.postMessage({ svcApp: 'mounted' }, '*');
});
parent.postMessage({ svcApp: 'frame-ready' }, '*');
</script></body></html>`;

/** Where the embed runtime is built, and whether its source maps are served (SVC_EMBED_SOURCE_MAPS; default off). */
export interface EmbedAssets {
  distDir?: string;
  sourceMaps?: boolean;
}

export function embedRoutes(ctx: ServiceContext, assets: EmbedAssets = {}): FastifyPluginAsyncTypebox {
  const distDir = assets.distDir ?? EMBED_DIST;
  return async (app) => {
    const indexFile = join(distDir, 'index.html');
    const assetsDir = join(distDir, 'assets');
    const template = existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : undefined;
    const scriptHashes = template === undefined ? [] : bootScriptHashes(template);
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
        // The maps hold the embed's whole source: off unless the operator asks for them (a 404 otherwise).
        allowedPath: (path) => assets.sourceMaps === true || !path.endsWith('.map'),
      });
    }

    const page = async (request: FastifyRequest, reply: FastifyReply, named: Omit<EmbedPageRequest, 'sessionId' | 'consoleCookie'>) => {
      const query = request.query as Record<string, unknown>;
      // A repeated parameter counts by its first value, as the page's own URLSearchParams.get() reads it.
      const given = Array.isArray(query.session) ? query.session[0] : query.session;
      const sessionId = typeof given === 'string' ? given : undefined;
      const config = await describeEmbedPage(ctx, { ...named, sessionId, consoleCookie: consoleCookieOf(request) });
      reply
        .header('content-security-policy', embedContentSecurityPolicy(frameAncestorsOf(config), scriptHashes))
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
    app.get<{ Params: { '*': string } }>('/embed/app/*', hide, (request, reply) => {
      // `/embed/app/<publicId>`: an APP dashboard on the app surface; its account frames the page.
      const first = request.params['*'].split('/')[0];
      return page(request, reply, { publicId: first === undefined || first === '' ? undefined : first, deploymentId: undefined });
    });
    // The frame an APP dashboard's own code runs in: sandboxed to an opaque origin with scripts and nothing else,
    // no HTTP requests (connect-src 'none', images only from data:/blob:, nested frames 'none'; navigating itself
    // elsewhere is refused by the embed page's frame-src). CSP does not cover WebRTC, so this is not "no network":
    // docs/security.md says what an app's author is trusted with. It may be framed anywhere (the embed's
    // frame-ancestors already name the host): alone it is an empty page that runs whatever its parent posts, with
    // no more power than the parent's own page. Its code talks to svc only through the embed's bridge.
    app.get('/embed/app-frame', hide, (_request, reply) => reply
      .header('content-security-policy', APP_FRAME_CSP)
      .header('cache-control', 'public, max-age=3600')
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff')
      .type('text/html; charset=utf-8')
      .send(APP_FRAME_HTML));
    app.get<{ Params: { deploymentId: string } }>('/embed/d/:deploymentId/*', hide, (request, reply) => {
      const id = /^[1-9][0-9]{0,9}$/.test(request.params.deploymentId) ? Number(request.params.deploymentId) : undefined;
      return page(request, reply, { publicId: undefined, deploymentId: id !== undefined && id <= 2147483647 ? id : undefined });
    });
  };
}
