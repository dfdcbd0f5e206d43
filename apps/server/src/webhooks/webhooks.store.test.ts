import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { seedAccount, uniqueSuffix } from '../../test/factory.js';
import { claimDueDeliveries, insertDeliveries, insertEndpoint, recordAttempt } from './webhooks.store.js';
import type { AttemptOutcome } from './webhooks.store.js';

const T0 = '2026-11-27T07:00:00.000Z';
const T1 = '2026-11-27T07:00:05.000Z';
const LEASE = '2026-11-27T07:01:00.000Z';

/**
 * Recording an attempt's outcome (`recordAttempt`), on both databases: on PostgreSQL the common case is one statement
 * of data-modifying CTEs, elsewhere a transaction. Either way, all of it or none: the delivery's state, its log row
 * and the endpoint's failure streak are written only while this process still holds the lease, and not at all once
 * another process has taken the delivery over.
 */
describeEachDialect('recording a webhook attempt', (t) => {
  let accountId: number;

  beforeAll(async () => {
    const account = await seedAccount(t().db.kysely, { ref: 'account', users: [{ ref: 'alice', role: 'admin' }] });
    accountId = account.refs.account!;
  });

  /** A new endpoint with one due delivery, claimed with `token`. */
  const claimed = async (token: string) => {
    const db = t().db.kysely;
    const endpoint = await insertEndpoint(db, {
      account_id: accountId, url: 'http://127.0.0.1:9/hooks', description: null, event_types: '["comment.created"]', include_comment_body: 0,
      secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0', created_at: T0, updated_at: T0,
    });
    await insertDeliveries(db, [{
      account_id: accountId, endpoint_id: endpoint.id, event_id: `msg_${uniqueSuffix()}`, event_type: 'comment.created', payload: '{}',
      status: 'pending', final_attempt: null, next_attempt_at: T0, locked_until: null, lock_token: null, created_at: T0, delivered_at: null, finished_at: null,
    }]);
    const [delivery] = await claimDueDeliveries(db, t().dialect, T0, LEASE, token, 100, [accountId])
      .then((rows) => rows.filter((row) => row.endpoint_id === endpoint.id));
    expect(delivery).toBeDefined();
    return { endpointId: endpoint.id, deliveryId: delivery!.id };
  };
  const state = async (endpointId: number, deliveryId: number) => {
    const db = t().db.kysely;
    return {
      delivery: await db.selectFrom('webhook_deliveries').select(['status', 'attempts', 'next_attempt_at', 'lock_token', 'delivered_at', 'finished_at'])
        .where('id', '=', deliveryId).executeTakeFirstOrThrow(),
      attempts: await db.selectFrom('webhook_attempts').select(['attempt', 'attempted_at', 'status_code', 'duration_ms', 'error'])
        .where('delivery_id', '=', deliveryId).orderBy('id').execute(),
      endpoint: await db.selectFrom('webhook_endpoints').select(['failing_since', 'disabled_at', 'disabled_reason']).where('id', '=', endpointId).executeTakeFirstOrThrow(),
    };
  };
  const outcome = (ids: { endpointId: number; deliveryId: number }, token: string, changes: Partial<AttemptOutcome>): AttemptOutcome => ({
    deliveryId: ids.deliveryId, accountId, endpointId: ids.endpointId, token, attempt: 1, attemptedAt: T1,
    statusCode: 500, durationMs: 12, error: 'HTTP 500', status: 'pending', nextAttemptAt: LEASE, disableReason: null, ...changes,
  });

  it('a failure: the delivery waits for its retry, the log has the attempt, and the endpoint starts failing', async () => {
    const ids = await claimed('lease-a');
    expect(await recordAttempt(t().db.kysely, t().dialect, outcome(ids, 'lease-a', {}))).toBe(true);
    expect(await state(ids.endpointId, ids.deliveryId)).toEqual({
      delivery: { status: 'pending', attempts: 1, next_attempt_at: LEASE, lock_token: null, delivered_at: null, finished_at: null },
      attempts: [{ attempt: 1, attempted_at: T1, status_code: 500, duration_ms: 12, error: 'HTTP 500' }],
      endpoint: { failing_since: T1, disabled_at: null, disabled_reason: null },
    });
  });

  it('a success: delivered and finished, with a null status code kept as null, and the failure streak cleared', async () => {
    const ids = await claimed('lease-b');
    await recordAttempt(t().db.kysely, t().dialect, outcome(ids, 'lease-b', { statusCode: null, error: 'timed out after 2000 ms' }));
    const [again] = await claimDueDeliveries(t().db.kysely, t().dialect, LEASE, '2026-11-27T07:02:00.000Z', 'lease-b2', 100, [accountId])
      .then((rows) => rows.filter((row) => row.id === ids.deliveryId));
    expect(again).toBeDefined();
    const at = '2026-11-27T07:01:01.000Z';
    expect(await recordAttempt(t().db.kysely, t().dialect, outcome(ids, 'lease-b2', { attempt: 2, attemptedAt: at, statusCode: 204, error: null, status: 'delivered', nextAttemptAt: null }))).toBe(true);
    expect(await state(ids.endpointId, ids.deliveryId)).toEqual({
      delivery: { status: 'delivered', attempts: 2, next_attempt_at: null, lock_token: null, delivered_at: at, finished_at: at },
      attempts: [
        { attempt: 1, attempted_at: T1, status_code: null, duration_ms: 12, error: 'timed out after 2000 ms' },
        { attempt: 2, attempted_at: at, status_code: 204, duration_ms: 12, error: null },
      ],
      endpoint: { failing_since: null, disabled_at: null, disabled_reason: null },
    });
  });

  it('writes nothing once another process holds the lease: no log row, no state, no streak', async () => {
    const ids = await claimed('lease-c');
    // Another process took the delivery over (this one's lease lapsed while it was still attempting).
    await t().db.kysely.updateTable('webhook_deliveries').set({ lock_token: 'lease-other' }).where('id', '=', ids.deliveryId).execute();
    const before = await state(ids.endpointId, ids.deliveryId);
    for (const changes of [{}, { statusCode: 204, error: null, status: 'delivered' as const, nextAttemptAt: null }, { status: 'failed' as const, nextAttemptAt: null, disableReason: 'kept failing' }]) {
      expect(await recordAttempt(t().db.kysely, t().dialect, outcome(ids, 'lease-c', changes))).toBe(false);
      expect(await state(ids.endpointId, ids.deliveryId)).toEqual(before);
    }
    expect(before.attempts).toEqual([]);
    expect(before.endpoint.failing_since).toBeNull();
  });

  it('a final failure with a disabling: failed, finished, and the endpoint disabled with the reason', async () => {
    const ids = await claimed('lease-d');
    expect(await recordAttempt(t().db.kysely, t().dialect, outcome(ids, 'lease-d', { status: 'failed', nextAttemptAt: null, disableReason: 'every attempt failed' }))).toBe(true);
    expect(await state(ids.endpointId, ids.deliveryId)).toMatchObject({
      delivery: { status: 'failed', attempts: 1, finished_at: T1, lock_token: null },
      endpoint: { failing_since: T1, disabled_at: T1, disabled_reason: 'every attempt failed' },
    });
  });
});
