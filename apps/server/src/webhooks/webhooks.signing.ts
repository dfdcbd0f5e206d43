import { createHmac, randomBytes } from 'node:crypto';
import { toBase62 } from '../accounts/accounts.keys.js';

/** Standard Webhooks' secret prefix: `whsec_` + the key in base64. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

const SECRET_SHAPE = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
/** Key sizes svc accepts from a caller: 24 bytes (what it generates, as Svix does) to 64. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

/**
 * A new endpoint secret: `whsec_` + 24 random bytes in base64, the form every Standard Webhooks library reads.
 *
 * @example
 * generateWebhookSecret(); // 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
 */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(MIN_KEY_BYTES).toString('base64');
}

/** The HMAC key of a `whsec_` secret, or undefined when it is not one (bad base64, under 24 or over 64 bytes). */
export function webhookKeyOf(secret: string): Buffer | undefined {
  const match = SECRET_SHAPE.exec(secret);
  if (match === null || match[1]!.length % 4 !== 0) return undefined;
  const key = Buffer.from(match[1]!, 'base64');
  // Buffer.from drops what is not base64; a round trip proves nothing was dropped.
  if (key.toString('base64') !== match[1] || key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) return undefined;
  return key;
}

/**
 * The `webhook-signature` header of a message (Standard Webhooks, v1): `v1,` + base64 of HMAC-SHA256 over
 * `id.timestamp.body` with the secret's key. The timestamp is in whole seconds since the epoch.
 *
 * @example
 * signWebhook('whsec_…', 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W', 1674087231, '{"type":"comment.created",…}'); // 'v1,K5oZ…='
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = webhookKeyOf(secret);
  if (key === undefined) throw new Error('not a whsec_ secret');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** A new event id (`webhook-id`): `msg_` + 16 random bytes in base62; the same on every attempt and replay of the event. */
export function generateEventId(): string {
  return `msg_${toBase62(randomBytes(16))}`;
}
