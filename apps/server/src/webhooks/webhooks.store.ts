import { sql } from 'kysely';
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Dialect } from '../db/db.database.js';
import { prepare } from '../db/db.prepared.js';
import type { Database, WebhookDeliveryStatus } from '../db/db.schema.js';

export type WebhookEndpointRow = Selectable<Database['webhook_endpoints']>;
export type WebhookDeliveryRow = Selectable<Database['webhook_deliveries']>;
export type WebhookAttemptRow = Selectable<Database['webhook_attempts']>;

/** Every endpoint of the account, oldest first. */
export async function selectEndpoints(db: Kysely<Database>, accountId: number): Promise<WebhookEndpointRow[]> {
  return db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
}

export async function countEndpoints(db: Kysely<Database>, accountId: number): Promise<number> {
  const row = await db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function findEndpoint(db: Kysely<Database>, accountId: number, endpointId: number): Promise<WebhookEndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).where('id', '=', endpointId).executeTakeFirst();
}

export async function insertEndpoint(db: Kysely<Database>, row: Insertable<Database['webhook_endpoints']>): Promise<WebhookEndpointRow> {
  return db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
}

export type EndpointChanges = Partial<Pick<WebhookEndpointRow, 'url' | 'description' | 'event_types' | 'include_comment_body' | 'secret' | 'disabled_at' | 'disabled_reason' | 'failing_since'>> & { updated_at: string };

export async function updateEndpoint(db: Kysely<Database>, accountId: number, endpointId: number, changes: EndpointChanges): Promise<WebhookEndpointRow | undefined> {
  return db.updateTable('webhook_endpoints').set(changes).where('account_id', '=', accountId).where('id', '=', endpointId).returningAll().executeTakeFirst();
}

/** Deletes an endpoint and (by cascade) its deliveries and their attempts; whether it existed. */
export async function deleteEndpoint(db: Kysely<Database>, accountId: number, endpointId: number): Promise<boolean> {
  const result = await db.deleteFrom('webhook_endpoints').where('account_id', '=', accountId).where('id', '=', endpointId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The enabled endpoints of an account (what an event fans out to): on every comment write, so compiled once. */
export async function selectEnabledEndpoints(db: Kysely<Database>, accountId: number): Promise<Array<Pick<WebhookEndpointRow, 'id' | 'event_types' | 'include_comment_body'>>> {
  return enabledEndpoints.execute(db, { accountId });
}

const enabledEndpoints = prepare((db, p: { accountId: number }) =>
  db.selectFrom('webhook_endpoints').select(['id', 'event_types', 'include_comment_body'])
    .where('account_id', '=', p.accountId).where('disabled_at', 'is', null).orderBy('id'));

export async function insertDeliveries(db: Kysely<Database>, rows: ReadonlyArray<Insertable<Database['webhook_deliveries']>>): Promise<void> {
  if (rows.length > 0) await db.insertInto('webhook_deliveries').values([...rows]).execute();
}

/** A keyset position in an endpoint's delivery log (newest first). */
export async function selectDeliveries(
  db: Kysely<Database>, accountId: number, endpointId: number, status: WebhookDeliveryStatus | undefined, beforeId: number | null, limit: number,
): Promise<WebhookDeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll()
    .where('endpoint_id', '=', endpointId).where('account_id', '=', accountId);
  if (status !== undefined) query = query.where('status', '=', status);
  if (beforeId !== null) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

export async function findDelivery(db: Kysely<Database>, accountId: number, endpointId: number, deliveryId: number): Promise<WebhookDeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll()
    .where('id', '=', deliveryId).where('endpoint_id', '=', endpointId).where('account_id', '=', accountId).executeTakeFirst();
}

/** The attempts of these deliveries, oldest first. */
export async function selectAttempts(db: Kysely<Database>, accountId: number, deliveryIds: readonly number[]): Promise<WebhookAttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db.selectFrom('webhook_attempts').selectAll()
    .where('delivery_id', 'in', deliveryIds).where('account_id', '=', accountId).orderBy('delivery_id').orderBy('id').execute();
}

/**
 * Makes a delivery that is not pending due again now, allowing one more attempt (a replay); the row after, or
 * undefined when it is pending (or gone) meanwhile.
 */
export async function markDeliveryForReplay(db: Kysely<Database>, accountId: number, endpointId: number, deliveryId: number, now: string): Promise<WebhookDeliveryRow | undefined> {
  return db.updateTable('webhook_deliveries')
    .set((eb) => ({ status: 'pending', next_attempt_at: now, final_attempt: eb('attempts', '+', 1), locked_until: null, lock_token: null, finished_at: null }))
    .where('id', '=', deliveryId).where('endpoint_id', '=', endpointId).where('account_id', '=', accountId)
    .where('status', '!=', 'pending')
    .returningAll()
    .executeTakeFirst();
}

/** A claimed delivery with what its attempt needs of its endpoint and account. */
export interface ClaimedDelivery {
  id: number;
  account_id: number;
  endpoint_id: number;
  event_id: string;
  event_type: string;
  payload: string;
  attempts: number;
  final_attempt: number | null;
  created_at: string;
  url: string;
  secret: string;
  failing_since: string | null;
  /** The account's `settings` JSON (whether it may use private addresses). */
  account_settings: string;
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints for this process until `lockedUntil`, with what their
 * attempts need (the endpoint's URL and secret, the account's settings): one conditional update, so a delivery is
 * claimed by one process at a time on both dialects (SQLite has one writer; on PostgreSQL the candidates are read
 * `FOR UPDATE SKIP LOCKED`, so concurrent claimers take different rows instead of waiting, and a row another process
 * claimed meanwhile fails the re-checked condition). A lease that lapsed (its process died mid-attempt) makes the
 * delivery claimable again: delivery is at least once. PostgreSQL returns the rows from the update itself (one round
 * trip); SQLite, whose RETURNING cannot name joined tables, reads them after it.
 */
export async function claimDueDeliveries(
  db: Kysely<Database>, dialect: Dialect, now: string, lockedUntil: string, token: string, limit: number, accountIds?: readonly number[],
): Promise<ClaimedDelivery[]> {
  let due = db.selectFrom('webhook_deliveries as d')
    .select('d.id')
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('d.locked_until', 'is', null), eb('d.locked_until', '<', now)]))
    .where((eb) => eb.exists(eb.selectFrom('webhook_endpoints as e').select('e.id')
      .whereRef('e.id', '=', 'd.endpoint_id').where('e.disabled_at', 'is', null)))
    .orderBy('d.next_attempt_at').orderBy('d.id')
    .limit(limit);
  if (accountIds !== undefined) due = due.where('d.account_id', 'in', accountIds.length === 0 ? [0] : [...accountIds]);
  const byId = (a: ClaimedDelivery, b: ClaimedDelivery) => a.id - b.id;
  if (dialect === 'postgres') {
    const rows = await db.updateTable('webhook_deliveries as d')
      .from(['webhook_endpoints as e', 'accounts as a'])
      .set({ locked_until: lockedUntil, lock_token: token })
      .where('d.id', 'in', due.forUpdate().skipLocked())
      .where('d.status', '=', 'pending')
      .where((eb) => eb.or([eb('d.locked_until', 'is', null), eb('d.locked_until', '<', now)]))
      .whereRef('e.id', '=', 'd.endpoint_id').whereRef('e.account_id', '=', 'd.account_id').whereRef('a.id', '=', 'd.account_id')
      .returning([
        'd.id', 'd.account_id', 'd.endpoint_id', 'd.event_id', 'd.event_type', 'd.payload', 'd.attempts', 'd.final_attempt', 'd.created_at',
        'e.url', 'e.secret', 'e.failing_since', 'a.settings as account_settings',
      ])
      .execute();
    return rows.sort(byId);
  }
  const claimed = await db.updateTable('webhook_deliveries')
    .set({ locked_until: lockedUntil, lock_token: token })
    .where('id', 'in', due)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .returning('id')
    .execute();
  if (claimed.length === 0) return [];
  return db.selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', (j) => j.onRef('e.id', '=', 'd.endpoint_id').onRef('e.account_id', '=', 'd.account_id'))
    .innerJoin('accounts as a', 'a.id', 'd.account_id')
    .select([
      'd.id', 'd.account_id', 'd.endpoint_id', 'd.event_id', 'd.event_type', 'd.payload', 'd.attempts', 'd.final_attempt', 'd.created_at',
      'e.url', 'e.secret', 'e.failing_since', 'a.settings as account_settings',
    ])
    .where('d.id', 'in', claimed.map((row) => row.id))
    .where('d.lock_token', '=', token)
    .orderBy('d.id')
    .execute();
}

/**
 * Gives back claims this process will not finish: deliveries it claimed under `token` and did not attempt, or whose
 * attempt it cut off (it is shutting down). They stay pending, with no attempt counted and their due time as it was,
 * so any process claims them again at once (at-least-once: a receiver that had the request gets it again). Only
 * rows this lease still holds; how many.
 */
export async function releaseClaims(db: Kysely<Database>, token: string, deliveries: ReadonlyArray<{ accountId: number; deliveryId: number }>): Promise<number> {
  if (deliveries.length === 0) return 0;
  const released = await db.updateTable('webhook_deliveries')
    .set({ locked_until: null, lock_token: null })
    .where('lock_token', '=', token)
    .where('status', '=', 'pending')
    .where((eb) => eb.or(deliveries.map(({ accountId, deliveryId }) => eb.and([eb('account_id', '=', accountId), eb('id', '=', deliveryId)]))))
    .executeTakeFirst();
  return Number(released.numUpdatedRows);
}

/** What one attempt ended with, written in one transaction by `recordAttempt`. */
export interface AttemptOutcome {
  deliveryId: number;
  accountId: number;
  endpointId: number;
  token: string;
  attempt: number;
  attemptedAt: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** delivered, pending again (with its next time), or failed for good. */
  status: WebhookDeliveryStatus;
  nextAttemptAt: string | null;
  /** Disable the endpoint with this reason (it kept failing). */
  disableReason: string | null;
}

/**
 * Writes an attempt's outcome: the delivery's new state (only while this process still holds its lease), its log
 * row, and the endpoint's failure streak (cleared by a success, started by a failure) or its disabling. Whether
 * the lease was still held (if not, another process owns the delivery and nothing is written).
 */
export async function recordAttempt(db: Kysely<Database>, dialect: Dialect, outcome: AttemptOutcome): Promise<boolean> {
  if (dialect === 'postgres' && outcome.disableReason === null) return recordAttemptInOneStatement(db, outcome);
  return db.transaction().execute(async (trx) => {
    const updated = await trx.updateTable('webhook_deliveries')
      .set({
        status: outcome.status, attempts: outcome.attempt, next_attempt_at: outcome.nextAttemptAt, locked_until: null, lock_token: null,
        ...(outcome.status === 'delivered' ? { delivered_at: outcome.attemptedAt } : {}),
        finished_at: outcome.status === 'pending' ? null : outcome.attemptedAt,
      })
      .where('id', '=', outcome.deliveryId).where('account_id', '=', outcome.accountId).where('lock_token', '=', outcome.token)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return false;
    await trx.insertInto('webhook_attempts').values({
      account_id: outcome.accountId, delivery_id: outcome.deliveryId, attempt: outcome.attempt, attempted_at: outcome.attemptedAt,
      status_code: outcome.statusCode, duration_ms: outcome.durationMs, error: outcome.error,
    }).execute();
    const endpoint = trx.updateTable('webhook_endpoints').where('id', '=', outcome.endpointId).where('account_id', '=', outcome.accountId);
    if (outcome.status === 'delivered') {
      await endpoint.set({ failing_since: null }).where('failing_since', 'is not', null).execute();
    } else {
      await endpoint.set((eb) => ({ failing_since: eb.fn.coalesce('failing_since', sql<string>`${outcome.attemptedAt}`) })).execute();
    }
    if (outcome.disableReason !== null) {
      await trx.updateTable('webhook_endpoints')
        .set({ disabled_at: outcome.attemptedAt, disabled_reason: outcome.disableReason, updated_at: outcome.attemptedAt })
        .where('id', '=', outcome.endpointId).where('account_id', '=', outcome.accountId).where('disabled_at', 'is', null)
        .execute();
    }
    return true;
  });
}

/**
 * `recordAttempt` on PostgreSQL without a disabling, as one statement: data-modifying CTEs run in one snapshot and
 * commit together, so the attempt row and the endpoint's streak are written only when the lease was still held,
 * in one round trip instead of five (BEGIN, three statements, COMMIT).
 */
async function recordAttemptInOneStatement(db: Kysely<Database>, outcome: AttemptOutcome): Promise<boolean> {
  const { accountId, deliveryId, endpointId, attemptedAt } = outcome;
  const row = await db
    .with('held', (qb) => qb.updateTable('webhook_deliveries')
      .set({
        status: outcome.status, attempts: outcome.attempt, next_attempt_at: outcome.nextAttemptAt, locked_until: null, lock_token: null,
        ...(outcome.status === 'delivered' ? { delivered_at: attemptedAt } : {}),
        finished_at: outcome.status === 'pending' ? null : attemptedAt,
      })
      .where('id', '=', deliveryId).where('account_id', '=', accountId).where('lock_token', '=', outcome.token)
      .returning('id'))
    .with('logged', (qb) => qb.insertInto('webhook_attempts')
      .columns(['account_id', 'delivery_id', 'attempt', 'attempted_at', 'status_code', 'duration_ms', 'error'])
      .expression((eb) => eb.selectFrom('held').select([
        sql<number>`cast(${accountId} as integer)`.as('account_id'), 'held.id as delivery_id', sql<number>`cast(${outcome.attempt} as integer)`.as('attempt'),
        sql<string>`cast(${attemptedAt} as text)`.as('attempted_at'), sql<number | null>`cast(${outcome.statusCode} as integer)`.as('status_code'),
        sql<number>`cast(${outcome.durationMs} as integer)`.as('duration_ms'), sql<string | null>`cast(${outcome.error} as text)`.as('error'),
      ]))
      .returning('id'))
    .with('streak', (qb) => {
      const endpoint = qb.updateTable('webhook_endpoints').where('id', '=', endpointId).where('account_id', '=', accountId)
        .where((eb) => eb.exists(eb.selectFrom('held').select('held.id')));
      return (outcome.status === 'delivered'
        ? endpoint.set({ failing_since: null }).where('failing_since', 'is not', null)
        : endpoint.set((eb) => ({ failing_since: eb.fn.coalesce('failing_since', sql<string>`cast(${attemptedAt} as text)`) }))).returning('id');
    })
    .selectFrom('held')
    .select((eb) => eb.fn.countAll<string>().as('held'))
    .executeTakeFirst();
  return Number(row?.held ?? 0) > 0;
}

/**
 * Retention: deletes up to `limit` deliveries that finished (delivered, or failed for good) before `cutoff`, oldest
 * first, with their attempts (by cascade); how many. One short statement per batch, so that a large backlog never
 * holds a long lock. A pending delivery is never deleted: the condition is checked again on each row as it is
 * deleted, so a replay that committed meanwhile keeps its delivery, and on PostgreSQL rows locked by a writer
 * (a replay under way) or by another process's retention are skipped (`SKIP LOCKED`) rather than waited for.
 */
export async function deleteFinishedDeliveries(
  db: Kysely<Database>, dialect: Dialect, cutoff: string, limit: number, accountIds?: readonly number[],
): Promise<number> {
  const finished = ['delivered', 'failed'] as const satisfies readonly WebhookDeliveryStatus[];
  let old = db.selectFrom('webhook_deliveries').select('id')
    .where('finished_at', '<', cutoff).where('status', 'in', finished)
    .orderBy('finished_at').limit(limit);
  if (accountIds !== undefined) old = old.where('account_id', 'in', accountIds.length === 0 ? [0] : [...accountIds]);
  if (dialect === 'postgres') old = old.forUpdate().skipLocked();
  const result = await db.deleteFrom('webhook_deliveries')
    .where('id', 'in', old)
    .where('finished_at', '<', cutoff).where('status', 'in', finished)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Up to `limit` endpoints after `afterId` (by id) with their stored secrets, of every account or of `accountIds`:
 * for resealing the secrets under SVC_ENCRYPTION_KEY's first key (server-wide upkeep, like the signing keys).
 */
export async function selectEndpointSecrets(
  db: Kysely<Database>, afterId: number, limit: number, accountIds?: readonly number[],
): Promise<Array<Pick<WebhookEndpointRow, 'id' | 'account_id' | 'secret'>>> {
  let query = db.selectFrom('webhook_endpoints').select(['id', 'account_id', 'secret']).where('id', '>', afterId).orderBy('id').limit(limit);
  if (accountIds !== undefined) query = query.where('account_id', 'in', accountIds.length === 0 ? [0] : [...accountIds]);
  return query.execute();
}

/** Replaces an endpoint's stored secret if it still is `from` (a rotation meanwhile wins); whether it did. */
export async function replaceEndpointSecret(db: Kysely<Database>, accountId: number, endpointId: number, from: string, to: string): Promise<boolean> {
  const result = await db.updateTable('webhook_endpoints').set({ secret: to })
    .where('account_id', '=', accountId).where('id', '=', endpointId).where('secret', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
