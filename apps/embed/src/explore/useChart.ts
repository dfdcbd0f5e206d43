import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ChartData, ChartSnapshot } from './ChartView.js';

/** Whether the system asks for dark colours (the console follows prefers-color-scheme): charts draw their ink by it. */
export function usePrefersDark(): boolean {
  const query = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : undefined;
  const [dark, setDark] = useState(query?.matches ?? false);
  useEffect(() => {
    if (query === undefined) return undefined;
    const changed = () => setDark(query.matches);
    query.addEventListener('change', changed);
    return () => query.removeEventListener('change', changed);
    // One media query for the page's life.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return dark;
}

export type ChartViewComponent = FunctionComponent<{ snapshot: ChartSnapshot; data: ChartData; dark: boolean; locale: string; label?: string; chartId?: string }>;

/**
 * The chart view (apps/embed/src/explore/ChartView.tsx, the embed's charts), loaded as a chunk of its own when a builder or a board's
 * first chart needs it: the console's first page never carries it.
 */
export function useChartView(): ChartViewComponent | undefined {
  const [view, setView] = useState<{ component: ChartViewComponent } | undefined>(undefined);
  useEffect(() => {
    let live = true;
    import('./ChartView.js').then((module) => { if (live) setView({ component: module.ChartView as ChartViewComponent }); }, () => undefined);
    return () => { live = false; };
  }, []);
  return view?.component;
}
