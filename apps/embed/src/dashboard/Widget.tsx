import { lazy, Suspense, useCallback, useEffect, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import type { DashboardWidget, ReportSnapshot, WidgetData } from '../api.js';
import { ChatPanel } from '../chat/ChatPanel.deferred.js';
import { HtmlChart, KpiChart, TableChart, VegaChart } from './charts.js';
import type { ChartProps } from './charts.js';
import { useDashboardData, useWidgetData } from './data.js';
import { NotAvailable } from './NotAvailable.js';
import type { RenderedChart } from './vega.js';
import { useMarkdown } from './useMarkdown.js';

const GRANULARITIES = ['day', 'week', 'month', 'quarter', 'year'];

export interface WidgetProps {
  widget: DashboardWidget;
  snapshot: ReportSnapshot | undefined;
  /** Nested widgets of a CONTAINER or PARENT. */
  children?: ReactNode;
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** One widget: its frame (title, states, exports) around what its type shows. */
export function Widget({ widget, snapshot, children }: WidgetProps) {
  const { onSettled } = useDashboardData();
  const title = text(widget.config?.title) ?? snapshot?.title ?? snapshot?.name ?? undefined;
  const settled = useRef(false);
  const settle = useCallback(() => {
    if (settled.current) return;
    settled.current = true;
    onSettled(widget.id);
  }, [onSettled, widget.id]);
  const common = { 'data-widget-id': widget.id, 'data-widget-type': widget.type };

  switch (widget.type) {
    case 'SPACER':
      return <Static settle={settle}><div className="widget spacer" {...common} aria-hidden="true" /></Static>;
    case 'DIVIDER':
      return <Static settle={settle}><div className="widget divider" {...common} role="separator" /></Static>;
    case 'TEXT':
      return <TextWidget widget={widget} title={title} settle={settle} />;
    case 'CONTAINER':
    case 'PARENT':
      return (
        <Static settle={settle}>
          <section className={`widget widget-${widget.type.toLowerCase()}`} {...common} aria-label={title ?? widget.type}>
            {title ? <h2 className="widget-title">{title}</h2> : null}
            <div className="widget-children">{children}</div>
          </section>
        </Static>
      );
    case 'FILTER':
      return <FilterWidget widget={widget} title={title} settle={settle} />;
    case 'TIME_GRAIN':
      return <Static settle={settle}><TimeGrainWidget widget={widget} title={title} /></Static>;
    case 'FIELD':
      return <Static settle={settle}><FieldWidget widget={widget} title={title} /></Static>;
    case 'AI':
      return <Static settle={settle}><AiWidget widget={widget} title={title} /></Static>;
    case 'CHART':
      return <ChartWidget widget={widget} snapshot={snapshot} title={title} settle={settle} />;
    default:
      return <Static settle={settle}><section className="widget" {...common}><p className="widget-empty">{widget.type}</p></section></Static>;
  }
}

/** A widget with nothing to load is settled once it is on screen. */
function Static({ settle, children }: { settle(): void; children: ReactNode }) {
  useEffect(() => settle(), [settle]);
  return <>{children}</>;
}

/** Markdown, sanitised; its renderer (marked, DOMPurify) loads with the first TEXT widget. */
function TextWidget({ widget, title, settle }: { widget: DashboardWidget; title: string | undefined; settle(): void }) {
  const markdown = text(widget.config?.markdown) ?? text(widget.config?.text) ?? '';
  const html = useMarkdown(markdown);
  useEffect(() => {
    if (html !== undefined) settle();
  }, [html, settle]);
  return (
    <section className="widget widget-text" data-widget-id={widget.id} data-widget-type="TEXT" aria-label={title ?? 'Text'}>
      {title ? <h2 className="widget-title">{title}</h2> : null}
      <div className="markdown" dangerouslySetInnerHTML={{ __html: html ?? '' }} />
    </section>
  );
}

/** A FILTER control over one dimension: its values from the data endpoint; the choice is the dashboard's filter. */
function FilterWidget({ widget, title, settle }: { widget: DashboardWidget; title: string | undefined; settle(): void }) {
  const { request, onFilter, t } = useDashboardData();
  const member = text(widget.config?.member) ?? '';
  const state = useWidgetData(widget.id);
  useEffect(() => {
    if (state.state !== 'loading') settle();
  }, [state.state, settle]);
  const current = request.filters?.[member];
  const selected = current === undefined || current === null ? '' : JSON.stringify(current);
  const label = title ?? member;
  // A dimension an access policy hides: the control gives way to the note, in the same space.
  if (state.state === 'forbidden') {
    return (
      <section className="widget widget-filter" data-widget-id={widget.id} data-widget-type="FILTER" data-state="forbidden">
        <span className="widget-title">{label}</span>
        <NotAvailable message={t('filterForbidden')} />
      </section>
    );
  }
  return (
    <section className="widget widget-filter" data-widget-id={widget.id} data-widget-type="FILTER">
      <label>
        <span className="widget-title">{label}</span>
        {state.state === 'ready' && state.data.columns.length === 0 ? (
          <span className="date-range">
            <input type="date" aria-label={`${label} ${t('from')}`} onChange={(event) => onFilter(member, event.currentTarget.value ? { ...(current as object | undefined), gte: event.currentTarget.value } : null)} />
            <input type="date" aria-label={`${label} ${t('to')}`} onChange={(event) => onFilter(member, event.currentTarget.value ? { ...(current as object | undefined), lte: event.currentTarget.value } : null)} />
          </span>
        ) : (
          <select value={selected} disabled={state.state !== 'ready'} onChange={(event) => onFilter(member, event.currentTarget.value === '' ? null : JSON.parse(event.currentTarget.value), state.state === 'ready' ? state.data.columns[0]?.title : undefined)}>
            <option value="">{t('allValues')}</option>
            {state.state === 'ready' ? state.data.rows.map((row) => <option key={JSON.stringify(row[0])} value={JSON.stringify(row[0])}>{String(row[0])}</option>) : null}
          </select>
        )}
      </label>
      {state.state === 'failed' ? <p className="widget-error" role="alert">{t('widgetError')}</p> : null}
    </section>
  );
}

function TimeGrainWidget({ widget, title }: { widget: DashboardWidget; title: string | undefined }) {
  const { request, onGranularity, t } = useDashboardData();
  const options = Array.isArray(widget.config?.options) ? (widget.config.options as string[]) : GRANULARITIES;
  const label = title ?? t('timeGrain');
  return (
    <section className="widget widget-time-grain" data-widget-id={widget.id} data-widget-type="TIME_GRAIN">
      <label>
        <span className="widget-title">{label}</span>
        <select value={request.granularity ?? text(widget.config?.default) ?? ''} onChange={(event) => onGranularity(event.currentTarget.value || undefined)}>
          <option value="">{t('asDesigned')}</option>
          {options.map((option) => <option key={option} value={option}>{option}</option>)}
        </select>
      </label>
    </section>
  );
}

/** A FIELD control: one member of the queries swapped for another of its options (e.g. revenue for orders). */
function FieldWidget({ widget, title }: { widget: DashboardWidget; title: string | undefined }) {
  const { request, onField, t } = useDashboardData();
  const member = text(widget.config?.member) ?? '';
  const options = Array.isArray(widget.config?.options) ? (widget.config.options as Array<string | { member: string; title?: string }>) : [];
  const label = title ?? t('field');
  return (
    <section className="widget widget-field" data-widget-id={widget.id} data-widget-type="FIELD">
      <label>
        <span className="widget-title">{label}</span>
        <select value={request.fields?.[member] ?? member} onChange={(event) => onField(member, event.currentTarget.value === member ? undefined : event.currentTarget.value)}>
          {options.map((option) => {
            const value = typeof option === 'string' ? option : option.member;
            return <option key={value} value={value}>{typeof option === 'string' ? option : option.title ?? option.member}</option>;
          })}
        </select>
      </label>
    </section>
  );
}

/** The dashboard agent: questions about this dashboard's deployment, answered in the widget (surface `dashboard`). */
function AiWidget({ widget, title }: { widget: DashboardWidget; title: string | undefined }) {
  const { t, session, publicId, format, timezone, dark, onAiQuery, onError } = useDashboardData();
  return (
    <section className="widget widget-ai" data-widget-id={widget.id} data-widget-type="AI" aria-label={title ?? t('askTitle')}>
      <h2 className="widget-title">{title ?? t('askTitle')}</h2>
      <ChatPanel session={session} t={t} locale={format.locale} timezone={timezone} dark={dark} publicId={publicId} agentId={widget.id}
        onAiQuery={onAiQuery} onError={(error) => onError(error, `ai:${widget.id}`)} compact />
    </section>
  );
}

const Exports = lazy(() => import('./ExportMenu.js').then((module) => ({ default: module.ExportMenu })));
const SankeyChart = lazy(() => import('./sankey.js').then((module) => ({ default: module.SankeyChart })));

/**
 * A CHART: its snapshot's data drawn by its kind; loading, empty, not-available (issue 20) and error states;
 * drill-down and exports (none without data).
 */
function ChartWidget({ widget, snapshot, title: authored, settle }: { widget: DashboardWidget; snapshot: ReportSnapshot | undefined; title: string | undefined; settle(): void }) {
  const { format, dark, t, onDrilldown, onError, allowExport, exports, explore, onExplore } = useDashboardData();
  const state = useWidgetData(widget.id, snapshot !== undefined);
  const [renderError, setRenderError] = useState<unknown>(undefined);
  const frame = useRef<HTMLElement>(null);
  const chart = useRef<RenderedChart | undefined>(undefined);
  const data: WidgetData | undefined = state.state === 'ready' ? state.data : undefined;
  // A FIELD control's swap renames the widget with its data ("Revenue 2025" showing orders: "Orders 2025").
  const title = data?.title ?? authored;
  const name = title ?? widget.id;
  useEffect(() => {
    if (state.state === 'failed' || state.state === 'forbidden' || (data !== undefined && data.rows.length === 0)) settle();
  }, [state.state, data, settle]);
  useEffect(() => {
    if (data === undefined) return;
    exports.set(widget.id, { title: name, data });
    return () => void exports.delete(widget.id);
  }, [data, exports, widget.id, name]);
  const onFailed = useCallback((error: unknown) => {
    setRenderError(error);
    onError(error, `widget:${widget.id}`);
    settle();
  }, [onError, settle, widget.id]);
  const onDrill = useCallback((member: string, value: unknown, point: Record<string, unknown>) => {
    onDrilldown({ widgetId: widget.id, title: name, member, value, point });
  }, [onDrilldown, widget.id, name]);

  const explorable = explore === 'create' && snapshot?.meta?.query !== undefined;
  let body: ReactNode;
  if (snapshot === undefined) body = <p className="widget-empty">{t('widgetNoData')}</p>;
  else if (state.state === 'loading') body = <p className="widget-loading" role="status">{t('loading')}</p>;
  else if (state.state === 'forbidden') body = <NotAvailable message={t('widgetForbidden')} />;
  // The viewer reads one friendly sentence, never svc's or the chart library's text: that detail went to the host
  // in a non-fatal `svc:event:error` (context `widget:<id>`); svc logs a failure of its own (a 422 or 5xx).
  else if (state.state === 'failed' || renderError !== undefined) body = <p className="widget-error" role="alert">{t('widgetError')}</p>;
  else if (data!.rows.length === 0) body = <p className="widget-empty">{t('widgetEmpty')}</p>;
  else {
    const props: ChartProps = { widgetId: widget.id, snapshot, data: data!, locale: format.locale, dark, onRendered: settle, onDrill, onFailed, chartRef: chart, label: t('chartKeys', { title: name }) };
    const kind = snapshot.kind ?? 'table';
    body = kind === 'table' ? <TableChart {...props} /> : kind === 'kpi' ? <KpiChart {...props} /> : kind === 'html' ? <HtmlChart {...props} /> : kind === 'sankey' ? <Suspense fallback={null}><SankeyChart {...props} /></Suspense> : <VegaChart {...props} />;
  }
  useEffect(() => {
    if (snapshot === undefined) settle();
  }, [snapshot, settle]);
  return (
    <section ref={frame} className={`widget widget-chart kind-${snapshot?.kind ?? 'none'}`} data-widget-id={widget.id} data-widget-type="CHART" data-state={state.state} aria-label={name}>
      <header className="widget-header">
        {title ? <h2 className="widget-title">{title}</h2> : null}
        {/* Explore (issue 35): an item of the export menu where there is one (a chart keeps two tab stops), else a button. */}
        {explorable && !allowExport ? (
          <button type="button" className="widget-explore" data-export-skip="true" aria-label={t('exploreWidget', { title: name })} onClick={() => onExplore(widget.id)}>{t('explore')}</button>
        ) : null}
        {allowExport && data !== undefined ? (
          <Suspense fallback={null}><Exports widgetId={widget.id} title={name} data={data} frame={frame}
            extra={explorable ? { label: t('exploreWidget', { title: name }), onSelect: () => onExplore(widget.id) } : undefined} /></Suspense>
        ) : null}
      </header>
      {data?.truncated ? <p className="widget-note">{t('truncated', { count: data.rows.length })}</p> : null}
      <div className="widget-body">{body}</div>
    </section>
  );
}
