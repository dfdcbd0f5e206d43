// Exploration in the embed (issue 35; docs/explore.md "From the host"), an entry of its own so that the main entry
// stays within its size budget (package.test.ts): `svc:action:explore` and the `chart-saved` and `view-saved` events.
import { createAction, isExploreEvent } from '@svc/protocol';
import type { ExploreEventPayloads, ExploreEventType } from '@svc/protocol';
import { embed } from './embed.js';
import type { EmbedHandle, EmbedOptions } from './embed.js';

/** Exploration's event names without their `svc:event:` prefix: `onExplore('chart-saved', ...)`. */
export type ExploreEventName = ExploreEventType extends `svc:event:${infer N}` ? N : never;
export type ExploreEventMap = { [N in ExploreEventName]: ExploreEventPayloads[`svc:event:${N}`] };

export interface ExploreOptions extends EmbedOptions {
  /**
   * Open the chart builder once the embed is ready: `true` blank, `{ widgetId }` from that CHART widget's query. The
   * session's settings.explore must be `create` (else the embed answers an `error`, context `explore`).
   */
  explore?: boolean | { widgetId?: string };
}

export interface ExploreHandle extends EmbedHandle {
  /** Sends `svc:action:explore`: the builder opens, blank or from the CHART widget `widgetId`. */
  explore(widgetId?: string): void;
  /** Listens for `chart-saved` or `view-saved`; returns the function that stops. */
  onExplore<N extends ExploreEventName>(name: N, handler: (payload: ExploreEventMap[N]) => void): () => void;
}

/**
 * `embed()` with exploration: the `explore` option, `handle.explore()`, and the events of charts and views the
 * viewer saves. Events come only from this embed's frame and origin, checked by the protocol's guard.
 *
 * @example
 * import { embedExplore } from '@svc/embed-sdk/explore';
 * const handle = embedExplore({ container, baseUrl, surface: 'dashboard', publicId: 'sales-performance', getSessionId, explore: true });
 * handle.onExplore('chart-saved', ({ chartId, title }) => console.log('saved', chartId, title));
 */
export function embedExplore(options: ExploreOptions): ExploreHandle {
  const { explore: start, ...rest } = options;
  const handle = embed(rest);
  const origin = new URL(options.baseUrl).origin;
  const handlers = new Map<string, Set<(payload: never) => void>>();
  const onMessage = (event: MessageEvent) => {
    const frame = handle.iframe?.contentWindow;
    if (!frame || event.source !== frame || event.origin !== origin || !isExploreEvent(event.data)) return;
    for (const handler of [...(handlers.get(event.data.type.slice(10)) ?? [])]) (handler as (payload: unknown) => void)(event.data.payload);
  };
  addEventListener('message', onMessage);
  // Once `ready` came: the frame is there and listening.
  const send = (widgetId?: string) => void handle.ready.then(() => handle.iframe?.contentWindow?.postMessage(createAction('svc:action:explore', widgetId !== undefined ? { widgetId } : {}), origin), () => undefined);
  if (start) send(typeof start === 'object' ? start.widgetId : undefined);
  const destroy = handle.destroy.bind(handle);
  return Object.assign(handle, {
    explore: send,
    onExplore<N extends ExploreEventName>(name: N, handler: (payload: ExploreEventMap[N]) => void) {
      handlers.set(name, (handlers.get(name) ?? new Set()).add(handler as never));
      return () => void handlers.get(name)?.delete(handler as never);
    },
    destroy() {
      removeEventListener('message', onMessage);
      destroy();
    },
  });
}
