import { describe, expect, it } from 'vitest';
import { languageOf, translator } from './i18n.js';
import type { MessageKey } from './i18n.js';

/** Every word of the chat surface and the AI widget (chat/ChatPanel.tsx, chat/chatFailures.ts). */
const CHAT_KEYS: MessageKey[] = [
  'chatTitle', 'chatUnavailable', 'askTitle', 'ask', 'askPlaceholder', 'thinking',
  'chatFailed', 'chatForbidden', 'chatNotUnderstood', 'chatModelFailed', 'chatBusy', 'errorCode',
];

describe('the embed\'s languages', () => {
  it.each(['de-DE', 'fr-FR', 'es-ES', 'pt-BR'])('translate every string of the chat in %s (issue 31: de-DE showed the chat in English)', (locale) => {
    expect(languageOf(locale)).not.toBe('en');
    const t = translator(locale);
    const english = translator('en-US');
    const untranslated = CHAT_KEYS.filter((key) => t(key, { code: 'x' }) === english(key, { code: 'x' }));
    expect(untranslated).toEqual([]);
  });

  it('fills placeholders', () => {
    expect(translator('de-DE')('errorCode', { code: 'bad_gateway' })).toBe('Fehlercode: bad_gateway');
  });
});
