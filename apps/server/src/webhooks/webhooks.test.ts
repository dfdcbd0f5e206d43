import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { expectErrorBody } from '../../test/errors.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { startWebhookReceiver } from '../../test/webhook-receiver.js';
import type { ReceivedWebhook, WebhookReceiver } from '../../test/webhook-receiver.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import type { WebhookSettings } from '../core/core.config.js';
import type { ResolveHost } from './webhooks.addresses.js';
import { WebhookDispatcher, retryDelayMs } from './webhooks.dispatcher.js';

const SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];
const ALL_TYPES = ['comment.created', 'comment.edited', 'comment.deleted', 'thread.resolved', 'thread.reopened', 'embed_session.revoked'];

interface Payload { type: string; timestamp: string; data: Record<string, unknown> & { mentions?: Array<{ externalId: string; username: string; userId: number }>; body?: string } }

describe('webhook retries', () => {
  it('retries after a full-jitter wait: uniform between 0 and the step, the last step repeated past the end', () => {
    expect(retryDelayMs(SCHEDULE_MS, 1, () => 0.5)).toBe(2500);
    expect(retryDelayMs(SCHEDULE_MS, 2, () => 0.999999)).toBe(299_999);
    expect(retryDelayMs(SCHEDULE_MS, 9, () => 0.5)).toBe(18_000_000);
    expect(retryDelayMs(SCHEDULE_MS, 1, () => 0)).toBe(1);
  });
});

/**
 * Issue 23 part 3 over HTTP and a real local receiver (node:http), on both databases: the endpoints' API and its
 * refusals, mentions in the 201 of a post, what each event says and to whom, Standard Webhooks signatures checked
 * with the `standardwebhooks` package, the retry schedule on a fake clock, disabling, the delivery log and replay,
 * and the address rules at registration and at delivery (a stand-in for DNS shows a name turning private).
 */
describeEachDialect('webhooks', (t) => {
  let clock = Date.now();
  const now = () => new Date(clock);
  /** DNS as a test double: `rebind.test` is public at registration and loopback afterwards. */
  let rebindCalls = 0;
  const resolveHost: ResolveHost = async (hostname) => {
    if (hostname === 'rebind.test') return [{ address: rebindCalls++ === 0 ? '93.184.215.14' : '127.0.0.1', family: 4 }];
    if (hostname === 'public.test') return [{ address: '93.184.215.14', family: 4 }];
    if (hostname === 'inside.test') return [{ address: '10.1.2.3', family: 4 }];
    if (hostname === 'mapped.test') return [{ address: '::ffff:0:a01:203', family: 6 }];
    if (hostname === 'rebind6.test') return [{ address: rebindCalls++ === 0 ? '2606:4700::1111' : '2002:7f00:1::1', family: 6 }];
    throw new Error(`ENOTFOUND ${hostname}`);
  };
  const settings: WebhookSettings = { allowPrivate: false, deliver: false, timeoutMs: 2000, pollMs: 1000, concurrency: 4, retryScheduleMs: SCHEDULE_MS, retentionMs: 2_592_000_000 };
  /** svc without private addresses (the default), and svc for the delivery tests, allowed loopback by the setting. */
  let strict: FastifyInstance;
  let open: FastifyInstance;
  let a: SeededAccount;
  let b: SeededAccount;
  let allowed: SeededAccount;
  let publicIdA: string;
  let publicIdB: string;
  let ann: ViewerSession;
  let ben: ViewerSession;
  let otherBen: ViewerSession;
  let receiver: WebhookReceiver;
  const logs: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const dispatcherFor = (allowPrivate: boolean, accounts: SeededAccount[], random = () => 1) => new WebhookDispatcher({
    db: t().db.kysely, dialect: t().dialect, settings: { ...settings, allowPrivate }, now, random, resolveHost,
    accountIds: accounts.map((account) => account.refs.account!),
    log: { warn: (fields, message) => logs.push({ level: 'warn', fields, message }), error: (fields, message) => logs.push({ level: 'error', fields, message }) },
  });

  beforeAll(async () => {
    strict = await buildApp(testConfig(), { db: t().db, now, resolveHost });
    open = await buildApp(testConfig({ webhooks: { allowPrivate: true } }), { db: t().db, now, resolveHost });
    const suffix = uniqueSuffix();
    publicIdA = `wh-a-${suffix}`;
    publicIdB = `wh-b-${suffix}`;
    const dashboard = (publicId: string) => ({
      ref: 'wb', type: 'WORKBOOK' as const, name: 'wb', createdBy: 'alice', dashboard: { publicId, status: 'published' as const, allowEmbed: true },
    });
    a = await seedAccount(t().db.kysely, { ref: 'account', users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }], deployments: [{ ref: 'prod', name: 'P', items: [dashboard(publicIdA)] }] });
    b = await seedAccount(t().db.kysely, { ref: 'account', users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P', items: [dashboard(publicIdB)] }] });
    allowed = await seedAccount(t().db.kysely, { ref: 'account', settings: { allowPrivateWebhookUrls: true }, users: [{ ref: 'alice', role: 'admin' }] });
    ann = await mintViewer(strict, a.keys.alice!, { deploymentId: a.refs.prod!, externalId: `ann-${suffix}`, embedTenantName: 'customer-a', username: 'Ann' });
    ben = await mintViewer(strict, a.keys.alice!, { deploymentId: a.refs.prod!, externalId: `ben-${suffix}`, embedTenantName: 'customer-a', username: 'ben' });
    // The same username in another tenant of the same account: never mentioned from customer-a.
    otherBen = await mintViewer(strict, a.keys.alice!, { deploymentId: a.refs.prod!, externalId: `ben-b-${suffix}`, embedTenantName: 'customer-b', username: 'ben' });
    receiver = await startWebhookReceiver();
  });

  afterAll(async () => {
    await strict?.close();
    await open?.close();
    await receiver?.close();
  });

  const comments = (publicId = publicIdA) => `/api/v1/embed/dashboard/${publicId}/comments`;
  const endpoints = '/api/v1/webhooks/endpoints';
  const createEndpoint = async (app: FastifyInstance, key: string, payload: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: endpoints, headers: bearer(key), payload });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; secret: string; url: string; enabled: boolean };
  };
  const post = async (who: ViewerSession, body: string, parentId?: number, publicId = publicIdA) => {
    const res = await strict.inject({ method: 'POST', url: comments(publicId), headers: who.headers, payload: { body, ...(parentId === undefined ? {} : { parentId }) } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; mentions: Array<{ userId: number; username: string; externalId: string }> };
  };
  const verify = (secret: string, request: ReceivedWebhook) => new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as Payload;
  const since = (mark: number) => receiver.received.slice(mark);
  const countEndpoints = async (account: SeededAccount) => (await strict.inject({ url: endpoints, headers: bearer(account.keys.alice!) })).json().items.length as number;

  describe('mentions', () => {
    it('resolves @usernames of the caller\'s tenant only, case-insensitively, in the 201 of a thread and of a reply', async () => {
      const root = await post(ben, 'Why did March drop? @ann @BEN @nobody ann@mail.test (@ann) @ben.');
      expect(root.mentions).toEqual([
        { userId: ann.embedUserId, username: 'Ann', externalId: expect.stringMatching(/^ann-/) },
        { userId: ben.embedUserId, username: 'ben', externalId: expect.stringMatching(/^ben-[0-9a-f]+$/) },
      ]);
      expect(root.mentions.map((m) => m.userId)).not.toContain(otherBen.embedUserId);
      const reply = await post(ann, 'Looking into it, @ben', root.id);
      expect(reply.mentions).toEqual([{ userId: ben.embedUserId, username: 'ben', externalId: expect.stringMatching(/^ben-/) }]);
      expect((await post(ann, 'no mention here, mail ann@x.test')).mentions).toEqual([]);
    });
  });

  describe('the endpoints API', () => {
    it('creates an endpoint with a generated Standard Webhooks secret shown once, lists, reads, changes and deletes it', async () => {
      const created = await createEndpoint(strict, a.keys.alice!, { url: 'https://public.test/svc', eventTypes: ['comment.created'], description: 'ops' });
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      expect(() => new Webhook(created.secret)).not.toThrow();
      expect(created).toMatchObject({ url: 'https://public.test/svc', eventTypes: ['comment.created'], includeCommentBody: false, enabled: true, disabledReason: null });
      const list = await strict.inject({ url: endpoints, headers: bearer(a.keys.alice!) });
      expect(list.statusCode).toBe(200);
      expect(list.body).not.toContain(created.secret);
      expect(list.json().items.map((e: { id: number }) => e.id)).toContain(created.id);
      const read = await strict.inject({ url: `${endpoints}/${created.id}`, headers: bearer(a.keys.alice!) });
      expect(read.json()).not.toHaveProperty('secret');
      const changed = await strict.inject({ method: 'PATCH', url: `${endpoints}/${created.id}`, headers: bearer(a.keys.alice!), payload: { eventTypes: ['comment.created', 'thread.resolved'], includeCommentBody: true, description: null } });
      expect(changed.statusCode, changed.body).toBe(200);
      expect(changed.json()).toMatchObject({ eventTypes: ['comment.created', 'thread.resolved'], includeCommentBody: true, description: null });
      expect(changed.json()).not.toHaveProperty('secret');
      const rotated = await strict.inject({ method: 'PATCH', url: `${endpoints}/${created.id}`, headers: bearer(a.keys.alice!), payload: { rotateSecret: true } });
      expect(rotated.json().secret).toMatch(/^whsec_/);
      expect(rotated.json().secret).not.toBe(created.secret);
      const given = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
      const withGiven = await createEndpoint(strict, a.keys.alice!, { url: 'https://public.test/two', eventTypes: ['comment.deleted'], secret: given });
      expect(withGiven.secret).toBe(given);
      expect((await strict.inject({ method: 'DELETE', url: `${endpoints}/${created.id}`, headers: bearer(a.keys.alice!) })).statusCode).toBe(204);
      expect((await strict.inject({ method: 'DELETE', url: `${endpoints}/${withGiven.id}`, headers: bearer(a.keys.alice!) })).statusCode).toBe(204);
      expectErrorBody(await strict.inject({ url: `${endpoints}/${created.id}`, headers: bearer(a.keys.alice!) }).then((r) => ({ status: r.statusCode, text: r.body })), 404, 'endpointId');
    });

    it('is for admins of the account: 401 without a key, 403 for a member or an embed token, 404 for another account\'s endpoint', async () => {
      const created = await createEndpoint(strict, a.keys.alice!, { url: 'https://public.test/scoped', eventTypes: ['comment.created'] });
      const status = async (method: 'GET' | 'DELETE', url: string, headers: Record<string, string>) => (await strict.inject({ method, url, headers })).statusCode;
      expect(await status('GET', endpoints, {})).toBe(401);
      expect(await status('GET', endpoints, bearer(a.keys.bob!))).toBe(403);
      expect(await status('GET', endpoints, ann.headers)).toBe(403);
      expect(await status('GET', `${endpoints}/${created.id}`, bearer(b.keys.alice!))).toBe(404);
      expect(await status('DELETE', `${endpoints}/${created.id}`, bearer(b.keys.alice!))).toBe(404);
      expect(await status('GET', `${endpoints}/${created.id}/deliveries`, bearer(b.keys.alice!))).toBe(404);
      expect((await strict.inject({ url: endpoints, headers: bearer(b.keys.alice!) })).json().items).toEqual([]);
      await strict.inject({ method: 'DELETE', url: `${endpoints}/${created.id}`, headers: bearer(a.keys.alice!) });
    });

    it('refuses bad input with a 400 naming the field, and writes nothing', async () => {
      const before = await countEndpoints(a);
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'not a url', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'ftp://public.test/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'javascript:alert(1)', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'https://user:pw@public.test/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'https://public.test/x#frag', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://127.0.0.1:8080/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://169.254.169.254/latest/meta-data', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://10.0.0.7/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://[::1]/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://[::ffff:127.0.0.1]/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://[::ffff:0:7f00:1]/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://[2002:a9fe:a9fe::1]/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://[64:ff9b:1::a00:1]/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://[::7f00:1]/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://mapped.test/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://localhost:3000/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'http://inside.test/x', eventTypes: ['comment.created'] }, 'url'],
        [{ url: `https://public.test/${'x'.repeat(2000)}`, eventTypes: ['comment.created'] }, 'url'],
        [{ url: 'https://public.test/x' }, 'eventTypes'],
        [{ url: 'https://public.test/x', eventTypes: [] }, 'eventTypes'],
        [{ url: 'https://public.test/x', eventTypes: ['comment.liked'] }, 'eventTypes.0'],
        [{ url: 'https://public.test/x', eventTypes: ['comment.created', 'comment.created'] }, 'eventTypes'],
        [{ url: 'https://public.test/x', eventTypes: 'comment.created' }, 'eventTypes'],
        [{ url: 'https://public.test/x', eventTypes: ['comment.created'], description: 'd'.repeat(501) }, 'description'],
        [{ url: 'https://public.test/x', eventTypes: ['comment.created'], includeCommentBody: 'yes' }, 'includeCommentBody'],
        [{ url: 'https://public.test/x', eventTypes: ['comment.created'], secret: 'hunter2' }, 'secret'],
        [{ url: 'https://public.test/x', eventTypes: ['comment.created'], secret: `whsec_${Buffer.alloc(16).toString('base64')}AAAAAAAAAAAA` }, 'secret'],
        [{ url: 'https://public.test/x', eventTypes: ['comment.created'], secret: `whsec_${Buffer.alloc(8).toString('base64')}` }, 'secret'],
        [{ url: 'https://public.test/x', eventTypes: ['comment.created'], accountId: b.refs.account }, 'accountId'],
      ];
      for (const [payload, field] of cases) {
        const res = await strict.inject({ method: 'POST', url: endpoints, headers: bearer(a.keys.alice!), payload });
        expect(res.statusCode, `${JSON.stringify(payload).slice(0, 120)}: ${res.body}`).toBe(400);
        expectErrorBody({ status: res.statusCode, text: res.body }, 400, field);
      }
      const created = await createEndpoint(strict, a.keys.alice!, { url: 'https://public.test/patch', eventTypes: ['comment.created'] });
      const patches: Array<[Record<string, unknown>, string]> = [
        [{}, 'body'], [{ url: 'http://127.0.0.1/x' }, 'url'], [{ eventTypes: [] }, 'eventTypes'], [{ enabled: 'no' }, 'enabled'],
        [{ rotateSecret: false }, 'rotateSecret'], [{ rotateSecret: true, secret: `whsec_${Buffer.alloc(24).toString('base64')}` }, 'rotateSecret'],
      ];
      for (const [payload, field] of patches) {
        const res = await strict.inject({ method: 'PATCH', url: `${endpoints}/${created.id}`, headers: bearer(a.keys.alice!), payload });
        expectErrorBody({ status: res.statusCode, text: res.body }, 400, field);
      }
      const unchanged = await strict.inject({ url: `${endpoints}/${created.id}`, headers: bearer(a.keys.alice!) });
      expect(unchanged.json()).toMatchObject({ url: 'https://public.test/patch', eventTypes: ['comment.created'], enabled: true });
      expectErrorBody(await strict.inject({ url: `${endpoints}/${created.id}/deliveries?after=bogus`, headers: bearer(a.keys.alice!) }).then((r) => ({ status: r.statusCode, text: r.body })), 400, 'after');
      expectErrorBody(await strict.inject({ url: `${endpoints}/${created.id}/deliveries?status=lost`, headers: bearer(a.keys.alice!) }).then((r) => ({ status: r.statusCode, text: r.body })), 400);
      await strict.inject({ method: 'DELETE', url: `${endpoints}/${created.id}`, headers: bearer(a.keys.alice!) });
      expect(await countEndpoints(a)).toBe(before);
    });

    it('allows private addresses to an account whose setting allows them, or to all with SVC_WEBHOOKS_ALLOW_PRIVATE', async () => {
      const mine = await createEndpoint(strict, allowed.keys.alice!, { url: 'http://127.0.0.1:9/hooks', eventTypes: ['comment.created'] });
      expect(mine.url).toBe('http://127.0.0.1:9/hooks');
      const viaSetting = await createEndpoint(open, a.keys.alice!, { url: 'http://localhost:9/hooks', eventTypes: ['comment.created'] });
      for (const [app, account, id] of [[strict, allowed, mine.id], [open, a, viaSetting.id]] as const) {
        expect((await app.inject({ method: 'DELETE', url: `${endpoints}/${id}`, headers: bearer(account.keys.alice!) })).statusCode).toBe(204);
      }
    });
  });

  describe('delivery', () => {
    it('signs each event as Standard Webhooks says (verified by the standardwebhooks package), with the mentions\' external ids and no text unless opted in', async () => {
      const plain = await createEndpoint(open, a.keys.alice!, { url: receiver.url, eventTypes: ['comment.created'] });
      const withText = await createEndpoint(open, a.keys.alice!, { url: `${receiver.url}?text=1`, eventTypes: ['comment.created'], includeCommentBody: true });
      const mark = receiver.received.length;
      const comment = await post(ann, 'Ping @ben about this');
      expect(await dispatcherFor(true, [a]).drain()).toBe(2);
      const got = since(mark);
      expect(got).toHaveLength(2);
      const bySecret = (secret: string, request: ReceivedWebhook) => verify(secret, request);
      const plainRequest = got.find((r) => !r.body.includes('"body"'))!;
      const textRequest = got.find((r) => r.body.includes('"body"'))!;
      const payload = bySecret(plain.secret, plainRequest);
      expect(() => bySecret(withText.secret, plainRequest)).toThrow();
      expect(payload.type).toBe('comment.created');
      expect(payload.data).toMatchObject({
        embedTenant: 'customer-a', dashboardId: publicIdA, threadId: comment.id, commentId: comment.id,
        author: { userId: ann.embedUserId, externalId: expect.stringMatching(/^ann-/) },
        mentions: [{ userId: ben.embedUserId, username: 'ben', externalId: expect.stringMatching(/^ben-/) }],
      });
      expect(payload.data).not.toHaveProperty('body');
      expect(plainRequest.body).not.toContain('Ping');
      expect(bySecret(withText.secret, textRequest).data.body).toBe('Ping @ben about this');
      // One event, one id: the same on every endpoint (and every attempt), for de-duplication.
      expect(plainRequest.headers['webhook-id']).toMatch(/^msg_[0-9A-Za-z]+$/);
      expect(textRequest.headers['webhook-id']).toBe(plainRequest.headers['webhook-id']);
      expect(plainRequest.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      for (const endpoint of [plain, withText]) await open.inject({ method: 'DELETE', url: `${endpoints}/${endpoint.id}`, headers: bearer(a.keys.alice!) });
    });

    it('sends every event type it is subscribed to, and another account\'s events never', async () => {
      const endpoint = await createEndpoint(open, a.keys.alice!, { url: receiver.url, eventTypes: ALL_TYPES });
      const bEndpoint = await createEndpoint(open, b.keys.alice!, { url: `${receiver.url}?b=1`, eventTypes: ALL_TYPES });
      const mark = receiver.received.length;
      const root = await post(ann, 'A thread');
      const reply = await post(ben, 'A reply', root.id);
      expect((await strict.inject({ method: 'PATCH', url: `${comments()}/${root.id}`, headers: ann.headers, payload: { body: 'A thread, edited @ben' } })).statusCode).toBe(200);
      expect((await strict.inject({ method: 'POST', url: `${comments()}/${root.id}/resolve`, headers: ann.headers, payload: { resolved: true } })).statusCode).toBe(200);
      expect((await strict.inject({ method: 'POST', url: `${comments()}/${root.id}/resolve`, headers: ann.headers, payload: { resolved: true } })).statusCode).toBe(200);
      expect((await strict.inject({ method: 'POST', url: `${comments()}/${root.id}/resolve`, headers: ann.headers, payload: { resolved: false } })).statusCode).toBe(200);
      expect((await strict.inject({ method: 'DELETE', url: `${comments()}/${reply.id}`, headers: ben.headers })).statusCode).toBe(204);
      const gone = await mintViewer(strict, a.keys.alice!, { deploymentId: a.refs.prod!, externalId: `gone-${uniqueSuffix()}`, embedTenantName: 'customer-a' });
      void gone;
      const externalId = `logout-${uniqueSuffix()}`;
      await mintViewer(strict, a.keys.alice!, { deploymentId: a.refs.prod!, externalId, embedTenantName: 'customer-a' });
      expect((await strict.inject({ method: 'POST', url: '/api/v1/embed/session/revoke', headers: bearer(a.keys.alice!), payload: { externalId, embedTenantName: 'customer-a' } })).statusCode).toBe(204);
      // A refused post writes no event.
      expect((await strict.inject({ method: 'POST', url: comments(), headers: ann.headers, payload: { body: 'x', parentId: reply.id } })).statusCode).toBe(404);
      await dispatcherFor(true, [a, b]).drain();
      const got = since(mark);
      expect(got.every((r) => !r.url.includes('b=1'))).toBe(true);
      const payloads = got.map((r) => verify(endpoint.secret, r));
      // Deliveries run side by side, so they arrive in any order (docs/webhooks.md: not ordered).
      expect(payloads.map((p) => p.type).sort()).toEqual(['comment.created', 'comment.created', 'comment.edited', 'thread.resolved', 'thread.reopened', 'comment.deleted', 'embed_session.revoked'].sort());
      const only = (type: string) => {
        const [payload, ...more] = payloads.filter((p) => p.type === type);
        expect(more).toEqual([]);
        return payload!;
      };
      expect(only('comment.edited').data.mentions).toEqual([expect.objectContaining({ userId: ben.embedUserId })]);
      expect(only('thread.resolved').data).toMatchObject({ threadId: root.id, by: { userId: ann.embedUserId } });
      expect(only('thread.reopened').data).toMatchObject({ threadId: root.id, by: { userId: ann.embedUserId } });
      expect(only('comment.deleted').data).toMatchObject({ threadId: root.id, commentId: reply.id, by: { userId: ben.embedUserId } });
      expect(only('embed_session.revoked').data).toMatchObject({ reason: 'logout', embedTenant: 'customer-a', externalId, sessions: 1 });
      // Account B's endpoint got nothing of account A's.
      const bLog = await open.inject({ url: `${endpoints}/${bEndpoint.id}/deliveries`, headers: bearer(b.keys.alice!) });
      expect(bLog.json().items).toEqual([]);
      await post(ann, 'B must not see this', undefined, publicIdA);
      expect((await open.inject({ url: `${endpoints}/${bEndpoint.id}/deliveries`, headers: bearer(b.keys.alice!) })).json().items).toEqual([]);
      for (const [id, account] of [[endpoint.id, a], [bEndpoint.id, b]] as const) await open.inject({ method: 'DELETE', url: `${endpoints}/${id}`, headers: bearer(account.keys.alice!) });
    });

    it('retries a 500 on the schedule (fake clock), then fails the delivery, disables the endpoint with the reason and logs it; replay after re-enabling delivers it', async () => {
      const endpoint = await createEndpoint(open, a.keys.alice!, { url: `${receiver.url}?retry=1`, eventTypes: ['comment.created'] });
      receiver.answer = (r) => (r.url.includes('retry=1') ? 500 : 200);
      const mark = receiver.received.length;
      const dispatcher = dispatcherFor(true, [a]);
      await post(ann, 'retry me');
      const started = clock;
      expect(await dispatcher.drain()).toBe(1);
      let elapsed = 0;
      for (const step of SCHEDULE_MS) {
        // Due at the end of its step (random() = 1): not a millisecond earlier.
        clock = started + elapsed + step - 1;
        expect(await dispatcher.drain()).toBe(0);
        clock = started + elapsed + step;
        expect(await dispatcher.drain()).toBe(1);
        elapsed += step;
      }
      const attempts = since(mark).filter((r) => r.url.includes('retry=1'));
      expect(attempts).toHaveLength(SCHEDULE_MS.length + 1);
      expect(new Set(attempts.map((r) => r.headers['webhook-id'])).size).toBe(1);
      clock = started + elapsed + 36_000_000;
      expect(await dispatcher.drain()).toBe(0);
      // Back to the start: the viewers' tokens (24 h) are still good there.
      clock = started;
      const log = (await open.inject({ url: `${endpoints}/${endpoint.id}/deliveries`, headers: bearer(a.keys.alice!) })).json();
      const [delivery] = log.items;
      expect(delivery).toMatchObject({ status: 'failed', attempts: 8, nextAttemptAt: null, eventType: 'comment.created' });
      expect(delivery.attemptLog).toHaveLength(8);
      expect(delivery.attemptLog.every((x: { statusCode: number; error: string; durationMs: number }) => x.statusCode === 500 && x.error === 'HTTP 500' && x.durationMs >= 0)).toBe(true);
      const state = (await open.inject({ url: `${endpoints}/${endpoint.id}`, headers: bearer(a.keys.alice!) })).json();
      expect(state.enabled).toBe(false);
      expect(state.disabledReason).toMatch(/every attempt failed for .* 8 attempts of comment\.created event msg_.*HTTP 500/);
      expect(logs.some((l) => l.level === 'warn' && l.message === 'webhook endpoint disabled' && l.fields.endpointId === endpoint.id)).toBe(true);
      expect(JSON.stringify(logs)).not.toContain(endpoint.secret);
      // A disabled endpoint gets no new deliveries, and cannot be replayed until it is re-enabled.
      await post(ann, 'while disabled');
      const replayUrl = `${endpoints}/${endpoint.id}/deliveries/${delivery.id}/replay`;
      expectErrorBody(await open.inject({ method: 'POST', url: replayUrl, headers: bearer(a.keys.alice!) }).then((r) => ({ status: r.statusCode, text: r.body })), 409, 'endpointId');
      const enabled = await open.inject({ method: 'PATCH', url: `${endpoints}/${endpoint.id}`, headers: bearer(a.keys.alice!), payload: { enabled: true } });
      expect(enabled.json()).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
      receiver.answer = () => 200;
      const replayed = await open.inject({ method: 'POST', url: replayUrl, headers: bearer(a.keys.alice!) });
      expect(replayed.statusCode, replayed.body).toBe(202);
      expect(replayed.json()).toMatchObject({ status: 'pending', attempts: 8 });
      expectErrorBody(await open.inject({ method: 'POST', url: replayUrl, headers: bearer(a.keys.alice!) }).then((r) => ({ status: r.statusCode, text: r.body })), 409, 'deliveryId');
      expect(await dispatcher.drain()).toBe(1);
      const after = (await open.inject({ url: `${endpoints}/${endpoint.id}/deliveries/${delivery.id}`, headers: bearer(a.keys.alice!) })).json();
      expect(after).toMatchObject({ status: 'delivered', attempts: 9, eventId: delivery.eventId });
      expect(after.attemptLog.at(-1)).toMatchObject({ attempt: 9, statusCode: 200, error: null });
      expect(since(mark).at(-1)!.headers['webhook-id']).toBe(delivery.eventId);
      // The delivery log pages newest first.
      const first = (await open.inject({ url: `${endpoints}/${endpoint.id}/deliveries?first=1`, headers: bearer(a.keys.alice!) })).json();
      expect(first.items).toHaveLength(1);
      expect(first.pageInfo.hasNextPage).toBe(false);
      const delivered = (await open.inject({ url: `${endpoints}/${endpoint.id}/deliveries?status=delivered`, headers: bearer(a.keys.alice!) })).json();
      expect(delivered.items.map((d: { id: number }) => d.id)).toEqual([delivery.id]);
      await open.inject({ method: 'DELETE', url: `${endpoints}/${endpoint.id}`, headers: bearer(a.keys.alice!) });
    });

    it('keeps an endpoint that answered in between enabled, and pages its delivery log', async () => {
      const endpoint = await createEndpoint(open, a.keys.alice!, { url: `${receiver.url}?page=1`, eventTypes: ['comment.created'] });
      receiver.answer = () => 200;
      const dispatcher = dispatcherFor(true, [a]);
      for (const text of ['one', 'two', 'three']) await post(ann, text);
      expect(await dispatcher.drain()).toBe(3);
      const page1 = (await open.inject({ url: `${endpoints}/${endpoint.id}/deliveries?first=2`, headers: bearer(a.keys.alice!) })).json();
      expect(page1.items).toHaveLength(2);
      expect(page1.pageInfo.hasNextPage).toBe(true);
      const page2 = (await open.inject({ url: `${endpoints}/${endpoint.id}/deliveries?first=2&after=${encodeURIComponent(page1.pageInfo.endCursor)}`, headers: bearer(a.keys.alice!) })).json();
      expect(page2.items).toHaveLength(1);
      expect(page2.items[0].id).toBeLessThan(page1.items[1].id);
      expect(page2.items[0].payload).toMatchObject({ type: 'comment.created' });
      await open.inject({ method: 'DELETE', url: `${endpoints}/${endpoint.id}`, headers: bearer(a.keys.alice!) });
    });

    it('refuses, at delivery, a name that resolves to a private address since it was registered (DNS rebinding), and records why', async () => {
      rebindCalls = 0;
      const port = new URL(receiver.url).port;
      const endpoint = await createEndpoint(strict, a.keys.alice!, { url: `http://rebind.test:${port}/hooks`, eventTypes: ['comment.created'] });
      const mark = receiver.received.length;
      await post(ann, 'rebinding');
      expect(await dispatcherFor(false, [a]).drain()).toBe(1);
      expect(since(mark)).toEqual([]);
      const [delivery] = (await strict.inject({ url: `${endpoints}/${endpoint.id}/deliveries`, headers: bearer(a.keys.alice!) })).json().items;
      expect(delivery.status).toBe('pending');
      expect(delivery.attemptLog[0]).toMatchObject({ statusCode: null, error: expect.stringContaining('refused: rebind.test resolves to 127.0.0.1') });
      await strict.inject({ method: 'DELETE', url: `${endpoints}/${endpoint.id}`, headers: bearer(a.keys.alice!) });
    });

    it('refuses, at delivery, a name whose answer turned into an IPv6 prefix wrapping loopback (6to4 of 127.0.0.1)', async () => {
      rebindCalls = 0;
      const endpoint = await createEndpoint(strict, a.keys.alice!, { url: 'http://rebind6.test/hooks', eventTypes: ['comment.created'] });
      const mark = receiver.received.length;
      await post(ann, 'rebinding to 6to4');
      expect(await dispatcherFor(false, [a]).drain()).toBe(1);
      expect(since(mark)).toEqual([]);
      const [delivery] = (await strict.inject({ url: `${endpoints}/${endpoint.id}/deliveries`, headers: bearer(a.keys.alice!) })).json().items;
      expect(delivery.attemptLog[0]).toMatchObject({ statusCode: null, error: expect.stringContaining('refused: rebind6.test resolves to 2002:7f00:1::1') });
      await strict.inject({ method: 'DELETE', url: `${endpoints}/${endpoint.id}`, headers: bearer(a.keys.alice!) });
    });

    it('records a timeout as a failed attempt', async () => {
      const endpoint = await createEndpoint(open, a.keys.alice!, { url: `${receiver.url}?slow=1`, eventTypes: ['comment.created'] });
      receiver.delayMs = 500;
      const slow = new WebhookDispatcher({
        db: t().db.kysely, dialect: t().dialect, settings: { ...settings, allowPrivate: true, timeoutMs: 100 }, now, resolveHost, accountIds: [a.refs.account!],
        log: { warn: () => undefined, error: () => undefined },
      });
      await post(ann, 'slow');
      expect(await slow.drain()).toBe(1);
      receiver.delayMs = 0;
      const [delivery] = (await open.inject({ url: `${endpoints}/${endpoint.id}/deliveries`, headers: bearer(a.keys.alice!) })).json().items;
      expect(delivery.attemptLog[0]).toMatchObject({ statusCode: null, error: 'timed out after 100 ms' });
      await open.inject({ method: 'DELETE', url: `${endpoints}/${endpoint.id}`, headers: bearer(a.keys.alice!) });
    });
  });
});
