import type { AuthoredDashboard, DashboardWidget, Draft, SnapshotInput, WidgetPosition } from './api.js';

/**
 * The dashboard editor's pure logic on a draft (issue 34): the draft to edit (the dashboard's draft, else a copy of
 * its published version), and the changes the editor makes to it. Each change answers a new draft: the editor keeps
 * the drafts it went through for undo and redo.
 */

/** The fields a snapshot may carry into a draft (the authoring API's ReportSnapshotInput: no id, no versionNumber). */
const SNAPSHOT_FIELDS = ['reportId', 'name', 'title', 'description', 'kind', 'isSourceReport', 'meta', 'spec', 'sqlQuery', 'pythonCode', 'fillMissingRows', 'periodComparisons', 'preferences'];

export const snapshotInput = (snapshot: SnapshotInput): SnapshotInput =>
  Object.fromEntries(Object.entries(snapshot).filter(([key, value]) => SNAPSHOT_FIELDS.includes(key) && value !== undefined));

/** The draft to edit: the dashboard's own, or (nothing changed since the last publish) its published version's. */
export function draftOf(dashboard: AuthoredDashboard): Draft {
  const source = dashboard.draft ?? dashboard.published;
  return {
    title: source?.title ?? null,
    description: source?.description ?? null,
    allowEmbed: source?.allowEmbed ?? true,
    config: { ...(source?.config ?? {}), widgets: [...(source?.config.widgets ?? [])] },
    reportSnapshots: (source?.reportSnapshots ?? []).map(snapshotInput),
  };
}

export const widgetsOf = (draft: Draft): DashboardWidget[] => draft.config.widgets ?? [];

/** The grid's columns (the embed's lg layout: apps/embed/src/dashboard/layout.ts). */
export const GRID_COLS = 12;

/** The first row below every widget: where a new one goes. */
export const bottomOf = (widgets: readonly DashboardWidget[]) => widgets.reduce((bottom, w) => Math.max(bottom, w.position.y + w.position.h), 0);

/** A widget id not yet in the draft: `chart-1`, `chart-2`… */
export function newWidgetId(widgets: readonly DashboardWidget[], prefix: string): string {
  const taken = new Set(widgets.map((w) => w.id));
  let n = 1;
  while (taken.has(`${prefix}-${n}`)) n++;
  return `${prefix}-${n}`;
}

const withWidgets = (draft: Draft, widgets: DashboardWidget[], reportSnapshots = draft.reportSnapshots): Draft =>
  ({ ...draft, config: { ...draft.config, widgets }, reportSnapshots });

/**
 * A CHART widget with its report snapshot, below the others. The widget names its snapshot by `snapshotIndex` (a
 * snapshot has no reportId before its first publish).
 */
export function addChart(draft: Draft, snapshot: SnapshotInput, size: Pick<WidgetPosition, 'w' | 'h'> = { w: 6, h: 4 }): { draft: Draft; widgetId: string } {
  const widgets = widgetsOf(draft);
  const id = newWidgetId(widgets, 'chart');
  const widget: DashboardWidget = { id, type: 'CHART', position: { x: 0, y: bottomOf(widgets), ...size }, config: { snapshotIndex: draft.reportSnapshots.length } };
  return { draft: withWidgets(draft, [...widgets, widget], [...draft.reportSnapshots, snapshot]), widgetId: id };
}

/** A TEXT widget (markdown), full width, below the others. */
export function addText(draft: Draft, markdown: string): { draft: Draft; widgetId: string } {
  const widgets = widgetsOf(draft);
  const id = newWidgetId(widgets, 'text');
  const widget: DashboardWidget = { id, type: 'TEXT', position: { x: 0, y: bottomOf(widgets), w: GRID_COLS, h: 2 }, config: { markdown } };
  return { draft: withWidgets(draft, [...widgets, widget]), widgetId: id };
}

const snapshotIndexOf = (widget: DashboardWidget): number | undefined =>
  (typeof widget.config?.snapshotIndex === 'number' ? widget.config.snapshotIndex : undefined);

/**
 * The snapshot a widget shows, as the embed and the server find it: by `config.reportId`, else `config.snapshotIndex`,
 * else its place among the CHART widgets.
 */
export function snapshotIndexFor(draft: Draft, widget: DashboardWidget): number | undefined {
  if (widget.type !== 'CHART') return undefined;
  const reportId = widget.config?.reportId;
  if (typeof reportId === 'number') {
    const found = draft.reportSnapshots.findIndex((s) => s.reportId === reportId);
    return found === -1 ? undefined : found;
  }
  const index = snapshotIndexOf(widget);
  if (index !== undefined) return index < draft.reportSnapshots.length ? index : undefined;
  const place = widgetsOf(draft).filter((w) => w.type === 'CHART').indexOf(widget);
  return place >= 0 && place < draft.reportSnapshots.length ? place : undefined;
}

/**
 * The draft without a widget. A CHART's snapshot goes with it when no other widget shows it, and the widgets that
 * named later snapshots by index are renumbered. Charts found by their place keep theirs: they are given their index
 * first, so removing one does not shift what the others show.
 */
export function removeWidget(draft: Draft, widgetId: string): Draft {
  const widgets = widgetsOf(draft);
  const target = widgets.find((w) => w.id === widgetId);
  if (target === undefined) return draft;
  // Pin every chart to the snapshot it shows now.
  const pinned = widgets.map((w) => {
    if (w.type !== 'CHART' || typeof w.config?.reportId === 'number') return w;
    const index = snapshotIndexFor(draft, w);
    return index === undefined ? w : { ...w, config: { ...(w.config ?? {}), snapshotIndex: index } };
  });
  const rest = pinned.filter((w) => w.id !== widgetId);
  const removed = snapshotIndexFor(draft, target);
  if (removed === undefined || rest.some((w) => snapshotIndexFor({ ...draft, config: { ...draft.config, widgets: pinned } }, w) === removed)) return withWidgets(draft, rest);
  const renumbered = rest.map((w) => {
    const index = snapshotIndexOf(w);
    return index !== undefined && typeof w.config?.reportId !== 'number' && index > removed ? { ...w, config: { ...(w.config ?? {}), snapshotIndex: index - 1 } } : w;
  });
  return withWidgets(draft, renumbered, draft.reportSnapshots.filter((_, i) => i !== removed));
}

/** The draft with the grid's positions (react-grid-layout's layout: `i` the widget id). */
export function placeWidgets(draft: Draft, layout: ReadonlyArray<{ i: string } & WidgetPosition>): Draft {
  const at = new Map(layout.map((item) => [item.i, item]));
  let changed = false;
  const widgets = widgetsOf(draft).map((w) => {
    const item = at.get(w.id);
    if (item === undefined) return w;
    const { x, y, w: width, h } = item;
    if (w.position.x === x && w.position.y === y && w.position.w === width && w.position.h === h) return w;
    changed = true;
    return { ...w, position: { ...w.position, x, y, w: width, h } };
  });
  return changed ? withWidgets(draft, widgets) : draft;
}

/** The tallest a widget is made by the keyboard, in rows. */
const MAX_ROWS = 24;

/**
 * A widget's place after a key on its handle: an arrow moves it by a cell, Shift and an arrow resizes it by one
 * (within the grid's columns, one cell at least); undefined for any other key.
 */
export function nudge(position: WidgetPosition, key: string, resize: boolean): WidgetPosition | undefined {
  const { x, y, w, h } = position;
  const clamp = (value: number, low: number, high: number) => Math.min(Math.max(value, low), high);
  if (resize) {
    switch (key) {
      case 'ArrowRight': return { ...position, w: clamp(w + 1, 1, GRID_COLS - x) };
      case 'ArrowLeft': return { ...position, w: clamp(w - 1, 1, GRID_COLS - x) };
      case 'ArrowDown': return { ...position, h: clamp(h + 1, 1, MAX_ROWS) };
      case 'ArrowUp': return { ...position, h: clamp(h - 1, 1, MAX_ROWS) };
      default: return undefined;
    }
  }
  switch (key) {
    case 'ArrowRight': return { ...position, x: clamp(x + 1, 0, GRID_COLS - w) };
    case 'ArrowLeft': return { ...position, x: clamp(x - 1, 0, GRID_COLS - w) };
    case 'ArrowDown': return { ...position, y: y + 1 };
    case 'ArrowUp': return { ...position, y: Math.max(0, y - 1) };
    default: return undefined;
  }
}

/** Undo and redo over the drafts the editor went through. */
export interface History { past: Draft[]; present: Draft; future: Draft[] }

const HISTORY_LIMIT = 100;

export const startHistory = (present: Draft): History => ({ past: [], present, future: [] });

export const record = (history: History, next: Draft): History =>
  (next === history.present ? history : { past: [...history.past, history.present].slice(-HISTORY_LIMIT), present: next, future: [] });

export function undo(history: History): History {
  const previous = history.past[history.past.length - 1];
  return previous === undefined ? history : { past: history.past.slice(0, -1), present: previous, future: [history.present, ...history.future] };
}

export function redo(history: History): History {
  const next = history.future[0];
  return next === undefined ? history : { past: [...history.past, history.present], present: next, future: history.future.slice(1) };
}
