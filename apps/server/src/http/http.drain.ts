import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { AppError, errorBody } from '../core/core.errors.js';

/** In-flight responses tracked before finished ones that were never reported are swept out. */
const MAX_TRACKED = 10_000;

/**
 * How svc drains on `app.close()` (SIGTERM in `svc serve`; docs/operations.md "Shutdown"):
 *
 * - a request that arrives while draining, on a keep-alive connection opened before, is answered 503 in svc's
 *   error body (Fastify's own 503 has another shape; Fastify's `return503OnClosing` must be off);
 * - a response sent while draining says `Connection: close`, so a pooled client does not send another request on
 *   it, and its socket is closed once the response is out. `server.close()` resolves only when every connection
 *   has ended, and Fastify closes only the connections that are idle when the drain starts: without this, a
 *   load balancer's pooled connection with a request in flight held the process for the whole drain timeout.
 */
export function registerDrain(app: FastifyInstance): void {
  let draining = false;
  // Responses not yet finished. At the drain's start each one whose headers are still unsent is told to close its
  // connection (Node then sends `Connection: close` and ends the socket after it); no hook runs on every send.
  const inFlight = new Set<ServerResponse>();
  const refusal = errorBody(new AppError('service_unavailable', 'svc is shutting down; send the request to another instance'));
  app.addHook('preClose', (done) => {
    draining = true;
    for (const response of inFlight) if (!response.headersSent) response.shouldKeepAlive = false;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!draining) {
      // Fastify runs onResponse after a finish or an error: a response whose socket died unseen is swept here.
      if (inFlight.size >= MAX_TRACKED) for (const response of inFlight) if (response.destroyed || response.writableEnded) inFlight.delete(response);
      inFlight.add(reply.raw);
      return done();
    }
    void reply.status(503).header('connection', 'close').send(refusal);
  });
  app.addHook('onResponse', (_request, reply, done) => {
    inFlight.delete(reply.raw);
    // A response whose headers went out just before the drain began still kept its socket: close it now it is idle.
    if (draining) app.server.closeIdleConnections();
    done();
  });
}
