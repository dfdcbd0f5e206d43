import { randomBytes } from 'node:crypto';

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
