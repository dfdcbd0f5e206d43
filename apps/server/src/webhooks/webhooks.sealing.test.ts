import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
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
import type { WebhookSettings } from '../core/core.config.js';
import { Sealer } from '../core/core.sealed.js';
import { WebhookDispatcher } from './webhooks.dispatcher.js';

const KEY_A = 'svc-test-encryption-key-a-0123456789abcdef';
const KEY_B = 'svc-test-encryption-key-b-0123456789abcdef';
const SETTINGS: WebhookSettings = {
  allowPrivate: true, deliver: false, timeoutMs: 2000, pollMs: 1000, concurrency: 4, retryScheduleMs: [60_000], retentionMs: 2_592_000_000,
};

/**
 * Signing secrets at rest (SVC_ENCRYPTION_KEY, docs/operations.md "Secrets at rest"), on both databases: with a key,
 * the database holds only sealed secrets while the API shows the secret once as before and deliveries still verify
 * with the `standardwebhooks` package; secrets stored before a key was set, or under an older key, are resealed when
 * a delivering process starts; a secret that cannot be opened fails its attempts with a reason that names the key,
 * and nothing is posted.
 */
describeEachDialect('webhook secrets at rest', (t) => {
  let account: SeededAccount;
  let publicId: string;
  let viewer: ViewerSession;
  let receiver: WebhookReceiver;
  const apps: FastifyInstance[] = [];
  const dispatchers: WebhookDispatcher[] = [];

  /** svc with these keys (none: secrets stored as they are), loopback endpoints allowed. */
  const svcWith = async (keys: string[]) => {
    const app = await buildApp(testConfig({ encryptionKeys: keys, webhooks: { allowPrivate: true } }), { db: t().db });
    apps.push(app);
    return app;
  };
  const dispatcherWith = (keys: string[]) => {
    const dispatcher = new WebhookDispatcher({
      db: t().db.kysely, dialect: t().dialect, settings: SETTINGS, now: () => new Date(), sealer: new Sealer(keys),
      accountIds: [account.refs.account!], log: { warn: () => undefined, error: () => undefined },
    });
    dispatchers.push(dispatcher);
    return dispatcher;
  };
  const endpoints = '/api/v1/webhooks/endpoints';
  const createEndpoint = async (app: FastifyInstance) => {
    const res = await app.inject({ method: 'POST', url: endpoints, headers: bearer(account.keys.alice!), payload: { url: receiver.url, eventTypes: ['comment.created'] } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; secret: string };
  };
  const storedSecret = async (endpointId: number) =>
    (await t().db.kysely.selectFrom('webhook_endpoints').select('secret').where('id', '=', endpointId).executeTakeFirstOrThrow()).secret;
  const post = async (app: FastifyInstance, body: string) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/comments`, headers: viewer.headers, payload: { body } });
    expect(res.statusCode, res.body).toBe(201);
  };
  /** The bodies the receiver got for the endpoint's secret since `mark`, each verified (throws on a bad signature). */
  const verifiedSince = (mark: number, secret: string) =>
    receiver.received.slice(mark).map((request) => new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as { data: { body?: string } });

  beforeAll(async () => {
    const suffix = uniqueSuffix();
    publicId = `sealed-${suffix}`;
    account = await seedAccount(t().db.kysely, {
      ref: 'account', users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'wb', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
    });
    receiver = await startWebhookReceiver();
    viewer = await mintViewer(await svcWith([]), account.keys.alice!, { deploymentId: account.refs.prod!, externalId: `viewer-${suffix}`, embedTenantName: 'customer-a' });
  });

  afterAll(async () => {
    for (const dispatcher of dispatchers) await dispatcher.stop();
    for (const app of apps) await app.close();
    await receiver?.close();
  });

  /** Each test starts with no endpoint, so that only its own receive its events. */
  const removeEndpoints = async (app: FastifyInstance) => {
    const items = (await app.inject({ url: endpoints, headers: bearer(account.keys.alice!) })).json().items as Array<{ id: number }>;
    for (const { id } of items) expect((await app.inject({ method: 'DELETE', url: `${endpoints}/${id}`, headers: bearer(account.keys.alice!) })).statusCode).toBe(204);
  };

  it('stores only a sealed secret, shows it once as given or generated, and signs deliveries that verify with it', async () => {
    const app = await svcWith([KEY_A]);
    await removeEndpoints(app);
    const created = await createEndpoint(app);
    expect(created.secret).toMatch(/^whsec_/);
    const stored = await storedSecret(created.id);
    expect(stored).toMatch(/^svc-sealed:v1:/);
    expect(stored).not.toContain(created.secret.slice(6, 20));
    // A rotation is sealed too.
    const rotated = await app.inject({ method: 'PATCH', url: `${endpoints}/${created.id}`, headers: bearer(account.keys.alice!), payload: { rotateSecret: true } });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const secret = rotated.json().secret as string;
    expect(secret).not.toBe(created.secret);
    expect(await storedSecret(created.id)).toMatch(/^svc-sealed:v1:/);
    expect(new Sealer([KEY_A]).open(await storedSecret(created.id))).toBe(secret);

    const mark = receiver.received.length;
    await post(app, 'sealed and signed');
    expect(await dispatcherWith([KEY_A]).drain()).toBe(1);
    expect(verifiedSince(mark, secret)).toHaveLength(1);
    expect(() => verifiedSince(mark, created.secret)).toThrow();
  });

  it('reseals secrets stored before the key was set when a delivering process starts, and they still verify', async () => {
    const plain = await svcWith([]);
    await removeEndpoints(plain);
    const created = await createEndpoint(plain);
    expect(await storedSecret(created.id)).toBe(created.secret);

    const dispatcher = dispatcherWith([KEY_A]);
    expect(await dispatcher.reseal()).toBe(1);
    const stored = await storedSecret(created.id);
    expect(stored).toMatch(/^svc-sealed:v1:/);
    expect(new Sealer([KEY_A]).open(stored)).toBe(created.secret);
    // Done once: a second pass finds nothing to do.
    expect(await dispatcher.reseal()).toBe(0);

    const mark = receiver.received.length;
    await post(plain, 'resealed');
    expect(await dispatcher.drain()).toBe(1);
    expect(verifiedSince(mark, created.secret).map((payload) => payload.data.body)).toEqual([undefined]);
  });

  it('changes keys: a process with the new key first reseals what the old one sealed, on its start', async () => {
    const app = await svcWith([KEY_A]);
    await removeEndpoints(app);
    const created = await createEndpoint(app);
    const underA = await storedSecret(created.id);

    const dispatcher = dispatcherWith([KEY_B, KEY_A]);
    dispatcher.start();
    await expect.poll(() => storedSecret(created.id)).not.toBe(underA);
    const underB = await storedSecret(created.id);
    expect(new Sealer([KEY_B]).open(underB)).toBe(created.secret);
    expect(() => new Sealer([KEY_A]).open(underB)).toThrow(/does not list/);
    await dispatcher.stop();
  });

  it('fails the attempts of a secret it cannot open, naming SVC_ENCRYPTION_KEY, and posts nothing', async () => {
    const app = await svcWith([KEY_A]);
    await removeEndpoints(app);
    const created = await createEndpoint(app);
    const mark = receiver.received.length;
    await post(app, 'no key to sign with');
    expect(await dispatcherWith([]).drain()).toBe(1);
    expect(receiver.received.length).toBe(mark);
    const log = (await app.inject({ url: `${endpoints}/${created.id}/deliveries`, headers: bearer(account.keys.alice!) })).json().items as Array<{ status: string; attempts: number; lastError?: string }>;
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ status: 'pending', attempts: 1 });
    expect(JSON.stringify(log[0])).toContain('SVC_ENCRYPTION_KEY is not set');
    // The secret is left as it was.
    expect(new Sealer([KEY_A]).open(await storedSecret(created.id))).toBe(created.secret);
  });
});
