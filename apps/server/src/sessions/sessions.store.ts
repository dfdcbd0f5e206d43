import { sql } from 'kysely';
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Dialect } from '../db/db.database.js';
import { EMBED_USER_SEARCH_TABLE } from '../db/db.schema.js';
import type { Database } from '../db/db.schema.js';
import { prepare } from '../db/db.prepared.js';
import { escapeLike, foldSearchKey } from '../db/db.search-key.js';

export type EmbedSessionRow = Selectable<Database['embed_sessions']>;
export type EmbedUserRow = Selectable<Database['embed_users']> & { embed_tenant_name: string };

/** The embed tenant of this name in the account, created if new; its id. */
export async function upsertEmbedTenant(db: Kysely<Database>, accountId: number, name: string, now: string): Promise<number> {
  await newEmbedTenant.execute(db, { accountId, name, now });
  const row = await embedTenantByName.first(db, { accountId, name });
  if (row === undefined) throw new Error(`embed tenant ${name} of account ${accountId} not found after its insert`);
  return row.id;
}

const newEmbedTenant = prepare((db, p: { accountId: number; name: string; now: string }) =>
  db.insertInto('embed_tenants').values({ account_id: p.accountId, name: p.name, created_at: p.now })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doNothing()));

const embedTenantByName = prepare((db, p: { accountId: number; name: string }) =>
  db.selectFrom('embed_tenants').select('id').where('account_id', '=', p.accountId).where('name', '=', p.name));

export interface EmbedUserFields {
  username?: string | undefined;
  email?: string | undefined;
  firstName?: string | undefined;
  groups?: string[] | undefined;
  userAttributes?: Record<string, unknown> | undefined;
}

/** A new embed user's row: the username defaults to the externalId; search keys folded as every lookup folds them. */
function newEmbedUserRow(accountId: number, embedTenantId: number, externalId: string, fields: EmbedUserFields, now: string) {
  const username = fields.username ?? externalId;
  return {
    account_id: accountId, embed_tenant_id: embedTenantId, external_id: externalId,
    username, username_key: foldSearchKey(username), email: fields.email ?? null, email_key: foldSearchKey(fields.email ?? ''),
    first_name: fields.firstName ?? null,
    groups: JSON.stringify(fields.groups ?? []), user_attributes: JSON.stringify(fields.userAttributes ?? {}),
    created_at: now, updated_at: now,
  };
}

/**
 * The embed user `externalId` of the tenant, created if new; fields given replace the stored ones, fields left
 * out keep them (a new user's username defaults to the externalId). Its id.
 */
export async function upsertEmbedUser(
  db: Kysely<Database>,
  accountId: number,
  embedTenantId: number,
  externalId: string,
  fields: EmbedUserFields,
  now: string,
): Promise<number> {
  const changes = {
    ...(fields.username !== undefined && { username: fields.username, username_key: foldSearchKey(fields.username) }),
    ...(fields.email !== undefined && { email: fields.email, email_key: foldSearchKey(fields.email) }),
    ...(fields.firstName !== undefined && { first_name: fields.firstName }),
    ...(fields.groups !== undefined && { groups: JSON.stringify(fields.groups) }),
    ...(fields.userAttributes !== undefined && { user_attributes: JSON.stringify(fields.userAttributes) }),
  };
  await db.insertInto('embed_users').values(newEmbedUserRow(accountId, embedTenantId, externalId, fields, now)).onConflict((oc) => oc.columns(['embed_tenant_id', 'external_id']).doUpdateSet({ ...changes, updated_at: now })).execute();
  const row = await db.selectFrom('embed_users').select('id')
    .where('account_id', '=', accountId).where('embed_tenant_id', '=', embedTenantId).where('external_id', '=', externalId)
    .executeTakeFirstOrThrow();
  return row.id;
}

type NewEmbedSession = Omit<EmbedSessionRow, 'id' | 'redeemed_at' | 'token_expires_at' | 'revoked_at'>;

export async function insertEmbedSession(db: Kysely<Database>, row: NewEmbedSession): Promise<void> {
  await newEmbedSession.execute(db, row);
}

const newEmbedSession = prepare((db, p: NewEmbedSession) =>
  db.insertInto('embed_sessions').values({
    account_id: p.account_id, deployment_id: p.deployment_id, embed_tenant_id: p.embed_tenant_id, embed_user_id: p.embed_user_id,
    user_id: p.user_id, digest: p.digest, theme: p.theme, settings: p.settings, created_at: p.created_at, expires_at: p.expires_at,
    access_context: p.access_context, dashboards: p.dashboards, preview: p.preview,
  }));

/**
 * Redeems a session id: one statement that marks it redeemed only if it is unredeemed, unrevoked and unexpired,
 * so of two concurrent exchanges exactly one gets the row.
 */
export async function redeemEmbedSession(db: Kysely<Database>, digest: string, now: string, tokenExpiresAt: string): Promise<EmbedSessionRow | undefined> {
  return redemption.first(db, { digest, now, tokenExpiresAt });
}

const redemption = prepare((db, p: { digest: string; now: string; tokenExpiresAt: string }) =>
  db.updateTable('embed_sessions')
    .set({ redeemed_at: p.now, token_expires_at: p.tokenExpiresAt })
    .where('digest', '=', p.digest)
    .where('redeemed_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', p.now)
    .returningAll());

export async function findEmbedTenantName(db: Kysely<Database>, accountId: number, embedTenantId: number): Promise<string> {
  const row = await db.selectFrom('embed_tenants').select('name').where('account_id', '=', accountId).where('id', '=', embedTenantId).executeTakeFirstOrThrow();
  return row.name;
}

/** A session that is neither revoked nor gone, scoped by account, with its embed tenant's name (null: none). */
export async function findLiveSession(db: Kysely<Database>, accountId: number, sessionId: number): Promise<(EmbedSessionRow & { embed_tenant_name: string | null }) | undefined> {
  return liveSession.first(db, { accountId, sessionId });
}

const liveSession = prepare((db, p: { accountId: number; sessionId: number }) =>
  db.selectFrom('embed_sessions as s')
    .leftJoin('embed_tenants as t', (j) => j.onRef('t.id', '=', 's.embed_tenant_id').onRef('t.account_id', '=', 's.account_id'))
    .selectAll('s')
    .select('t.name as embed_tenant_name')
    .where('s.account_id', '=', p.accountId).where('s.id', '=', p.sessionId).where('s.revoked_at', 'is', null));

/**
 * Of these sessions of the account, the ids of those still live: redeemed, not revoked, and not gone with their
 * embed user. What an open comment stream re-checks when the account's credentials may have changed.
 */
export async function selectLiveSessionIds(db: Kysely<Database>, accountId: number, sessionIds: readonly number[]): Promise<number[]> {
  if (sessionIds.length === 0) return [];
  const rows = await db.selectFrom('embed_sessions').select('id')
    .where('account_id', '=', accountId).where('id', 'in', sessionIds)
    .where('revoked_at', 'is', null).where('redeemed_at', 'is not', null)
    .execute();
  return rows.map((row) => row.id);
}

/** A session a revocation just revoked: whose it was (issue 23's `embed_session.revoked` webhook says so). */
export type RevokedSession = Pick<EmbedSessionRow, 'id' | 'embed_tenant_id' | 'embed_user_id' | 'user_id'>;

export async function revokeSessionByDigest(db: Kysely<Database>, accountId: number, digest: string, now: string): Promise<RevokedSession[]> {
  return db.updateTable('embed_sessions').set({ revoked_at: now })
    .where('account_id', '=', accountId).where('digest', '=', digest).where('revoked_at', 'is', null)
    .returning(['id', 'embed_tenant_id', 'embed_user_id', 'user_id'])
    .execute();
}

export async function revokeSessionsOfEmbedUser(db: Kysely<Database>, accountId: number, embedUserId: number, now: string): Promise<RevokedSession[]> {
  return db.updateTable('embed_sessions').set({ revoked_at: now })
    .where('account_id', '=', accountId).where('embed_user_id', '=', embedUserId).where('revoked_at', 'is', null)
    .returning(['id', 'embed_tenant_id', 'embed_user_id', 'user_id'])
    .execute();
}

/** How many sessions of an embed user are not revoked (their deletion revokes them). */
export async function countUnrevokedSessions(db: Kysely<Database>, accountId: number, embedUserId: number): Promise<number> {
  const row = await db.selectFrom('embed_sessions').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId).where('embed_user_id', '=', embedUserId).where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function findEmbedUserId(db: Kysely<Database>, accountId: number, tenantName: string, externalId: string): Promise<number | undefined> {
  const row = await db.selectFrom('embed_users as u')
    .innerJoin('embed_tenants as t', (j) => j.onRef('t.id', '=', 'u.embed_tenant_id').onRef('t.account_id', '=', 'u.account_id'))
    .select('u.id')
    .where('u.account_id', '=', accountId).where('t.name', '=', tenantName).where('u.external_id', '=', externalId)
    .executeTakeFirst();
  return row?.id;
}

/** Embed users of the account, optionally of one tenant, by tenant name then username. */
export async function selectEmbedUsers(db: Kysely<Database>, accountId: number, tenantName: string | undefined): Promise<EmbedUserRow[]> {
  let query = db.selectFrom('embed_users as u')
    .innerJoin('embed_tenants as t', (j) => j.onRef('t.id', '=', 'u.embed_tenant_id').onRef('t.account_id', '=', 'u.account_id'))
    .selectAll('u')
    .select('t.name as embed_tenant_name')
    .where('u.account_id', '=', accountId);
  if (tenantName !== undefined) query = query.where('t.name', '=', tenantName);
  return query.orderBy('t.name').orderBy('u.username').orderBy('u.id').execute();
}

/** Deletes an embed user; the id of their embed tenant, or undefined if there was no such user. */
export async function deleteEmbedUser(db: Kysely<Database>, accountId: number, embedUserId: number): Promise<number | undefined> {
  const row = await db.deleteFrom('embed_users').where('account_id', '=', accountId).where('id', '=', embedUserId).returning('embed_tenant_id').executeTakeFirst();
  return row?.embed_tenant_id;
}

/** The embedTheme and settings (JSON text) a session was minted with. */
export async function findSessionPresentation(db: Kysely<Database>, accountId: number, sessionRowId: number): Promise<{ theme: string; settings: string; access_context: string | null } | undefined> {
  return db.selectFrom('embed_sessions').select(['theme', 'settings', 'access_context']).where('account_id', '=', accountId).where('id', '=', sessionRowId).executeTakeFirst();
}

export type ServerKeyRow = Selectable<Database['server_keys']>;

/** The server's signing key of this name, or undefined before the first start made one. */
export async function findServerKey(db: Kysely<Database>, name: string): Promise<ServerKeyRow | undefined> {
  return db.selectFrom('server_keys').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Stores a signing key unless one of this name exists (processes racing at first start: one insert wins). */
export async function insertServerKeyIfAbsent(db: Kysely<Database>, row: Insertable<Database['server_keys']>): Promise<void> {
  await db.insertInto('server_keys').values(row).onConflict((oc) => oc.column('name').doNothing()).execute();
}

/**
 * The account a session id (by digest) was minted in, whatever its state: the page that will try to redeem it is
 * framed by that account's allowed origins, and learns it was refused from the exchange, not from a blank frame.
 */
export async function findAccountOfSessionDigest(db: Kysely<Database>, digest: string): Promise<{ accountId: number; preview: EmbedSessionRow['preview'] } | undefined> {
  const row = await db.selectFrom('embed_sessions').select(['account_id', 'preview']).where('digest', '=', digest).executeTakeFirst();
  return row === undefined ? undefined : { accountId: row.account_id, preview: row.preview };
}

/** Shortens a just-redeemed preview session's token (its `token_expires_at`), scoped by account. */
export async function shortenTokenExpiry(db: Kysely<Database>, accountId: number, sessionRowId: number, tokenExpiresAt: string): Promise<void> {
  await db.updateTable('embed_sessions').set({ token_expires_at: tokenExpiresAt }).where('account_id', '=', accountId).where('id', '=', sessionRowId).execute();
}

/** A keyset position in the mentionable-user list: the folded username and id. */
export interface UserPosition {
  usernameKey: string;
  id: number;
}

export interface MentionableUserRow {
  id: number;
  username: string;
  username_key: string;
  email: string | null;
  first_name: string | null;
}

/**
 * One page of the tenant's embed users by folded username then id (SPEC B rule 8), optionally those whose
 * username or email contains `search` (already folded; `%` and `_` literal). A search of three characters or more
 * is served by the trigram index of each dialect (FTS5 on SQLite, pg_trgm on PostgreSQL).
 */
export async function selectMentionableUsers(
  db: Kysely<Database>,
  dialect: Dialect,
  accountId: number,
  embedTenantId: number,
  search: string | null,
  after: UserPosition | null,
  limit: number,
): Promise<MentionableUserRow[]> {
  // A search of three characters or more is driven by its trigram index: the few candidates are found first and
  // sorted. SQLite would otherwise walk the whole tenant in username order and test each row (LIMIT makes an
  // ordered walk look cheap), so the tenant term is kept off its index there (`+`); PostgreSQL's planner already
  // starts from the pg_trgm indexes.
  const byTrigrams = search !== null && [...search].length >= 3;
  let query = db.selectFrom('embed_users')
    .select(['id', 'username', 'username_key', 'email', 'first_name'])
    .where(byTrigrams && dialect === 'sqlite' ? sql<boolean>`+embed_tenant_id = ${embedTenantId}` : sql<boolean>`embed_tenant_id = ${embedTenantId}`)
    .where('account_id', '=', accountId);
  if (search !== null) {
    const pattern = `%${escapeLike(search)}%`;
    if (byTrigrams && dialect === 'sqlite') {
      const fts = sql.table(EMBED_USER_SEARCH_TABLE);
      const phrase = `"${search.replace(/"/g, '""')}"`;
      query = query.where('id', 'in', sql<number>`(select rowid from ${fts} where ${fts} match ${phrase})`);
    }
    // LIKE keeps the exact substring semantics (and is what pg_trgm's indexes serve on PostgreSQL).
    query = query.where((eb) => eb.or([
      sql<boolean>`${eb.ref('username_key')} like ${pattern} escape '\\'`,
      sql<boolean>`${eb.ref('email_key')} like ${pattern} escape '\\'`,
    ]));
  }
  if (after !== null) query = query.where(sql<boolean>`(username_key, id) > (${after.usernameKey}, ${after.id})`);
  return query.orderBy('username_key').orderBy('id').limit(limit).execute();
}

/** An embed user's external id and embed tenant's name, for a webhook event's payload (either may be gone: null). */
export async function findEmbedIdentity(
  db: Kysely<Database>, accountId: number, embedTenantId: number | null, embedUserId: number | null,
): Promise<{ tenantName: string | null; externalId: string | null }> {
  const tenant = embedTenantId === null ? undefined
    : await db.selectFrom('embed_tenants').select('name').where('account_id', '=', accountId).where('id', '=', embedTenantId).executeTakeFirst();
  const user = embedUserId === null ? undefined
    : await db.selectFrom('embed_users').select('external_id').where('account_id', '=', accountId).where('id', '=', embedUserId).executeTakeFirst();
  return { tenantName: tenant?.name ?? null, externalId: user?.external_id ?? null };
}

/** The embed users of one tenant whose folded username is one of `keys` (mentions: comments.mentions.ts). */
export async function selectEmbedUsersByUsernameKey(
  db: Kysely<Database>, accountId: number, embedTenantId: number, keys: readonly string[],
): Promise<Array<{ id: number; username: string; username_key: string; external_id: string }>> {
  if (keys.length === 0) return [];
  return db.selectFrom('embed_users')
    .select(['id', 'username', 'username_key', 'external_id'])
    .where('embed_tenant_id', '=', embedTenantId)
    .where('account_id', '=', accountId)
    .where('username_key', 'in', keys)
    .orderBy('id')
    .execute();
}

// The admin API of embed tenants and single embed users (issue 33 part 4, docs/authoring.md "Embed tenants and users").

export interface EmbedTenantRow { id: number; name: string; created_at: string; user_count: number }

const tenants = (db: Kysely<Database>, accountId: number) => db.selectFrom('embed_tenants as t')
  .select(['t.id', 't.name', 't.created_at'])
  .select((eb) => eb.selectFrom('embed_users as u').select((c) => c.fn.countAll<number | string>().as('n')).whereRef('u.embed_tenant_id', '=', 't.id').as('user_count'))
  .where('t.account_id', '=', accountId);

const counted = (row: { id: number; name: string; created_at: string; user_count: number | string | null }): EmbedTenantRow => ({ ...row, user_count: Number(row.user_count ?? 0) });

/** The account's embed tenants by name, with how many embed users each has. */
export async function selectEmbedTenants(db: Kysely<Database>, accountId: number): Promise<EmbedTenantRow[]> {
  return (await tenants(db, accountId).orderBy('t.name').execute()).map(counted);
}

export async function findEmbedTenant(db: Kysely<Database>, accountId: number, tenantId: number): Promise<EmbedTenantRow | undefined> {
  const row = await tenants(db, accountId).where('t.id', '=', tenantId).executeTakeFirst();
  return row === undefined ? undefined : counted(row);
}

export async function findEmbedTenantIdByName(db: Kysely<Database>, accountId: number, name: string): Promise<number | undefined> {
  return (await db.selectFrom('embed_tenants').select('id').where('account_id', '=', accountId).where('name', '=', name).executeTakeFirst())?.id;
}

export async function insertEmbedTenant(db: Kysely<Database>, accountId: number, name: string, now: string): Promise<number> {
  return (await db.insertInto('embed_tenants').values({ account_id: accountId, name, created_at: now }).returning('id').executeTakeFirstOrThrow()).id;
}

export async function renameEmbedTenant(db: Kysely<Database>, accountId: number, tenantId: number, name: string): Promise<void> {
  await db.updateTable('embed_tenants').set({ name }).where('account_id', '=', accountId).where('id', '=', tenantId).execute();
}

/** The tenant's embed users with unrevoked sessions, with how many each has (what a revocation event names). */
export async function selectLiveSessionsOfTenant(db: Kysely<Database>, accountId: number, tenantId: number): Promise<Array<{ embedUserId: number; externalId: string; sessions: number }>> {
  const rows = await db.selectFrom('embed_sessions as s')
    .innerJoin('embed_users as u', (j) => j.onRef('u.id', '=', 's.embed_user_id').onRef('u.account_id', '=', 's.account_id'))
    .select(['u.id', 'u.external_id']).select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('s.account_id', '=', accountId).where('s.embed_tenant_id', '=', tenantId).where('s.revoked_at', 'is', null)
    .groupBy(['u.id', 'u.external_id']).orderBy('u.id').execute();
  return rows.map((row) => ({ embedUserId: row.id, externalId: row.external_id, sessions: Number(row.n) }));
}

/** Revokes every unrevoked session of the tenant's viewers; how many. */
export async function revokeSessionsOfTenant(db: Kysely<Database>, accountId: number, tenantId: number, now: string): Promise<number> {
  const result = await db.updateTable('embed_sessions').set({ revoked_at: now })
    .where('account_id', '=', accountId).where('embed_tenant_id', '=', tenantId).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Deletes a tenant of the account: its embed users, their sessions and the tenant's comment threads go with it. */
export async function deleteEmbedTenant(db: Kysely<Database>, accountId: number, tenantId: number): Promise<number> {
  return Number((await db.deleteFrom('embed_tenants').where('account_id', '=', accountId).where('id', '=', tenantId).executeTakeFirst()).numDeletedRows);
}

/** One embed user of the account, with their tenant's name, or undefined. */
export async function findEmbedUser(db: Kysely<Database>, accountId: number, embedUserId: number): Promise<EmbedUserRow | undefined> {
  return db.selectFrom('embed_users as u')
    .innerJoin('embed_tenants as t', (j) => j.onRef('t.id', '=', 'u.embed_tenant_id').onRef('t.account_id', '=', 'u.account_id'))
    .selectAll('u').select('t.name as embed_tenant_name')
    .where('u.account_id', '=', accountId).where('u.id', '=', embedUserId)
    .executeTakeFirst();
}

/** A new embed user (the caller checked that the externalId is free in the tenant; a race is a unique violation). */
export async function insertEmbedUser(db: Kysely<Database>, accountId: number, tenantId: number, externalId: string, fields: EmbedUserFields, now: string): Promise<number> {
  return (await db.insertInto('embed_users').values(newEmbedUserRow(accountId, tenantId, externalId, fields, now)).returning('id').executeTakeFirstOrThrow()).id;
}

/** Replaces the given fields of an embed user of the account (null clears email and first name). */
export async function updateEmbedUserFields(
  db: Kysely<Database>, accountId: number, embedUserId: number,
  fields: { username?: string; email?: string | null; firstName?: string | null; groups?: string[]; userAttributes?: Record<string, unknown> }, now: string,
): Promise<void> {
  await db.updateTable('embed_users').set({
    ...(fields.username !== undefined && { username: fields.username, username_key: foldSearchKey(fields.username) }),
    ...(fields.email !== undefined && { email: fields.email, email_key: foldSearchKey(fields.email ?? '') }),
    ...(fields.firstName !== undefined && { first_name: fields.firstName }),
    ...(fields.groups !== undefined && { groups: JSON.stringify(fields.groups) }),
    ...(fields.userAttributes !== undefined && { user_attributes: JSON.stringify(fields.userAttributes) }),
    updated_at: now,
  }).where('account_id', '=', accountId).where('id', '=', embedUserId).execute();
}
