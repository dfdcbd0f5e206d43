import { describe, expect, it } from 'vitest';
import { AfterCommit, EventBus } from './core.events.js';

interface TestEvents {
  'comment.created': { commentId: number };
  'thread.resolved': { threadId: number };
}

describe('the domain event bus (core.events.ts)', () => {
  it('runs the handlers of the published type only, one after another in the order they subscribed, before publish returns', async () => {
    const events = new EventBus<TestEvents>();
    const log: string[] = [];
    events.subscribe('comment.created', async (event) => {
      log.push(`first starts ${event.commentId}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      log.push('first ends');
    });
    events.subscribe('comment.created', (event) => void log.push(`second ${event.commentId}`));
    events.subscribe('thread.resolved', () => void log.push('other type'));
    await events.publish('comment.created', { commentId: 7 });
    expect(log).toEqual(['first starts 7', 'first ends', 'second 7']);
    await events.publish('thread.resolved', { threadId: 1 });
    expect(log.at(-1)).toBe('other type');
  });

  it('fails the publish with a handler\'s error, and runs no later handler of it', async () => {
    const events = new EventBus<TestEvents>();
    const log: string[] = [];
    events.subscribe('comment.created', () => {
      throw new Error('the outbox could not be written');
    });
    events.subscribe('comment.created', () => void log.push('after the failure'));
    await expect(events.publish('comment.created', { commentId: 1 })).rejects.toThrow('the outbox could not be written');
    expect(log).toEqual([]);
  });

  it('publishes to nobody without a word, and stops calling a handler once it unsubscribed', async () => {
    const events = new EventBus<TestEvents>();
    await events.publish('thread.resolved', { threadId: 1 });
    const seen: number[] = [];
    const unsubscribe = events.subscribe('thread.resolved', (event) => void seen.push(event.threadId));
    await events.publish('thread.resolved', { threadId: 2 });
    unsubscribe();
    await events.publish('thread.resolved', { threadId: 3 });
    expect(seen).toEqual([2]);
  });

  it('runs what a handler asked for after the commit only when the publisher runs it, each callback once', () => {
    const afterCommit = new AfterCommit();
    let wakeUps = 0;
    const wake = () => void wakeUps++;
    afterCommit.add(wake);
    afterCommit.add(wake);
    expect(wakeUps).toBe(0);
    afterCommit.run();
    expect(wakeUps).toBe(1);
    afterCommit.run();
    expect(wakeUps).toBe(1);
  });
});
