import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { MouseEvent, ReactNode, RefObject } from 'react';
import { checkFilters, fetchDashboard, fetchWidgetData, fetchWorkbookDashboard } from './api.js';
import type { Dashboard, DashboardWidget, ReportSnapshot, WidgetData, WidgetDataRequest } from './api.js';
import { DashboardDataContext, formatCell, isNotAvailable } from './dashboard/data.js';
import type { DashboardData, Drilldown, DownloadEvent } from './dashboard/data.js';
import { AppView } from './dashboard/AppView.js';
import { DashboardGrid } from './dashboard/Grid.js';
import { NotAvailable } from './dashboard/NotAvailable.js';
import { dialogPlacement, measureVisiblePart } from './dashboard/visiblePart.js';
import type { DialogPlacement } from './dashboard/visiblePart.js';
import type { Formatters } from './format.js';
import type { Translate } from './i18n.js';
import type { Filter } from './preferences.js';
import type { EmbedSession } from './session.js';
import type { AiQueryEvent } from '@svc/protocol';
import { ApiError } from './session.js';
import { tabbables, useDialogFocus } from './dialogFocus.js';

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
  const { dashboard, t, format } = props;
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

/**
 * The first tab stops of the dashboard, shown when focused (issue 31 item 10): past the header's controls to the
 * first widget, and past every widget to the comments' new-thread box (opening the panel first if it is collapsed). Each widget is one tab stop after that, so Tab goes from widget to widget.
 */
function SkipLinks({ t, main, comments }: { t: Translate; main: RefObject<HTMLElement | null>; comments: boolean }) {
  const go = (event: MouseEvent<HTMLAnchorElement>, target: () => HTMLElement | null | undefined) => {
    event.preventDefault();
    target()?.focus();
  };
  const firstWidget = () => {
    const grid = main.current?.querySelector<HTMLElement>('.widget-grid, .app-frame');
    return grid ? tabbables(grid)[0] ?? grid : undefined;
  };
  const commentBox = () => {
    const panel = document.getElementById('comment-panel');
    const open = panel !== null && !panel.hidden && panel.getClientRects().length > 0;
    return open ? tabbables(panel).find((element) => element instanceof HTMLTextAreaElement) : undefined;
  };
  // A collapsed panel (the frame too narrow for it beside the grid) is opened first: the link promises the comments,
  // and its box takes the focus once the panel has rendered (a few frames at most); failing that, the button does.
  const goToComments = (event: MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    const box = commentBox();
    if (box !== undefined) return box.focus();
    const toggle = document.querySelector<HTMLElement>('[aria-controls="comment-panel"]');
    toggle?.click();
    let frames = 0;
    const focusWhenShown = () => {
      const shown = commentBox();
      if (shown !== undefined) shown.focus();
      else if ((frames += 1) < 30) requestAnimationFrame(focusWhenShown);
      else toggle?.focus();
    };
    requestAnimationFrame(focusWhenShown);
  };
  return (
    <nav className="skip-links" aria-label={t('skipLinks')}>
      <a href="#widgets" onClick={(event) => go(event, firstWidget)}>{t('skipToWidgets')}</a>
      {comments ? <a href="#comment-panel" onClick={goToComments}>{t('skipToComments')}</a> : null}
    </nav>
  );
}

/**
 * The model's titles of filters that came without one (the embed URL's `f_*`), asked of svc once per member. A
 * member svc does not answer for keeps its name.
 */
function useMemberTitles(session: EmbedSession, publicId: string, filters: readonly Filter[]): Record<string, string> {
  const [titles, setTitles] = useState<Record<string, string>>({});
  const asked = useRef(new Set<string>());
  const missing = filters.filter((f) => f.title === undefined && !asked.current.has(`${f.view}.${f.dimension}`)).map((f) => `${f.view}.${f.dimension}`);
  const key = missing.join(',');
  useEffect(() => {
    if (key === '') return;
    const members = key.split(',');
    for (const member of members) asked.current.add(member);
    // A null value asks about the member alone: its value is checked where it applies.
    checkFilters(session, publicId, Object.fromEntries(members.map((member) => [member, null]))).then(
      ({ filters: checked }) => setTitles((previous) => ({ ...previous, ...Object.fromEntries(checked.map((c) => [c.member, c.title])) })),
      () => undefined,
    );
  }, [session, publicId, key]);
  return titles;
}

/**
 * The rows under a drilled mark, in a dialog over the dashboard: formatted as their columns declare, with how many
 * there are ("the first 1,000 of 5,842 rows"), and (with `allowExport`) a CSV of the rows listed.
 */
function DrillView({ drill, publicId, session, request, t, format, allowExport, onDownload, onClose, onError }: {
  drill: Drilldown; publicId: string; session: EmbedSession; request: WidgetDataRequest; t: Translate; format: Formatters;
  allowExport: boolean; onDownload(event: DownloadEvent): void; onClose(): void; onError(error: unknown): void;
}) {
  const [data, setData] = useState<WidgetData | 'loading' | 'forbidden' | 'failed'>('loading');
  const close = useRef<HTMLButtonElement>(null);
  // Opened in the part of the frame the viewer sees (a frame fitted to its content is many screens tall), hidden
  // until measured, then focused: the focus no longer scrolls the host to the middle of the frame.
  const view = useRef<HTMLDivElement>(null);
  const [placement, setPlacement] = useState<DialogPlacement | undefined | 'measuring'>('measuring');
  useLayoutEffect(() => {
    let isCurrent = true;
    void measureVisiblePart(view.current!).then((visible) => {
      if (isCurrent) setPlacement(dialogPlacement(visible, view.current?.clientHeight ?? innerHeight));
    });
    return () => {
      isCurrent = false;
    };
  }, []);
  useEffect(() => {
    if (placement !== 'measuring') close.current?.focus();
  }, [placement]);
  useDialogFocus(view);
  useEffect(() => {
    const controller = new AbortController();
    fetchWidgetData(session, publicId, drill.widgetId, { ...request, drilldown: { member: drill.member, point: drill.point } }, controller.signal)
      .then((result) => setData(result), (error: unknown) => {
        if (controller.signal.aborted) return;
        // Rows an access policy keeps from the viewer: a state of the view, not an error (as for widgets).
        if (isNotAvailable(error)) {
          setData('forbidden');
          return;
        }
        setData('failed');
        onError(error);
      });
    return () => controller.abort();
    // One drill, one query.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [drill]);
  return (
    <div className="drill-view" role="dialog" aria-modal="true" aria-labelledby="drill-title" onKeyDown={(event) => event.key === 'Escape' && onClose()} ref={view}
      style={placement === 'measuring' ? { visibility: 'hidden' } : placement === undefined ? undefined : { paddingTop: placement.paddingTop, paddingBottom: placement.paddingBottom }}>
      <div className="drill-panel" style={placement === 'measuring' || placement === undefined ? undefined : { maxHeight: placement.maxHeight }}>
        <header>
          <h2 id="drill-title">{t('drillTitle', { title: drill.title, member: drill.member })}</h2>
          <button type="button" ref={close} onClick={onClose}>{t('back')}</button>
        </header>
        {data === 'loading' ? <p role="status">{t('loading')}</p> : data === 'forbidden' ? <NotAvailable message={t('drillForbidden')} /> : data === 'failed' ? <p role="alert">{t('widgetError')}</p> : (
          <>
            <p className="meta drill-summary">
              <span data-testid="drill-count">{data.truncated && data.totalRows !== undefined && data.totalRows > data.rows.length
                ? t('drillRowsOf', { shown: data.rows.length, total: data.totalRows })
                : t('drillRows', { count: data.rows.length })}</span>
              {allowExport ? (
                <button type="button" className="export drill-export" data-format="csv" onClick={() => {
                  const title = t('drillTitle', { title: drill.title, member: drill.member });
                  import('./dashboard/exports.js').then((files) => onDownload({ format: 'csv', target: 'widget', widgetId: drill.widgetId, title, rowCount: files.downloadCsv({ title, data }) }))
                    .catch((error: unknown) => onError(error));
                }}>{t('drillCsv')}</button>
              ) : null}
            </p>
            {/* A tab stop, so that the keyboard scrolls the rows too (axe: scrollable-region-focusable). */}
            <div className="drill-table-wrap" tabIndex={0} role="region" aria-labelledby="drill-title">
              <table className="drill-table">
                <thead><tr>{data.columns.map((c) => <th key={c.name} scope="col">{c.title}</th>)}</tr></thead>
                <tbody>
                  {data.rows.map((row, i) => (
                    <tr key={i}>{data.columns.map((c, j) => <td key={c.name} className={c.type === 'number' ? 'numeric' : undefined}>{formatCell(c, row[j], format.locale)}</td>)}</tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </div>
    </div>
  );
}
