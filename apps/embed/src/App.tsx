import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { ActionMessage, EmbedTheme } from '@svc/protocol';
import { checkFilters } from './api.js';
import type { CurrentSession, Dashboard } from './api.js';
import type { AiQueryEvent } from '@svc/protocol';
import { isPanelOpenAtStart, parseCommentsStart } from './comments/panelPlacement.js';
import { observeContentSize } from './contentSize.js';
import { formattersFor } from './format.js';
import type { HostChannel } from './host.js';
import { translator } from './i18n.js';
import { parseRoute } from './page.js';
import type { Route, UrlOptions } from './page.js';
import { applyThemeVariables, firstOf, parseColorScheme, parseFilter, parseLocale, parseTimezone, themeVariables } from './preferences.js';
import type { BrowserPreferences, ColorScheme, Filter } from './preferences.js';
import { ApiError } from './session.js';
import type { EmbedSession } from './session.js';
import { ChatPanel } from './chat/ChatPanel.deferred.js';
import { CommentPanel, DashboardView } from './surfaces.js';

export interface AppProps {
  channel: HostChannel;
  session: EmbedSession;
  current: CurrentSession;
  initialRoute: Route;
  url: UrlOptions;
  /** The browser's language and time zone (read by main.tsx while the session was on its way). */
  browser: BrowserPreferences;
  /** Subscribes to the session's lapse (svc:event:session-expired): the view shows it until set-session. */
  onLapse(listener: () => void): void;
}

/** Routes that show a dashboard (whose `view` comes once the dashboard is read): an APP one on the app surface too. */
const showsDashboard = (route: Route) => route.kind === 'dashboard' || route.kind === 'workbook' || (route.kind === 'app' && route.publicId !== undefined);

const invalidAction = (message: string) => Object.assign(new Error(message), { name: 'InvalidActionError' });

function initialFilters(parameters: string[]): Filter[] {
  const filters: Filter[] = [];
  for (const parameter of parameters) {
    const parsed = parseFilter(parameter);
    if (parsed.ok) filters.push(parsed.filter);
  }
  return filters;
}

/**
 * The embed: one surface at a time (dashboard, chat, app), the host's actions (SPEC "Action catalog") applied to
 * it, and the host told what happens (SPEC "Event catalog"). Precedence of each preference: the host's action,
 * then the embed URL, then the session's settings (Generate Session), then the account's default, then the browser.
 */
export function App({ channel, session, current, initialRoute, url, browser, onLapse }: AppProps) {
  const [route, setRoute] = useState<Route>(initialRoute);
  const [colorScheme, setColorScheme] = useState<ColorScheme>(parseColorScheme(url.colorScheme) ?? 'auto');
  const [theme, setTheme] = useState<EmbedTheme>(current.embedTheme as EmbedTheme);
  const [locale, setLocale] = useState<string>(() => firstOf(parseLocale(url.locale), parseLocale(current.defaults.locale), browser.locale) ?? 'en-US');
  const [timezone, setTimezone] = useState<string>(() => firstOf(parseTimezone(url.timezone), parseTimezone(current.defaults.timezone)) ?? browser.timezone);
  const [filters, setFilters] = useState<Filter[]>(() => initialFilters(url.filters));
  const [refreshKey, setRefreshKey] = useState(0);
  // svc:action:explore (issue 35): each accepted one opens the builder anew.
  const [exploreRequest, setExploreRequest] = useState<{ widgetId?: string; seq: number } | undefined>(undefined);
  const [isLapsed, setLapsed] = useState(false);
  // A session renewed after it lapsed starts the surface afresh (set-session rule 2: transient state is gone).
  const [epoch, setEpoch] = useState(0);
  // The comment panel starts as the host asked (`comments`), or, by default (`auto`), open only where the grid beside
  // it keeps its author's layout: decided once, from the frame's width when the first dashboard arrives.
  const [panelChoice, setPanelChoice] = useState<boolean | undefined>(() => {
    const start = parseCommentsStart(url.comments);
    return start === 'auto' ? undefined : start === 'open';
  });
  const panelAtStart = useRef<boolean | undefined>(undefined);
  // The open threads the closed panel's button counts (`more`: there are further pages).
  const [openThreads, setOpenThreads] = useState<{ count: number; more: boolean } | undefined>(undefined);
  const onOpenCountChange = useCallback((count: number, more: boolean) => setOpenThreads({ count, more }), []);
  // Issue 23: threads others started while the comment panel was closed (its live stream runs either way).
  const [unseenThreads, setUnseenThreads] = useState(0);
  // Bumped by each accepted set-session: the comment stream reconnects with the new token.
  const [credentialKey, setCredentialKey] = useState(0);
  const routeRef = useRef(route);
  routeRef.current = route;
  const timezoneRef = useRef(timezone);
  timezoneRef.current = timezone;
  // The dashboard on screen, by path: a workbook path names its dashboard only once it is read.
  const viewed = useRef<{ path: string; publicId: string } | undefined>(undefined);
  const viewWaiters = useRef<Array<() => void>>([]);
  const wakeViewWaiters = useCallback(() => {
    for (const wake of viewWaiters.current.splice(0)) wake();
  }, []);
  // set-filter actions apply in the order they came, each after svc checked it.
  const filterQueue = useRef<Promise<unknown>>(Promise.resolve());

  const t = useMemo(() => translator(locale), [locale]);
  const format = useMemo(() => formattersFor(locale, timezone), [locale, timezone]);

  const reportError = useCallback((error: unknown, context: string, fatal = false) => {
    const message = error instanceof Error ? error.message : String(error);
    const name = error instanceof Error ? error.name : 'Error';
    channel.emit('svc:event:error', { message, name, context, fatal });
  }, [channel]);

  // What the host and the session say is listened to from the commit that sends `ready` (layout effects, which run
  // in it), not from the next paint: the SDK posts the actions it held as soon as `ready` arrives, and Preact runs
  // plain effects a frame or more later (they were measured 16-22 ms after `ready` in the e2e Chromium).
  useLayoutEffect(() => onLapse(() => setLapsed(true)), [onLapse]);

  // Colour scheme: `auto` follows the viewer's OS preference live.
  const [prefersDark, setPrefersDark] = useState(() => matchMedia('(prefers-color-scheme: dark)').matches);
  useEffect(() => {
    const query = matchMedia('(prefers-color-scheme: dark)');
    const onChange = (event: MediaQueryListEvent) => setPrefersDark(event.matches);
    query.addEventListener('change', onChange);
    return () => query.removeEventListener('change', onChange);
  }, []);
  const scheme = colorScheme === 'auto' ? (prefersDark ? 'dark' : 'light') : colorScheme;
  // Before the paint (layout effects): Preact paints the first render before it runs plain effects, which would
  // show a frame in svc's default colours.
  useLayoutEffect(() => {
    document.documentElement.dataset.colorScheme = scheme;
    document.documentElement.style.colorScheme = scheme;
  }, [scheme]);
  useLayoutEffect(() => applyThemeVariables(document.documentElement, themeVariables(theme)), [theme]);
  useLayoutEffect(() => {
    document.documentElement.lang = locale;
  }, [locale]);

  // SPEC: `ready` first and once, when authenticated and mounted: at the commit (a layout effect), not after the
  // next paint, which is when Preact (as React) runs plain effects.
  useLayoutEffect(() => {
    const first = routeRef.current;
    channel.emit('svc:event:ready', {
      embedTenant: current.embedTenant, deploymentId: current.deploymentId, mode: current.mode, surface: first.surface,
      ...(first.kind === 'dashboard' ? { publicId: first.publicId } : {}),
    });
    if (!showsDashboard(first)) channel.emit('svc:event:view', { surface: first.surface, path: first.path });
  }, [channel, current]);

  // svc's extension svc:event:content-size (docs/sdk.md): the height of the content, for the SDK's autoResize.
  useEffect(() => observeContentSize(document.getElementById('root') ?? document.body, (size) => channel.emit('svc:event:content-size', size)), [channel]);

  const navigateTo = useCallback((path: string) => {
    const previous = routeRef.current;
    const next = parseRoute(path, previous.surface);
    channel.setSurface(next.surface);
    history.replaceState(history.state, '', next.path + location.search);
    routeRef.current = next;
    setRoute(next);
    wakeViewWaiters();
    channel.emit('svc:event:navigate', { path: next.path, previousPath: previous.path });
    if (next.kind === 'not-found') reportError(new Error(`nothing is shown at ${next.path}`), 'navigate');
    if (!showsDashboard(next)) channel.emit('svc:event:view', { surface: next.surface, path: next.path });
  }, [channel, reportError, wakeViewWaiters]);

  /** The publicId of the dashboard shown (waiting for a workbook's to be read); none shown: the action is refused. */
  const shownPublicId = useCallback(async (): Promise<string> => {
    for (;;) {
      const current = routeRef.current;
      if (current.kind === 'dashboard' || (current.kind === 'app' && current.publicId !== undefined)) return current.publicId!;
      if (current.kind !== 'workbook') throw invalidAction(`set-filter: no dashboard is shown at ${current.path}, so there is nothing to filter`);
      if (viewed.current?.path === current.path) return viewed.current.publicId;
      await new Promise<void>((resolve) => viewWaiters.current.push(resolve));
    }
  }, []);

  /**
   * A host's filter, checked by svc against the shown dashboard's model and the viewer's access before anything
   * changes (issue 31): a member no view declares, a value not of its type, or a member an access policy hides from
   * this viewer would make every widget fail, so it is refused here, once, and nothing is applied.
   */
  const checkHostFilter = useCallback(async (filter: Filter): Promise<Filter> => {
    const member = `${filter.view}.${filter.dimension}`;
    if (filter.value === null) return filter;
    const publicId = await shownPublicId();
    try {
      const { filters: [checked] } = await checkFilters(session, publicId, { [member]: filter.value }, timezoneRef.current);
      return { ...filter, ...(checked !== undefined ? { title: checked.title } : {}) };
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) throw invalidAction(`set-filter: ${member} is hidden from this viewer by an access policy; the filter was not applied`);
      if (error instanceof ApiError && error.status === 400) throw invalidAction(`set-filter: ${member} cannot filter this dashboard (${error.message}); the filter was not applied`);
      throw error;
    }
  }, [session, shownPublicId]);

  const applyAction = useCallback(async (action: ActionMessage): Promise<void> => {
    switch (action.type) {
      case 'svc:action:set-color-scheme':
        setColorScheme(action.payload.scheme);
        return;
      case 'svc:action:set-theme':
        setTheme((previous) => ({ ...previous, ...action.payload }));
        return;
      case 'svc:action:set-locale': {
        const next = parseLocale(action.payload.locale);
        if (next === undefined) throw Object.assign(new Error(`not a locale: ${JSON.stringify(action.payload.locale)}`), { name: 'InvalidActionError' });
        setLocale(next);
        return;
      }
      case 'svc:action:set-timezone': {
        // SPEC: an IANA name; bare UTC offsets are ignored (the time zone stays as it was).
        const next = parseTimezone(action.payload.timezone);
        if (next === undefined) throw Object.assign(new Error(`not an IANA time zone (ignored): ${JSON.stringify(action.payload.timezone)}`), { name: 'InvalidActionError' });
        setTimezone(next);
        return;
      }
      case 'svc:action:set-filter': {
        const parsed = parseFilter(action.payload.filterUrlParameter);
        if (!parsed.ok) throw invalidAction(`set-filter: ${parsed.reason}`);
        const applied = filterQueue.current.then(async () => {
          const filter = await checkHostFilter(parsed.filter);
          setFilters((previous) => {
            const others = previous.filter((f) => f.view !== filter.view || f.dimension !== filter.dimension);
            // A null value clears the filter.
            return filter.value === null ? others : [...others, filter];
          });
        });
        filterQueue.current = applied.catch(() => undefined);
        await applied;
        return;
      }
      case 'svc:action:navigate':
        navigateTo(action.payload.path);
        return;
      case 'svc:action:refresh':
        setRefreshKey((key) => key + 1);
        return;
      case 'svc:action:explore': {
        if (current.explore !== 'create') throw invalidAction(`explore: this session's settings.explore is ${current.explore}, not create`);
        await shownPublicId();
        const { widgetId } = action.payload;
        // Past any earlier request (the dashboard's own Explore buttons count from the same seq).
        setExploreRequest((previous) => ({ ...(widgetId !== undefined ? { widgetId } : {}), seq: (previous?.seq ?? 0) + 1_000 }));
        return;
      }
      case 'svc:action:set-session': {
        if (session.mode !== 'signed') throw Object.assign(new Error('a private embed has no session to swap'), { name: 'EmbedSessionExchangeError' });
        const wasLapsed = session.isLapsed;
        await session.exchange(action.payload.sessionId);
        setCredentialKey((key) => key + 1);
        if (wasLapsed) {
          setLapsed(false);
          setFilters(initialFilters(url.filters));
          setEpoch((value) => value + 1);
        }
        return;
      }
    }
  }, [navigateTo, session, url.filters, checkHostFilter, current.explore, shownPublicId]);

  useLayoutEffect(() => channel.onAction((action) => {
    applyAction(action).then(() => {
      if (action.requestId !== undefined) channel.emit('svc:event:action-result', { requestId: action.requestId, action: action.type, ok: true });
    }, (error: unknown) => {
      const name = error instanceof Error ? error.name : 'Error';
      const message = error instanceof Error ? error.message : String(error);
      // SPEC set-session rule 3: a refused id is reported and the working embed stays as it is.
      channel.emit('svc:event:error', { message, name, context: action.type === 'svc:action:set-session' ? 'session-renewal' : action.type.slice(11), fatal: false });
      if (action.requestId !== undefined) channel.emit('svc:event:action-result', { requestId: action.requestId, action: action.type, ok: false, error: { name, message } });
    });
  }), [applyAction, channel]);

  useLayoutEffect(() => channel.onInvalidAction((reason) => {
    channel.emit('svc:event:error', { message: `an action was ignored: ${reason}`, name: 'InvalidActionError', context: 'action', fatal: false });
  }), [channel]);

  // A filter control's choice: the same state as svc:action:set-filter (null clears).
  const onSetFilter = useCallback((member: string, value: unknown, title?: string) => {
    const [view, dimension] = member.split('.') as [string, string];
    setFilters((previous) => {
      const others = previous.filter((f) => f.view !== view || f.dimension !== dimension);
      return value === null || value === undefined ? others : [...others, { view, dimension, value, ...(title !== undefined ? { title } : {}) }];
    });
  }, []);

  // The URL's filters, checked against the first dashboard shown: titles for the accepted, the refused dropped and
  // reported as a refused set-filter would be (issue 31).
  const onFiltersChecked = useCallback((accepted: Filter[], refused: Array<{ filter: Filter; error: unknown }>) => {
    const same = (a: Filter, b: Filter) => a.view === b.view && a.dimension === b.dimension;
    setFilters((previous) => previous
      .filter((f) => !refused.some((r) => same(r.filter, f)))
      .map((f) => accepted.find((a) => same(a, f) && f.title === undefined) ?? f));
    for (const { filter, error } of refused) {
      const member = `${filter.view}.${filter.dimension}`;
      const why = error instanceof ApiError && error.status === 403 ? 'is hidden from this viewer by an access policy' : `cannot filter this dashboard (${error instanceof Error ? error.message : String(error)})`;
      reportError(invalidAction(`the embed URL's f_${member}: ${member} ${why}; the filter was not applied`), 'set-filter');
    }
  }, [reportError]);

  // A saved view's filters (issue 35), by member as widget data takes them: they replace the viewer's.
  const onRestoreFilters = useCallback((restored: Record<string, unknown>) => {
    setFilters(Object.entries(restored).flatMap(([member, value]) => {
      const dot = member.indexOf('.');
      return dot > 0 && value !== null && value !== undefined ? [{ view: member.slice(0, dot), dimension: member.slice(dot + 1), value }] : [];
    }));
  }, []);

  const onAiQuery = useCallback((event: AiQueryEvent, surface?: 'app') => channel.emit('svc:event:ai-query', event, surface), [channel]);

  const onViewed = useCallback((dashboard: Dashboard) => {
    viewed.current = { path: routeRef.current.path, publicId: dashboard.publicId };
    wakeViewWaiters();
    const title = dashboard.title ?? dashboard.config.title ?? undefined;
    channel.emit('svc:event:view', { surface: routeRef.current.surface, path: routeRef.current.path, publicId: dashboard.publicId, ...(title ? { title } : {}) });
  }, [channel, wakeViewWaiters]);

  const onLoaded = useCallback((dashboard: Dashboard, widgetCount: number, startedAt: number) => {
    // SPEC: dashboard-loaded is an event of the dashboard surface (an APP dashboard on the app surface has none).
    if (routeRef.current.surface !== 'dashboard') return;
    channel.emit('svc:event:dashboard-loaded', { publicId: dashboard.publicId, widgetCount, loadDurationMs: Math.round(performance.now() - startedAt) });
  }, [channel]);

  const showComments = current.allowEmbedComments && current.mode === 'signed' && current.embedTenant !== null && current.embedUserId !== null;
  const target = route.kind === 'dashboard' || (route.kind === 'app' && route.publicId !== undefined) ? { publicId: route.publicId! } : route.kind === 'workbook' ? { deploymentId: route.deploymentId, workbookId: route.workbookId } : undefined;

  return (
    <div className="embed" data-surface={route.surface} key={epoch}>
      {target !== undefined ? (
        <DashboardView
          session={session}
          target={target}
          path={route.path}
          refreshKey={refreshKey}
          filters={filters}
          onSetFilter={onSetFilter}
          onFiltersChecked={onFiltersChecked}
          onRemoveFilter={(filter) => setFilters((previous) => previous.filter((f) => f !== filter))}
          timezone={timezone}
          allowExport={url.allowExport}
          dark={scheme === 'dark'}
          t={t}
          format={format}
          onViewed={onViewed}
          onLoaded={onLoaded}
          onError={reportError}
          onDownload={(event) => channel.emit('svc:event:download', event)}
          onDrilldown={(drill, path) => {
            channel.emit('svc:event:drilldown', { member: drill.member, value: drill.value, widgetId: drill.widgetId });
            channel.emit('svc:event:navigate', { path, previousPath: route.path });
            channel.emit('svc:event:view', { surface: 'dashboard', path, ...(route.kind === 'dashboard' ? { publicId: route.publicId } : {}), title: drill.title });
          }}
          onAiQuery={onAiQuery}
          onDrillClosed={(path, from) => {
            channel.emit('svc:event:navigate', { path, previousPath: from });
            channel.emit('svc:event:view', { surface: 'dashboard', path, ...(route.kind === 'dashboard' ? { publicId: route.publicId } : {}) });
          }}
          explore={current.explore}
          exploreRequest={exploreRequest}
          initialViewId={url.view}
          onRestoreFilters={onRestoreFilters}
          onChartSaved={(event) => channel.emit('svc:event:chart-saved', event)}
          onViewSaved={(event) => channel.emit('svc:event:view-saved', event)}
          aside={showComments ? (dashboard) => {
            panelAtStart.current ??= isPanelOpenAtStart('auto', dashboard.config.layout, document.documentElement.clientWidth);
            const panelOpen = panelChoice ?? panelAtStart.current;
            const openCount = openThreads === undefined ? undefined : `${openThreads.count}${openThreads.more ? '+' : ''}`;
            return (
              <aside className={`comments-aside${panelOpen ? ' open' : ' collapsed'}`}>
                <button type="button" className="comments-toggle" aria-expanded={panelOpen} aria-controls="comment-panel" title={panelOpen ? undefined : t('openComments')} onClick={() => setPanelChoice(!panelOpen)}>
                  <svg className="comments-icon" aria-hidden="true" viewBox="0 0 16 16" width="16" height="16"><path d="M2 3.5A1.5 1.5 0 0 1 3.5 2h9A1.5 1.5 0 0 1 14 3.5v6a1.5 1.5 0 0 1-1.5 1.5H7l-3 3v-3h-.5A1.5 1.5 0 0 1 2 9.5z" fill="none" stroke="currentColor" stroke-width="1.4" stroke-linejoin="round" /></svg>
                  {/* Collapsed, the button is short (its name, its count): it sits beside the dashboard's title. */}
                  {panelOpen ? t('closeComments') : t('comments')}
                  {!panelOpen && openCount !== undefined ? (
                    <>
                      <span className="comments-count" data-testid="comments-count" aria-hidden="true">{openCount}</span>
                      <span className="visually-hidden">{`, ${t('openThreadsLabel', { count: openCount })}`}</span>
                    </>
                  ) : null}
                  {!panelOpen && unseenThreads > 0 ? (
                    <>
                      <span className="comments-badge" data-testid="comments-badge" aria-hidden="true">{t('newThreadsCount', { count: unseenThreads })}</span>
                      <span className="visually-hidden">{`, ${t('newThreadsLabel', { count: unseenThreads })}`}</span>
                    </>
                  ) : null}
                </button>
                <div id="comment-panel" hidden={!panelOpen}>
                  <CommentPanel session={session} publicId={dashboard.publicId} t={t} format={format} refreshKey={refreshKey} onError={(error, context) => reportError(error, context)}
                    isOpen={panelOpen} onUnseenChange={setUnseenThreads} onOpenCountChange={onOpenCountChange} credentialKey={credentialKey}
                    onPosted={(kind, comment, threadId) => channel.emit('svc:event:comment', {
                      kind, publicId: dashboard.publicId, threadId, commentId: comment.id,
                      mentionedExternalIds: (comment.mentions ?? []).map((mention) => mention.externalId),
                      ...(current.commentEventText ? { body: comment.body } : {}),
                    })} />
                </div>
              </aside>
            );
          } : undefined}
        />
      ) : route.kind === 'chat' ? (
        <main className="surface-chat" aria-labelledby="chat-title">
          <h1 id="chat-title">{t('chatTitle')}</h1>
          <ChatPanel session={session} t={t} locale={format.locale} timezone={timezone} dark={scheme === 'dark'}
            onAiQuery={onAiQuery} onError={(error) => reportError(error, 'ai-query')} />
        </main>
      ) : route.kind === 'app' ? (
        <main className="surface-message"><h1>{t('appTitle')}</h1><p>{t('appUnavailable')}</p></main>
      ) : (
        <main className="surface-message"><p role="alert">{t('notFound', { path: route.path })}</p></main>
      )}
      {isLapsed ? (
        <div className="lapsed" role="alertdialog" aria-modal="true" aria-labelledby="lapsed-title">
          <div>
            <h2 id="lapsed-title">{t('sessionExpired')}</h2>
            <p>{t('sessionExpiredHint')}</p>
          </div>
        </div>
      ) : null}
    </div>
  );
}
