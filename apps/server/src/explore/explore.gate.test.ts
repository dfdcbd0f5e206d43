import { describe, expect, it } from 'vitest';
import { AppError } from '../core/core.errors.js';
import { QUEUE_PER_SLOT, TenantGate } from './explore.gate.js';

/** A task that runs until `finish` is called. */
function held(): { task: () => Promise<string>; finish: (value: string) => void; started: () => boolean } {
  let finish: (value: string) => void = () => undefined;
  let started = false;
  const task = () => {
    started = true;
    return new Promise<string>((resolve) => { finish = resolve; });
  };
  return { task, finish: (value) => finish(value), started: () => started };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the explore gate: queries per embed tenant at once (issue 35, docs/explore.md "Limits")', () => {
  it('runs `concurrency` tasks of a key at once, the next in arrival order as each ends, other keys untouched', async () => {
    const gate = new TenantGate(2);
    const tasks = [held(), held(), held(), held()];
    const runs = tasks.map((t) => gate.run('a', t.task));
    const other = held();
    const otherRun = gate.run('b', other.task);
    await tick();
    expect(tasks.map((t) => t.started())).toEqual([true, true, false, false]);
    expect(other.started()).toBe(true);
    expect(gate.running('a')).toBe(2);
    tasks[1]!.finish('second');
    await tick();
    expect(tasks.map((t) => t.started())).toEqual([true, true, true, false]);
    expect(gate.running('a')).toBe(2);
    for (const [i, t] of tasks.entries()) t.finish(`task ${i}`);
    await tick();
    tasks[3]!.finish('fourth');
    expect(await Promise.all(runs)).toEqual(['task 0', 'second', 'task 2', 'fourth']);
    expect(gate.running('a')).toBe(0);
    other.finish('other');
    expect(await otherRun).toBe('other');
  });

  it('queues at most QUEUE_PER_SLOT per slot and refuses one more at once with a 429, a failed task freeing its slot', async () => {
    const gate = new TenantGate(1);
    const first = held();
    const running = gate.run('a', first.task);
    const waiting = Array.from({ length: QUEUE_PER_SLOT }, () => gate.run('a', async () => 'queued'));
    const refused = await gate.run('a', async () => 'never').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'too_many_requests', status: 429 });
    await tick();
    first.finish('first');
    expect(await running).toBe('first');
    expect(await Promise.all(waiting)).toEqual(Array(QUEUE_PER_SLOT).fill('queued'));
    await expect(gate.run('a', async () => { throw new Error('broken'); })).rejects.toThrow('broken');
    expect(gate.running('a')).toBe(0);
    expect(await gate.run('a', async () => 'again')).toBe('again');
  });
});
