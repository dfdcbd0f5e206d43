import type { FastifyInstance } from 'fastify';
import helmet from 'helmet';
import type { HelmetOptions } from 'helmet';

/**
 * The headers helmet's middleware sets for these options, computed once. helmet's values are the reference (and
 * move with the library); running its middleware per request, as `@fastify/helmet` does (two hooks, one of them
 * async, and helmet's middleware built again for every request), would cost each cached listing a measurable share
 * of its time for a result that never changes.
 */
function helmetHeaders(options: HelmetOptions): Array<[string, string]> {
  const headers = new Map<string, string>();
  const response = {
    setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), value),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  };
  helmet(options)({} as never, response as never, () => undefined);
  return [...headers];
}

/**
 * The usual security headers on every answer (`nosniff`, no referrer, no cross-domain policies, ...), from helmet,
 * with three of its defaults off on purpose:
 * - Content-Security-Policy: each HTML page svc serves sets its own (the embed's names the host origins allowed
 *   to frame it, the app frame's is a sandbox); JSON is not rendered, and /docs allows its own origin only (http.openapi.ts);
 * - X-Frame-Options: the embed exists to be framed by other origins; CSP `frame-ancestors` says by which;
 * - Strict-Transport-Security: svc speaks plain HTTP behind the operator's TLS proxy, which owns that decision.
 * The embed's pages (`/embed/...`) also go without Cross-Origin-Resource-Policy: a host page that isolates itself
 * (COEP) must still be able to frame them. And without Origin-Agent-Cluster (issue 22): Chromium keys agent
 * clusters by origin without it (document.domain stays off), while `?1` is also a hint to give the origin a process
 * of its own, which Chromium can only act on once the answer is in: it delayed the start of every embed's document
 * by 40-100 ms (e2e Chromium 156; bench/README.md, embed). Other browsers ignore the header.
 */
export function registerSecurityHeaders(app: FastifyInstance): void {
  const base: HelmetOptions = { contentSecurityPolicy: false, xFrameOptions: false, strictTransportSecurity: false };
  const everywhere = helmetHeaders(base);
  const embedPages = helmetHeaders({ ...base, crossOriginResourcePolicy: false, originAgentCluster: false });
  app.addHook('onRequest', (request, reply, done) => {
    const headers = request.url.startsWith('/embed/') ? embedPages : everywhere;
    for (const [name, value] of headers) reply.header(name, value);
    done();
  });
}
