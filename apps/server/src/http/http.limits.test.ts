import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { loadConfig } from '../core/core.config.js';

const trustProxyFromEnv = (env: NodeJS.ProcessEnv) => loadConfig(env).trustProxy;

/** Sends raw bytes on a fresh connection and resolves with everything the server wrote until it closed. */
function rawExchange(url: string, chunks: Array<{ bytes: string; afterMs: number }>, giveUpMs: number): Promise<{ text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    const timers = chunks.map((chunk) => setTimeout(() => socket.writable && socket.write(chunk.bytes), chunk.afterMs));
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open ${giveUpMs} ms: ${text}`));
    }, giveUpMs);
    socket.on('data', (data) => { text += data.toString(); });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      timers.forEach(clearTimeout);
      clearTimeout(giveUp);
      resolve({ text });
    });
  });
}

/**
 * Issue 8 "Limits" (docs/operations.md "Limits"): the body size limit (413), the embed API's rate limits per
 * session and per IP (429), slow clients (408 and a closed socket, while others are served), and the handler
 * timeout (503). Each answer carries the error body of DESIGN.md.
 */
describeEachDialect('limits', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let publicId: string;

  beforeAll(async () => {
    app = await buildApp(testConfig({ rateLimits: { embedPerSession: 4, embedPerIp: 7, generateSession: 1000, exchange: 1000 } }), { db: t().db });
    publicId = `limits-${uniqueSuffix()}`;
    s = await seedAccount(t().db.kysely, {
      settings: { allowEmbedComments: true },
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'W', createdBy: 'admin', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
    });
  });

  afterAll(async () => {
    await app.close();
  });

  const commentsUrl = () => `/api/v1/embed/dashboard/${publicId}/comments`;
  // Scoped to this suite's account: other test files write comments into the same PostgreSQL database at once.
  const commentRows = async () => Number((await t().db.kysely.selectFrom('comments as c').innerJoin('accounts as a', 'a.id', 'c.account_id')
    .where('a.tenant_name', '=', s.tenantName).select((e) => e.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  it('refuses a body over 1 MiB with 413 and the error body, and writes nothing', async () => {
    const viewer = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod! });
    const before = await commentRows();
    const res = await app.inject({ method: 'POST', url: commentsUrl(), headers: { ...viewer.headers, 'content-type': 'application/json' }, payload: JSON.stringify({ body: 'x'.repeat(1024 * 1024 + 1) }) });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ error: { status: 413, code: 'payload_too_large' } });
    expect(await commentRows()).toBe(before);
  });

  describe('embed API rate limits (a fresh app per case: counters are per process)', () => {
    let limited: FastifyInstance;
    beforeAll(async () => {
      limited = await buildApp(testConfig({ rateLimits: { embedPerSession: 4, embedPerIp: 7, generateSession: 1000, exchange: 1000 } }), { db: t().db });
    });
    afterAll(async () => {
      await limited.close();
    });

    const read = (viewer: ViewerSession, ip = '127.0.0.1') => limited.inject({ url: commentsUrl(), headers: viewer.headers, remoteAddress: ip });

    it('answers 429 with retry-after to the session past its limit, and serves another session from the same IP', async () => {
      // mintViewer's own session read counts once for its session and its IP.
      const ann = await mintViewer(limited, s.keys.admin!, { deploymentId: s.refs.prod! });
      for (let i = 0; i < 3; i++) expect((await read(ann)).statusCode).toBe(200);
      const refused = await read(ann);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ error: { status: 429, code: 'too_many_requests' } });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      const ben = await mintViewer(limited, s.keys.admin!, { deploymentId: s.refs.prod! });
      expect((await read(ben)).statusCode).toBe(200);
    });

    it('answers 429 to an IP past its limit whatever the session, and not to another IP; the host backend is not counted', async () => {
      const viewers = await Promise.all(Array.from({ length: 4 }, () => mintViewer(limited, s.keys.admin!, { deploymentId: s.refs.prod! })));
      // Each mint read its session once (from 127.0.0.1): make the count on 10.0.0.9 exact instead.
      const statuses: number[] = [];
      for (const viewer of viewers) for (let i = 0; i < 2; i++) statuses.push((await read(viewer, '10.0.0.9')).statusCode);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 429]);
      expect((await read(viewers[3]!, '10.0.0.10')).statusCode).toBe(200);
      // Generate-session comes from the host's backend: it is not an embed API call and has its own limit.
      for (let i = 0; i < 10; i++) {
        const res = await limited.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(s.keys.admin!), payload: { deploymentId: s.refs.prod, externalId: `host-${i}` }, remoteAddress: '10.0.0.9' });
        expect(res.statusCode).toBe(200);
      }
    });
  });

  describe("the exchange's included reads (issue 31 item 14)", () => {
    let limited: FastifyInstance;
    beforeAll(async () => {
      limited = await buildApp(testConfig({ rateLimits: { embedPerSession: 1000, embedPerIp: 4, generateSession: 1000, exchange: 1000 } }), { db: t().db });
    });
    afterAll(async () => {
      await limited.close();
    });

    /** Generate Session from the host's backend, then the exchange with both reads included, from `ip`. */
    const exchangeWithReads = async (ip: string) => {
      const minted = await limited.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(s.keys.admin!), payload: { deploymentId: s.refs.prod, externalId: `inc-${uniqueSuffix()}` } });
      const res = await limited.inject({ method: 'POST', url: '/api/v1/embed/session/token', remoteAddress: ip, payload: { sessionId: minted.json().sessionId, include: { session: true, dashboard: publicId } } });
      expect(res.statusCode, res.body).toBe(200);
      const { included } = res.json() as { included: { session: { status: number }; dashboard: { status: number } } };
      return { token: res.json().token as string, statuses: [included.session.status, included.dashboard.status] };
    };

    it("count against the caller's own address: one client past its limit does not refuse another's", async () => {
      // Client A spends its four embed reads a minute on two exchanges (two included reads each)...
      expect((await exchangeWithReads('10.3.0.1')).statuses).toEqual([200, 200]);
      const a = await exchangeWithReads('10.3.0.1');
      expect(a.statuses).toEqual([200, 200]);
      // ...so its next reads are refused, included or direct...
      expect((await exchangeWithReads('10.3.0.1')).statuses).toEqual([429, 429]);
      expect((await limited.inject({ url: '/api/v1/embed/session', headers: { authorization: `Embed-Token ${a.token}` }, remoteAddress: '10.3.0.1' })).statusCode).toBe(429);
      // ...while client B, with its own address, is served in full.
      expect((await exchangeWithReads('10.3.0.2')).statuses).toEqual([200, 200]);
      expect((await exchangeWithReads('10.3.0.2')).statuses).toEqual([200, 200]);
    });

    it("count against the caller's own bucket, which direct reads from that address then find spent", async () => {
      const { token } = await exchangeWithReads('10.3.0.3');
      const direct = () => limited.inject({ url: '/api/v1/embed/session', headers: { authorization: `Embed-Token ${token}` }, remoteAddress: '10.3.0.3' });
      // Two of the four were spent by the included reads.
      expect([(await direct()).statusCode, (await direct()).statusCode, (await direct()).statusCode]).toEqual([200, 200, 429]);
    });

    it('behind a trusted proxy, count against the forwarded client, not the proxy', async () => {
      const trusting = await buildApp(testConfig({ trustProxy: '10.1.0.1', rateLimits: { embedPerSession: 1000, embedPerIp: 2, generateSession: 1000, exchange: 1000 } }), { db: t().db });
      try {
        const exchangeVia = async (client: string) => {
          const minted = await trusting.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(s.keys.admin!), payload: { deploymentId: s.refs.prod, externalId: `inc-${uniqueSuffix()}` } });
          const res = await trusting.inject({ method: 'POST', url: '/api/v1/embed/session/token', remoteAddress: '10.1.0.1', headers: { 'x-forwarded-for': client }, payload: { sessionId: minted.json().sessionId, include: { session: true, dashboard: publicId } } });
          const { included } = res.json() as { included: { session: { status: number }; dashboard: { status: number } } };
          return [included.session.status, included.dashboard.status];
        };
        expect(await exchangeVia('203.0.113.31')).toEqual([200, 200]);
        expect(await exchangeVia('203.0.113.31')).toEqual([429, 429]);
        expect(await exchangeVia('203.0.113.32')).toEqual([200, 200]);
      } finally {
        await trusting.close();
      }
    });

    it("count against the viewer's embed session, as its direct reads do", async () => {
      const perSession = await buildApp(testConfig({ rateLimits: { embedPerSession: 3, embedPerIp: 1000, generateSession: 1000, exchange: 1000 } }), { db: t().db });
      try {
        const minted = await perSession.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(s.keys.admin!), payload: { deploymentId: s.refs.prod, externalId: `inc-${uniqueSuffix()}` } });
        const res = await perSession.inject({ method: 'POST', url: '/api/v1/embed/session/token', remoteAddress: '10.3.0.4', payload: { sessionId: minted.json().sessionId, include: { session: true, dashboard: publicId } } });
        const direct = (ip: string) => perSession.inject({ url: '/api/v1/embed/session', headers: { authorization: `Embed-Token ${res.json().token}` }, remoteAddress: ip });
        expect([(await direct('10.3.0.5')).statusCode, (await direct('10.3.0.6')).statusCode]).toEqual([200, 429]);
      } finally {
        await perSession.close();
      }
    });
  });

  describe('behind a proxy (SVC_TRUST_PROXY)', () => {
    const readFrom = (app: FastifyInstance, viewer: ViewerSession, forwardedFor: string) =>
      app.inject({ url: commentsUrl(), headers: { ...viewer.headers, 'x-forwarded-for': forwardedFor }, remoteAddress: '10.1.0.1' });

    it('counts per client IP from X-Forwarded-For when the proxy is trusted, and per proxy when it is not', async () => {
      const trusting = await buildApp(testConfig({ trustProxy: '10.1.0.1', rateLimits: { embedPerSession: 1000, embedPerIp: 3, generateSession: 1000, exchange: 1000 } }), { db: t().db });
      const distrusting = await buildApp(testConfig({ rateLimits: { embedPerSession: 1000, embedPerIp: 3, generateSession: 1000, exchange: 1000 } }), { db: t().db });
      try {
        for (const app of [trusting, distrusting]) {
          const viewer = await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod! });
          const statuses: number[] = [];
          // Four clients behind one proxy, one request each, then the first client three more times.
          for (const client of ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4']) statuses.push((await readFrom(app, viewer, client)).statusCode);
          for (let i = 0; i < 3; i++) statuses.push((await readFrom(app, viewer, '203.0.113.1')).statusCode);
          if (app === trusting) expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
          else expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429]);
        }
        // A forged header from a peer that is not the trusted proxy changes nothing.
        const viewer = await mintViewer(trusting, s.keys.admin!, { deploymentId: s.refs.prod! });
        const forged = (client: string) => trusting.inject({ url: commentsUrl(), headers: { ...viewer.headers, 'x-forwarded-for': client }, remoteAddress: '198.51.100.7' });
        const statuses: number[] = [];
        for (const client of ['203.0.113.21', '203.0.113.22', '203.0.113.23', '203.0.113.24']) statuses.push((await forged(client)).statusCode);
        expect(statuses).toEqual([200, 200, 200, 429]);
      } finally {
        await trusting.close();
        await distrusting.close();
      }
    });

    it('reads SVC_TRUST_PROXY and refuses a bad value by name', () => {
      expect(trustProxyFromEnv({})).toBe(false);
      expect(trustProxyFromEnv({ SVC_TRUST_PROXY: 'false' })).toBe(false);
      expect(trustProxyFromEnv({ SVC_TRUST_PROXY: 'true' })).toBe(true);
      expect(trustProxyFromEnv({ SVC_TRUST_PROXY: '2' })).toBe(2);
      expect(trustProxyFromEnv({ SVC_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1' })).toBe('10.0.0.0/8,127.0.0.1,::1');
      expect(() => trustProxyFromEnv({ SVC_TRUST_PROXY: 'loadbalancer.internal' })).toThrow(/SVC_TRUST_PROXY .*"loadbalancer.internal"/);
      expect(() => trustProxyFromEnv({ SVC_TRUST_PROXY: '10.0.0.0/8,300.1.1.1' })).toThrow(/"300.1.1.1"/);
    });
  });

  describe('slow clients', () => {
    let slow: FastifyInstance;
    let url: string;
    beforeAll(async () => {
      slow = await buildApp(testConfig({ timeouts: { requestMs: 600 } }), { db: t().db });
      url = await slow.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => {
      await slow.close();
    });

    it('closes a connection whose headers trickle in past the request timeout with 408, and serves others meanwhile', async () => {
      const host = new URL(url).host;
      const trickle = rawExchange(url, [
        { bytes: `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n`, afterMs: 0 },
        { bytes: 'X-Slow: 1\r\n', afterMs: 400 },
        { bytes: 'X-Slow: 2\r\n', afterMs: 800 },
        { bytes: 'X-Slow: 3\r\n', afterMs: 1200 },
      ], 5000);
      let trickleEnded = false;
      void trickle.then(() => { trickleEnded = true; });
      // Another client is served while the trickling connection is still open.
      const res = await fetch(`${url}/healthz`);
      expect(res.status).toBe(200);
      expect(trickleEnded, 'the other request was answered before the slow connection ended').toBe(false);
      // The server closed it with 408 (had it not, rawExchange would reject when it gives up at 5 s).
      const { text } = await trickle;
      expect(text).toMatch(/^HTTP\/1\.1 408/);
    });

    it('closes a connection whose body stops half way with 408', async () => {
      const viewer = await mintViewer(slow, s.keys.admin!, { deploymentId: s.refs.prod! });
      const before = await commentRows();
      const host = new URL(url).host;
      const { text } = await rawExchange(url, [
        { bytes: `POST ${commentsUrl()} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: ${viewer.headers.authorization}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"body":"half`, afterMs: 0 },
      ], 5000);
      expect(text).toMatch(/^HTTP\/1\.1 408/);
      expect(await commentRows()).toBe(before);
    });
  });

  describe('handler timeout', () => {
    // TEST DOUBLE of an AI endpoint (a third party): it accepts the request and never answers.
    let silentAi: Server;
    let hanging: FastifyInstance;
    beforeAll(async () => {
      silentAi = createServer(() => undefined);
      await new Promise<void>((resolve) => silentAi.listen(0, '127.0.0.1', resolve));
      const baseUrl = `http://127.0.0.1:${(silentAi.address() as AddressInfo).port}/v1`;
      hanging = await buildApp(testConfig({ timeouts: { handlerMs: 400 }, ai: { baseUrl, model: 'm', apiKey: 'sk-test' } }), { db: t().db });
    });
    afterAll(async () => {
      await hanging.close();
      silentAi.closeAllConnections();
      await new Promise((resolve) => silentAi.close(resolve));
    });

    it('answers 503 with the error body when a request is not answered in time', async () => {
      const viewer = await mintViewer(hanging, s.keys.admin!, { deploymentId: s.refs.prod! });
      // The AI endpoint never answers: only the handler timeout (400 ms) can end this request before the test's own.
      const res = await hanging.inject({ method: 'POST', url: '/api/v1/embed/ai/query', headers: viewer.headers, payload: { question: 'How many orders?' } });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ error: { status: 503, code: 'service_unavailable' } });
    });
  });
});
