import type { FastifyInstance, FastifyReply } from 'fastify';

/** svc's mark, for the browser's tab: on /docs, the embed's pages and the root. */
export const FAVICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2b5bd7"/><path d="M4 11h8M4 8h6M4 5h8" stroke="#fff" stroke-width="1.5"/></svg>';

/**
 * The root, the first address `npm start` prints: it leads to the API reference (issue 31 item 9; the console,
 * once it exists, takes its place), instead of a JSON 404. A 302, not a 301, since the target will change and a
 * browser keeps a 301 for good. `/favicon.ico` is what a browser asks for on any page that names none (the JSON
 * answers, the OpenAPI document): the same mark, as SVG, which every current browser draws from that path too.
 */
export function registerRoot(app: FastifyInstance): void {
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/docs', 302));
  const favicon = async (_request: unknown, reply: FastifyReply) =>
    reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON);
  app.get('/favicon.ico', { schema: { hide: true } }, favicon);
  app.get('/favicon.svg', { schema: { hide: true } }, favicon);
}
