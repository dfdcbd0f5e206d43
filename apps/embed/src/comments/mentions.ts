/**
 * The `@` autocomplete's text work, kept pure so it is testable without a browser. A mention is plain text
 * (SPEC "Comment": the server parses no mentions); picking a user only writes `@username ` into the body.
 */

/** What the viewer is typing after an `@`: where the `@` is, and the letters after it up to the caret. */
export interface MentionQuery {
  /** Index of the `@` in the text. */
  start: number;
  /** The letters typed after the `@` (the search, possibly empty). */
  search: string;
}

// An `@` starts a mention at the start of the text or after whitespace or an opening bracket/quote, so an email
// address (`ann@a.test`) is not one. The search stays far below SPEC's 255-character limit on `search`.
const MENTION_BEFORE_CARET = /(?:^|[\s([{"'])@([\p{L}\p{N}._+-]{0,64})$/u;

/**
 * The mention being typed at `caret`, or null when the caret does not follow `@` and letters.
 *
 * @example
 * findMentionQuery('hi @ann', 7); // { start: 3, search: 'ann' }
 * findMentionQuery('ann@a.test', 10); // null
 */
export function findMentionQuery(text: string, caret: number): MentionQuery | null {
  const match = MENTION_BEFORE_CARET.exec(text.slice(0, caret));
  if (match === null) return null;
  const search = match[1] ?? '';
  return { start: caret - search.length - 1, search };
}

/**
 * The text with the mention at `query` (up to `caret`) replaced by `@username `, and where the caret goes.
 *
 * @example
 * insertMention('hi @an', { start: 3, search: 'an' }, 6, 'annika'); // { text: 'hi @annika ', caret: 11 }
 */
export function insertMention(text: string, query: MentionQuery, caret: number, username: string): { text: string; caret: number } {
  const inserted = `@${username} `;
  const before = text.slice(0, query.start);
  // A space already after the caret would make two.
  const after = text.slice(caret).replace(/^ /, '');
  return { text: before + inserted + after, caret: before.length + inserted.length };
}

/**
 * Splits a body into plain runs and mentions, for showing them. An `@word` is a mention only when `isMentionable`
 * knows the name (a mentionable user of the tenant; the server resolves names the same way, ignoring case), so an
 * `@be` that names nobody reads as the text it is, not as someone notified.
 *
 * @example
 * splitMentions('cc @ann and @be', (name) => name.toLowerCase() === 'ann');
 * // [{ text: 'cc ', isMention: false }, { text: '@ann', isMention: true }, { text: ' and @be', isMention: false }]
 */
export function splitMentions(body: string, isMentionable: (username: string) => boolean): Array<{ text: string; isMention: boolean }> {
  const parts: Array<{ text: string; isMention: boolean }> = [];
  const pattern = /(^|[\s([{"'])(@[\p{L}\p{N}._+-]*[\p{L}\p{N}_])/gu;
  let last = 0;
  for (const match of body.matchAll(pattern)) {
    const mention = match[2]!;
    if (!isMentionable(mention.slice(1))) continue;
    const at = match.index + (match[1] ?? '').length;
    if (at > last) parts.push({ text: body.slice(last, at), isMention: false });
    parts.push({ text: mention, isMention: true });
    last = at + mention.length;
  }
  if (last < body.length) parts.push({ text: body.slice(last), isMention: false });
  return parts;
}
