import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { KeyboardEvent, MutableRefObject } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { ReportSnapshot, ResultColumn, WidgetData } from '../api.js';
import { formatCell, formatNumber, rowObjects } from './cells.js';
import { useChartKeys } from './chartKeys.js';
import type { RenderedChart } from './vega.js';
import { tableColumnTemplate } from './tableColumns.js';

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
  /** The name a chart that takes the focus has: its title, and how to use it from the keyboard. */
  label?: string;
}

export const pointOf = (columns: readonly ResultColumn[], row: Record<string, unknown>) =>
  Object.fromEntries(columns.filter((c) => c.kind === 'dimension').map((c) => [c.name, row[c.name]]));

/**
 * A vega datum as a drill: the measure it holds, its value, and its dimensions' values. Time buckets went to vega as
 * UTC instants: they come back as the server's local bucket text.
 */
function drillOf(columns: readonly ResultColumn[], datum: Record<string, unknown>): { measure: ResultColumn; point: Record<string, unknown> } | undefined {
  const measure = columns.find((c) => c.kind === 'measure' && c.name in datum);
  if (measure === undefined) return undefined;
  const point = Object.fromEntries(columns.filter((c) => c.kind === 'dimension').map((c) => {
    const value = datum[c.name];
    const bucket = c.type === 'time' && (typeof value === 'number' || value instanceof Date) ? new Date(value).toISOString().slice(0, 19) + '.000' : value;
    return [c.name, bucket];
  }));
  return { measure, point };
}

/** What a data point says when the keyboard reaches it: its dimensions' values, then the measure and its value. */
function describePoint(columns: readonly ResultColumn[], measure: ResultColumn, value: unknown, point: Record<string, unknown>, locale: string): string {
  const dimensions = columns.filter((c) => c.kind === 'dimension' && point[c.name] !== undefined && point[c.name] !== null).map((c) => formatCell(c, point[c.name], locale));
  return `${dimensions.join(', ')}${dimensions.length > 0 ? ': ' : ''}${measure.title} ${formatCell(measure, value, locale)}`;
}

/**
 * vega and vega-lite charts (and the map), drawn by the lazily loaded vega module. The chart is one tab stop: arrow
 * keys move between its data points and Enter drills into one (useChartKeys), as a click on the mark does.
 */
export function VegaChart({ snapshot, data, locale, dark, onRendered, onDrill, onFailed, chartRef, label }: ChartProps) {
  const element = useRef<HTMLDivElement>(null);
  const rendered = useRef<RenderedChart | undefined>(undefined);
  const callbacks = useRef({ onRendered, onDrill, onFailed });
  callbacks.current = { onRendered, onDrill, onFailed };
  const drill = (datum: Record<string, unknown>) => {
    const found = drillOf(data.columns, datum);
    if (found !== undefined) callbacks.current.onDrill(found.measure.name, datum[found.measure.name], found.point);
  };
  const keys = useChartKeys(() => (rendered.current?.points() ?? []).map(({ datum, element: mark }) => {
    const found = drillOf(data.columns, datum)!;
    return { element: mark, label: describePoint(data.columns, found.measure, datum[found.measure.name], found.point, locale), drill: () => drill(datum) };
  }));
  const onClick = useRef(drill);
  onClick.current = drill;
  useEffect(() => {
    let chart: RenderedChart | undefined;
    let cancelled = false;
    import('./vega.js').then(({ renderChart }) => renderChart(element.current!, snapshot.spec, data, snapshot.kind, dark, (datum) => onClick.current(datum), locale)).then((result) => {
      if (cancelled) return result.finalize();
      chart = result;
      rendered.current = result;
      if (chartRef) chartRef.current = result;
      callbacks.current.onRendered();
    }, (error: unknown) => {
      if (!cancelled) callbacks.current.onFailed(error);
    });
    return () => {
      cancelled = true;
      chart?.finalize();
    };
  }, [snapshot, data, locale, dark, chartRef]);
  return (
    <>
      <div className="chart vega-chart" ref={element} data-kind={snapshot.kind ?? 'vega'} tabIndex={0} role="group" aria-label={label}
        onKeyDown={keys.onKeyDown} onFocus={keys.onFocus} onBlur={keys.onBlur} />
      <p className="visually-hidden" aria-live="polite">{keys.announcement}</p>
    </>
  );
}

/** Where the grid's focus is: `row` 0 is the header row, 1..n the data rows; `col` from 0. */
interface GridCell { row: number; col: number }

/** Rows a Page Up or Page Down moves over. */
const PAGE_ROWS = 10;

/**
 * The cell a key moves to from `at` in a grid of `rows` rows (the header included) and `cols` columns, as the WAI-ARIA
 * grid pattern says: arrows by one, Home and End to the row's ends (with Ctrl, the grid's), Page Up and Page Down by
 * ten rows, never past an edge. `undefined` for a key the grid does not handle.
 */
export function moveInGrid(at: GridCell, key: string, ctrl: boolean, rows: number, cols: number): GridCell | undefined {
  const to = (row: number, col: number) => ({ row: Math.max(0, Math.min(rows - 1, row)), col: Math.max(0, Math.min(cols - 1, col)) });
  switch (key) {
    case 'ArrowDown': return to(at.row + 1, at.col);
    case 'ArrowUp': return to(at.row - 1, at.col);
    case 'ArrowRight': return to(at.row, at.col + 1);
    case 'ArrowLeft': return to(at.row, at.col - 1);
    case 'Home': return ctrl ? to(0, 0) : to(at.row, 0);
    case 'End': return ctrl ? to(rows - 1, cols - 1) : to(at.row, cols - 1);
    case 'PageDown': return to(at.row + PAGE_ROWS, at.col);
    case 'PageUp': return to(at.row - PAGE_ROWS, at.col);
    default: return undefined;
  }
}

/**
 * A table with the snapshot's column formats; only the rows in view are in the DOM (virtual scrolling). It is one
 * tab stop (the WAI-ARIA grid with a roving tabindex): arrow keys, Home, End and Page keys move between cells,
 * scrolling the row into the DOM, and Enter or Space on a measure's figure drills into it, as a click does. When
 * the focused row has scrolled out of the DOM, its column's header holds the tab stop.
 */
export function TableChart({ data, locale, onRendered, onDrill }: ChartProps) {
  const grid = useRef<HTMLDivElement>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: data.rows.length, getScrollElement: () => scroller.current, estimateSize: () => 30, overscan: 8 });
  useLayoutEffect(() => onRendered(), [onRendered]);
  const objects = useMemo(() => rowObjects(data), [data]);
  const [active, setActive] = useState<GridCell>({ row: data.rows.length > 0 ? 1 : 0, col: 0 });
  // A key moved the focus: the cell takes it once its row is in the DOM (after the virtualizer scrolled to it).
  const focusPending = useRef(false);
  // In the commit (a layout effect): the cell has the focus before the next key press is handled.
  useLayoutEffect(() => {
    if (!focusPending.current) return;
    const cell = grid.current?.querySelector<HTMLElement>(`[data-cell="${active.row}:${active.col}"]`);
    if (cell) {
      focusPending.current = false;
      cell.focus();
    }
  });
  const items = virtualizer.getVirtualItems();
  const tabStop = active.row === 0 || items.some((item) => item.index === active.row - 1) ? active : { row: 0, col: active.col };
  const drillable = (row: number, col: number) => row > 0 && data.columns[col]!.kind === 'measure' && typeof data.rows[row - 1]![col] === 'number';
  const drill = (row: number, col: number) => onDrill(data.columns[col]!.name, data.rows[row - 1]![col], pointOf(data.columns, objects[row - 1]!));
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if ((event.key === 'Enter' || event.key === ' ') && drillable(active.row, active.col)) {
      event.preventDefault();
      drill(active.row, active.col);
      return;
    }
    const next = moveInGrid(active, event.key, event.ctrlKey || event.metaKey, data.rows.length + 1, data.columns.length);
    if (next === undefined) return;
    event.preventDefault();
    focusPending.current = true;
    setActive(next);
    if (next.row > 0) virtualizer.scrollToIndex(next.row - 1);
    else scroller.current?.scrollTo({ top: 0 });
  };
  const cellProps = (row: number, col: number) => ({
    'data-cell': `${row}:${col}`,
    tabIndex: tabStop.row === row && tabStop.col === col ? 0 : -1,
    // A click puts the roving tab stop where the pointer is, as the arrows would.
    onFocus: () => {
      if (active.row !== row || active.col !== col) setActive({ row, col });
    },
  });
  const template = useMemo(() => tableColumnTemplate(data.columns, data.rows, locale), [data, locale]);
  return (
    <div className="chart table-chart" role="grid" aria-readonly="true" aria-rowcount={data.rows.length + 1} aria-colcount={data.columns.length} ref={grid} onKeyDown={onKeyDown}>
      <div className="table-head" role="row" aria-rowindex={1} style={{ gridTemplateColumns: template }}>
        {data.columns.map((column, col) => (
          <span key={column.name} role="columnheader" className={column.type === 'number' ? 'numeric' : undefined} {...cellProps(0, col)}>{column.title}</span>
        ))}
      </div>
      <div className="table-body" ref={scroller}>
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {items.map((item) => {
            const row = data.rows[item.index]!;
            return (
              <div key={item.key} role="row" aria-rowindex={item.index + 2} className="table-row" style={{ gridTemplateColumns: template, transform: `translateY(${item.start}px)`, height: item.size }}>
                {data.columns.map((column, col) => (
                  drillable(item.index + 1, col) ? (
                    // A measure's figure drills into the rows behind it (a click, or Enter or Space on the focused cell).
                    <span key={column.name} role="gridcell" className="cell numeric drillable" {...cellProps(item.index + 1, col)} onClick={() => drill(item.index + 1, col)}>
                      {formatCell(column, row[col], locale)}
                    </span>
                  ) : (
                    <span key={column.name} role="gridcell" className={column.type === 'number' ? 'cell numeric' : 'cell'} {...cellProps(item.index + 1, col)}>{formatCell(column, row[col], locale)}</span>
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
