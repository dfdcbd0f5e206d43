import { hash } from 'node:crypto';

/**
 * SHA-256 digest of a secret (API key, session id, console cookie, metrics token). Secrets are looked up by digest,
 * so the comparison that finds them is an index lookup of a hash, never a character-by-character compare of the
 * secret itself.
 *
 * @example
 * const digest = digestSecret('svc_3kTMd…'); // 64 hex characters
 */
export function digestSecret(secret: string): string {
  // The one-shot hash (a third of createHash's cost): every API request digests its credential.
  return hash('sha256', secret, 'hex');
}
