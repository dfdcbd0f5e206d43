/**
 * Lifetimes of embed credentials (DESIGN "Lifetimes come from configuration"). The effective end of a token and
 * the expiring warning are derived from the token lifetime in SPEC's proportions: with the default 24 h, the
 * token is usable for about 23 h (the last 1/24 is held back, so that the embed warns and renews before any
 * clock skew between host, browser and server bites) and the warning comes 30 min (1/48) before the effective end.
 */
export interface EmbedLifetimes {
  /** How long a minted session id can be redeemed (default 5 min). */
  sessionTtlMs: number;
  /** Nominal lifetime of an embed token (default 24 h). */
  tokenTtlMs: number;
}

/** The defaults of SVC_EMBED_SESSION_TTL_MS and SVC_EMBED_TOKEN_TTL_MS (core.config.ts). */
export const DEFAULT_EMBED_LIFETIMES: EmbedLifetimes = { sessionTtlMs: 5 * 60_000, tokenTtlMs: 24 * 3_600_000 };

/** When a token issued at `issuedAtMs` nominally expires, stops being usable, and should warn (epoch ms). */
export function tokenTimeline(lifetimes: EmbedLifetimes, issuedAtMs: number): { expiresAt: number; effectiveEnd: number; warnAt: number } {
  const expiresAt = issuedAtMs + lifetimes.tokenTtlMs;
  const effectiveEnd = expiresAt - Math.round(lifetimes.tokenTtlMs / 24);
  const warnAt = effectiveEnd - Math.round(lifetimes.tokenTtlMs / 48);
  return { expiresAt, effectiveEnd, warnAt };
}
