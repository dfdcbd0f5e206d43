import type { EmbedSession } from '../session.js';
import type { ChartKind, Meta, PreviewAnswer, SemanticQuery } from './builder.js';

/**
 * The embed's exploration routes (issue 35; docs/explore.md), as the embed calls them with the viewer's token: the
 * views and members this viewer may use, a query answered like widget data (the viewer's policy, the cache, the
 * rollups), saved charts and saved views of a dashboard. Another tenant's id answers 404.
 */

export type Visibility = 'private' | 'tenant';

export interface SavedChart {
  id: string;
  title: string;
  query: SemanticQuery;
  kind: string;
  spec?: Record<string, unknown> | null;
  visibility: Visibility;
  /** Who saved it (an embed user of the tenant). */
  author: { userId: number; username: string };
  mine: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A saved chart placed in a view's personal layout (the author's dashboard is never changed). */
export interface PlacedChart { chartId: string; x: number; y: number; w: number; h: number }

/** What a saved view restores: the filters (by member, as widget data takes them), the grain, the field swaps. */
export interface ViewState {
  filters: Record<string, unknown>;
  granularity?: string;
  fields?: Record<string, string>;
  charts?: PlacedChart[];
}

export interface SavedView {
  id: string;
  publicId: string;
  name: string;
  state: ViewState;
  visibility: Visibility;
  author: { userId: number; username: string };
  mine: boolean;
  createdAt: string;
  updatedAt: string;
}

const enc = encodeURIComponent;
const viewsPath = (publicId: string) => `/api/v1/embed/dashboard/${enc(publicId)}/views`;

export const fetchExploreMeta = (session: EmbedSession): Promise<Meta> => session.request('/api/v1/embed/meta');

/** A query (the builder's), or a saved chart by id, run under this viewer's policy. */
export const runExploreQuery = (session: EmbedSession, body: { query: SemanticQuery } | { chartId: string }, timezone?: string): Promise<PreviewAnswer> =>
  session.request('/api/v1/embed/explore/query', { method: 'POST', body: { ...body, ...(timezone !== undefined ? { timezone } : {}) } });

export const listCharts = (session: EmbedSession): Promise<{ charts: SavedChart[] }> => session.request('/api/v1/embed/charts');

export const saveChart = (session: EmbedSession, chart: { title: string; query: SemanticQuery; kind: ChartKind | string; spec?: Record<string, unknown> | null; visibility: Visibility }): Promise<SavedChart> =>
  session.request('/api/v1/embed/charts', { method: 'POST', body: chart.spec === null || chart.spec === undefined ? { title: chart.title, query: chart.query, kind: chart.kind, visibility: chart.visibility } : chart });

export const updateChart = (session: EmbedSession, chartId: string, patch: { title?: string; visibility?: Visibility }): Promise<SavedChart> =>
  session.request(`/api/v1/embed/charts/${enc(chartId)}`, { method: 'PATCH', body: patch });

export const deleteChart = (session: EmbedSession, chartId: string): Promise<void> =>
  session.request(`/api/v1/embed/charts/${enc(chartId)}`, { method: 'DELETE' });

export const listViews = (session: EmbedSession, publicId: string): Promise<{ views: SavedView[] }> => session.request(viewsPath(publicId));

export const fetchView = (session: EmbedSession, publicId: string, viewId: string): Promise<SavedView> => session.request(`${viewsPath(publicId)}/${enc(viewId)}`);

export const saveView = (session: EmbedSession, publicId: string, view: { name: string; state: ViewState; visibility: Visibility }): Promise<SavedView> =>
  session.request(viewsPath(publicId), { method: 'POST', body: view });

export const updateView = (session: EmbedSession, publicId: string, viewId: string, patch: { name?: string; state?: ViewState; visibility?: Visibility }): Promise<SavedView> =>
  session.request(`${viewsPath(publicId)}/${enc(viewId)}`, { method: 'PATCH', body: patch });

export const deleteView = (session: EmbedSession, publicId: string, viewId: string): Promise<void> =>
  session.request(`${viewsPath(publicId)}/${enc(viewId)}`, { method: 'DELETE' });
