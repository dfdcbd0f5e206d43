import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { checkFilters, fetchDashboard, fetchWorkbookDashboard } from './api.js';
import type { Dashboard, DashboardWidget, ReportSnapshot, WidgetData, WidgetDataRequest } from './api.js';
import { DashboardDataContext } from './dashboard/data.js';
import type { DashboardData, Drilldown, DownloadEvent } from './dashboard/data.js';
import { AppView } from './dashboard/AppView.js';
import { DashboardGrid } from './dashboard/Grid.js';
import type { Formatters } from './format.js';
import type { Translate } from './i18n.js';
import type { Filter } from './preferences.js';
import type { EmbedSession } from './session.js';
import type { AiQueryEvent } from '@svc/protocol';
import { ApiError } from './session.js';
import { DrillView } from './dashboard/DrillView.js';
import { SkipLinks } from './dashboard/SkipLinks.js';
import { useMemberTitles } from './dashboard/useMemberTitles.js';
import { ExploreBar, PersonalCharts } from './explore/Explore.deferred.js';
import type { ExploreRequest } from './explore/Explore.js';
import type { SavedView, Visibility } from './explore/exploreApi.js';
import { localizeDashboard } from './dashboard/translations.js';

export interface DashboardTarget {
  publicId?: string;
  deploymentId?: number;
  workbookId?: number;
}

export interface DashboardViewProps {
  session: EmbedSession;
  target: DashboardTarget;
  /** The in-embed path of the dashboard (drill-down views open below it). */
  path: string;
  refreshKey: number;
  filters: Filter[];
  /**
   * The filters svc had not checked (the embed URL's `f_*`), checked against the dashboard before its widgets ask:
   * the accepted with their titles, the refused with svc's refusal.
   */
  onFiltersChecked(accepted: Filter[], refused: Array<{ filter: Filter; error: unknown }>): void;
  /** A filter control's choice (null clears): the same state as set-filter; `title`: its dimension's, for the chip. */
  onSetFilter(member: string, value: unknown, title?: string): void;
  onRemoveFilter(filter: Filter): void;
  timezone: string;
  allowExport: boolean;
  dark: boolean;
  t: Translate;
  format: Formatters;
  /** The dashboard's metadata arrived (for svc:event:view). */
  onViewed(dashboard: Dashboard): void;
  /** Every widget rendered its data (svc:event:dashboard-loaded); `startedAt` is when this load began (performance.now()). */
  onLoaded(dashboard: Dashboard, widgetCount: number, startedAt: number): void;
  onError(error: unknown, context: string, fatal: boolean): void;
  onDownload(event: DownloadEvent): void;
  /** A mark was drilled into (svc:event:drilldown), and the in-embed view of its rows opened at `path`. */
  onDrilldown(drill: Drilldown, path: string): void;
  /** A question to the dashboard agent (an AI widget): svc:event:ai-query. */
  onAiQuery(event: AiQueryEvent, surface?: 'app'): void;
  /** The drill-down view closed: back at the dashboard's path. */
  onDrillClosed(path: string, from: string): void;
  /** Drawn beside the dashboard (the comment panel), once the dashboard is known. */
  aside?: (dashboard: Dashboard) => ReactNode;
  /** Generate Session's settings.explore (issue 35): none shows (and loads) nothing of exploration. */
  explore: 'none' | 'view' | 'create';
  /** The host's svc:action:explore: open the builder (from a widget when it names one). */
  exploreRequest?: ExploreRequest | undefined;
  /** A saved view to open when the dashboard loads (the SDK's `view`, the embed URL's `view`). */
  initialViewId?: string | undefined;
  /** A saved view restores the viewer's filters (by member, as widget data takes them). */
  onRestoreFilters(filters: Record<string, unknown>): void;
  onChartSaved(event: { chartId: string; title: string; visibility: Visibility }): void;
  onViewSaved(event: { viewId: string; name: string; visibility: Visibility; publicId: string }): void;
}

type Load = { state: 'loading' } | { state: 'ready'; dashboard: Dashboard; at: number; startedAt: number; seq: number; forced: boolean } | { state: 'failed'; message: string };

/** The report snapshot a CHART shows: `config.reportId`, else `config.snapshotIndex`, else its place among the charts (as the server). */
export function snapshotFor(dashboard: Dashboard, widget: DashboardWidget): ReportSnapshot | undefined {
  if (widget.type !== 'CHART') return undefined;
  const config = widget.config ?? {};
  if (typeof config.reportId === 'number') return dashboard.reportSnapshots.find((s) => s.reportId === config.reportId);
  if (typeof config.snapshotIndex === 'number') return dashboard.reportSnapshots[config.snapshotIndex];
  return dashboard.reportSnapshots[(dashboard.config.widgets ?? []).filter((w) => w.type === 'CHART').indexOf(widget)];
}

/**
 * The dashboard surface: reads the dashboard (by publicId, or a workbook's), lays its widgets out on the grid of
 * DashboardLayout, runs each widget's query with the viewer's filters, time zone and controls, and reports
 * `dashboard-loaded` once every widget has drawn its data (or its empty, not-available or error state). A refresh
 * or a new target loads again, and reports again.
 */
export function DashboardView(props: DashboardViewProps) {
  const { session, target, refreshKey, t } = props;
  const [load, setLoad] = useState<Load>({ state: 'loading' });
  const callbacks = useRef(props);
  callbacks.current = props;
  const key = `${target.publicId ?? ''}|${target.deploymentId ?? ''}|${target.workbookId ?? ''}`;
  const shownKey = useRef(key);
  const loads = useRef(0);
  const lastRefresh = useRef(refreshKey);

  useEffect(() => {
    const controller = new AbortController();
    const startedAt = performance.now();
    // A refresh keeps the current view until the new data is in; another dashboard replaces it at once, so that
    // nothing of the old one reports `dashboard-loaded` after the navigation.
    if (shownKey.current !== key) {
      shownKey.current = key;
      setLoad({ state: 'loading' });
    }
    const seq = ++loads.current;
    // A load the refresh action asked for: its widgets' queries skip svc's result cache.
    const forced = lastRefresh.current !== refreshKey;
    lastRefresh.current = refreshKey;
    const request = target.publicId !== undefined
      ? fetchDashboard(session, target.publicId, controller.signal)
      : fetchWorkbookDashboard(session, target.deploymentId!, target.workbookId!, controller.signal);
    request.then(async (dashboard) => {
      // Filters from the embed URL come unchecked (no title): svc checks them before any widget asks with them, so
      // that one naming no dimension of this model (or hidden from the viewer) is dropped, not failing every widget.
      const unchecked = callbacks.current.filters.filter((f) => f.title === undefined);
      if (unchecked.length > 0) {
        const results = await Promise.all(unchecked.map((filter) => checkFilters(session, dashboard.publicId, { [`${filter.view}.${filter.dimension}`]: filter.value }, callbacks.current.timezone, controller.signal)
          .then(({ filters: [checked] }) => ({ filter: { ...filter, title: checked?.title ?? `${filter.view}.${filter.dimension}` }, error: undefined }), (error: unknown) => ({ filter, error }))));
        if (controller.signal.aborted) return;
        const isRefusal = (error: unknown) => error instanceof ApiError && (error.status === 400 || error.status === 403);
        callbacks.current.onFiltersChecked(
          results.filter((r) => !isRefusal(r.error)).map((r) => r.filter),
          results.filter((r) => isRefusal(r.error)).map((r) => ({ filter: r.filter, error: r.error })),
        );
      }
      if (controller.signal.aborted) return;
      setLoad({ state: 'ready', dashboard, at: Date.now(), startedAt, seq, forced });
      callbacks.current.onViewed(dashboard);
    }, (error: unknown) => {
      if (controller.signal.aborted) return;
      const message = error instanceof Error ? error.message : String(error);
      setLoad({ state: 'failed', message });
      if (!(error instanceof ApiError && error.status === 401)) callbacks.current.onError(error, 'embed-render', true);
    });
    return () => controller.abort();
    // The target's identity and the refresh counter decide a new load; the session object is stable.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, refreshKey]);

  if (load.state === 'loading') return <p className="status" role="status">{t('loading')}</p>;
  if (load.state === 'failed') return <p className="status error" role="alert">{t('dashboardError', { message: load.message })}</p>;
  // The aside (the comment panel) stays mounted across refreshes: its drafts outlive a reload of the widgets.
  return (
    <div className="dashboard-page">
      <LoadedDashboard key={load.seq} {...props} dashboard={load.dashboard} loadedAt={load.at} startedAt={load.startedAt} forced={load.forced} />
      {props.aside?.(load.dashboard)}
    </div>
  );
}

function describeValue(value: unknown, format: Formatters): string {
  if (typeof value === 'number') return format.number(value);
  if (Array.isArray(value)) return value.map((item) => describeValue(item, format)).join(', ');
  if (typeof value === 'object' && value !== null) {
    const range = value as { gte?: unknown; lte?: unknown };
    return `${range.gte === undefined ? '…' : describeValue(range.gte, format)} – ${range.lte === undefined ? '…' : describeValue(range.lte, format)}`;
  }
  return String(value);
}

interface LoadedProps extends DashboardViewProps {
  dashboard: Dashboard;
  /** This load came from a refresh. */
  forced: boolean;
  loadedAt: number;
  startedAt: number;
}

function LoadedDashboard(props: LoadedProps) {
  const { t, format } = props;
  // The dashboard in the viewer's locale (issue 38's translated content): every title below reads it.
  const dashboard = useMemo(() => localizeDashboard(props.dashboard, format.locale), [props.dashboard, format.locale]);
  const widgets = useMemo(() => dashboard.config.widgets ?? [], [dashboard]);
  const title = dashboard.title ?? dashboard.config.title ?? dashboard.publicId;
  const description = dashboard.description ?? dashboard.config.description;
  const [granularity, setGranularity] = useState<string | undefined>(undefined);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [drill, setDrill] = useState<Drilldown | undefined>(undefined);
  const callbacks = useRef(props);
  callbacks.current = props;
  const exports = useRef(new Map<string, { title: string; data: WidgetData }>()).current;
  const main = useRef<HTMLElement>(null);
  // Exploration (issue 35): the builder asked for (a widget's "Explore", the host's action), the saved view open.
  const [widgetExplore, setWidgetExplore] = useState<ExploreRequest | undefined>(undefined);
  const exploreRequest = widgetExplore !== undefined && (props.exploreRequest === undefined || widgetExplore.seq > props.exploreRequest.seq) ? widgetExplore : props.exploreRequest;
  const [activeView, setActiveView] = useState<SavedView | undefined>(undefined);
  const openView = useCallback((view: SavedView) => {
    setActiveView(view);
    setGranularity(view.state.granularity);
    setFields(view.state.fields ?? {});
    callbacks.current.onRestoreFilters(view.state.filters ?? {});
  }, []);

  // dashboard-loaded: once every widget settled (data drawn, empty, or failed), after the browser painted them. A
  // frame the browser does not paint (offscreen, or hidden by the host) gets no animation frames: a timer stands in.
  const settled = useRef(new Set<string>());
  const reported = useRef(false);
  const pending = useRef<{ frame: number; timer: ReturnType<typeof setTimeout> } | undefined>(undefined);
  const reportOnce = useCallback(() => {
    if (reported.current) return;
    reported.current = true;
    let isDone = false;
    const done = () => {
      if (isDone) return;
      isDone = true;
      callbacks.current.onLoaded(callbacks.current.dashboard, widgets.length, callbacks.current.startedAt);
    };
    pending.current = { frame: requestAnimationFrame(done), timer: setTimeout(done, 100) };
  }, [widgets.length]);
  const onSettled = useCallback((id: string) => {
    settled.current.add(id);
    if (settled.current.size >= widgets.length) reportOnce();
  }, [reportOnce, widgets.length]);
  useEffect(() => {
    // An APP dashboard is loaded when its code is in its frame (AppView's onMounted).
    if (widgets.length === 0 && dashboard.config.kind !== 'APP') reportOnce();
    return () => {
      if (pending.current === undefined) return;
      cancelAnimationFrame(pending.current.frame);
      clearTimeout(pending.current.timer);
    };
  }, [widgets.length, reportOnce, dashboard.config.kind]);

  const request = useMemo<WidgetDataRequest>(() => ({
    filters: Object.fromEntries(props.filters.map((f) => [`${f.view}.${f.dimension}`, f.value])),
    timezone: props.timezone,
    ...(granularity !== undefined ? { granularity } : {}),
    ...(Object.keys(fields).length > 0 ? { fields } : {}),
  }), [props.filters, props.timezone, granularity, fields]);

  const drillPath = (widgetId: string) => `${props.path.replace(/\/$/, '')}/drilldown/${encodeURIComponent(widgetId)}`;
  const data: DashboardData = {
    session: props.session, publicId: dashboard.publicId, request, force: props.forced, t, format,
    allowExport: props.allowExport, dark: props.dark, exports, onSettled,
    onError: (error, context) => callbacks.current.onError(error, context, false),
    onFilter: (member, value, title) => callbacks.current.onSetFilter(member, value, title),
    onGranularity: setGranularity,
    onField: (member, replacement) => setFields((previous) => {
      const next = { ...previous };
      if (replacement === undefined) delete next[member];
      else next[member] = replacement;
      return next;
    }),
    onDrilldown: (event) => {
      setDrill(event);
      callbacks.current.onDrilldown(event, drillPath(event.widgetId));
    },
    onDownload: (event) => callbacks.current.onDownload(event),
    onAiQuery: (event) => callbacks.current.onAiQuery(event),
    timezone: props.timezone,
    explore: props.explore,
    // Past the host's last request, so that the newer of the two opens.
    onExplore: (widgetId) => setWidgetExplore({ widgetId, seq: Math.max(widgetExplore?.seq ?? 0, props.exploreRequest?.seq ?? 0) + 1 }),
  };

  const titles = useMemberTitles(props.session, dashboard.publicId, props.filters);
  const exportDashboard = (formatName: 'xlsx' | 'png' | 'pdf') => {
    import('./dashboard/exports.js').then(async (files) => {
      if (formatName === 'xlsx') {
        const rowCount = await files.downloadXlsx([...exports.values()], title);
        return props.onDownload({ format: 'xlsx', target: 'dashboard', title, rowCount });
      }
      if (formatName === 'png') await files.downloadPng(main.current!, title);
      else await files.downloadPdf(main.current!, title, exports, format.locale);
      return props.onDownload({ format: formatName, target: 'dashboard', title });
    }).catch((error: unknown) => props.onError(error, 'download', false));
  };

  return (
    <DashboardDataContext.Provider value={data}>
      <>
        <SkipLinks t={t} main={main} comments={props.aside !== undefined} />
        <main className="dashboard" aria-labelledby="dashboard-title" ref={main}>
          <header className="dashboard-header">
            <h1 id="dashboard-title">{title}</h1>
            {description ? <p className="description">{description}</p> : null}
            <p className="meta">
              <span data-testid="updated">{t('updated', { time: format.dateTime(props.loadedAt) })}</span>
              {' · '}
              <span data-testid="widget-count">{t('widgets', { count: widgets.length })}</span>
              {' · '}
              <span data-testid="timezone">{props.timezone}</span>
            </p>
            {props.allowExport ? (
              <div className="export-menu dashboard-exports" role="group" aria-label={t('exportDashboard')} data-export-skip="true">
                {(['xlsx', 'png', 'pdf'] as const).map((f) => (
                  <button key={f} type="button" className="export" data-format={f} onClick={() => exportDashboard(f)}>{f.toUpperCase()}</button>
                ))}
              </div>
            ) : null}
            {props.explore !== 'none' ? (
              <ExploreBar session={props.session} level={props.explore} locale={format.locale} timezone={props.timezone} publicId={dashboard.publicId}
                widgetChart={(widgetId) => {
                  const widget = widgets.find((w) => w.id === widgetId);
                  const snapshot = widget !== undefined ? snapshotFor(dashboard, widget) : undefined;
                  if (widget === undefined || snapshot === undefined) return undefined;
                  return { snapshot, title: (typeof widget.config?.title === 'string' ? widget.config.title : undefined) ?? snapshot.title ?? snapshot.name ?? widget.id };
                }}
                current={{ filters: request.filters ?? {}, ...(granularity !== undefined ? { granularity } : {}), ...(Object.keys(fields).length > 0 ? { fields } : {}) }}
                request={exploreRequest} initialViewId={props.initialViewId} activeView={activeView} onOpenView={openView} onViewChanged={setActiveView}
                onChartSaved={(event) => callbacks.current.onChartSaved(event)} onViewSaved={(event) => callbacks.current.onViewSaved(event)}
                onError={(error, context) => callbacks.current.onError(error, context, false)} />
            ) : null}
            {props.filters.length > 0 ? (
              <ul className="filters" aria-label={t('filters')}>
                {props.filters.map((filter) => {
                  const member = `${filter.view}.${filter.dimension}`;
                  // The model's title ("Status"), the member's name until svc said it.
                  const name = filter.title ?? titles[member] ?? member;
                  return (
                    <li key={member} className="filter-chip" data-filter={member} title={member}>
                      <span>{name}: {describeValue(filter.value, format)}</span>
                      <button type="button" aria-label={t('removeFilter', { name })} onClick={() => props.onRemoveFilter(filter)}>×</button>
                    </li>
                  );
                })}
              </ul>
            ) : null}
          </header>
          {dashboard.config.kind === 'APP' ? (
            <AppView dashboard={dashboard} session={props.session} timezone={props.timezone}
              onMounted={() => reportOnce()}
              onAiQuery={(event) => callbacks.current.onAiQuery(event, 'app')}
              onError={(error, context) => callbacks.current.onError(error, context, false)} />
          ) : (
            <DashboardGrid dashboard={dashboard} snapshotOf={(widget) => snapshotFor(dashboard, widget)} />
          )}
          {props.explore !== 'none' && activeView !== undefined && (activeView.state.charts ?? []).length > 0 ? (
            <PersonalCharts session={props.session} locale={format.locale} timezone={props.timezone} view={activeView}
              canEdit={props.explore === 'create' && activeView.mine} onViewChanged={setActiveView} />
          ) : null}
        </main>
        {drill !== undefined ? (
          <DrillView drill={drill} publicId={dashboard.publicId} session={props.session} request={request} t={t} format={format}
            allowExport={props.allowExport} onDownload={(event) => props.onDownload(event)}
            onClose={() => {
              setDrill(undefined);
              props.onDrillClosed(props.path, drillPath(drill.widgetId));
            }}
            onError={(error) => props.onError(error, 'drilldown', false)} />
        ) : null}
      </>
    </DashboardDataContext.Provider>
  );
}
