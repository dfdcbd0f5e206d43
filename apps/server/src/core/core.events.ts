/** A handler of one event type: it may write, with the transaction its event carries, before the publish returns. */
export type EventHandler<Event> = (event: Event) => void | Promise<void>;

/** What a feature publishes its events with (a feature sees only this side of the bus). */
export interface EventPublisher<Events extends object> {
  publish<Type extends keyof Events>(type: Type, event: Events[Type]): Promise<void>;
}

/**
 * A typed bus of domain events (DESIGN: core/ holds the events): a feature publishes what happened, and the rooms
 * that act on it subscribe, so the publisher imports none of them (webhooks/ writes its outbox so). `publish` runs
 * the type's handlers one after another, in the order they subscribed, and returns when the last is done. So a
 * handler that writes with the transaction its event carries writes inside the publisher's transaction: the write
 * commits or rolls back with the change. A handler that throws fails the publish, and so rolls the change back:
 * nothing is lost without a word.
 *
 * @example
 * const events = new EventBus<{ 'comment.created': { commentId: number } }>();
 * const unsubscribe = events.subscribe('comment.created', async (event) => { await record(event.commentId); });
 * await events.publish('comment.created', { commentId: 7 });
 */
export class EventBus<Events extends object> implements EventPublisher<Events> {
  readonly #handlers = new Map<keyof Events, Array<EventHandler<never>>>();

  /** Adds a handler of `type`; returns what removes it. */
  subscribe<Type extends keyof Events>(type: Type, handler: EventHandler<Events[Type]>): () => void {
    const handlers = [...(this.#handlers.get(type) ?? []), handler as EventHandler<never>];
    this.#handlers.set(type, handlers);
    return () => {
      this.#handlers.set(type, (this.#handlers.get(type) ?? []).filter((held) => held !== handler));
    };
  }

  async publish<Type extends keyof Events>(type: Type, event: Events[Type]): Promise<void> {
    // The handlers when the publish began: one that subscribes or leaves meanwhile does not change this one.
    for (const handler of this.#handlers.get(type) ?? []) await (handler as EventHandler<Events[Type]>)(event);
  }
}

/**
 * What an event's handlers ask to run once the publisher's transaction has committed: a wake-up for what they
 * wrote, which would find nothing before the commit. The publisher calls `run()` after its transaction commits, and
 * drops it when the transaction rolls back. The same callback added twice runs once.
 *
 * @example
 * const afterCommit = new AfterCommit();
 * await db.transaction().execute(async (trx) => {
 *   await insertComment(trx, scope, values);
 *   await events.publish('comment.created', { transaction: trx, afterCommit, ... });
 * });
 * afterCommit.run();
 */
export class AfterCommit {
  readonly #callbacks = new Set<() => void>();

  add(callback: () => void): void {
    this.#callbacks.add(callback);
  }

  /** Runs each callback added, once; later calls run nothing more. */
  run(): void {
    const callbacks = [...this.#callbacks];
    this.#callbacks.clear();
    for (const callback of callbacks) callback();
  }
}
