import type { Kysely, Selectable } from 'kysely';
import { prepare } from '../db/db.prepared.js';
import type { Database, UsersTable } from '../db/db.schema.js';
import type { PlatformUserPrincipal, UserRole } from '../core/core.principal.js';
import { parseJsonObject } from '../core/core.json.js';
import { normalizeEmail } from './accounts.identity.js';

const keyLookup = prepare((db, p: { digest: string }) =>
  db.selectFrom('api_keys as k')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 'k.user_id').onRef('u.account_id', '=', 'k.account_id'))
    .innerJoin('accounts as a', 'a.id', 'u.account_id')
    .select(['u.id as userId', 'u.account_id as accountId', 'u.role', 'u.email', 'u.personal_version', 'a.data_version', 'k.id as credentialId'])
    .where('k.digest', '=', p.digest));

/** The platform user owning the API key with this digest, or undefined. Runs on every uncached platform API request. */
export async function findPlatformUserByKeyDigest(db: Kysely<Database>, digest: string): Promise<PlatformUserPrincipal | undefined> {
  const row = await keyLookup.first(db, { digest });
  if (!row) return undefined;
  const { personal_version, data_version, ...user } = row;
  return { kind: 'platform-user', ...user, dataVersion: `${data_version}.${personal_version}`, via: 'api-key' };
}

/**
 * Stores a new API key digest for the platform user with this email (in the account with this tenant name, when
 * given). Reports `none` or `ambiguous` (the email exists in several accounts) instead of guessing.
 */
export async function insertApiKeyForEmail(
  db: Kysely<Database>,
  email: string,
  tenantName: string | undefined,
  digest: string,
  now: string,
  hint: string | null = null,
): Promise<{ userId: number; accountId: number } | 'none' | 'ambiguous'> {
  let query = db
    .selectFrom('users as u')
    .innerJoin('accounts as a', 'a.id', 'u.account_id')
    .select(['u.id', 'u.account_id'])
    .where('u.email', '=', normalizeEmail(email));
  if (tenantName !== undefined) query = query.where('a.tenant_name', '=', tenantName);
  const users = await query.execute();
  if (users.length === 0) return 'none';
  if (users.length > 1) return 'ambiguous';
  const user = users[0]!;
  await db.insertInto('api_keys').values({ account_id: user.account_id, user_id: user.id, digest, hint, created_at: now }).execute();
  return { userId: user.id, accountId: user.account_id };
}

/** The deployment's id when it exists in the account, else undefined. */
export async function findDeploymentInAccount(db: Kysely<Database>, accountId: number, deploymentId: number): Promise<number | undefined> {
  return (await deploymentInAccount.first(db, { accountId, deploymentId }))?.id;
}

const deploymentInAccount = prepare((db, p: { accountId: number; deploymentId: number }) =>
  db.selectFrom('deployments').select('id').where('id', '=', p.deploymentId).where('account_id', '=', p.accountId));

/** A deployment's data source and semantic views (JSON text), or undefined when the account has no such deployment. */
export async function findDeploymentData(db: Kysely<Database>, accountId: number, deploymentId: number): Promise<{ data_source: string | null; semantic_views: string | null } | undefined> {
  return db.selectFrom('deployments').select(['data_source', 'semantic_views'])
    .where('account_id', '=', accountId).where('id', '=', deploymentId)
    .executeTakeFirst();
}

/**
 * Deployments with a data source, by id after `afterId`, up to `limit`, across accounts: for resealing them under
 * SVC_ENCRYPTION_KEY (server-wide upkeep at start, like the webhook secrets'); `accountIds` limits it to those
 * accounts (tests that share a database with other work).
 */
export async function selectDeploymentDataSources(db: Kysely<Database>, afterId: number, limit: number, accountIds?: readonly number[]): Promise<Array<{ id: number; account_id: number; data_source: string }>> {
  let query = db.selectFrom('deployments').select(['id', 'account_id', 'data_source'])
    .where('id', '>', afterId).where('data_source', 'is not', null).orderBy('id').limit(limit);
  if (accountIds !== undefined) query = query.where('account_id', 'in', accountIds.length === 0 ? [0] : [...accountIds]);
  return (await query.execute()) as Array<{ id: number; account_id: number; data_source: string }>;
}

/** Replaces a deployment's stored data source if it is still `from`; whether it was. */
export async function replaceDeploymentDataSource(db: Kysely<Database>, accountId: number, deploymentId: number, from: string, to: string): Promise<boolean> {
  const result = await db.updateTable('deployments').set({ data_source: to })
    .where('account_id', '=', accountId).where('id', '=', deploymentId).where('data_source', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Every account's deployments whose semantic views declare pre-aggregations (the rollup builder's work list). */
export async function selectDeploymentsWithPreAggregations(db: Kysely<Database>): Promise<Array<{ id: number; account_id: number; data_source: string | null; semantic_views: string | null }>> {
  return db.selectFrom('deployments').select(['id', 'account_id', 'data_source', 'semantic_views'])
    .where('semantic_views', 'like', '%"preAggregations"%').orderBy('id').execute();
}

/** The account's tenant name (its default embed tenant's name). */
export async function findTenantName(db: Kysely<Database>, accountId: number): Promise<string> {
  const account = await tenantName.first(db, { accountId });
  if (account === undefined) throw new Error(`account ${accountId} not found`);
  return account.tenant_name;
}

const tenantName = prepare((db, p: { accountId: number }) =>
  db.selectFrom('accounts').select('tenant_name').where('id', '=', p.accountId));

/** Whether the database holds any account (`serve --demo` loads the demo into an empty one only). */
export async function hasAnyAccount(db: Kysely<Database>): Promise<boolean> {
  return (await db.selectFrom('accounts').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/** The first deployment of the account with this tenant name (the demo's, for the start-up hint), or undefined. */
export async function findFirstDeploymentOfTenant(db: Kysely<Database>, tenantName: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('deployments as d')
    .innerJoin('accounts as a', 'a.id', 'd.account_id')
    .select('d.id')
    .where('a.tenant_name', '=', tenantName)
    .orderBy('d.id')
    .executeTakeFirst();
  return row?.id;
}

/** Marks a change to the account's shared workspace data: every cached listing of the account is stale. */
export async function bumpAccountDataVersion(db: Kysely<Database>, accountId: number): Promise<void> {
  await db.updateTable('accounts').set((eb) => ({ data_version: eb('data_version', '+', 1) })).where('id', '=', accountId).execute();
}

/** Marks a change to one user's own view of the workspace (views, favorites): their cached listings are stale. */
export async function bumpPersonalVersion(db: Kysely<Database>, accountId: number, userId: number): Promise<void> {
  await personalVersionBump.execute(db, { accountId, userId });
}

const personalVersionBump = prepare((db, p: { accountId: number; userId: number }) =>
  db.updateTable('users')
    .set((eb) => ({ personal_version: eb('personal_version', '+', 1) }))
    .where('id', '=', p.userId)
    .where('account_id', '=', p.accountId));

/** Users with this email (lowercased), with what login needs; several when the email is in several accounts. */
export async function findLoginCandidates(db: Kysely<Database>, email: string, tenantName: string | undefined) {
  let query = db.selectFrom('users as u')
    .innerJoin('accounts as a', 'a.id', 'u.account_id')
    .select(['u.id as userId', 'u.account_id as accountId', 'u.role', 'u.email', 'u.first_name as firstName', 'u.password_digest as passwordDigest', 'a.tenant_name as tenantName'])
    .where('u.email', '=', email);
  if (tenantName !== undefined) query = query.where('a.tenant_name', '=', tenantName);
  return query.limit(2).execute();
}

export async function insertConsoleSession(db: Kysely<Database>, row: { account_id: number; user_id: number; digest: string; created_at: string; expires_at: string }): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute();
}

/** A console session that is not revoked, with its platform user and its expiry (checked by the caller). */
export interface ConsoleSession {
  accountId: number;
  expiresAt: string;
  principal: PlatformUserPrincipal;
}

export async function findConsoleSession(db: Kysely<Database>, digest: string): Promise<ConsoleSession | undefined> {
  const row = await db.selectFrom('console_sessions as s')
    .innerJoin('users as u', (join) => join.onRef('u.id', '=', 's.user_id').onRef('u.account_id', '=', 's.account_id'))
    .innerJoin('accounts as a', 'a.id', 'u.account_id')
    .select(['u.id as userId', 'u.account_id as accountId', 'u.role', 'u.email', 'u.personal_version', 'a.data_version', 's.expires_at', 's.id as credentialId'])
    .where('s.digest', '=', digest)
    .where('s.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { personal_version, data_version, expires_at, ...user } = row;
  return {
    accountId: row.accountId,
    expiresAt: expires_at,
    principal: { kind: 'platform-user', ...user, dataVersion: `${data_version}.${personal_version}`, via: 'console' },
  };
}

export async function revokeConsoleSession(db: Kysely<Database>, digest: string, now: string): Promise<void> {
  await db.updateTable('console_sessions').set({ revoked_at: now }).where('digest', '=', digest).where('revoked_at', 'is', null).execute();
}

/** The account settings the embed reads (DESIGN's import file: `settings`). */
export interface EmbedAccountSettings {
  /**
   * Whether the embed shows its comment panel (issue 4: it only hides the panel; the comments API answers
   * regardless). Off unless the account turns it on: a panel the host's customers see is the host's choice.
   */
  allowEmbedComments: boolean;
  /** Host origins allowed to frame the embed and to talk to it (`frame-ancestors`, postMessage); exact origins. */
  allowedEmbedOrigins: string[];
  /** The account's default time zone (IANA) and locale for embeds, or null (the viewer's browser decides). */
  timezone: string | null;
  locale: string | null;
}

const ORIGIN_SHAPE = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?\/?$/;

/**
 * An origin as the browser writes it (`scheme://host[:port]`, lowercase, default port left out), or undefined for
 * anything that is not exactly an origin (a path, a query, credentials, a wildcard, a `;`, a port out of range).
 */
export function normalizeOrigin(value: unknown): string | undefined {
  if (typeof value !== 'string' || !ORIGIN_SHAPE.test(value)) return undefined;
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

const accountSettings = prepare((db, p: { accountId: number }) =>
  db.selectFrom('accounts').select('settings').where('id', '=', p.accountId));

export async function findEmbedAccountSettings(db: Kysely<Database>, accountId: number): Promise<EmbedAccountSettings> {
  const settings = parseJsonObject((await accountSettings.first(db, { accountId }))?.settings);
  const origins = Array.isArray(settings.allowedEmbedOrigins) ? settings.allowedEmbedOrigins.map(normalizeOrigin) : [];
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
  return {
    allowEmbedComments: settings.allowEmbedComments === true,
    // An entry that is not exactly an origin is dropped: it must never widen frame-ancestors or forge a directive.
    allowedEmbedOrigins: [...new Set(origins.filter((o): o is string => o !== undefined))],
    timezone: text(settings.timezone),
    locale: text(settings.locale),
  };
}

/** The platform user of the account with this email (lowercased), or undefined. */
export async function findUserIdByEmail(db: Kysely<Database>, accountId: number, email: string): Promise<number | undefined> {
  const row = await db.selectFrom('users').select('id').where('account_id', '=', accountId).where('email', '=', email).executeTakeFirst();
  return row?.id;
}

/** The role of a platform user of the account, or undefined when there is no such user. */
export async function findUserRole(db: Kysely<Database>, accountId: number, userId: number): Promise<UserRole | undefined> {
  const row = await db.selectFrom('users').select('role').where('account_id', '=', accountId).where('id', '=', userId).executeTakeFirst();
  return row?.role;
}

/** The account of a deployment. */
export async function findAccountOfDeployment(db: Kysely<Database>, deploymentId: number): Promise<number | undefined> {
  const row = await db.selectFrom('deployments').select('account_id').where('id', '=', deploymentId).executeTakeFirst();
  return row?.account_id;
}

/** The account of a live console session (by digest). */
export async function findAccountOfConsoleDigest(db: Kysely<Database>, digest: string, now: string): Promise<number | undefined> {
  const row = await db.selectFrom('console_sessions').select('account_id')
    .where('digest', '=', digest).where('revoked_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
  return row?.account_id;
}

/**
 * Whether the account's settings allow webhook URLs on private, loopback and link-local addresses
 * (`allowPrivateWebhookUrls` of the import file's settings; issue 23, docs/webhooks.md "Addresses").
 */
export async function isAllowedPrivateWebhookUrls(db: Kysely<Database>, accountId: number): Promise<boolean> {
  return settingsAllowPrivateWebhookUrls((await accountSettings.first(db, { accountId }))?.settings);
}

/** The same, from the account row's `settings` JSON as read (a webhook claim reads it with its deliveries). */
export function settingsAllowPrivateWebhookUrls(settings: string | null | undefined): boolean {
  return parseJsonObject(settings).allowPrivateWebhookUrls === true;
}

// The authoring API's reads and writes of a deployment's model (deployments/deployments.service.ts; issue 33).

/** A deployment as the authoring API reads it: its name, its model (JSON text, as stored) and the model's revision. */
export interface DeploymentRow {
  id: number;
  name: string;
  created_at: string;
  data_source: string | null;
  semantic_views: string | null;
  model_revision: number;
}

/** The account's deployments, by id. */
export async function selectDeployments(db: Kysely<Database>, accountId: number): Promise<Array<Pick<DeploymentRow, 'id' | 'name' | 'created_at' | 'model_revision'>>> {
  return db.selectFrom('deployments').select(['id', 'name', 'created_at', 'model_revision']).where('account_id', '=', accountId).orderBy('id').execute();
}

/** The deployment of the account, or undefined (another account's never resolves). */
export async function findDeployment(db: Kysely<Database>, accountId: number, deploymentId: number): Promise<DeploymentRow | undefined> {
  return db.selectFrom('deployments').select(['id', 'name', 'created_at', 'data_source', 'semantic_views', 'model_revision'])
    .where('account_id', '=', accountId).where('id', '=', deploymentId).executeTakeFirst();
}

/**
 * Replaces a deployment's model over revision `over` (any revision for `'*'`) and raises its revision, in one
 * conditional statement: the new revision, or undefined when the model is no longer at `over` (or is gone).
 */
export async function updateModel(
  db: Kysely<Database>, accountId: number, deploymentId: number, over: number | '*', model: { semantic_views: string; data_source: string | null },
): Promise<number | undefined> {
  let query = db.updateTable('deployments')
    .set((eb) => ({ semantic_views: model.semantic_views, data_source: model.data_source, model_revision: eb('model_revision', '+', 1) }))
    .where('account_id', '=', accountId).where('id', '=', deploymentId);
  if (over !== '*') query = query.where('model_revision', '=', over);
  const row = await query.returning('model_revision').executeTakeFirst();
  return row?.model_revision;
}

// The admin API of platform users, API keys and settings (issue 33 part 4, docs/authoring.md "Users, groups and API keys").

export type UserRow = Pick<Selectable<UsersTable>, 'id' | 'email' | 'first_name' | 'role' | 'created_at'> & { has_password: boolean };

const userColumns = ['id', 'email', 'first_name', 'role', 'created_at', 'password_digest'] as const;
const withoutDigest = ({ password_digest, ...row }: Pick<Selectable<UsersTable>, (typeof userColumns)[number]>): UserRow => ({ ...row, has_password: password_digest !== null });

/** The account's platform users, oldest first. */
export async function selectUsers(db: Kysely<Database>, accountId: number): Promise<UserRow[]> {
  return (await db.selectFrom('users').select(userColumns).where('account_id', '=', accountId).orderBy('id').execute()).map(withoutDigest);
}

/** One platform user of the account, or undefined (another account's never resolves). */
export async function findUser(db: Kysely<Database>, accountId: number, userId: number): Promise<UserRow | undefined> {
  const row = await db.selectFrom('users').select(userColumns).where('account_id', '=', accountId).where('id', '=', userId).executeTakeFirst();
  return row === undefined ? undefined : withoutDigest(row);
}

export async function insertUser(
  db: Kysely<Database>, row: { account_id: number; email: string; first_name: string | null; role: UserRole; password_digest: string | null; created_at: string },
): Promise<number> {
  return (await db.insertInto('users').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

/** Changes the given fields of a user of the account; whether the user exists. */
export async function updateUser(
  db: Kysely<Database>, accountId: number, userId: number,
  changes: Partial<{ email: string; first_name: string | null; role: UserRole; password_digest: string | null }>,
): Promise<boolean> {
  if (Object.keys(changes).length === 0) return (await findUser(db, accountId, userId)) !== undefined;
  const result = await db.updateTable('users').set(changes).where('account_id', '=', accountId).where('id', '=', userId).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Deletes a user of the account (their keys, console sessions, memberships, grants, views and favourites go with them). */
export async function deleteUser(db: Kysely<Database>, accountId: number, userId: number): Promise<number> {
  return Number((await db.deleteFrom('users').where('account_id', '=', accountId).where('id', '=', userId).executeTakeFirst()).numDeletedRows);
}

/** Ends every console session of a user of the account (a new password signs them out everywhere). */
export async function revokeConsoleSessionsOf(db: Kysely<Database>, accountId: number, userId: number, at: string): Promise<void> {
  await db.updateTable('console_sessions').set({ revoked_at: at }).where('account_id', '=', accountId).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
}

/** How many admins the account has. */
export async function countAdmins(db: Kysely<Database>, accountId: number): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number | string>().as('n')).where('account_id', '=', accountId).where('role', '=', 'admin').executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Which of these ids name users of the account. */
export async function selectUserIdsIn(db: Kysely<Database>, accountId: number, userIds: readonly number[]): Promise<number[]> {
  if (userIds.length === 0) return [];
  return (await db.selectFrom('users').select('id').where('account_id', '=', accountId).where('id', 'in', [...userIds]).execute()).map((r) => r.id);
}

export interface ApiKeyRow { id: number; name: string | null; hint: string | null; created_at: string }

/** The keys of a user of the account, oldest first (never their digests). */
export async function selectApiKeys(db: Kysely<Database>, accountId: number, userId: number): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').select(['id', 'name', 'hint', 'created_at']).where('account_id', '=', accountId).where('user_id', '=', userId).orderBy('id').execute();
}

export async function insertApiKey(db: Kysely<Database>, row: { account_id: number; user_id: number; digest: string; name: string | null; hint: string; created_at: string }): Promise<number> {
  return (await db.insertInto('api_keys').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

/** Deletes one key of a user of the account; how many rows went (0 or 1). */
export async function deleteApiKey(db: Kysely<Database>, accountId: number, userId: number, keyId: number): Promise<number> {
  const result = await db.deleteFrom('api_keys').where('account_id', '=', accountId).where('user_id', '=', userId).where('id', '=', keyId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// Settings.

/** The account's settings as stored (JSON text). */
export async function findAccountSettingsText(db: Kysely<Database>, accountId: number): Promise<string> {
  const row = await db.selectFrom('accounts').select('settings').where('id', '=', accountId).executeTakeFirstOrThrow();
  return row.settings;
}

/** Replaces the account's settings (JSON text) and marks the account changed for every cache that holds it. */
export async function updateAccountSettings(db: Kysely<Database>, accountId: number, settings: string): Promise<void> {
  await db.updateTable('accounts').set((eb) => ({ settings, data_version: eb('data_version', '+', 1) })).where('id', '=', accountId).execute();
}

// Issue 36, Cube JWTs (cube/cube.secrets.ts): a deployment's Cube API secret, sealed.

/**
 * The Cube API secret of a deployment, found by the deployment's id alone: a Cube JWT names its deployment and
 * proves its account only by the signature this secret checks. Everything after reads in the `account_id` returned.
 */
export async function findCubeSecret(db: Kysely<Database>, deploymentId: number): Promise<{ account_id: number; cube_secret: string } | undefined> {
  const row = await cubeSecretLookup.first(db, { deploymentId });
  return row === undefined || row.cube_secret === null ? undefined : { account_id: row.account_id, cube_secret: row.cube_secret };
}

const cubeSecretLookup = prepare((db, p: { deploymentId: number }) =>
  db.selectFrom('deployments').select(['account_id', 'cube_secret']).where('id', '=', p.deploymentId));

/** Sets (a sealed secret) or clears (null) the Cube API secret of the account's deployment; false when there is no such deployment. */
export async function writeCubeSecret(db: Kysely<Database>, accountId: number, deploymentId: number, sealed: string | null, at: string | null): Promise<boolean> {
  const result = await db.updateTable('deployments').set({ cube_secret: sealed, cube_secret_created_at: at })
    .where('account_id', '=', accountId).where('id', '=', deploymentId).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
