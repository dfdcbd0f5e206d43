import type { Kysely, Selectable } from 'kysely';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import type { AuditEventsTable, Database } from '../db/db.schema.js';

export type AuditEventRow = Selectable<AuditEventsTable>;

/** What a change records of itself (docs/authoring.md "The audit log"). */
export interface AuditEntry {
  accountId: number;
  actor: { userId: number; email: string | null };
  action: string;
  targetType: string;
  targetId: string | number;
  fromVersion?: number | null;
  toVersion?: number | null;
  detail?: Record<string, unknown>;
  at: string;
}

/** Records a change; `db` is the change's own transaction, so that the entry and the change commit together or not at all. */
export async function insertAuditEvent(db: Kysely<Database>, entry: AuditEntry): Promise<void> {
  await db.insertInto('audit_events').values({
    account_id: entry.accountId, at: entry.at, actor_user_id: entry.actor.userId, actor_email: entry.actor.email,
    action: entry.action, target_type: entry.targetType, target_id: String(entry.targetId),
    from_version: entry.fromVersion ?? null, to_version: entry.toVersion ?? null, detail: JSON.stringify(entry.detail ?? {}),
  }).execute();
}

/** The account's entries, newest first, below `beforeId` when given; `limit` of them. */
export async function selectAuditEvents(db: Kysely<Database>, accountId: number, beforeId: number | undefined, limit: number): Promise<AuditEventRow[]> {
  let query = db.selectFrom('audit_events').selectAll().where('account_id', '=', accountId);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

/**
 * Records a change by a platform user at `at` (ISO) in `db`, the change's own transaction: every authoring and admin
 * write (models, dashboards, grants, users, groups, API keys, settings, embed tenants and users) names only what
 * changed, never a secret.
 *
 * @example
 * await recordChange(trx, principal, at, { action: 'user.create', targetType: 'user', targetId: id, detail: { role } });
 */
export async function recordChange(
  db: Kysely<Database>, principal: Pick<PlatformUserPrincipal, 'accountId' | 'userId' | 'email'>, at: string,
  change: Omit<AuditEntry, 'accountId' | 'actor' | 'at'>,
): Promise<void> {
  await insertAuditEvent(db, { accountId: principal.accountId, actor: { userId: principal.userId, email: principal.email }, at, ...change });
}
