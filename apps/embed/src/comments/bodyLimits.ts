/** SPEC Limits: a comment body is 1 to 10,000 characters, counted in Unicode code points like the server. */
export const MAX_BODY_CHARACTERS = 10_000;

/** From this length on, the composer shows how many characters are used. */
export const COUNTER_FROM = 9_000;

/** A body's length as the server counts it (code points, so an emoji is one character). */
export function bodyLength(body: string): number {
  let count = 0;
  for (const _ of body) count++;
  return count;
}

/**
 * Whether a body may be sent: not blank (the server would take whitespace, but a blank comment is a slip) and
 * not over the limit.
 *
 * @example
 * canSendBody('  '); // false
 * canSendBody('Looks good'); // true
 */
export function canSendBody(body: string): boolean {
  return body.trim() !== '' && bodyLength(body) <= MAX_BODY_CHARACTERS;
}
