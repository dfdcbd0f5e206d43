import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/** What a sealed value starts with; anything else is a value stored before a key was set (plaintext). */
const PREFIX = 'svc-sealed:v1:';
/** The shortest key svc accepts, in bytes of its UTF-8 text. */
export const MIN_KEY_BYTES = 32;

interface Key {
  /** A short public name of the key (an HMAC of it), stored with each value so that a wrong key is named as such. */
  id: string;
  bytes: Buffer;
}

function deriveKey(text: string): Key {
  const bytes = Buffer.from(hkdfSync('sha256', Buffer.from(text, 'utf8'), Buffer.from('svc'), Buffer.from('svc sealed values v1'), 32));
  return { id: createHmac('sha256', bytes).update('key id').digest('hex').slice(0, 8), bytes };
}

/** Why a sealed value cannot be opened: no key, or not the key it was sealed with. */
export class UnsealError extends Error {
  override name = 'UnsealError';
}

/**
 * Secrets svc must use again (webhook signing secrets, deployments' data sources), sealed at rest with AES-256-GCM under `SVC_ENCRYPTION_KEY`
 * (docs/operations.md "Secrets at rest"), as Metabase's MB_ENCRYPTION_SECRET_KEY does for connection details.
 * `keys` is the setting split at commas: the first seals, every one opens, so a key can be changed by putting the new
 * one first and resealing (`needsResealing`). Without a key, values are stored as they are, and sealed ones cannot be
 * opened (UnsealError says which key is missing).
 *
 * @example
 * const sealer = new Sealer(['a passphrase of at least 32 bytes ....']);
 * const stored = sealer.seal('whsec_...');
 * sealer.open(stored); // 'whsec_...'
 */
export class Sealer {
  readonly #keys: Key[];

  constructor(keys: readonly string[]) {
    this.#keys = keys.map(deriveKey);
  }

  /** Whether new values are sealed (a key is set). */
  get isSealing(): boolean {
    return this.#keys.length > 0;
  }

  /** The value as it is to be stored: sealed with the first key, or as it is without one. */
  seal(value: string): string {
    const key = this.#keys[0];
    if (key === undefined) return value;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key.bytes, iv);
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return `${PREFIX}${key.id}:${iv.toString('base64url')}:${sealed.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}`;
  }

  /** The value a stored one holds; throws UnsealError when it was sealed with a key svc does not have. */
  open(stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    const [id, iv, sealed, tag] = stored.slice(PREFIX.length).split(':');
    const key = this.#keys.find((candidate) => candidate.id === id);
    if (key === undefined) {
      throw new UnsealError(this.#keys.length === 0
        ? `sealed with an encryption key (id ${id}), and SVC_ENCRYPTION_KEY is not set`
        : `sealed with an encryption key (id ${id}) that SVC_ENCRYPTION_KEY does not list (it has ${this.#keys.map((k) => k.id).join(', ')})`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv ?? '', 'base64url'));
      decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(sealed ?? '', 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new UnsealError(`a sealed value (key id ${id}) is damaged: it does not open with its key`);
    }
  }

  /** Whether a stored value should be written again: stored as it was before a key was set, or under an older key. */
  needsResealing(stored: string): boolean {
    const key = this.#keys[0];
    if (key === undefined) return false;
    return !stored.startsWith(`${PREFIX}${key.id}:`);
  }
}
