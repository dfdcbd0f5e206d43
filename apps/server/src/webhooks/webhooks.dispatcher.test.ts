import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { startWebhookReceiver } from '../../test/webhook-receiver.js';
import type { WebhookReceiver } from '../../test/webhook-receiver.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { WebhookDispatcher } from './webhooks.dispatcher.js';

const SLOW_MS = 1500;
const EDITS = 10;

/**
 * The dispatcher's slots, on both databases: with `concurrency` attempts in flight, a slot that frees is filled at
 * once, so an endpoint that takes its time to answer holds up one slot, not the deliveries claimed beside it.
 */
describeEachDialect('webhook delivery slots', (t) => {
  let app: FastifyInstance;
  let account: SeededAccount;
  let viewer: ViewerSession;
  let publicId: string;
  let slow: WebhookReceiver;
  let fast: WebhookReceiver;

  beforeAll(async () => {
    publicId = `slots-${uniqueSuffix()}`;
    account = await seedAccount(t().db.kysely, {
      ref: 'account', settings: { allowPrivateWebhookUrls: true, allowEmbedComments: true }, users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'wb', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
    });
    app = await buildApp(testConfig(), { db: t().db });
    viewer = await mintViewer(app, account.keys.alice!, { deploymentId: account.refs.prod!, externalId: `viewer-${uniqueSuffix()}`, embedTenantName: 'customer-a' });
    slow = await startWebhookReceiver();
    slow.delayMs = SLOW_MS;
    fast = await startWebhookReceiver();
  });

  afterAll(async () => {
    await app?.close();
    await slow?.close();
    await fast?.close();
  });

  it('delivers to a fast endpoint while a slow one holds a slot, rather than after it answers', async () => {
    const register = async (url: string, eventTypes: string[]) => {
      const res = await app.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: bearer(account.keys.alice!), payload: { url, eventTypes } });
      expect(res.statusCode, res.body).toBe(201);
    };
    await register(slow.url, ['comment.created']);
    await register(fast.url, ['comment.edited']);
    const comments = `/api/v1/embed/dashboard/${publicId}/comments`;
    const posted = await app.inject({ method: 'POST', url: comments, headers: viewer.headers, payload: { body: 'first' } });
    expect(posted.statusCode, posted.body).toBe(201);
    for (let edit = 1; edit <= EDITS; edit++) {
      const res = await app.inject({ method: 'PATCH', url: `${comments}/${posted.json().id}`, headers: viewer.headers, payload: { body: `edit ${edit}` } });
      expect(res.statusCode, res.body).toBe(200);
    }

    // Two slots: the slow delivery is claimed first, beside the first edit's.
    const dispatcher = new WebhookDispatcher({
      db: t().db.kysely, dialect: t().dialect, now: () => new Date(), accountIds: [account.refs.account!],
      settings: { allowPrivate: false, deliver: false, timeoutMs: 5000, pollMs: 1000, concurrency: 2, retryScheduleMs: [60_000], retentionMs: 86_400_000 },
      log: { warn: () => undefined, error: (fields) => expect.unreachable(JSON.stringify(fields)) },
    });
    expect(await dispatcher.drain()).toBe(1 + EDITS);
    expect(slow.received).toHaveLength(1);
    expect(fast.received).toHaveLength(EDITS);
    const slowAnsweredAt = slow.received[0]!.at + SLOW_MS;
    const lastFast = Math.max(...fast.received.map((request) => request.at));
    expect(lastFast).toBeLessThan(slowAnsweredAt);
    expect(fast.received.map((request) => (JSON.parse(request.body) as { data: { body?: string } }).data.body)).toEqual(Array.from({ length: EDITS }, () => undefined));
  });
});
