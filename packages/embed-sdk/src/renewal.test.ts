import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SvcEmbedError } from './errors.js';
import { RENEWAL_BACKOFF_MS, SessionRenewal } from './renewal.js';

/** SPEC "set-session" rules on the host side, driven with fake timers. */
describe('session renewal', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup(answers: Array<'ok' | 'refused'>) {
    const minted: string[] = [];
    const sent: string[] = [];
    const failures: SvcEmbedError[] = [];
    let n = 0;
    const renewal = new SessionRenewal({
      getSessionId: async () => {
        const id = `ses_${++n}`;
        minted.push(id);
        return id;
      },
      sendSession: async (id) => {
        sent.push(id);
        const answer = answers.shift() ?? 'ok';
        if (answer === 'refused') throw new Error('EmbedSessionExchangeError');
      },
      onFailed: (error) => failures.push(error),
    });
    return { renewal, minted, sent, failures };
  }

  it('renews once when session-expiring is followed by session-expired', async () => {
    const { renewal, minted, sent } = setup(['ok']);
    renewal.onLapse(Date.now() + 30 * 60_000);
    renewal.onLapse(Date.now());
    await vi.runAllTimersAsync();
    expect(minted).toEqual(['ses_1']);
    expect(sent).toEqual(['ses_1']);
  });

  it('renews once when session-expired comes first and a late session-expiring follows', async () => {
    const { renewal, sent } = setup(['ok']);
    const lapsedAt = Date.now() - 1000;
    renewal.onLapse(Date.now());
    await vi.runAllTimersAsync();
    vi.advanceTimersByTime(5000);
    renewal.onLapse(lapsedAt);
    await vi.runAllTimersAsync();
    expect(sent).toEqual(['ses_1']);
  });

  it('renews again for the next session, with a fresh id', async () => {
    const { renewal, sent } = setup(['ok', 'ok']);
    renewal.onLapse(Date.now() + 1000);
    await vi.runAllTimersAsync();
    vi.advanceTimersByTime(23 * 3_600_000);
    renewal.onLapse(Date.now() + 30 * 60_000);
    await vi.runAllTimersAsync();
    expect(sent).toEqual(['ses_1', 'ses_2']);
  });

  it('retries a refused id after backoff with a fresh id, then succeeds', async () => {
    const { renewal, sent, failures } = setup(['refused', 'refused', 'ok']);
    renewal.onLapse(Date.now());
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual(['ses_1']);
    await vi.advanceTimersByTimeAsync(RENEWAL_BACKOFF_MS[0]! - 1);
    expect(sent).toEqual(['ses_1']);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toEqual(['ses_1', 'ses_2']);
    await vi.advanceTimersByTimeAsync(RENEWAL_BACKOFF_MS[1]!);
    expect(sent).toEqual(['ses_1', 'ses_2', 'ses_3']);
    expect(failures).toEqual([]);
    expect(renewal.renewing).toBe(false);
  });

  it('reports renewal-failed once when every attempt is refused', async () => {
    const { renewal, sent, failures } = setup(['refused', 'refused', 'refused', 'refused', 'refused']);
    renewal.onLapse(Date.now());
    await vi.runAllTimersAsync();
    expect(sent).toHaveLength(RENEWAL_BACKOFF_MS.length + 1);
    expect(new Set(sent).size).toBe(sent.length);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(SvcEmbedError);
    expect(failures[0]!.code).toBe('renewal-failed');
  });

  it('does nothing more once stopped', async () => {
    const { renewal, sent } = setup(['refused', 'ok']);
    renewal.onLapse(Date.now());
    await vi.advanceTimersByTimeAsync(0);
    renewal.stop();
    await vi.runAllTimersAsync();
    expect(sent).toEqual(['ses_1']);
  });
});
