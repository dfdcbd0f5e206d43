import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testConfig } from '../../test/config.js';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { eventually } from '../../test/eventually.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { startSvcServe } from '../../test/svc-process.js';
import type { SvcProcess } from '../../test/svc-process.js';
import { startWebhookReceiver } from '../../test/webhook-receiver.js';
import type { ReceivedWebhook, WebhookReceiver } from '../../test/webhook-receiver.js';
import { buildApp } from '../app.js';
import type { WebhookSettings } from '../core/core.config.js';
import { WEBHOOK_DELIVERY_CHANNEL, openDatabase } from '../db/db.database.js';
import type { Db, Notifications } from '../db/db.database.js';
import { WebhookDispatcher } from './webhooks.dispatcher.js';

/** A poll far longer than any wait below: whatever arrives sooner was not found by polling. */
const LONG_POLL_MS = 60_000;
/** What "at once" means here: well under the poll, with room for a busy 2-core machine. */
const AT_ONCE_MS = 2000;
const SETTINGS: WebhookSettings = {
  allowPrivate: false, deliver: true, timeoutMs: 2000, pollMs: LONG_POLL_MS, concurrency: 8, retryScheduleMs: [60_000], retentionMs: 30 * 86_400_000,
};
const ENDPOINTS = '/api/v1/webhooks/endpoints';
const quiet = { warn: () => undefined, error: () => undefined };

/** A fresh account allowed the loopback receiver, with a published dashboard to comment on. */
function seedHookAccount(db: Db, publicId: string): Promise<SeededAccount> {
  return seedAccount(db.kysely, {
    ref: 'account',
    settings: { allowPrivateWebhookUrls: true },
    users: [{ ref: 'alice', role: 'admin' }],
    deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'wb', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
  });
}

/**
 * Issue 23: a started dispatcher looks for due deliveries at once, not at its next poll, on both databases: after
 * its own process's writes, and when a retry it scheduled comes due. The poll here is a minute: nothing below may
 * wait for it.
 */
describeEachDialect('webhook deliveries looked for at once', (t) => {
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });

  afterAll(async () => {
    await receiver?.close();
  });

  it('delivers a write of its own process at once, and a retry it scheduled when it comes due', async () => {
    const publicId = `wake-${uniqueSuffix()}`;
    const account = await seedHookAccount(t().db, publicId);
    const admin = bearer(account.keys.alice!);
    const viewer = await mintViewer(t().app, account.keys.alice!, { deploymentId: account.refs.prod!, embedTenantName: 'customer-a' });
    const created = await t().app.inject({ method: 'POST', url: ENDPOINTS, headers: admin, payload: { url: `${receiver.url}?own=${publicId}`, eventTypes: ['comment.created'] } });
    expect(created.statusCode, created.body).toBe(201);
    const mine = (r: ReceivedWebhook) => r.url.endsWith(`own=${publicId}`);
    // The first attempt fails; the retry waits 300 ms (random() = 1: the whole step).
    receiver.answer = (r) => (mine(r) && receiver.received.filter(mine).length === 1 ? 500 : 200);
    const dispatcher = new WebhookDispatcher({
      db: t().db.kysely, dialect: t().dialect, settings: { ...SETTINGS, retryScheduleMs: [300] }, now: () => new Date(), random: () => 1,
      notifications: t().db.notifications, accountIds: [account.refs.account!], log: quiet,
    });
    // The app of "its own process": its writes wake this dispatcher (app.ts wires its own dispatcher so).
    const own = await buildApp(testConfig(), { db: t().db, wakeWebhookDelivery: () => dispatcher.wake() });
    dispatcher.start();
    try {
      const posted = Date.now();
      expect((await own.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/comments`, headers: viewer.headers, payload: { body: 'now' } })).statusCode).toBe(201);
      expect(await eventually(() => receiver.received.filter(mine).length === 2, AT_ONCE_MS + 300)).toBe(true);
      const [first, retry] = receiver.received.filter(mine);
      expect(first!.at - posted).toBeLessThan(AT_ONCE_MS);
      // Due 300 ms after the first attempt began (its receipt came a few ms after that).
      expect(retry!.at - first!.at).toBeGreaterThanOrEqual(250);
      expect(retry!.at - first!.at).toBeLessThan(300 + AT_ONCE_MS);
      expect(retry!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    } finally {
      await dispatcher.stop();
      await own.close();
      receiver.answer = () => 200;
    }
  });
});

/**
 * Issue 23 on PostgreSQL: a delivery committed by one process wakes the dispatchers of all processes through NOTIFY
 * (migration 0012), so another process delivers it at once instead of at its next poll. The writer is a real
 * `svc serve` process (delivery off), so that its in-process nudge cannot reach the dispatcher under test, which runs
 * here on a database connection of its own, for the test's accounts only, with a one-minute poll.
 */
const postgresUrl = inject('postgresUrl');
(postgresUrl === null ? describe.skip : describe)(`webhook wake-ups across processes [postgres${postgresUrl === null ? ': SKIPPED, no SVC_TEST_POSTGRES_URL' : ''}]`, () => {
  let writer: SvcProcess;
  let db: Db;
  let receiver: WebhookReceiver;
  let listener: pg.Client;
  /** The payloads (account ids) of every notification on the channel since the start, in arrival order. */
  const notified: string[] = [];
  let dispatcher: WebhookDispatcher;
  /** The dispatcher's LISTEN is in effect (the Notifications contract: resync comes after it). */
  let isListening = false;
  let account: SeededAccount;
  let sentinel: SeededAccount;
  let publicId: string;
  let viewerHeaders: Record<string, string>;

  beforeAll(async () => {
    db = openDatabase(postgresUrl!);
    publicId = `wake-pg-${uniqueSuffix()}`;
    account = await seedHookAccount(db, publicId);
    sentinel = await seedHookAccount(db, `wake-pg-sentinel-${uniqueSuffix()}`);
    receiver = await startWebhookReceiver();
    listener = new pg.Client({ connectionString: postgresUrl! });
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.channel === WEBHOOK_DELIVERY_CHANNEL) notified.push(message.payload ?? '');
    });
    await listener.query(`LISTEN ${WEBHOOK_DELIVERY_CHANNEL}`);
    writer = await startSvcServe(postgresUrl!);
    const minted = await send('POST', '/api/v1/embed/generate-session', bearer(account.keys.alice!), { deploymentId: account.refs.prod, externalId: `viewer-${uniqueSuffix()}`, embedTenantName: 'customer-a' });
    const exchanged = await send('POST', '/api/v1/embed/session/token', {}, { sessionId: ((await minted.json()) as { sessionId: string }).sessionId });
    viewerHeaders = { authorization: `Embed-Token ${((await exchanged.json()) as { token: string }).token}` };
    const observed: Notifications = {
      listen: (channel, handlers) => db.notifications.listen(channel, {
        notified: handlers.notified,
        resync: () => {
          handlers.resync();
          isListening = true;
        },
      }),
    };
    dispatcher = new WebhookDispatcher({
      db: db.kysely, dialect: 'postgres', settings: SETTINGS, now: () => new Date(), random: () => 1, notifications: observed,
      accountIds: [account.refs.account!, sentinel.refs.account!], log: quiet,
    });
    dispatcher.start();
    // Writes from here on are notified to it (the first test checks that this came).
    await eventually(() => isListening, 10_000);
  }, 60_000);

  afterAll(async () => {
    await dispatcher?.stop();
    await writer?.stop();
    await listener?.end();
    await receiver?.close();
    await db?.close();
  });

  function send(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Response> {
    return fetch(`${writer.url}${path}`, body === undefined ? { method, headers } : { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  }
  async function createEndpoint(of: SeededAccount, query: string, eventTypes: string[]): Promise<number> {
    const res = await send('POST', ENDPOINTS, bearer(of.keys.alice!), { url: `${receiver.url}?${query}`, eventTypes });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { id: number }).id;
  }
  async function post(body: string): Promise<number> {
    const res = await send('POST', `/api/v1/embed/dashboard/${publicId}/comments`, viewerHeaders, { body });
    expect(res.status, await res.clone().text()).toBe(201);
    return Date.now();
  }
  const to = (query: string) => () => receiver.received.filter((r) => r.url.endsWith(`?${query}`));
  /** Re-enables one of the sentinel account's endpoints: a notification that arrives after those of earlier commits. */
  async function passSentinel(endpointId: number): Promise<void> {
    const seen = notified.filter((payload) => payload === String(sentinel.refs.account)).length;
    for (const enabled of [false, true]) {
      const res = await send('PATCH', `${ENDPOINTS}/${endpointId}`, bearer(sentinel.keys.alice!), { enabled });
      expect(res.status, await res.text()).toBe(200);
    }
    expect(await eventually(() => notified.filter((payload) => payload === String(sentinel.refs.account)).length > seen, AT_ONCE_MS)).toBe(true);
  }

  it('delivers an event written through another process at once, despite a one-minute poll', async () => {
    expect(isListening, 'the dispatcher listens to its channel').toBe(true);
    const query = `insert=${publicId}`;
    await createEndpoint(account, query, ['comment.created']);
    for (const text of ['first', 'second', 'third']) {
      const count = to(query)().length;
      const posted = await post(text);
      expect(await eventually(() => to(query)().length === count + 1, AT_ONCE_MS), `"${text}" arrived`).toBe(true);
      expect(to(query)().at(-1)!.at - posted).toBeLessThan(AT_ONCE_MS);
    }
    expect(notified).toContain(String(account.refs.account));
  });

  it('delivers a replay made through another process at once', async () => {
    const query = `replay=${publicId}`;
    const endpointId = await createEndpoint(account, query, ['comment.created']);
    await post('to replay');
    expect(await eventually(() => to(query)().length === 1, AT_ONCE_MS)).toBe(true);
    // The receiver has the request; the dispatcher records the answer just after it.
    let delivery: { id: number; status: string } | undefined;
    const recorded = async () => {
      const log = await send('GET', `${ENDPOINTS}/${endpointId}/deliveries`, bearer(account.keys.alice!));
      [delivery] = ((await log.json()) as { items: Array<{ id: number; status: string }> }).items;
      return delivery?.status === 'delivered';
    };
    expect(await eventually(recorded, AT_ONCE_MS)).toBe(true);
    const replayed = Date.now();
    expect((await send('POST', `${ENDPOINTS}/${endpointId}/deliveries/${delivery!.id}/replay`, bearer(account.keys.alice!))).status).toBe(202);
    expect(await eventually(() => to(query)().length === 2, AT_ONCE_MS)).toBe(true);
    expect(to(query)()[1]!.at - replayed).toBeLessThan(AT_ONCE_MS);
    expect(to(query)()[1]!.headers['webhook-id']).toBe(to(query)()[0]!.headers['webhook-id']);
  });

  it('notifies the account when deliveries are written, replayed or their endpoint re-enabled, and for nothing else', async () => {
    const mine = () => notified.filter((payload) => payload === String(account.refs.account)).length;
    const sentinelEndpoint = await createEndpoint(sentinel, `sentinel=${publicId}`, ['comment.created']);
    const query = `notify=${publicId}`;
    // A failing endpoint, so that a claim, an attempt and a retry scheduled an hour away all happen.
    receiver.answer = (r) => (r.url.endsWith(`?${query}`) ? 500 : 200);
    const endpointId = await createEndpoint(account, query, ['thread.resolved']);
    await createEndpoint(account, `notify-created=${publicId}`, ['comment.created']);
    await passSentinel(sentinelEndpoint);
    const before = mine();
    // Other endpoint changes, and disabling: nothing (notifications arrive in commit order, so the sentinel's, after
    // them, shows that none of theirs is on its way).
    const change = async (body: Record<string, unknown>) => {
      const res = await send('PATCH', `${ENDPOINTS}/${endpointId}`, bearer(account.keys.alice!), body);
      expect(res.status, await res.text()).toBe(200);
    };
    await change({ description: 'renamed' });
    await change({ eventTypes: ['thread.resolved', 'thread.reopened'] });
    await change({ enabled: false });
    await passSentinel(sentinelEndpoint);
    expect(mine()).toBe(before);
    // Re-enabled: one.
    await change({ enabled: true });
    expect(await eventually(() => mine() === before + 1, AT_ONCE_MS)).toBe(true);
    // A write that makes deliveries: one; its claim, its failed attempt and the retry it schedules: none.
    const root = await send('POST', `/api/v1/embed/dashboard/${publicId}/comments`, viewerHeaders, { body: 'to resolve' });
    const rootId = ((await root.json()) as { id: number }).id;
    expect((await send('POST', `/api/v1/embed/dashboard/${publicId}/comments/${rootId}/resolve`, viewerHeaders, { resolved: true })).status).toBe(200);
    expect(await eventually(() => to(query)().length === 1, AT_ONCE_MS)).toBe(true);
    expect(await eventually(async () => {
      const log = await send('GET', `${ENDPOINTS}/${endpointId}/deliveries`, bearer(account.keys.alice!));
      return ((await log.json()) as { items: Array<{ attempts: number }> }).items[0]?.attempts === 1;
    }, AT_ONCE_MS)).toBe(true);
    await passSentinel(sentinelEndpoint);
    // The post (comment.created, to every such endpoint of the account in one statement) and the resolution.
    expect(mine()).toBe(before + 3);
    receiver.answer = () => 200;
  });
});
