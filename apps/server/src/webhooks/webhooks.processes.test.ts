import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mintViewerOverHttp } from '../../test/embed.js';
import { eventually } from '../../test/eventually.js';
import { bearer, uniqueSuffix } from '../../test/factory.js';
import { RAISED_RATE_LIMIT_ENV } from '../../test/limits.js';
import { describeEachOwnDatabase } from '../../test/own-database.js';
import type { SvcProcess } from '../../test/svc-process.js';
import { startWebhookReceiver } from '../../test/webhook-receiver.js';
import type { WebhookReceiver } from '../../test/webhook-receiver.js';
import { openDatabase } from '../db/db.database.js';

/** Short retries, so that what the kill left pending is retried within the test. */
const DELIVERY_ENV = {
  ...RAISED_RATE_LIMIT_ENV,
  SVC_WEBHOOK_DELIVERY: 'true', SVC_WEBHOOK_POLL_MS: '50', SVC_WEBHOOK_TIMEOUT_MS: '1000',
  SVC_WEBHOOK_RETRY_SCHEDULE: ['100ms', '200ms', '300ms', ...Array<string>(17).fill('500ms')].join(','),
};

/**
 * Issue 23 part 3 with real `svc serve` processes and a real local receiver: the outbox is written in the comment's
 * transaction, so after a SIGKILL mid-load and a restart every committed comment's event is delivered at least
 * once, and no event exists for a comment that did not commit; with two processes on one database each event is
 * delivered once per attempt. Each dialect gets a database of its own (no other suite's deliveries in it).
 */
describeEachOwnDatabase('webhooks across killed and concurrent svc serve processes', {
  name: 'hooks',
  // The receiver is on loopback: this account is allowed it (the account-level setting).
  settings: { allowPrivateWebhookUrls: true },
}, (t) => {
  let receiver: WebhookReceiver;

  beforeAll(async () => { receiver = await startWebhookReceiver(); });
  afterAll(() => receiver?.close());

  const start = () => t().start(DELIVERY_ENV);
  const json = (headers: Record<string, string>, body: unknown) => ({ headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const viewer = async (on: SvcProcess) => (await mintViewerOverHttp(on.url, t().adminKey, { deploymentId: t().deploymentId, externalId: `v-${uniqueSuffix()}`, embedTenantName: 'customer-a' })).headers;
  async function createEndpoint(on: SvcProcess, path: string): Promise<{ id: number; secret: string }> {
    const res = await fetch(`${on.url}/api/v1/webhooks/endpoints`, { method: 'POST', ...json(bearer(t().adminKey), { url: `${receiver.url}${path}`, eventTypes: ['comment.created'] }) });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as { id: number; secret: string };
  }
  /** The comment ids committed on the dashboard, and the comment ids the outbox holds events for (per endpoint). */
  async function readState(endpointId: number): Promise<{ committed: Set<number>; outbox: number[]; attempts: Map<number, number> }> {
    const db = openDatabase(t().url);
    try {
      const comments = await db.kysely.selectFrom('comments as c').innerJoin('dashboards as d', 'd.id', 'c.dashboard_id').select('c.id').where('d.public_id', '=', t().publicId).execute();
      const deliveries = await db.kysely.selectFrom('webhook_deliveries').select(['id', 'payload']).where('endpoint_id', '=', endpointId).execute();
      const attempts = await db.kysely.selectFrom('webhook_attempts').select('delivery_id').where('delivery_id', 'in', deliveries.length === 0 ? [0] : deliveries.map((d) => d.id)).execute();
      const perDelivery = new Map<number, number>();
      for (const attempt of attempts) perDelivery.set(attempt.delivery_id, (perDelivery.get(attempt.delivery_id) ?? 0) + 1);
      return {
        committed: new Set(comments.map((c) => c.id)),
        outbox: deliveries.map((d) => (JSON.parse(d.payload) as { data: { commentId: number } }).data.commentId),
        attempts: perDelivery,
      };
    } finally {
      await db.close();
    }
  }
  const receivedFor = (path: string, secret: string) => receiver.received.filter((r) => r.url === `/hooks${path}`)
    .map((r) => ({ id: String(r.headers['webhook-id']), commentId: (new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { data: { commentId: number } }).data.commentId }));

  it('delivers the event of every committed comment at least once after a SIGKILL and a restart, and has none for an uncommitted one', async () => {
    const first = await start();
    const endpoint = await createEndpoint(first, '?kill=1');
    const headers = await viewer(first);
    // The receiver is down at first: deliveries pile up, pending, while comments are written.
    receiver.answer = (r) => (r.url.includes('kill=1') ? 503 : 200);
    const acknowledged: number[] = [];
    let stop = false;
    const writer = async () => {
      while (!stop) {
        try {
          const res = await fetch(`${first.url}/api/v1/embed/dashboard/${t().publicId}/comments`, { method: 'POST', ...json(headers, { body: `load ${uniqueSuffix()} @nobody` }) });
          if (res.status === 201) acknowledged.push(((await res.json()) as { id: number }).id);
        } catch {
          return; // the process is gone
        }
      }
    };
    const writers = Array.from({ length: 4 }, writer);
    expect(await eventually(() => acknowledged.length >= 40, 20_000)).toBe(true);
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
    stop = true;
    await Promise.all(writers);

    const afterKill = await readState(endpoint.id);
    expect(afterKill.committed.size).toBeGreaterThanOrEqual(acknowledged.length);
    for (const id of acknowledged) expect(afterKill.committed.has(id), `acknowledged comment ${id}`).toBe(true);
    // The outbox holds one event per committed comment, and none for a comment that is not there.
    expect(afterKill.outbox.filter((id) => !afterKill.committed.has(id))).toEqual([]);
    expect(new Set(afterKill.outbox)).toEqual(afterKill.committed);
    expect(afterKill.outbox).toHaveLength(afterKill.committed.size);

    receiver.answer = () => 200;
    await start();
    const delivered = () => new Set(receivedFor('?kill=1', endpoint.secret).map((r) => r.commentId));
    const complete = () => {
      const got = delivered();
      return [...afterKill.committed].every((id) => got.has(id));
    };
    // At least once: some were attempted (and refused) before the kill; all arrive after the restart. Those the
    // killed process was attempting at that moment keep its lease (twice the 1 s timeout + 30 s) before the new one takes them.
    expect(await eventually(complete, 60_000), `delivered ${delivered().size} of ${afterKill.committed.size}`).toBe(true);
    const got = receivedFor('?kill=1', endpoint.secret);
    expect(got.every((r) => afterKill.committed.has(r.commentId)), 'an event for a comment that did not commit').toBe(true);
    // One stable id per event: every request for a comment carried the same webhook-id.
    const idsByComment = new Map<number, Set<string>>();
    for (const r of got) idsByComment.set(r.commentId, new Set([...(idsByComment.get(r.commentId) ?? []), r.id]));
    expect([...idsByComment.values()].every((ids) => ids.size === 1)).toBe(true);
  }, 120_000);

  it('delivers each event once per attempt with two processes on one database', async () => {
    await t().stopAll();
    const [one, two] = [await start(), await start()];
    const endpoint = await createEndpoint(one, '?pair=1');
    receiver.answer = () => 200;
    receiver.delayMs = 20;
    const headers = await viewer(one);
    const posted: number[] = [];
    for (let i = 0; i < 60; i++) {
      const on = i % 2 === 0 ? one : two;
      const res = await fetch(`${on.url}/api/v1/embed/dashboard/${t().publicId}/comments`, { method: 'POST', ...json(headers, { body: `pair ${i}` }) });
      expect(res.status).toBe(201);
      posted.push(((await res.json()) as { id: number }).id);
    }
    expect(await eventually(() => new Set(receivedFor('?pair=1', endpoint.secret).map((r) => r.commentId)).size === posted.length, 30_000)).toBe(true);
    // Let any duplicate attempt land before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    receiver.delayMs = 0;
    const got = receivedFor('?pair=1', endpoint.secret);
    expect(got).toHaveLength(posted.length);
    expect(new Set(got.map((r) => r.id)).size).toBe(posted.length);
    const state = await readState(endpoint.id);
    expect([...state.attempts.values()].every((n) => n === 1)).toBe(true);
    expect(state.attempts.size).toBe(posted.length);
  }, 120_000);
});
