import { hash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_PREFIX = 'svc_';

/** Encodes bytes as base62 (big-endian), the alphabet of API keys: safe in headers, URLs and shells. */
export function toBase62(bytes: Uint8Array): string {
  let value = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (value > 0n) {
    out = BASE62[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out || '0';
}

/**
 * A new API key: `svc_` + 32 random bytes in base62. Shown once; only its digest is stored.
 *
 * @example
 * const key = generateApiKey(); // 'svc_3kTMd…'
 */
export function generateApiKey(): string {
  return API_KEY_PREFIX + toBase62(randomBytes(32));
}

/**
 * SHA-256 digest of a secret (API key, session id). Secrets are looked up by digest, so the comparison that
 * finds them is an index lookup of a hash, never a character-by-character compare of the secret itself.
 */
export function digestSecret(secret: string): string {
  // The one-shot hash (a third of createHash's cost): every API request digests its credential.
  return hash('sha256', secret, 'hex');
}
