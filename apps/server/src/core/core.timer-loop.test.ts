import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../test/eventually.js';
import { TimerLoop } from './core.timer-loop.js';
import type { TimerLoopOptions } from './core.timer-loop.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** An interval no test waits for: whatever runs sooner was woken. */
const NEVER_MS = 60_000;

/** A promise and the function that settles it, for a run that lasts until the test lets it end. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('the timer loop (core.timer-loop.ts: the webhook dispatcher, the comment stream hub)', () => {
  const loops: TimerLoop[] = [];
  const loopOf = (options: TimerLoopOptions) => {
    const loop = new TimerLoop(options);
    loops.push(loop);
    return loop;
  };
  afterEach(async () => {
    await Promise.all(loops.splice(0).map((loop) => loop.stop()));
  });

  it('runs every interval once started, and never before', async () => {
    let runs = 0;
    const loop = loopOf({ intervalMs: 20, run: () => void runs++, onError: () => undefined });
    loop.wake();
    await sleep(100);
    expect(runs).toBe(0);
    loop.start();
    loop.start();
    expect(await eventually(() => runs >= 4, 2000)).toBe(true);
  });

  it('runs at once when woken, without waiting for the interval', async () => {
    let runs = 0;
    const loop = loopOf({ intervalMs: NEVER_MS, run: () => void runs++, onError: () => undefined });
    loop.start();
    const woken = Date.now();
    loop.wake();
    expect(runs).toBe(1);
    loop.wake();
    expect(await eventually(() => runs === 2, 1000)).toBe(true);
    expect(Date.now() - woken).toBeLessThan(1000);
  });

  it('never overlaps runs: wake-ups during a run make one more run after it, however many came', async () => {
    let runs = 0;
    let inRun = 0;
    let mostAtOnce = 0;
    const gates = [gate(), gate()];
    const loop = loopOf({
      intervalMs: NEVER_MS,
      run: async () => {
        const mine = gates[runs++];
        inRun++;
        mostAtOnce = Math.max(mostAtOnce, inRun);
        await mine?.opened;
        inRun--;
      },
      onError: () => undefined,
    });
    loop.start();
    loop.wake();
    for (let i = 0; i < 5; i++) loop.wake();
    await sleep(50);
    expect(runs).toBe(1);
    gates[0]!.open();
    expect(await eventually(() => runs === 2, 1000)).toBe(true);
    gates[1]!.open();
    await sleep(50);
    expect(runs).toBe(2);
    expect(mostAtOnce).toBe(1);
  });

  it('hands a run that throws or rejects to onError, and goes on running', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const loop = loopOf({
      intervalMs: 20,
      run: () => {
        runs++;
        if (runs === 1) throw new Error('thrown');
        if (runs === 2) return Promise.reject(new Error('rejected'));
        return undefined;
      },
      onError: (error) => errors.push(error),
    });
    loop.start();
    loop.wake();
    expect(await eventually(() => runs >= 3, 2000)).toBe(true);
    expect(errors.map((error) => (error as Error).message)).toEqual(['thrown', 'rejected']);
  });

  it('stops: waits for the run under way, then runs no more, neither by tick nor by wake-up', async () => {
    let runs = 0;
    let finished = 0;
    const running = gate();
    const loop = loopOf({
      intervalMs: 20,
      run: async () => {
        runs++;
        await running.opened;
        finished++;
      },
      onError: () => undefined,
    });
    loop.start();
    loop.wake();
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await sleep(50);
    expect(stopped).toBe(false);
    running.open();
    await stopping;
    expect(finished).toBe(1);
    loop.wake();
    loop.start();
    await sleep(100);
    expect(runs).toBe(1);
  });

  it('keeps no process alive: its timer is unref\'d', () => {
    const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
    const before = timers();
    loopOf({ intervalMs: 1000, run: () => undefined, onError: () => undefined }).start();
    expect(timers()).toBe(before);
    // The check bites: a timer that is not unref'd counts.
    const held = setInterval(() => undefined, 1000);
    expect(timers()).toBe(before + 1);
    clearInterval(held);
  });
});
