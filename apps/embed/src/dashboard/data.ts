import { createContext, useContext, useEffect, useRef, useState } from 'react';
import { fetchWidgetData } from '../api.js';
import type { WidgetData, WidgetDataRequest } from '../api.js';
import type { Formatters } from '../format.js';
import type { Translate } from '../i18n.js';
import { ApiError } from '../session.js';
import type { EmbedSession } from '../session.js';
import type { AiQueryEvent } from '@svc/protocol';

/** What every widget of a dashboard shares: who asks, for which dashboard, with which viewer choices. */
export interface DashboardData {
  session: EmbedSession;
  publicId: string;
  /** The viewer's filters by member (`view.dimension`), the time zone, the TIME_GRAIN and FIELD choices. */
  request: WidgetDataRequest;
  /**
   * This load of the dashboard came from a refresh: each widget's first query asks svc past its result cache.
   * (A refresh loads the dashboard again, and its widgets mount anew.)
   */
  force: boolean;
  t: Translate;
  format: Formatters;
  allowExport: boolean;
  dark: boolean;
  /** The widgets' current data, for dashboard-wide exports. */
  exports: Map<string, { title: string; data: WidgetData }>;
  /** A widget rendered its data, its empty, not-available or error state (dashboard-loaded waits for all). */
  onSettled(widgetId: string): void;
  onError(error: unknown, context: string): void;
  onFilter(member: string, value: unknown, title?: string): void;
  onGranularity(granularity: string | undefined): void;
  onField(member: string, replacement: string | undefined): void;
  onDrilldown(drill: Drilldown): void;
  onDownload(download: DownloadEvent): void;
  onAiQuery(event: AiQueryEvent): void;
  timezone: string;
  /** Generate Session's settings.explore (issue 35): with create, a CHART widget offers "Explore" (onExplore). */
  explore: 'none' | 'view' | 'create';
  onExplore(widgetId: string): void;
}

export interface Drilldown {
  widgetId: string;
  title: string;
  member: string;
  value: unknown;
  point: Record<string, unknown>;
}

export interface DownloadEvent {
  format: 'csv' | 'xlsx' | 'png' | 'pdf';
  target: 'widget' | 'dashboard';
  widgetId?: string;
  title?: string;
  rowCount?: number;
}

export const DashboardDataContext = createContext<DashboardData | null>(null);

export function useDashboardData(): DashboardData {
  const value = useContext(DashboardDataContext);
  if (value === null) throw new Error('a widget rendered outside a dashboard');
  return value;
}

/** `forbidden`: an access policy keeps the widget's data from this viewer (issue 20), which is no failure. */
export type DataState = { state: 'loading' } | { state: 'ready'; data: WidgetData } | { state: 'forbidden' } | { state: 'failed'; error: unknown };

/**
 * Whether svc refused data because it is not the viewer's to read (403: a member an access policy hides, or raw SQL
 * under a policy). The viewer sees a calm "not available to you" state, never the server's text, and the host
 * hears no `error`: the dashboard works as its policies say.
 *
 * @example isNotAvailable(new ApiError(403, 'forbidden', 'orders.amount is not available to you')) // true
 */
export function isNotAvailable(error: unknown): boolean {
  return error instanceof ApiError && error.status === 403;
}

/** A widget's data: its query runs on mount (past svc's cache after a refresh), and again on any change of the viewer's choices. */
export function useWidgetData(widgetId: string, enabled = true): DataState {
  const { session, publicId, request, force, onError } = useDashboardData();
  const [state, setState] = useState<DataState>({ state: 'loading' });
  const body = JSON.stringify(request);
  const errors = useRef(onError);
  errors.current = onError;
  // Only the first query after a refresh skips svc's cache; a change of the viewer's choices may be answered from it.
  const forceNext = useRef(force);
  useEffect(() => {
    if (!enabled) return;
    const controller = new AbortController();
    const forced = forceNext.current;
    forceNext.current = false;
    setState((previous) => (previous.state === 'ready' || previous.state === 'forbidden' ? previous : { state: 'loading' }));
    fetchWidgetData(session, publicId, widgetId, { ...(JSON.parse(body) as WidgetDataRequest), ...(forced ? { force: true } : {}) }, controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ state: 'ready', data });
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        if (isNotAvailable(error)) {
          setState({ state: 'forbidden' });
          return;
        }
        setState({ state: 'failed', error });
        errors.current(error, `widget:${widgetId}`);
      },
    );
    return () => controller.abort();
  }, [session, publicId, widgetId, body, enabled]);
  return state;
}
