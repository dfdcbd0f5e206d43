import { describe, expect, it } from 'vitest';
import { translator } from '../i18n.js';
import { ApiError } from '../session.js';
import { describeChatFailure } from './chatFailures.js';

describe('a failed question, as the chat shows it', () => {
  const de = translator('de-DE');

  it('is a sentence in the viewer\'s language with svc\'s code, never svc\'s English message', () => {
    const failure = describeChatFailure(new ApiError(502, 'bad_gateway', 'the AI endpoint answered 500'), de);
    expect(failure).toEqual({ text: 'Der KI-Dienst hat nicht richtig geantwortet. Versuchen Sie es später erneut.', code: 'bad_gateway' });
    expect(JSON.stringify(failure)).not.toMatch(/endpoint|answered/);
  });

  it('says which kind of failure it was: not set up, not allowed, too many, the model, a question svc cannot run, anything else', () => {
    const text = (error: unknown) => describeChatFailure(error, de).text;
    expect(text(new ApiError(503, 'service_unavailable', 'questions in plain language are not set up'))).toBe('Fragen in natürlicher Sprache sind auf diesem svc-Server nicht eingerichtet.');
    expect(text(new ApiError(403, 'forbidden', 'this session was minted with settings.allowAi false'))).toBe('Fragen in natürlicher Sprache sind für Sie hier nicht freigegeben.');
    expect(text(new ApiError(429, 'rate_limited', 'slow down'))).toBe('Zu viele Fragen auf einmal. Warten Sie einen Moment.');
    expect(text(new ApiError(504, 'gateway_timeout', 'the AI endpoint took too long'))).toBe('Der KI-Dienst hat nicht richtig geantwortet. Versuchen Sie es später erneut.');
    expect(text(new ApiError(400, 'invalid_query', 'the AI asked for a query svc cannot run'))).toBe('Aus dieser Frage ließ sich keine Abfrage machen. Versuchen Sie es mit anderen Worten.');
    expect(describeChatFailure(new TypeError('Failed to fetch'), de)).toEqual({ text: 'Die Frage konnte nicht beantwortet werden.' });
  });
});
