import '../dashboard/charts.css';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import type { ReportSnapshot, ResultColumn, WidgetData } from '../api.js';
import { KpiChart, TableChart, VegaChart } from '../dashboard/charts.js';
import type { ChartProps } from '../dashboard/charts.js';
import { SankeyChart } from '../dashboard/sankey.js';
import { withFormats } from './builder.js';

/** What a chart draws: a report snapshot's drawing (`kind`, `spec`) and its column formats. */
export interface ChartSnapshot {
  kind?: string | null;
  spec?: unknown;
  meta?: Record<string, unknown> | null;
  preferences?: { columnFormats?: Record<string, { type: 'currency' | 'percent' | 'number'; decimalPlaces?: number | null }> } | null;
}

/** The rows to draw: a preview's or a widget's answer. */
export interface ChartData {
  columns: readonly ResultColumn[];
  rows: unknown[][];
  truncated?: boolean;
  timezone?: string;
}

/**
 * A chart drawn exactly as the embed draws a widget (issue 34): the embed's own components (apps/embed/src/dashboard
 * charts.tsx, sankey.tsx, and vega.ts, which loads vega when a chart first needs it), picked by the snapshot's kind
 * as the embed's Widget picks them, over an answer with the snapshot's column formats on its columns as svc puts them
 * on a widget's. This module is a chunk of its own (the builder imports it lazily): the console's first page never
 * carries it. Clicking a mark does nothing here (no drill-down outside a dashboard). `chartId` names the chart as a
 * widget's id names it in the embed (the builder's preview, or a board's widget).
 */
export function ChartView({ snapshot, data, dark, locale, label, chartId = 'preview' }: { snapshot: ChartSnapshot; data: ChartData; dark: boolean; locale: string; label?: string; chartId?: string }) {
  const [failed, setFailed] = useState<string | undefined>(undefined);
  const formats = snapshot.preferences?.columnFormats ?? undefined;
  const widgetData = useMemo((): WidgetData => ({
    columns: withFormats(data.columns, formats), rows: data.rows, truncated: data.truncated ?? false, timezone: data.timezone ?? 'UTC', ignoredFilters: [],
  }), [data, formats]);
  const drawn = useMemo(() => snapshot as ReportSnapshot, [snapshot]);
  // A new drawing or answer draws afresh, past an earlier failure.
  useEffect(() => setFailed(undefined), [snapshot, data]);
  const settled = useCallback(() => undefined, []);
  const drill = useCallback(() => undefined, []);
  const onFailed = useCallback((error: unknown) => setFailed(error instanceof Error ? error.message : String(error)), []);
  if (data.rows.length === 0) return <p class="hint chart-view-empty">–</p>;
  if (failed !== undefined) return <p class="error" role="alert">{failed}</p>;
  const props: ChartProps = { widgetId: chartId, snapshot: drawn, data: widgetData, locale, dark, onRendered: settled, onDrill: drill, onFailed, ...(label !== undefined ? { label } : {}) };
  const kind = snapshot.kind ?? 'table';
  return (
    <div class={`chart-view kind-${kind}`} data-kind={kind}>
      {kind === 'table' ? <TableChart {...props} /> : kind === 'kpi' ? <KpiChart {...props} /> : kind === 'sankey' ? <SankeyChart {...props} /> : <VegaChart {...props} />}
    </div>
  );
}
