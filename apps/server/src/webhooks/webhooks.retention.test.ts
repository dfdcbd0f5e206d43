import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { expectErrorBody } from '../../test/errors.js';
import { eventually } from '../../test/eventually.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { startWebhookReceiver } from '../../test/webhook-receiver.js';
import type { WebhookReceiver } from '../../test/webhook-receiver.js';
import type { WebhookSettings } from '../core/core.config.js';
import { openDatabase } from '../db/db.database.js';
import type { Db, Dialect } from '../db/db.database.js';
import { migrateToLatest, migrateUpTo } from '../db/db.migrations.js';
import { WebhookDispatcher } from './webhooks.dispatcher.js';

const DAY_MS = 86_400_000;
const RETENTION_MS = 30 * DAY_MS;
const SETTINGS: WebhookSettings = {
  allowPrivate: false, deliver: false, timeoutMs: 2000, pollMs: 1000, concurrency: 8,
  retryScheduleMs: [5_000, 300_000, 1_800_000], retentionMs: RETENTION_MS,
};
const ENDPOINTS = '/api/v1/webhooks/endpoints';

interface LoggedDelivery { id: number; status: string; attempts: number; attemptLog: unknown[] }

/** A fresh database of the dialect (PostgreSQL: created beside the run's, dropped after), for a migration's own test. */
async function withFreshDatabase(dialect: Dialect, runUrl: string, use: (db: Db) => Promise<void>): Promise<void> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'svc-migration-'));
    const db = openDatabase(`sqlite:${join(dir, 'svc.db')}`);
    try {
      await use(db);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  const name = `svc_migration_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: runUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
    const url = new URL(runUrl);
    url.pathname = `/${name}`;
    const db = openDatabase(url.toString());
    try {
      await use(db);
    } finally {
      await db.close();
    }
  } finally {
    // pg's pool resolves its end() before its connections are gone: wait for them, so that the drop ends none.
    await eventually(async () => (await admin.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [name])).rows[0]?.n === 0, 5000);
    await admin.query(`drop database if exists ${name} with (force)`).finally(() => admin.end());
  }
}

/**
 * Retention of the webhook delivery log (SVC_WEBHOOK_RETENTION_MS, docs/webhooks.md "Retention"), on both databases,
 * through the real dispatcher, a real local receiver and the HTTP API: what finished more than the retention ago goes
 * with its attempts, what finished since and what is pending stays, and the API then answers a clean 404 for it.
 * Dispatchers run on fake clocks (the dispatcher's clock writes `finished_at` and sets the cutoff), except where a
 * started dispatcher's own timer is the point.
 */
describeEachDialect('webhook delivery log retention', (t) => {
  let receiver: WebhookReceiver;
  const logs: string[] = [];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // Paths say how the receiver answers: `fail` and `retry` get a 500, everything else a 200.
    receiver.answer = (r) => (/[?&]answer=500/.test(r.url) ? 500 : 200);
  });

  afterAll(async () => {
    await receiver?.close();
  });

  /** A fresh account (allowed the loopback receiver), a published dashboard and a viewer who comments on it. */
  async function setUp(): Promise<{ account: SeededAccount; viewer: ViewerSession; comments: string; admin: { authorization: string } }> {
    const publicId = `retention-${uniqueSuffix()}`;
    const account = await seedAccount(t().db.kysely, {
      ref: 'account',
      settings: { allowPrivateWebhookUrls: true },
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'wb', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
    });
    const viewer = await mintViewer(t().app, account.keys.alice!, { deploymentId: account.refs.prod!, embedTenantName: 'customer-a' });
    return { account, viewer, comments: `/api/v1/embed/dashboard/${publicId}/comments`, admin: bearer(account.keys.alice!) };
  }

  const dispatcher = (account: SeededAccount, now: () => Date, settings: Partial<WebhookSettings> = {}, pruneBatch?: number) => new WebhookDispatcher({
    db: t().db.kysely, dialect: t().dialect, settings: { ...SETTINGS, ...settings }, now, random: () => 1, accountIds: [account.refs.account!],
    ...(pruneBatch === undefined ? {} : { pruneBatch }),
    log: { warn: (_fields, message) => logs.push(message), error: (fields, message) => logs.push(`${message}: ${String(fields.err)}`) },
  });

  async function createEndpoint(admin: { authorization: string }, query: string, eventTypes: string[]): Promise<number> {
    const res = await t().app.inject({ method: 'POST', url: ENDPOINTS, headers: admin, payload: { url: `${receiver.url}?${query}`, eventTypes } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  }

  async function deliveryLog(admin: { authorization: string }, endpointId: number): Promise<LoggedDelivery[]> {
    const res = await t().app.inject({ url: `${ENDPOINTS}/${endpointId}/deliveries`, headers: admin });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().items as LoggedDelivery[];
  }

  async function attemptsOf(deliveryIds: number[]): Promise<number> {
    const rows = await t().db.kysely.selectFrom('webhook_attempts').select('id').where('delivery_id', 'in', deliveryIds).execute();
    return rows.length;
  }

  it('removes, with their attempts, the deliveries that finished more than the retention ago, in batches; keeps those that finished since and every pending one', async () => {
    const { account, viewer, comments, admin } = await setUp();
    // A minute ahead: whatever the test writes meanwhile is due at `at(0)`.
    const start = Date.now() + 60_000;
    const at = (ms: number) => () => new Date(start + ms);
    const ok = await createEndpoint(admin, 'answer=200', ['comment.created']);
    const fails = await createEndpoint(admin, 'answer=500&final=1', ['comment.edited']);
    const retries = await createEndpoint(admin, 'answer=500&retry=1', ['thread.resolved']);
    const late = await createEndpoint(admin, 'answer=200&late=1', ['thread.reopened']);
    const post = async (body: string) => {
      const res = await t().app.inject({ method: 'POST', url: comments, headers: viewer.headers, payload: { body } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as number;
    };
    const change = async (method: 'PATCH' | 'POST', url: string, payload: Record<string, unknown>) => {
      const res = await t().app.inject({ method, url, headers: viewer.headers, payload });
      expect(res.statusCode, res.body).toBe(200);
    };

    // Delivered at the start: two deliveries of `ok`.
    const root = await post('one');
    await post('two');
    expect(await dispatcher(account, at(0)).drain()).toBe(2);
    // Failed for good at the start (a schedule without retries): `fails`.
    await change('PATCH', `${comments}/${root}`, { body: 'one, edited' });
    expect(await dispatcher(account, at(0), { retryScheduleMs: [] }).drain()).toBe(1);
    // Still retrying: `retries`, attempted at the start and again 29 days later.
    await change('POST', `${comments}/${root}/resolve`, { resolved: true });
    expect(await dispatcher(account, at(0)).drain()).toBe(1);
    // Made at the start, delivered 29 days later: `late` (retention counts from the finish, not the creation).
    await change('POST', `${comments}/${root}/resolve`, { resolved: false });
    expect(await dispatcher(account, at(29 * DAY_MS)).drain()).toBe(2);
    // Never attempted: a third delivery of `ok`, pending.
    await post('three');

    const [fresh, ...oldOk] = await deliveryLog(admin, ok);
    const [failed] = await deliveryLog(admin, fails);
    expect(oldOk.map((d) => d.status)).toEqual(['delivered', 'delivered']);
    expect(fresh).toMatchObject({ status: 'pending', attempts: 0 });
    expect(failed).toMatchObject({ status: 'failed', attempts: 1 });
    expect(await deliveryLog(admin, retries)).toEqual([expect.objectContaining({ status: 'pending', attempts: 2 })]);
    expect(await deliveryLog(admin, late)).toEqual([expect.objectContaining({ status: 'delivered', attempts: 1 })]);
    const removable = [...oldOk.map((d) => d.id), failed!.id];
    expect(await attemptsOf(removable)).toBe(3);

    // Exactly the retention after they finished: kept; a millisecond later: removed, two per statement.
    expect(await dispatcher(account, at(RETENTION_MS), {}, 2).prune()).toBe(0);
    expect(await dispatcher(account, at(RETENTION_MS + 1), {}, 2).prune()).toBe(3);
    expect(await dispatcher(account, at(RETENTION_MS + 1), {}, 2).prune()).toBe(0);

    expect((await deliveryLog(admin, ok)).map((d) => d.id)).toEqual([fresh!.id]);
    expect(await deliveryLog(admin, fails)).toEqual([]);
    expect((await t().app.inject({ url: `${ENDPOINTS}/${fails}/deliveries?status=failed`, headers: admin })).json().items).toEqual([]);
    expect(await deliveryLog(admin, retries)).toEqual([expect.objectContaining({ status: 'pending', attempts: 2 })]);
    expect(await deliveryLog(admin, late)).toEqual([expect.objectContaining({ status: 'delivered' })]);
    expect(await attemptsOf(removable)).toBe(0);
    expect(logs).not.toContainEqual(expect.stringContaining('retention failed'));
  });

  it('answers 404 with the error body for a removed delivery, to a read and to a replay; a replayed delivery is pending again and kept until it finishes anew', async () => {
    const { account, viewer, comments, admin } = await setUp();
    const start = Date.now() + 60_000;
    const at = (ms: number) => () => new Date(start + ms);
    const endpoint = await createEndpoint(admin, 'answer=200&replay=1', ['comment.created']);
    for (const body of ['old', 'replayed']) {
      expect((await t().app.inject({ method: 'POST', url: comments, headers: viewer.headers, payload: { body } })).statusCode).toBe(201);
    }
    expect(await dispatcher(account, at(0)).drain()).toBe(2);
    const [replayed, old] = await deliveryLog(admin, endpoint);
    const replay = (id: number) => t().app.inject({ method: 'POST', url: `${ENDPOINTS}/${endpoint}/deliveries/${id}/replay`, headers: admin });
    expect((await replay(replayed!.id)).statusCode).toBe(202);

    expect(await dispatcher(account, at(RETENTION_MS + 1)).prune()).toBe(1);
    const read = await t().app.inject({ url: `${ENDPOINTS}/${endpoint}/deliveries/${old!.id}`, headers: admin });
    expectErrorBody({ status: read.statusCode, text: read.body }, 404, 'deliveryId');
    expect(read.json().error.code).toBe('not_found');
    const again = await replay(old!.id);
    expectErrorBody({ status: again.statusCode, text: again.body }, 404, 'deliveryId');
    expect(again.json().error.message).toContain(`delivery ${old!.id} of webhook endpoint ${endpoint} not found`);

    // The replay made it pending: no retention removes it, however late; once delivered again, it counts from then.
    expect(await dispatcher(account, at(10 * RETENTION_MS)).prune()).toBe(0);
    expect(await dispatcher(account, at(2 * RETENTION_MS)).drain()).toBe(1);
    expect(await deliveryLog(admin, endpoint)).toEqual([expect.objectContaining({ id: replayed!.id, status: 'delivered', attempts: 2 })]);
    expect(await dispatcher(account, at(3 * RETENTION_MS)).prune()).toBe(0);
    expect(await dispatcher(account, at(3 * RETENTION_MS + 1)).prune()).toBe(1);
    expect(await deliveryLog(admin, endpoint)).toEqual([]);
  });

  it('runs in the background of a started dispatcher: at its start, and again every retention period (at most an hour apart)', async () => {
    const { account, viewer, comments, admin } = await setUp();
    const endpoint = await createEndpoint(admin, 'answer=200&background=1', ['comment.created']);
    const retrying = await createEndpoint(admin, 'answer=500&background=1', ['thread.resolved']);
    const root = await t().app.inject({ method: 'POST', url: comments, headers: viewer.headers, payload: { body: 'delivered before the start' } });
    expect(await dispatcher(account, () => new Date()).drain()).toBe(1);
    expect((await t().app.inject({ method: 'POST', url: `${comments}/${root.json().id}/resolve`, headers: viewer.headers, payload: { resolved: true } })).statusCode).toBe(200);
    const [old] = await deliveryLog(admin, endpoint);
    expect(old).toMatchObject({ status: 'delivered' });

    // Its clock runs two days ahead: to it, the delivery just made finished two days ago.
    const background = dispatcher(account, () => new Date(Date.now() + 2 * DAY_MS), { retentionMs: 1000, pollMs: 50 });
    background.start();
    try {
      // At start: the delivery of "two days ago" goes.
      expect(await eventually(async () => (await deliveryLog(admin, endpoint)).length === 0, 5000)).toBe(true);
      // One delivered after the start goes a retention period (1 s) later, by the timer.
      expect((await t().app.inject({ method: 'POST', url: comments, headers: viewer.headers, payload: { body: 'delivered now' } })).statusCode).toBe(201);
      expect(await eventually(async () => (await deliveryLog(admin, endpoint))[0]?.status === 'delivered', 5000)).toBe(true);
      const deliveredAt = Date.now();
      expect(await eventually(async () => (await deliveryLog(admin, endpoint)).length === 0, 5000)).toBe(true);
      expect(Date.now() - deliveredAt).toBeGreaterThanOrEqual(900);
      // The retrying delivery (a 500 each time) stayed all along.
      expect(await deliveryLog(admin, retrying)).toEqual([expect.objectContaining({ status: 'pending' })]);
    } finally {
      await background.stop();
    }
  });

  it('migration 0011 dates the deliveries that finished before it (delivery, else last attempt, else creation); pending ones stay undated', async () => {
    await withFreshDatabase(t().dialect, t().url, async (db) => {
      await migrateUpTo(db, '0010_webhooks');
      // The account as the schema of 0010 holds it: the import writes today's columns (an API key's hint, 0016).
      const tenant = `retention-${uniqueSuffix()}`;
      const { id: accountId } = await db.kysely.insertInto('accounts').values({ name: tenant, tenant_name: tenant, settings: '{}', created_at: '2026-01-01T00:00:00.000Z' })
        .returning('id').executeTakeFirstOrThrow();
      const { id: endpointId } = await db.kysely.insertInto('webhook_endpoints').values({
        account_id: accountId, url: 'https://93.184.215.14/hooks', event_types: '["comment.created"]', secret: 'whsec_x', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
      }).returning('id').executeTakeFirstOrThrow();
      const delivery = async (status: 'pending' | 'delivered' | 'failed', deliveredAt: string | null, attemptedAt: string[]) => {
        const { id } = await db.kysely.insertInto('webhook_deliveries').values({
          account_id: accountId, endpoint_id: endpointId, event_id: `msg_${uniqueSuffix()}`, event_type: 'comment.created', payload: '{}',
          status, attempts: attemptedAt.length, final_attempt: null, next_attempt_at: status === 'pending' ? '2026-01-01T00:00:00.000Z' : null,
          created_at: '2026-01-01T00:00:00.000Z', delivered_at: deliveredAt,
        }).returning('id').executeTakeFirstOrThrow();
        for (const [index, at] of attemptedAt.entries()) {
          await db.kysely.insertInto('webhook_attempts').values({ account_id: accountId, delivery_id: id, attempt: index + 1, attempted_at: at, status_code: 500, duration_ms: 1, error: 'HTTP 500' }).execute();
        }
        return id;
      };
      const delivered = await delivery('delivered', '2026-01-03T00:00:00.000Z', ['2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z']);
      const failed = await delivery('failed', null, ['2026-01-02T00:00:00.000Z', '2026-01-04T00:00:00.000Z']);
      const failedUnattempted = await delivery('failed', null, []);
      const pending = await delivery('pending', null, ['2026-01-02T00:00:00.000Z']);
      await migrateToLatest(db);
      const rows = await db.kysely.selectFrom('webhook_deliveries').select(['id', 'finished_at']).where('account_id', '=', accountId).orderBy('id').execute();
      expect(rows).toEqual([
        { id: delivered, finished_at: '2026-01-03T00:00:00.000Z' },
        { id: failed, finished_at: '2026-01-04T00:00:00.000Z' },
        { id: failedUnattempted, finished_at: '2026-01-01T00:00:00.000Z' },
        { id: pending, finished_at: null },
      ]);
    });
  }, 60_000);
});
