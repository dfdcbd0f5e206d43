import { describe, expect, it } from 'vitest';
import { Sealer, UnsealError } from './core.sealed.js';

const KEY_A = 'a-first-key-of-at-least-32-bytes-long-0001';
const KEY_B = 'a-second-key-of-at-least-32-bytes-long-0002';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('sealed values (SVC_ENCRYPTION_KEY)', () => {
  it('seals with AES-256-GCM: the stored text holds no trace of the value, differs each time, and opens to it', () => {
    const sealer = new Sealer([KEY_A]);
    const once = sealer.seal(SECRET);
    const twice = sealer.seal(SECRET);
    expect(once).toMatch(/^svc-sealed:v1:[0-9a-f]{8}:[\w-]{16}:[\w-]+:[\w-]{22}$/);
    expect(once).not.toContain('MfKQ9r8');
    expect(once).not.toBe(twice);
    expect(sealer.open(once)).toBe(SECRET);
    expect(sealer.open(twice)).toBe(SECRET);
    expect(sealer.isSealing).toBe(true);
  });

  it('without a key stores values as they are, opens plaintext, and names the missing key for a sealed one', () => {
    const none = new Sealer([]);
    expect(none.isSealing).toBe(false);
    expect(none.seal(SECRET)).toBe(SECRET);
    expect(none.open(SECRET)).toBe(SECRET);
    expect(none.needsResealing(SECRET)).toBe(false);
    const sealed = new Sealer([KEY_A]).seal(SECRET);
    expect(() => none.open(sealed)).toThrow(UnsealError);
    expect(() => none.open(sealed)).toThrow(/SVC_ENCRYPTION_KEY is not set/);
  });

  it('opens values stored before the key was set, and marks them for resealing', () => {
    const sealer = new Sealer([KEY_A]);
    expect(sealer.open(SECRET)).toBe(SECRET);
    expect(sealer.needsResealing(SECRET)).toBe(true);
    expect(sealer.needsResealing(sealer.seal(SECRET))).toBe(false);
  });

  it('changes keys: the first key seals, every listed key opens, and values under an older key need resealing', () => {
    const old = new Sealer([KEY_A]).seal(SECRET);
    const rotating = new Sealer([KEY_B, KEY_A]);
    expect(rotating.open(old)).toBe(SECRET);
    expect(rotating.needsResealing(old)).toBe(true);
    const resealed = rotating.seal(rotating.open(old));
    expect(rotating.needsResealing(resealed)).toBe(false);
    expect(new Sealer([KEY_B]).open(resealed)).toBe(SECRET);
    // Once KEY_A is dropped, a value still under it is named, not mistaken.
    expect(() => new Sealer([KEY_B]).open(old)).toThrow(/does not list/);
  });

  it('refuses a damaged value rather than answering garbage', () => {
    const sealer = new Sealer([KEY_A]);
    const sealed = sealer.seal(SECRET);
    const parts = sealed.split(':');
    const body = Buffer.from(parts[4]!, 'base64url');
    body[0] = body[0]! ^ 1;
    parts[4] = body.toString('base64url');
    expect(() => sealer.open(parts.join(':'))).toThrow(/damaged/);
    expect(() => sealer.open(`${parts.slice(0, 4).join(':')}`)).toThrow(UnsealError);
  });
});
