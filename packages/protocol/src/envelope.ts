import type { ActionPayloads, ActionType, EventPayloads, EventType, Surface } from './catalog.js';

/** Every message's `source` (SPEC "Message envelope"). */
export const SOURCE = 'svc-embed';

/** An event as it travels, embed to host: `surface` is always present. */
export type EventMessage<T extends EventType = EventType> = {
  [K in T]: { source: typeof SOURCE; direction: 'event'; type: K; payload: EventPayloads[K]; timestamp: number; surface: Surface };
}[T];

/**
 * An action as it travels, host to embed: never a `surface`. `requestId` (svc's extension) asks the embed for an
 * `svc:event:action-result`.
 */
export type ActionMessage<T extends ActionType = ActionType> = {
  [K in T]: { source: typeof SOURCE; direction: 'action'; type: K; payload: ActionPayloads[K]; timestamp: number; requestId?: string };
}[T];

export type Message = EventMessage | ActionMessage;

/**
 * An event ready to post, stamped with `source`, `direction`, `timestamp` and `surface`.
 *
 * @example
 * window.parent.postMessage(createEvent('svc:event:navigate', { path: '/d/1' }, 'dashboard'), hostOrigin);
 */
export function createEvent<T extends EventType>(type: T, payload: EventPayloads[T], surface: Surface, now: number = Date.now()): EventMessage<T> {
  return { source: SOURCE, direction: 'event', type, payload, timestamp: now, surface } as EventMessage<T>;
}

/**
 * An action ready to post, stamped with `source`, `direction` and `timestamp` (never a surface).
 *
 * @example
 * iframe.contentWindow.postMessage(createAction('svc:action:refresh', {}), tenantOrigin);
 */
export function createAction<T extends ActionType>(type: T, payload: ActionPayloads[T], requestId?: string, now: number = Date.now()): ActionMessage<T> {
  return { source: SOURCE, direction: 'action', type, payload, timestamp: now, ...(requestId !== undefined && { requestId }) } as ActionMessage<T>;
}
