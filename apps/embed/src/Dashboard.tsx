import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { fetchDashboard, fetchWorkbookDashboard } from './api.js';
import type { Dashboard, DashboardWidget, ReportSnapshot } from './api.js';
import type { Formatters } from './format.js';
import type { Translate } from './i18n.js';
import type { Filter } from './preferences.js';
import type { EmbedSession } from './session.js';
import { ApiError } from './session.js';


export interface DashboardTarget {
  publicId?: string;
  deploymentId?: number;
  workbookId?: number;
}

export interface DashboardViewProps {
  session: EmbedSession;
  target: DashboardTarget;
  refreshKey: number;
  filters: Filter[];
  onRemoveFilter(filter: Filter): void;
  t: Translate;
  format: Formatters;
  /** The dashboard's metadata arrived (for svc:event:view). */
  onViewed(dashboard: Dashboard): void;
  /** Every widget rendered (svc:event:dashboard-loaded); `startedAt` is when this load began (performance.now()). */
  onLoaded(dashboard: Dashboard, widgetCount: number, startedAt: number): void;
  onError(error: unknown, context: string, fatal: boolean): void;
  /** Drawn beside the dashboard (the comment panel), once the dashboard is known. */
  aside?: (dashboard: Dashboard) => React.ReactNode;
}

type Load = { state: 'loading' } | { state: 'ready'; dashboard: Dashboard; at: number; startedAt: number; seq: number } | { state: 'failed'; message: string };

/**
 * The dashboard surface: reads the dashboard (by publicId, or a workbook's), lays its widgets out on the grid of
 * DashboardLayout and reports `dashboard-loaded` once every widget has rendered. A refresh or a new target loads
 * again, and reports again.
 */
export function DashboardView(props: DashboardViewProps) {
  const { session, target, refreshKey, t, format } = props;
  const [load, setLoad] = useState<Load>({ state: 'loading' });
  const callbacks = useRef(props);
  callbacks.current = props;
  const key = `${target.publicId ?? ''}|${target.deploymentId ?? ''}|${target.workbookId ?? ''}`;
  const shownKey = useRef(key);
  const loads = useRef(0);

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
    const request = target.publicId !== undefined
      ? fetchDashboard(session, target.publicId, controller.signal)
      : fetchWorkbookDashboard(session, target.deploymentId!, target.workbookId!, controller.signal);
    request.then((dashboard) => {
      if (controller.signal.aborted) return;
      setLoad({ state: 'ready', dashboard, at: Date.now(), startedAt, seq });
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
  const { dashboard } = load;
  const widgets = dashboard.config.widgets ?? [];
  const title = dashboard.title ?? dashboard.config.title ?? dashboard.publicId;
  const description = dashboard.description ?? dashboard.config.description;
  return (
    <div className="dashboard-page">
      <main className="dashboard" aria-labelledby="dashboard-title">
        <header className="dashboard-header">
          <h1 id="dashboard-title">{title}</h1>
          {description ? <p className="description">{description}</p> : null}
          <p className="meta">
            <span data-testid="updated">{t('updated', { time: format.dateTime(load.at) })}</span>
            {' · '}
            <span data-testid="widget-count">{t('widgets', { count: widgets.length })}</span>
          </p>
          {props.filters.length > 0 ? (
            <ul className="filters" aria-label={t('filters')}>
              {props.filters.map((filter) => (
                <li key={`${filter.view}.${filter.dimension}`} className="filter-chip" data-filter={`${filter.view}.${filter.dimension}`}>
                  <span>{filter.view}.{filter.dimension}: {describeValue(filter.value, format)}</span>
                  <button type="button" aria-label={t('removeFilter', { name: `${filter.view}.${filter.dimension}` })} onClick={() => props.onRemoveFilter(filter)}>×</button>
                </li>
              ))}
            </ul>
          ) : null}
        </header>
        <WidgetGrid
          key={load.seq}
          dashboard={dashboard}
          widgets={widgets}
          t={t}
          onAllRendered={() => callbacks.current.onLoaded(dashboard, widgets.length, load.startedAt)}
        />
      </main>
      {props.aside?.(dashboard)}
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

interface WidgetGridProps {
  dashboard: Dashboard;
  widgets: DashboardWidget[];
  t: Translate;
  onAllRendered(): void;
}

/** DashboardLayout on a CSS grid: `cols.lg` columns of `rowHeight` rows, each widget at its position. */
function WidgetGrid({ dashboard, widgets, t, onAllRendered }: WidgetGridProps) {
  const layout = dashboard.config.layout ?? {};
  const cols = layout.cols?.lg ?? 12;
  const rowHeight = layout.rowHeight ?? 60;
  const [marginX, marginY] = layout.margin ?? [12, 12];
  const [padX, padY] = layout.containerPadding ?? [0, 0];
  const reported = useRef(false);
  const rendered = useRef(new Set<string>());
  const report = useRef(onAllRendered);
  report.current = onAllRendered;

  const pending = useRef<{ frame: number; timer: ReturnType<typeof setTimeout> } | undefined>(undefined);
  const reportOnce = () => {
    if (reported.current) return;
    reported.current = true;
    // After the browser has painted the widgets (the next animation frame), not merely committed them. A frame the
    // browser does not paint (offscreen, or hidden by the host) gets no animation frames: a timer stands in.
    let isDone = false;
    const done = () => {
      if (isDone) return;
      isDone = true;
      report.current();
    };
    pending.current = { frame: requestAnimationFrame(done), timer: setTimeout(done, 100) };
  };
  const markRendered = (id: string) => {
    rendered.current.add(id);
    if (rendered.current.size >= widgets.length) reportOnce();
  };
  useLayoutEffect(() => {
    if (widgets.length === 0) reportOnce();
  });
  // Never report for a grid already gone.
  useEffect(() => () => {
    if (pending.current === undefined) return;
    cancelAnimationFrame(pending.current.frame);
    clearTimeout(pending.current.timer);
  }, []);

  const snapshotFor = (widget: DashboardWidget): ReportSnapshot | undefined => {
    const index = typeof widget.config?.snapshotIndex === 'number' ? widget.config.snapshotIndex : widgets.filter((w) => w.type === 'CHART').indexOf(widget);
    return index >= 0 ? dashboard.reportSnapshots[index] : undefined;
  };

  return (
    <div
      className="widget-grid"
      style={{
        gridTemplateColumns: `repeat(${cols}, minmax(0, 1fr))`,
        gridAutoRows: `${rowHeight}px`,
        gap: `${marginY ?? 12}px ${marginX ?? 12}px`,
        padding: `${padY ?? 0}px ${padX ?? 0}px`,
      }}
    >
      {widgets.map((widget) => (
        <Widget key={widget.id} widget={widget} snapshot={snapshotFor(widget)} t={t} onRendered={markRendered} />
      ))}
    </div>
  );
}

interface WidgetProps {
  widget: DashboardWidget;
  snapshot: ReportSnapshot | undefined;
  t: Translate;
  onRendered(id: string): void;
}

function Widget({ widget, snapshot, t, onRendered }: WidgetProps) {
  useEffect(() => onRendered(widget.id), [widget.id, onRendered]);
  const { x, y, w, h } = widget.position;
  const style = { gridColumn: `${x + 1} / span ${w}`, gridRow: `${y + 1} / span ${h}` };
  const title = typeof widget.config?.title === 'string' ? widget.config.title : snapshot?.title ?? snapshot?.name ?? undefined;
  if (widget.type === 'SPACER') return <div className="widget spacer" style={style} data-widget-id={widget.id} aria-hidden="true" />;
  if (widget.type === 'DIVIDER') return <hr className="widget divider" style={style} data-widget-id={widget.id} />;
  const text = typeof widget.config?.text === 'string' ? widget.config.text : typeof widget.config?.markdown === 'string' ? widget.config.markdown : undefined;
  return (
    <section className={`widget widget-${widget.type.toLowerCase()}`} style={style} data-widget-id={widget.id} aria-label={title ?? widget.type}>
      {title ? <h2 className="widget-title">{title}</h2> : null}
      {widget.type === 'TEXT' && text !== undefined ? <p className="widget-text">{text}</p> : (
        <p className="widget-empty">{snapshot?.kind ? `${snapshot.kind} · ` : ''}{t('widgetNoData')}</p>
      )}
    </section>
  );
}
