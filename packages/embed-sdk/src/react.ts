import { createElement, useEffect, useRef } from 'react';
import type { CSSProperties, ReactElement } from 'react';
import { embed } from './embed.js';
import type { EmbedEventMap, EmbedHandle, EmbedOptions } from './embed.js';

type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

/** One prop per event: `onReady`, `onDashboardLoaded`, `onSessionExpiring`, `onRenewalFailed`, ... */
export type SvcEmbedEventProps = { [N in keyof EmbedEventMap as `on${Capitalize<Camel<N & string>>}`]?: (payload: EmbedEventMap[N]) => void };

export type SvcEmbedProps = Omit<EmbedOptions, 'container'> & SvcEmbedEventProps & {
  className?: string;
  style?: CSSProperties;
  /** Every event, by name, after its own prop. */
  onEvent?: <N extends keyof EmbedEventMap>(name: N, payload: EmbedEventMap[N]) => void;
  /** Receives the handle (actions, `setSession()`) once the embed is created, and null when it goes. */
  onHandle?: (handle: EmbedHandle | null) => void;
};

const EVENT_NAMES: Array<keyof EmbedEventMap> = [
  'ready', 'view', 'navigate', 'dashboard-loaded', 'download', 'drilldown', 'ai-query', 'session-expiring', 'session-expired',
  'error', 'action-result', 'content-size', 'comment', 'renewal-failed',
];

const propOf = (name: string) => `on${name.replace(/(^|-)([a-z])/g, (_m, _d: string, c: string) => c.toUpperCase())}`;

/**
 * `<SvcEmbed>`: the SDK as a React component. The iframe is created on mount and destroyed on unmount (or when
 * `baseUrl`, `surface`, `publicId` or `path` change); `colorScheme`, `locale` and `timezone` changes are sent as
 * actions, without a reload. Event props are read at event time, so inline handlers never re-create the embed.
 *
 * @example
 * <SvcEmbed baseUrl="https://analytics.example.com" surface="dashboard" publicId="q1-review"
 *   getSessionId={() => fetch('/api/analytics-session', { method: 'POST' }).then((r) => r.text())}
 *   onDashboardLoaded={({ widgetCount }) => console.log(widgetCount)} style={{ height: 600 }} />
 */
export function SvcEmbed(props: SvcEmbedProps): ReactElement {
  const container = useRef<HTMLDivElement>(null);
  const latest = useRef(props);
  latest.current = props;
  const handleRef = useRef<EmbedHandle | null>(null);
  const { baseUrl, surface, publicId, path } = props;

  useEffect(() => {
    const { className: _c, style: _s, onEvent: _e, onHandle: _h, ...options } = latest.current;
    const handle = embed({ ...options, container: container.current!, getSessionId: () => latest.current.getSessionId() });
    handleRef.current = handle;
    for (const name of EVENT_NAMES) {
      handle.on(name, (payload) => {
        const current = latest.current as unknown as Record<string, ((p: unknown) => void) | undefined>;
        current[propOf(name)]?.(payload);
        latest.current.onEvent?.(name, payload as never);
      });
    }
    latest.current.onHandle?.(handle);
    return () => {
      handle.destroy();
      handleRef.current = null;
      latest.current.onHandle?.(null);
    };
  }, [baseUrl, surface, publicId, path]);

  const { colorScheme, locale, timezone } = props;
  const mounted = useRef({ colorScheme, locale, timezone });
  useEffect(() => {
    const handle = handleRef.current;
    const sent = mounted.current;
    if (handle === null) return;
    if (colorScheme !== undefined && colorScheme !== sent.colorScheme) handle.setColorScheme(colorScheme);
    if (locale !== undefined && locale !== sent.locale) handle.setLocale(locale);
    if (timezone !== undefined && timezone !== sent.timezone) handle.setTimezone(timezone);
    mounted.current = { colorScheme, locale, timezone };
  }, [colorScheme, locale, timezone]);

  return createElement('div', { ref: container, className: props.className, style: props.style });
}
