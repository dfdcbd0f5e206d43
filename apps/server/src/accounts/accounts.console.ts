import { randomBytes } from 'node:crypto';
import { AppError } from '../core/core.errors.js';
import { isoTimestamp } from '../core/core.time.js';
import type { ServiceContext } from '../db/db.context.js';
import { toBase62 } from './accounts.keys.js';
import { digestSecret } from '../core/core.digest.js';
import { hashPassword, verifyPassword } from './accounts.passwords.js';
import { findLoginCandidates, findTenantName, findUser, insertConsoleSession, revokeConsoleSession } from './accounts.store.js';
import type { PlatformUserPrincipal, UserRole } from '../core/core.principal.js';
import { normalizeEmail } from './accounts.identity.js';

export const CONSOLE_SESSION_PREFIX = 'cs_';
/** How long a console sign-in lasts (12 hours; then sign in again). */
export const CONSOLE_SESSION_TTL_MS = 12 * 3_600_000;

let decoyDigest: Promise<string> | undefined;

export interface LoginResult {
  sessionId: string;
  expiresAt: string;
  user: { id: number; email: string; firstName: string | null; role: string; tenantName: string };
}

/**
 * Signs a platform user in with email and password. Every refusal is the same 401, and an unknown email costs
 * the same scrypt work as a wrong password, so neither the answer nor its timing tells which emails exist. An
 * email in several accounts needs `tenantName` (400 naming it).
 */
export async function login(ctx: ServiceContext, input: { email: string; password: string; tenantName?: string | undefined }): Promise<LoginResult> {
  const email = normalizeEmail(input.email);
  const candidates = await findLoginCandidates(ctx.db, email, input.tenantName);
  if (candidates.length > 1) {
    throw new AppError('invalid_body', 'this email belongs to users of several accounts: send tenantName too', 'tenantName');
  }
  const user = candidates[0];
  decoyDigest ??= hashPassword(randomBytes(16).toString('hex'));
  const digest = user?.passwordDigest ?? (await decoyDigest);
  const matches = await verifyPassword(input.password, digest);
  if (!user || user.passwordDigest === null || !matches) {
    throw new AppError('unauthorized', 'email or password is wrong', 'password');
  }
  const now = ctx.now();
  const sessionId = CONSOLE_SESSION_PREFIX + toBase62(randomBytes(32));
  const expiresAt = isoTimestamp(new Date(now.getTime() + CONSOLE_SESSION_TTL_MS));
  await insertConsoleSession(ctx.db, { account_id: user.accountId, user_id: user.userId, digest: digestSecret(sessionId), created_at: isoTimestamp(now), expires_at: expiresAt });
  return { sessionId, expiresAt, user: { id: user.userId, email: user.email, firstName: user.firstName, role: user.role, tenantName: user.tenantName } };
}

/** Ends a console session (idempotent: an unknown or ended one is fine). */
export async function logout(ctx: ServiceContext, sessionId: string | undefined): Promise<void> {
  if (sessionId === undefined || !sessionId.startsWith(CONSOLE_SESSION_PREFIX)) return;
  await revokeConsoleSession(ctx.db, digestSecret(sessionId), isoTimestamp(ctx.now()));
}

/** Who is calling (`GET /api/v1/me`): the user, their account, and how they are signed in, never the credential itself. */
export interface Me {
  user: { id: number; email: string; firstName: string | null; role: UserRole };
  account: { id: number; tenantName: string };
  signedInWith: 'console' | 'api-key';
}

/**
 * `GET /api/v1/me`: the caller as the database has them now (a first name changed since sign-in shows), for the
 * console's top bar. A user deleted since their credential was read is a 401, as their next request would be.
 */
export async function whoAmI(ctx: ServiceContext, principal: PlatformUserPrincipal): Promise<Me> {
  const [user, tenantName] = await Promise.all([findUser(ctx.db, principal.accountId, principal.userId), findTenantName(ctx.db, principal.accountId)]);
  if (user === undefined) throw new AppError('unauthorized', 'the user of this credential no longer exists', 'Authorization');
  return {
    user: { id: user.id, email: user.email, firstName: user.first_name, role: user.role },
    account: { id: principal.accountId, tenantName },
    signedInWith: principal.via,
  };
}
