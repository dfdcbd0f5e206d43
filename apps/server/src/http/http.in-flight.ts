import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError, errorBody } from '../core/core.errors.js';

/** In-flight requests tracked before finished ones that were never reported are swept out. */
const MAX_TRACKED = 10_000;

/** Replies that stream for as long as their client stays (Server-Sent Events): no handler timeout for them. */
const longLived = new WeakSet<FastifyReply>();

/**
 * Exempts a reply from the handler timeout: a stream of Server-Sent Events lasts as long as its client wants. It
 * must end itself when the app closes (a `preClose` hook), or the drain waits for it until SVC_SHUTDOWN_TIMEOUT_MS.
 *
 * @example
 * exemptFromHandlerTimeout(reply);
 * return reply.header('content-type', 'text/event-stream').send(stream);
 */
export function exemptFromHandlerTimeout(reply: FastifyReply): void {
  longLived.add(reply);
}

/**
 * The requests in flight, tracked once per request (an entry added in onRequest, removed in onResponse), and the
 * two things that need them: the drain and the handler timeout.
 *
 * How svc drains on `app.close()` (SIGTERM in `svc serve`; docs/operations.md "Shutdown"):
 * - a request that arrives while draining, on a keep-alive connection opened before, is answered 503 in svc's
 *   error body (Fastify's own 503 has another shape; Fastify's `return503OnClosing` must be off);
 * - a response sent while draining says `Connection: close`, so a pooled client does not send another request on
 *   it, and its socket is closed once the response is out. `server.close()` resolves only when every connection
 *   has ended, and Fastify closes only the connections that are idle when the drain starts: without this, a
 *   load balancer's pooled connection with a request in flight held the process for the whole drain timeout.
 *   At the drain's start each response whose headers are unsent is told so (Node then sends `Connection: close`
 *   and ends the socket after it); no hook runs on every send.
 *
 * The handler timeout (SVC_HANDLER_TIMEOUT_MS; docs/operations.md "Limits"): a request not answered within it gets
 * 503 `service_unavailable` (one already answering has its connection cut). One timer sweeps every in-flight request
 * a few times per timeout, instead of Fastify's `handlerTimeout`, which gives every request a timer, an
 * AbortController and a socket listener (svc uses none of its signal): a request is ended between `handlerMs` and
 * `handlerMs` plus a quarter of it (at most one second more).
 */
export function registerInFlight(app: FastifyInstance, handlerMs: number): void {
  let draining = false;
  const inFlight = new Map<FastifyReply, number>();
  const refusal = errorBody(new AppError('service_unavailable', 'svc is shutting down; send the request to another instance'));

  const sweep = setInterval(() => {
    const late = performance.now() - handlerMs;
    for (const [reply, startedAt] of inFlight) {
      if (startedAt > late) continue;
      inFlight.delete(reply);
      if (reply.sent || longLived.has(reply)) continue;
      if (reply.raw.headersSent) reply.raw.destroy();
      else void reply.send(new AppError('service_unavailable', 'the request took too long and was stopped; retry later'));
    }
  }, Math.min(1000, Math.max(10, Math.floor(handlerMs / 4))));
  sweep.unref();

  app.addHook('onClose', (_app, done) => {
    clearInterval(sweep);
    done();
  });
  app.addHook('preClose', (done) => {
    draining = true;
    for (const reply of inFlight.keys()) if (!reply.raw.headersSent) reply.raw.shouldKeepAlive = false;
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!draining) {
      // Fastify runs onResponse after a finish or an error: a response whose socket died unseen is swept here.
      if (inFlight.size >= MAX_TRACKED) for (const tracked of inFlight.keys()) if (tracked.raw.destroyed || tracked.raw.writableEnded) inFlight.delete(tracked);
      inFlight.set(reply, performance.now());
      return done();
    }
    void reply.status(503).header('connection', 'close').send(refusal);
  });
  app.addHook('onResponse', (_request, reply, done) => {
    inFlight.delete(reply);
    // A response whose headers went out just before the drain began still kept its socket: close it now it is idle.
    if (draining) app.server.closeIdleConnections();
    done();
  });
}
