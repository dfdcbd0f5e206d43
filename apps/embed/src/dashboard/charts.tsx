import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { MutableRefObject } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { ReportSnapshot, ResultColumn, WidgetData } from '../api.js';
import { formatCell, formatNumber, rowObjects } from './data.js';
import type { RenderedChart } from './vega.js';

export interface ChartProps {
  widgetId: string;
  snapshot: ReportSnapshot;
  data: WidgetData;
  locale: string;
  dark: boolean;
  /** The chart drew its data (for dashboard-loaded). */
  onRendered(): void;
  /** A mark of a measure was clicked: the measure, its value and the mark's dimension values. */
  onDrill(member: string, value: unknown, point: Record<string, unknown>): void;
  onFailed(error: unknown): void;
  /** The rendered chart, for image exports. */
  chartRef?: MutableRefObject<RenderedChart | undefined>;
}

export const pointOf = (columns: readonly ResultColumn[], row: Record<string, unknown>) =>
  Object.fromEntries(columns.filter((c) => c.kind === 'dimension').map((c) => [c.name, row[c.name]]));

/** vega and vega-lite charts (and the map), drawn by the lazily loaded vega module. */
export function VegaChart({ snapshot, data, dark, onRendered, onDrill, onFailed, chartRef }: ChartProps) {
  const element = useRef<HTMLDivElement>(null);
  const callbacks = useRef({ onRendered, onDrill, onFailed });
  callbacks.current = { onRendered, onDrill, onFailed };
  useEffect(() => {
    let chart: RenderedChart | undefined;
    let cancelled = false;
    import('./vega.js').then(({ renderChart }) => renderChart(element.current!, snapshot.spec, data, snapshot.kind, dark, (datum) => {
      const measure = data.columns.find((c) => c.kind === 'measure' && c.name in datum);
      if (measure === undefined) return;
      // Time buckets went to vega as UTC instants: back to the server's local bucket text.
      const point = Object.fromEntries(data.columns.filter((c) => c.kind === 'dimension').map((c) => {
        const value = datum[c.name];
        const bucket = c.type === 'time' && (typeof value === 'number' || value instanceof Date) ? new Date(value).toISOString().slice(0, 19) + '.000' : value;
        return [c.name, bucket];
      }));
      callbacks.current.onDrill(measure.name, datum[measure.name], point);
    })).then((rendered) => {
      if (cancelled) return rendered.finalize();
      chart = rendered;
      if (chartRef) chartRef.current = rendered;
      callbacks.current.onRendered();
    }, (error: unknown) => {
      if (!cancelled) callbacks.current.onFailed(error);
    });
    return () => {
      cancelled = true;
      chart?.finalize();
    };
  }, [snapshot, data, dark, chartRef]);
  return <div className="chart vega-chart" ref={element} data-kind={snapshot.kind ?? 'vega'} />;
}

/** A table with the snapshot's column formats; only the rows in view are in the DOM (virtual scrolling). */
export function TableChart({ data, locale, onRendered, onDrill }: ChartProps) {
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: data.rows.length, getScrollElement: () => scroller.current, estimateSize: () => 30, overscan: 8 });
  useLayoutEffect(() => onRendered(), [onRendered]);
  const objects = useMemo(() => rowObjects(data), [data]);
  // Text columns shrink (with an ellipsis) before figures do: a narrow widget never clips a number.
  const template = data.columns.map((column) => (column.type === 'number' ? 'minmax(10ch, 1fr)' : 'minmax(0, 1fr)')).join(' ');
  return (
    <div className="chart table-chart" role="table" aria-rowcount={data.rows.length + 1}>
      <div className="table-head" role="row" style={{ gridTemplateColumns: template }}>
        {data.columns.map((column) => (
          <span key={column.name} role="columnheader" className={column.type === 'number' ? 'numeric' : undefined}>{column.title}</span>
        ))}
      </div>
      <div className="table-body" ref={scroller}>
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = data.rows[item.index]!;
            return (
              <div key={item.key} role="row" aria-rowindex={item.index + 2} className="table-row" style={{ gridTemplateColumns: template, transform: `translateY(${item.start}px)`, height: item.size }}>
                {data.columns.map((column, i) => (
                  column.kind === 'measure' && typeof row[i] === 'number' ? (
                    // A cell holding a button (a button cannot be a cell: ARIA in HTML allows it no such role).
                    <span key={column.name} role="cell" className="cell numeric">
                      <button type="button" className="drillable" onClick={() => onDrill(column.name, row[i], pointOf(data.columns, objects[item.index]!))}>
                        {formatCell(column, row[i], locale)}
                      </button>
                    </span>
                  ) : (
                    <span key={column.name} role="cell" className={column.type === 'number' ? 'cell numeric' : 'cell'}>{formatCell(column, row[i], locale)}</span>
                  )
                ))}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}

/** A single figure with its period comparison (`<measure>.percentChange`, `.previous`) when the snapshot has one. */
export function KpiChart({ data, locale, onRendered, onDrill }: ChartProps) {
  useLayoutEffect(() => onRendered(), [onRendered]);
  const measure = data.columns.find((c) => c.kind === 'measure' && !/\.(previous|change|percentChange)$/.test(c.name));
  const row = data.rows[0];
  if (measure === undefined || row === undefined) return <p className="widget-empty">–</p>;
  const index = data.columns.indexOf(measure);
  const value = row[index];
  const percent = data.columns.findIndex((c) => c.name === `${measure.name}.percentChange`);
  const previous = data.columns.findIndex((c) => c.name === `${measure.name}.previous`);
  const change = percent >= 0 ? (row[percent] as number | null) : null;
  return (
    <div className="chart kpi-chart">
      <button type="button" className="kpi-value drillable" onClick={() => onDrill(measure.name, value, {})}>{formatCell(measure, value, locale)}</button>
      {change !== null && change !== undefined ? (
        <p className={`kpi-change ${change >= 0 ? 'up' : 'down'}`} data-testid="kpi-change">
          <span aria-hidden="true">{change >= 0 ? '▲' : '▼'}</span> {formatNumber(change, { type: 'percent', decimalPlaces: 1 }, locale)}
          {previous >= 0 && typeof row[previous] === 'number' ? <span className="kpi-previous"> · {formatCell(measure, row[previous], locale)}</span> : null}
        </p>
      ) : null}
    </div>
  );
}

/** The embed's colours that an HTML widget's markup may use as `var(--svc-text)` and so on. */
const HTML_VARIABLES = ['--svc-primary', '--svc-bg', '--svc-surface', '--svc-text', '--svc-muted', '--svc-border', '--svc-font'] as const;

/**
 * The frame document of an HTML widget: the embed's colour scheme and colours (so that its canvas stays
 * transparent over the widget, and its text readable, in light and dark), no page margin, and paragraphs spaced
 * to fit a widget rather than a page. The author's own styles come after, and win.
 */
export function htmlFrameDocument(body: string, dark: boolean, style: Pick<CSSStyleDeclaration, 'getPropertyValue'>): string {
  const variables = HTML_VARIABLES.map((name) => `${name}:${style.getPropertyValue(name).trim().replace(/[<>;{}]/g, '')}`).join(';');
  return `<!doctype html><html><head><meta charset="utf-8"><style>:root{color-scheme:${dark ? 'dark' : 'light'};${variables}}`
    + 'html,body{margin:0;background:transparent;color:var(--svc-text);font:14px/1.45 var(--svc-font)}'
    + `p{margin:0 0 .4em}p:last-child{margin-bottom:0}</style></head><body>${body}</body></html>`;
}

/**
 * HTML of the snapshot (its `spec` as text) with `{{column}}` replaced by the first row's formatted values, in a
 * frame sandboxed without scripts: the markup shows, nothing in it runs. The frame follows the colour scheme
 * (`htmlFrameDocument`).
 */
export function HtmlChart({ snapshot, data, locale, dark, onRendered }: ChartProps) {
  useLayoutEffect(() => onRendered(), [onRendered]);
  const template = typeof snapshot.spec === 'string' ? snapshot.spec : typeof snapshot.meta?.html === 'string' ? snapshot.meta.html : '';
  const first = data.rows[0] ?? [];
  const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const html = template.replace(/\{\{\s*([^}]+?)\s*\}\}/g, (_, name: string) => {
    // `{{orders.revenue}}` shows the member a FIELD control swapped in for it.
    const i = data.columns.findIndex((c) => c.name === (data.fields?.[name] ?? name));
    return i < 0 ? '' : escape(formatCell(data.columns[i]!, first[i], locale));
  });
  // The colours are read from :root, which App sets in an effect that runs after this component's: a microtask
  // reads them once every effect of the render has run (a new scheme, a new theme).
  const read = () => htmlFrameDocument(html, dark, getComputedStyle(document.documentElement));
  const [srcDoc, setSrcDoc] = useState(read);
  useEffect(() => {
    let live = true;
    queueMicrotask(() => {
      if (live) setSrcDoc(read());
    });
    return () => {
      live = false;
    };
    // `read` is a function of these two.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [html, dark]);
  return <iframe className="chart html-chart" title={snapshot.title ?? snapshot.name ?? 'HTML'} sandbox="" srcDoc={srcDoc} />;
}
