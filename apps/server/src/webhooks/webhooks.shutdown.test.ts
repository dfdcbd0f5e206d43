import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer, mintViewerOverHttp } from '../../test/embed.js';
import { eventually } from '../../test/eventually.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import { RAISED_RATE_LIMIT_ENV } from '../../test/limits.js';
import { describeEachOwnDatabase } from '../../test/own-database.js';
import type { SvcProcess } from '../../test/svc-process.js';
import { startWebhookReceiver } from '../../test/webhook-receiver.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { openDatabase } from '../db/db.database.js';
import { WebhookDispatcher } from './webhooks.dispatcher.js';

/** An attempt may take 25 s: far past SVC_SHUTDOWN_TIMEOUT_MS (10 s), so waiting for it would exit 1 after 11 s. */
const DELIVERY_ENV = { ...RAISED_RATE_LIMIT_ENV, SVC_WEBHOOK_DELIVERY: 'true', SVC_WEBHOOK_POLL_MS: '50', SVC_WEBHOOK_TIMEOUT_MS: '25000' };

/** A receiver on loopback that takes each request in full and, while `hold` is on, never answers it. */
interface HoldingReceiver {
  url: string;
  hold: boolean;
  received: Array<{ headers: IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

async function startHoldingReceiver(): Promise<HoldingReceiver> {
  const held: ServerResponse[] = [];
  const state = { hold: true, received: [] as HoldingReceiver['received'] };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      state.received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (state.hold) held.push(response);
      else response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}

/**
 * Issue 31 item 15 (docs/webhooks.md "Delivery", docs/operations.md "Shutdown"): SIGTERM does not wait for a webhook
 * receiver. A real `svc serve` is attempting a delivery to a receiver that holds the request; SIGTERM cuts the
 * attempt off and the process exits 0 at once. The attempt is not counted: the delivery is pending, and the next
 * process delivers it (at least once: the receiver gets the same event id twice). Each dialect gets a database of
 * its own, so that no other suite's deliveries are in it.
 */
describeEachOwnDatabase('SIGTERM with a webhook attempt in flight', { name: 'shutdown', settings: { allowPrivateWebhookUrls: true } }, (t) => {
  let receiver: HoldingReceiver;

  beforeAll(async () => { receiver = await startHoldingReceiver(); });
  afterAll(() => receiver?.close());

  const start = () => t().start(DELIVERY_ENV);
  const post = (on: SvcProcess, path: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${on.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const readDelivery = async (endpointId: number) => {
    const db = openDatabase(t().url);
    try {
      const deliveries = await db.kysely.selectFrom('webhook_deliveries').select(['id', 'status', 'attempts', 'locked_until', 'lock_token', 'event_id']).where('endpoint_id', '=', endpointId).execute();
      const attempts = await db.kysely.selectFrom('webhook_attempts').select(['status_code', 'error']).where('delivery_id', 'in', deliveries.map((d) => d.id).concat(0)).execute();
      return { deliveries, attempts };
    } finally {
      await db.close();
    }
  };

  it('exits 0 within 2 s of SIGTERM though a receiver holds the request; the attempt is not counted, and a later process delivers it', async () => {
    const first = await start();
    const created = await post(first, '/api/v1/webhooks/endpoints', bearer(t().adminKey), { url: receiver.url, eventTypes: ['comment.created'] });
    expect(created.status, await created.clone().text()).toBe(201);
    const endpoint = (await created.json()) as { id: number };
    const viewer = await mintViewerOverHttp(first.url, t().adminKey, { deploymentId: t().deploymentId, externalId: `v-${uniqueSuffix()}` });
    const comment = await post(first, `/api/v1/embed/dashboard/${t().publicId}/comments`, viewer.headers, { body: 'held at shutdown' });
    expect(comment.status).toBe(201);
    expect(await eventually(() => receiver.received.length === 1, 10_000), 'the receiver holds the attempt').toBe(true);

    let stderr = '';
    first.child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const exited = new Promise<number | null>((resolve) => first.child.once('exit', (code) => resolve(code)));
    const signalledAt = Date.now();
    first.child.kill('SIGTERM');
    const code = await exited;
    const tookMs = Date.now() - signalledAt;
    expect(code, stderr).toBe(0);
    expect(tookMs, `exited ${tookMs} ms after SIGTERM`).toBeLessThan(2000);

    // Given back: pending, no attempt spent or logged, no lease left for the next process to wait out.
    const { deliveries, attempts } = await readDelivery(endpoint.id);
    expect(deliveries).toEqual([expect.objectContaining({ status: 'pending', attempts: 0, locked_until: null, lock_token: null })]);
    expect(attempts).toEqual([]);

    receiver.hold = false;
    await start();
    expect(await eventually(async () => (await readDelivery(endpoint.id)).deliveries[0]?.status === 'delivered', 20_000), 'delivered by the next process').toBe(true);
    expect((await readDelivery(endpoint.id)).attempts).toEqual([{ status_code: 200, error: null }]);
    // At least once: the receiver had the event twice, under one id.
    expect(receiver.received.map((request) => request.headers['webhook-id'])).toEqual([deliveries[0]!.event_id, deliveries[0]!.event_id]);
  }, 90_000);
});

/**
 * The dispatcher's side of it, on both databases: stop() gives back both the attempts it cuts off and the claims
 * still queued for a slot, so none waits out its lease (twice the timeout plus 30 s) before another process may
 * take it. Two slots, two endpoints that hold their requests, one that answers: the fourth delivery is claimed
 * while both slots are held, so it is queued when stop() comes.
 */
describeEachDialect('stopping the webhook dispatcher', (t) => {
  it('gives back the attempts in flight and the queued claims, pending, uncounted, unleased; an answered one stays delivered', async () => {
    const publicId = `stop-${uniqueSuffix()}`;
    const account = await seedAccount(t().db.kysely, {
      ref: 'account', settings: { allowPrivateWebhookUrls: true, allowEmbedComments: true }, users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'wb', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
    });
    const app = await buildApp(testConfig({ rateLimits: { generateSession: 1000, exchange: 1000, embedPerSession: 1000, embedPerIp: 1000 } }), { db: t().db });
    const held = await startHoldingReceiver();
    const fast = await startWebhookReceiver();
    try {
      for (const [url, eventTypes] of [[held.url, ['comment.created']], [fast.url, ['comment.edited']]] as const) {
        const res = await app.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: bearer(account.keys.alice!), payload: { url, eventTypes } });
        expect(res.statusCode, res.body).toBe(201);
      }
      const viewer = await mintViewer(app, account.keys.alice!, { deploymentId: account.refs.prod! });
      const comments = `/api/v1/embed/dashboard/${publicId}/comments`;
      // In this order: held, fast, held, fast.
      for (const body of ['one', 'two']) {
        const posted = await app.inject({ method: 'POST', url: comments, headers: viewer.headers, payload: { body } });
        expect(posted.statusCode, posted.body).toBe(201);
        expect((await app.inject({ method: 'PATCH', url: `${comments}/${posted.json().id}`, headers: viewer.headers, payload: { body: `${body}, edited` } })).statusCode).toBe(200);
      }
      const dispatcher = new WebhookDispatcher({
        db: t().db.kysely, dialect: t().dialect, now: () => new Date(), accountIds: [account.refs.account!],
        settings: { allowPrivate: false, deliver: false, timeoutMs: 25_000, pollMs: 1000, concurrency: 2, retryScheduleMs: [60_000], retentionMs: 86_400_000 },
        log: { warn: () => undefined, error: (fields) => expect.unreachable(JSON.stringify(fields)) },
      });
      const draining = dispatcher.drain();
      // Claimed [held, fast]; the fast one answered, so [held, fast] were claimed: the second held one took the free slot.
      expect(await eventually(() => held.received.length === 2 && fast.received.length === 1, 10_000)).toBe(true);
      const stoppedAt = Date.now();
      await dispatcher.stop();
      expect(await draining).toBe(3);
      expect(Date.now() - stoppedAt).toBeLessThan(2000);

      const rows = await t().db.kysely.selectFrom('webhook_deliveries').select(['event_type', 'status', 'attempts', 'locked_until', 'lock_token'])
        .where('account_id', '=', account.refs.account!).orderBy('id').execute();
      const givenBack = { status: 'pending', attempts: 0, locked_until: null, lock_token: null };
      expect(rows).toEqual([
        { event_type: 'comment.created', ...givenBack },
        { event_type: 'comment.edited', status: 'delivered', attempts: 1, locked_until: null, lock_token: null },
        { event_type: 'comment.created', ...givenBack },
        { event_type: 'comment.edited', ...givenBack },
      ]);
      expect(fast.received).toHaveLength(1);
    } finally {
      await app.close();
      await held.close();
      await fast.close();
    }
  }, 60_000);
});
