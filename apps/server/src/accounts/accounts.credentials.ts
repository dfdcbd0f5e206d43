import type { ServiceContext } from '../db/db.context.js';
import { isoTimestamp } from '../core/core.time.js';
import { digestSecret } from '../core/core.digest.js';
import { ANONYMOUS } from '../core/core.principal.js';
import type { PlatformUserPrincipal, Principal } from '../core/core.principal.js';
import { AccountCache } from '../db/db.account-cache.js';
import type { ChangeFeed } from '../db/db.database.js';
import { CONSOLE_SESSION_PREFIX } from './accounts.console.js';
import { API_KEY_PREFIX } from './accounts.keys.js';
import { findConsoleSession, findPlatformUserByKeyDigest } from './accounts.store.js';
import type { ConsoleSession } from './accounts.store.js';

/**
 * Resolves the credentials accounts issue, API keys and console session cookies, into platform users (app.ts
 * hands them to http/auth). A principal resolved before is served from memory, without a promise, while the
 * database's change feed says nothing of its account changed (`maxEntries` 0: never). A credential that does not
 * resolve is anonymous.
 *
 * @example
 * const credentials = new AccountCredentials(ctx, db.changes, 10_000);
 * const principal = await credentials.resolveApiKey('svc_3kTMd…');
 */
export class AccountCredentials {
  #ctx: ServiceContext;
  #apiKeys: AccountCache<PlatformUserPrincipal>;
  #consoleSessions: AccountCache<ConsoleSession>;

  constructor(ctx: ServiceContext, feed: ChangeFeed, maxEntries: number) {
    this.#ctx = ctx;
    this.#apiKeys = new AccountCache<PlatformUserPrincipal>(feed, maxEntries);
    this.#consoleSessions = new AccountCache<ConsoleSession>(feed, maxEntries);
  }

  /** Whether a credential has an API key's form (`svc_...`); anything else after `Bearer` is an embed token. */
  isApiKey(credential: string): boolean {
    return credential.startsWith(API_KEY_PREFIX);
  }

  resolveApiKey(key: string): Principal | Promise<Principal> {
    const digest = digestSecret(key);
    return this.#apiKeys.held(digest) ?? orAnonymous(this.#apiKeys.resolve(digest, () => findPlatformUserByKeyDigest(this.#ctx.db, digest)));
  }

  resolveConsoleSession(cookie: string): Principal | Promise<Principal> {
    return cookie.startsWith(CONSOLE_SESSION_PREFIX) ? this.#resolveConsoleSession(digestSecret(cookie)) : ANONYMOUS;
  }

  async #resolveConsoleSession(digest: string): Promise<Principal> {
    const session = await this.#consoleSessions.resolve(digest, () => findConsoleSession(this.#ctx.db, digest));
    // Checked on every request, so that a session held in memory still ends at its expiry.
    return session !== undefined && session.expiresAt > isoTimestamp(this.#ctx.now()) ? session.principal : ANONYMOUS;
  }
}

async function orAnonymous(principal: Promise<Principal | undefined>): Promise<Principal> {
  return (await principal) ?? ANONYMOUS;
}
