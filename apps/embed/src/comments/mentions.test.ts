import { describe, expect, it } from 'vitest';
import { findMentionQuery, insertMention, splitMentions } from './mentions.js';

describe('the @ mention query', () => {
  it('is the letters between an @ and the caret', () => {
    expect(findMentionQuery('hi @ann', 7)).toEqual({ start: 3, search: 'ann' });
    expect(findMentionQuery('@', 1)).toEqual({ start: 0, search: '' });
    expect(findMentionQuery('(@b.o_b-2', 9)).toEqual({ start: 1, search: 'b.o_b-2' });
  });

  it('only counts the text before the caret', () => {
    expect(findMentionQuery('hi @annika and more', 6)).toEqual({ start: 3, search: 'an' });
  });

  it('is none inside an email address, after a space, or away from the @', () => {
    expect(findMentionQuery('ann@a.test', 10)).toBeNull();
    expect(findMentionQuery('hi @ann ', 8)).toBeNull();
    expect(findMentionQuery('hi @ann', 2)).toBeNull();
  });
});

describe('inserting a mention', () => {
  it('replaces the typed letters with @username and a space, and puts the caret after it', () => {
    expect(insertMention('hi @an', { start: 3, search: 'an' }, 6, 'annika')).toEqual({ text: 'hi @annika ', caret: 11 });
  });

  it('keeps the text after the caret, without doubling a space', () => {
    expect(insertMention('hi @an there', { start: 3, search: 'an' }, 6, 'annika')).toEqual({ text: 'hi @annika there', caret: 11 });
  });
});

describe('showing mentions in a body', () => {
  const tenant = new Set(['ann', 'bert', 'b.o_b-2']);
  const isMentionable = (username: string) => tenant.has(username.toLowerCase());

  it('marks @names of mentionable users and leaves the rest as typed', () => {
    expect(splitMentions('cc @ann, mail ann@a.test', isMentionable)).toEqual([
      { text: 'cc ', isMention: false },
      { text: '@ann', isMention: true },
      { text: ', mail ann@a.test', isMention: false },
    ]);
  });

  it('marks an @word that names nobody as plain text: "@be" is not a mention when no user is called be', () => {
    expect(splitMentions('ask @be or @Bert', isMentionable)).toEqual([
      { text: 'ask @be or ', isMention: false },
      { text: '@Bert', isMention: true },
    ]);
    expect(splitMentions('@be', isMentionable)).toEqual([{ text: '@be', isMention: false }]);
  });

  it('ends a mention before trailing punctuation', () => {
    expect(splitMentions('@bert.', isMentionable)).toEqual([{ text: '@bert', isMention: true }, { text: '.', isMention: false }]);
    expect(splitMentions('(@b.o_b-2)', isMentionable)).toEqual([{ text: '(', isMention: false }, { text: '@b.o_b-2', isMention: true }, { text: ')', isMention: false }]);
  });
});
