import { describe, expect, it } from 'vitest';
import { bodyLength, canSendBody, MAX_BODY_CHARACTERS } from './bodyLimits.js';

describe('body limits (SPEC Limits: 1 to 10,000 characters)', () => {
  it('counts code points as the server does', () => {
    expect(bodyLength('😀')).toBe(1);
    expect(canSendBody('😀'.repeat(MAX_BODY_CHARACTERS))).toBe(true);
    expect(canSendBody('x'.repeat(MAX_BODY_CHARACTERS + 1))).toBe(false);
  });

  it('does not send a blank body', () => {
    expect(canSendBody('')).toBe(false);
    expect(canSendBody(' \n\t')).toBe(false);
    expect(canSendBody(' a ')).toBe(true);
  });
});
