import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '../src/db/db.schema.js';
import { statusByCode } from '../src/core/core.errors.js';
import { isRecord } from './fuzz.types.js';
import type { FuzzRequest } from './fuzz.types.js';

// The promises the fuzz engine (see fuzz.ts) checks: each answer against DESIGN.md, and the database unchanged
// by refused requests.

// ---------------------------------------------------------------------------------------------------------------
// Checks

/** A JSON answer's parsed body, or what keeps it from being one. */
function jsonOf(contentType: string | undefined, body: string): { parsed: unknown } | string {
  if (!/^application\/json\b/.test(contentType ?? '')) return `content-type is ${contentType ?? '(none)'}, not application/json`;
  try {
    return { parsed: JSON.parse(body) as unknown };
  } catch {
    return 'the body is not JSON';
  }
}

/**
 * What is wrong with a 4xx answer's body, against DESIGN.md's error body
 * `{ "error": { "status", "code", "message", "field"? } }` (apps/server/src/http/http.errors.ts), or undefined.
 *
 * @example
 * errorBodyProblem(404, 'application/json', '{"error":{"status":404,"code":"not_found","message":"no"}}'); // undefined
 */
export function errorBodyProblem(status: number, contentType: string | undefined, body: string): string | undefined {
  const json = jsonOf(contentType, body);
  if (typeof json === 'string') return json;
  const parsed = json.parsed;
  if (!isRecord(parsed) || Object.keys(parsed).join(',') !== 'error' || !isRecord(parsed.error)) return 'the body is not { "error": { ... } }';
  const error = parsed.error;
  const unknown = Object.keys(error).filter((key) => !['status', 'code', 'message', 'field'].includes(key));
  if (unknown.length > 0) return `error has unknown keys ${unknown.join(', ')}`;
  if (error.status !== status) return `error.status ${String(error.status)} is not the HTTP status ${status}`;
  if (typeof error.code !== 'string' || !Object.prototype.hasOwnProperty.call(statusByCode, error.code)) return `error.code ${String(error.code)} is not an AppErrorCode`;
  if (statusByCode[error.code as keyof typeof statusByCode] !== status) return `error.code ${error.code} maps to ${statusByCode[error.code as keyof typeof statusByCode]}, not ${status}`;
  if (typeof error.message !== 'string' || error.message === '') return 'error.message is not a non-empty string';
  if (error.field !== undefined && typeof error.field !== 'string') return 'error.field is not a string';
  return undefined;
}

/**
 * What is wrong with a 4xx answer of Cube's REST API (`/cubejs-api/`, docs/cube.md), whose clients read the error
 * as a string: `{ "error": "<message>", "code", "field"? }`, the code svc's own for that status.
 */
export function cubeErrorBodyProblem(status: number, contentType: string | undefined, body: string): string | undefined {
  const json = jsonOf(contentType, body);
  if (typeof json === 'string') return json;
  const parsed = json.parsed;
  if (!isRecord(parsed) || typeof parsed.error !== 'string' || parsed.error === '') return 'the body is not Cube\'s { "error": "<message>" }';
  const unknown = Object.keys(parsed).filter((key) => !['error', 'code', 'field'].includes(key));
  if (unknown.length > 0) return `unknown keys ${unknown.join(', ')}`;
  if (typeof parsed.code !== 'string' || statusByCode[parsed.code as keyof typeof statusByCode] !== status) return `code ${String(parsed.code)} is not svc's code for ${status}`;
  if (parsed.field !== undefined && typeof parsed.field !== 'string') return 'field is not a string';
  return undefined;
}

/** Every broken promise of one answer: a 5xx, a 4xx outside the error body, a stack trace, a refusal that should have been. */
export function answerProblems(request: FuzzRequest, status: number, contentType: string | undefined, body: string): string[] {
  const reasons: string[] = [];
  if (status >= 500) reasons.push(`answered ${status}: no request may get a 5xx`);
  if (status >= 400 && status < 500) {
    const problem = request.url.startsWith('/cubejs-api/') ? cubeErrorBodyProblem(status, contentType, body) : errorBodyProblem(status, contentType, body);
    if (problem !== undefined) reasons.push(`a ${status} outside the error body: ${problem}`);
  }
  if (status >= 400 && /\n\s+at |node_modules|\/src\/[\w/.-]+\.ts/.test(body)) reasons.push('the error body leaks a stack trace or a source path');
  if (request.expectStatus !== undefined && !request.expectStatus.includes(status)) reasons.push(`expected ${request.expectStatus.join(' or ')}, got ${status}`);
  if (request.mustReject !== undefined && status < 400) reasons.push(`accepted (${status}) a request it must refuse: ${request.mustReject}`);
  return reasons;
}

// ---------------------------------------------------------------------------------------------------------------
// Database snapshots

/**
 * How each table of db.schema.ts is scoped to the run's accounts. A Record over `keyof Database`, so a new table is
 * a compile error here until it is placed. No table is skipped: every write of svc (the inserts, updates and
 * deletes of the stores) sits behind a write endpoint, and no read (GET, or a refused write) touches a row, not
 * even a "last used" column. `server_keys` (no account) is read whole: it holds one row, written at first start.
 */
const SNAPSHOT_SCOPE: Record<keyof Database, 'account_id' | 'id' | 'all'> = {
  accounts: 'id',
  users: 'account_id',
  groups: 'account_id',
  group_members: 'account_id',
  api_keys: 'account_id',
  deployments: 'account_id',
  workspace_items: 'account_id',
  item_ancestors: 'account_id',
  item_grants: 'account_id',
  item_views: 'account_id',
  item_favorites: 'account_id',
  dashboards: 'account_id',
  report_snapshots: 'account_id',
  embed_tenants: 'account_id',
  embed_users: 'account_id',
  embed_sessions: 'account_id',
  server_keys: 'all',
  console_sessions: 'account_id',
  comments: 'account_id',
  comment_streams: 'account_id',
  comment_events: 'account_id',
  webhook_endpoints: 'account_id',
  webhook_deliveries: 'account_id',
  webhook_attempts: 'account_id',
  audit_events: 'account_id',
  dashboard_versions: 'account_id',
  // Issue 35 saved charts and views.
  saved_charts: 'account_id',
  saved_views: 'account_id',
};

/** Row count, content hash and the rows themselves (canonical JSON) of every table, for the run's accounts. */
export type DatabaseSnapshot = Record<string, { rows: string[]; hash: string }>;

function canonicalRow(row: Record<string, unknown>): string {
  return JSON.stringify(Object.keys(row).sort().map((key) => {
    const value = row[key];
    if (typeof value === 'bigint') return [key, value.toString()];
    if (value instanceof Date) return [key, value.toISOString()];
    if (Buffer.isBuffer(value)) return [key, value.toString('hex')];
    return [key, value];
  }));
}

/**
 * Reads every table of db.schema.ts for `accountIds` (Kysely `sql`, one statement a table) into a snapshot.
 *
 * @example
 * const before = await snapshotDatabase(db.kysely, fixtures.accountIds);
 * // ... a refused request ...
 * expect(diffSnapshots(before, await snapshotDatabase(db.kysely, fixtures.accountIds))).toEqual([]);
 */
export async function snapshotDatabase(db: Kysely<Database>, accountIds: readonly number[]): Promise<DatabaseSnapshot> {
  const ids = accountIds.length > 0 ? accountIds : [-1];
  const entries = await Promise.all(Object.entries(SNAPSHOT_SCOPE).map(async ([table, scope]) => {
    const where = scope === 'all' ? sql`` : sql` where ${sql.ref(scope)} in (${sql.join(ids)})`;
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}${where}`.execute(db);
    const canonical = rows.map(canonicalRow).sort();
    return [table, { rows: canonical, hash: createHash('sha256').update(canonical.join('\n')).digest('hex') }] as const;
  }));
  return Object.fromEntries(entries);
}

/** What changed between two snapshots: one line per table, with a few of the rows added and removed. */
export function diffSnapshots(before: DatabaseSnapshot, after: DatabaseSnapshot): string[] {
  const lines: string[] = [];
  for (const [table, now] of Object.entries(after)) {
    const then = before[table];
    if (then === undefined || then.hash === now.hash) continue;
    const old = new Set(then.rows);
    const current = new Set(now.rows);
    const added = now.rows.filter((row) => !old.has(row));
    const removed = then.rows.filter((row) => !current.has(row));
    const show = (rows: string[]) => rows.slice(0, 2).map((row) => row.slice(0, 300)).join(' | ');
    lines.push(`${table}: ${then.rows.length} -> ${now.rows.length} rows; added ${added.length} [${show(added)}]; removed ${removed.length} [${show(removed)}]`);
  }
  return lines;
}
