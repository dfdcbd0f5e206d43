import type { ServiceContext } from '../db/db.context.js';
import { ANONYMOUS } from '../core/core.principal.js';
import type { EmbedPrincipal, Principal } from '../core/core.principal.js';
import { AccountCache } from '../db/db.account-cache.js';
import type { ChangeFeed } from '../db/db.database.js';
import { loadEmbedPrincipal } from './sessions.service.js';
import type { EmbedTokenClaims, TokenSigner } from './sessions.tokens.js';

/**
 * Embed tokens that verified, so that a token's signature is checked once per process rather than on
 * every request (an Ed25519 verification costs about as much as the rest of a small request). Only the signature
 * check is skipped: expiry is compared on every request, and revocation is the session cache's business.
 */
export class VerifiedTokens {
  #signer: TokenSigner;
  #maxEntries: number;
  #entries = new Map<string, EmbedTokenClaims>();

  constructor(signer: TokenSigner, maxEntries: number) {
    this.#signer = signer;
    this.#maxEntries = maxEntries;
  }

  /** The claims of a token that verified before and has not expired; undefined says nothing (verify() decides). */
  held(token: string, nowMs: number): EmbedTokenClaims | undefined {
    const held = this.#entries.get(token);
    return held !== undefined && held.exp * 1000 > nowMs ? held : undefined;
  }

  async verify(token: string, nowMs: number): Promise<EmbedTokenClaims | undefined> {
    // Keyed by the whole token (a forged token differs somewhere, so it never finds another's entry).
    const held = this.#entries.get(token);
    if (held !== undefined) return held.exp * 1000 > nowMs ? held : undefined;
    const claims = await this.#signer.verify(token, nowMs);
    if (claims !== undefined && this.#maxEntries > 0) {
      if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
      this.#entries.set(token, claims);
    }
    return claims;
  }
}

/**
 * Resolves embed tokens into their sessions' principals (app.ts hands this to http/auth). A token must verify
 * (pinned algorithm, issuer, audience, expiry) and its session must be neither revoked nor gone; a token and a
 * session held in memory resolve without a promise, the session while the change feed says nothing of its
 * account changed (`maxEntries` 0: never held). A token that does not resolve is anonymous.
 *
 * @example
 * const tokens = new EmbedTokenCredentials(ctx, signer, db.changes, 10_000);
 * const principal = await tokens.resolve(token);
 */
export class EmbedTokenCredentials {
  #ctx: ServiceContext;
  #verifiedTokens: VerifiedTokens;
  #embedSessions: AccountCache<EmbedPrincipal>;

  constructor(ctx: ServiceContext, signer: TokenSigner, feed: ChangeFeed, maxEntries: number) {
    this.#ctx = ctx;
    this.#verifiedTokens = new VerifiedTokens(signer, maxEntries);
    this.#embedSessions = new AccountCache<EmbedPrincipal>(feed, maxEntries);
  }

  resolve(token: string): Principal | Promise<Principal> {
    const nowMs = this.#ctx.now().getTime();
    const claims = this.#verifiedTokens.held(token, nowMs);
    const held = claims === undefined ? undefined : this.#embedSessions.held(sessionKeyOf(claims));
    return held ?? this.#resolve(token, nowMs);
  }

  async #resolve(token: string, nowMs: number): Promise<Principal> {
    const claims = await this.#verifiedTokens.verify(token, nowMs);
    if (claims === undefined) return ANONYMOUS;
    return (await this.#embedSessions.resolve(sessionKeyOf(claims), () => loadEmbedPrincipal(this.#ctx, claims))) ?? ANONYMOUS;
  }
}

const sessionKeyOf = (claims: EmbedTokenClaims) => `${claims.acc}:${claims.sid}`;
