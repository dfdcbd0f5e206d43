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

/** The container a widget lies in (`config.parentId`, as the embed's grid reads it), if any. */
export const parentOf = (widget: DashboardWidget): string | undefined => (typeof widget.config?.parentId === 'string' ? widget.config.parentId : undefined);

/** The widgets on the dashboard's own grid: those in no container (a child's position is relative to its container). */
export const topLevel = (widgets: readonly DashboardWidget[]) => widgets.filter((w) => parentOf(w) === undefined);

/** The first row below every widget of the dashboard's grid: where a new one goes. */
export const bottomOf = (widgets: readonly DashboardWidget[]) => topLevel(widgets).reduce((bottom, w) => Math.max(bottom, w.position.y + w.position.h), 0);

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
  const target = widgetsOf(draft).find((w) => w.id === widgetId);
  if (target === undefined) return draft;
  // A container's children stay: they go back to the dashboard's grid.
  if (widgetsOf(draft).some((w) => parentOf(w) === widgetId)) draft = setChildren(draft, widgetId, []);
  const widgets = widgetsOf(draft);
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

/** The control widgets the editor adds besides CHART and TEXT, each with its size on the grid and its id's prefix. */
export const CONTROL_TYPES = ['FILTER', 'TIME_GRAIN', 'FIELD', 'CONTAINER', 'DIVIDER'] as const;
export type ControlType = (typeof CONTROL_TYPES)[number];

const NEW_WIDGET: Record<ControlType, { prefix: string; w: number; h: number }> = {
  FILTER: { prefix: 'filter', w: 3, h: 2 },
  TIME_GRAIN: { prefix: 'grain', w: 3, h: 2 },
  FIELD: { prefix: 'field', w: 3, h: 2 },
  CONTAINER: { prefix: 'container', w: GRID_COLS, h: 2 },
  DIVIDER: { prefix: 'divider', w: GRID_COLS, h: 1 },
};

/** A config without its keys set to undefined; undefined when nothing is left (a DIVIDER has no config). */
function cleanConfig(config: Record<string, unknown>): Record<string, unknown> | undefined {
  const kept = Object.entries(config).filter(([, value]) => value !== undefined);
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

const withConfig = (widget: DashboardWidget, config: Record<string, unknown> | undefined): DashboardWidget => {
  const { config: _old, ...rest } = widget;
  return config === undefined ? rest : { ...rest, config };
};

/**
 * A FILTER, TIME_GRAIN, FIELD, CONTAINER or DIVIDER widget below the others, with the config its form made (keys set
 * to undefined are left out). A container's children are set by `setChildren`.
 */
export function addWidget(draft: Draft, type: ControlType, config: Record<string, unknown> = {}): { draft: Draft; widgetId: string } {
  const widgets = widgetsOf(draft);
  const { prefix, w, h } = NEW_WIDGET[type];
  const id = newWidgetId(widgets, prefix);
  const widget = withConfig({ id, type, position: { x: 0, y: bottomOf(widgets), w, h } }, cleanConfig(config));
  return { draft: withWidgets(draft, [...widgets, widget]), widgetId: id };
}

/**
 * A widget's config changed in place (same id, same position, same place in the list): the keys given replace
 * theirs, a key given as undefined is removed, the others (its `parentId`, keys the console does not edit) stay.
 */
export function editWidget(draft: Draft, widgetId: string, changes: Record<string, unknown>): Draft {
  const widgets = widgetsOf(draft);
  const target = widgets.find((w) => w.id === widgetId);
  if (target === undefined) return draft;
  const config = cleanConfig({ ...(target.config ?? {}), ...changes });
  if (JSON.stringify(config ?? null) === JSON.stringify(target.config ?? null)) return draft;
  return withWidgets(draft, widgets.map((w) => (w.id === widgetId ? withConfig(w, config) : w)));
}

/** A TEXT widget's Markdown changed in place. */
export const editText = (draft: Draft, widgetId: string, markdown: string): Draft => editWidget(draft, widgetId, { markdown });

/** The fields of a chart's old snapshot that its new one keeps: what names it, and its column formats. */
const KEPT_ON_EDIT = ['reportId', 'name', 'description', 'isSourceReport', 'preferences'];

/**
 * A CHART widget shows a new snapshot (its query and drawing changed in the chart builder), in place: same id, same
 * position. Its snapshot is replaced where it lies (keeping its reportId, name and column formats), unless another
 * widget shows it too: then the new one is added and named by `snapshotIndex`, and the other widget keeps the old.
 */
export function replaceChart(draft: Draft, widgetId: string, snapshot: SnapshotInput): Draft {
  const widgets = widgetsOf(draft);
  const target = widgets.find((w) => w.id === widgetId);
  if (target === undefined || target.type !== 'CHART') return draft;
  const index = snapshotIndexFor(draft, target);
  const shared = index !== undefined && widgets.some((w) => w.id !== widgetId && snapshotIndexFor(draft, w) === index);
  if (index === undefined || shared) {
    // Pin the other charts first: one found by its place must not move to the new snapshot.
    const pinned = widgets.map((w) => {
      if (w.type !== 'CHART' || typeof w.config?.reportId === 'number') return w;
      const at = snapshotIndexFor(draft, w);
      return at === undefined ? w : { ...w, config: { ...(w.config ?? {}), snapshotIndex: at } };
    });
    const { reportId: _reportId, ...config } = target.config ?? {};
    const retargeted = pinned.map((w) => (w.id === widgetId ? { ...w, config: { ...config, snapshotIndex: draft.reportSnapshots.length } } : w));
    return withWidgets(draft, retargeted, [...draft.reportSnapshots, snapshotInput(snapshot)]);
  }
  const old = draft.reportSnapshots[index]!;
  const kept = Object.fromEntries(Object.entries(old).filter(([key, value]) => KEPT_ON_EDIT.includes(key) && value !== undefined && value !== null));
  const next = snapshotInput({ ...kept, ...snapshot });
  return withWidgets(draft, widgets, draft.reportSnapshots.map((s, i) => (i === index ? next : s)));
}

/** The widgets a container may hold: those on the dashboard's grid that are no container themselves. */
export const childCandidates = (draft: Draft, containerId: string | undefined): DashboardWidget[] =>
  widgetsOf(draft).filter((w) => w.id !== containerId && w.type !== 'CONTAINER' && w.type !== 'PARENT' && (parentOf(w) === undefined || parentOf(w) === containerId));

/** The rows a container's title takes above its children. */
const CONTAINER_CHROME = 1;

/**
 * A container's children set to `childIds` (in that order), as the embed's grid reads them: each child's
 * `config.parentId` names the container, its position is relative to the container's own grid. Children it had
 * keep their places; new ones are placed below them, left to right; a child no longer named goes back to the
 * dashboard's grid, below the other widgets. The container grows or shrinks to hold them under its title.
 */
export function setChildren(draft: Draft, containerId: string, childIds: readonly string[]): Draft {
  const widgets = widgetsOf(draft);
  const container = widgets.find((w) => w.id === containerId);
  if (container === undefined) return draft;
  const wanted = new Set(childIds.filter((id) => childCandidates(draft, containerId).some((w) => w.id === id)));
  const before = widgets.filter((w) => parentOf(w) === containerId);
  if (before.length === wanted.size && before.every((w) => wanted.has(w.id))) return draft;
  const staying = before.filter((w) => wanted.has(w.id));
  let bottom = staying.reduce((b, w) => Math.max(b, w.position.y + w.position.h), 0);
  const placed = new Map<string, DashboardWidget>();
  let x = 0;
  let rowHeight = 0;
  const width = container.position.w;
  for (const id of childIds) {
    const widget = widgets.find((w) => w.id === id);
    if (widget === undefined || !wanted.has(id) || parentOf(widget) === containerId) continue;
    const w = Math.min(widget.position.w, width);
    if (x + w > width) {
      bottom += rowHeight;
      x = 0;
      rowHeight = 0;
    }
    placed.set(id, { ...widget, position: { ...widget.position, x, y: bottom, w }, config: { ...(widget.config ?? {}), parentId: containerId } });
    x += w;
    rowHeight = Math.max(rowHeight, widget.position.h);
  }
  bottom += rowHeight;
  // The container takes the rows its children need; the widgets below it move down when it grows.
  const h = CONTAINER_CHROME + Math.max(1, bottom);
  const below = container.position.y + container.position.h;
  const grown = Math.max(0, h - container.position.h);
  const resized = widgets.map((w) => {
    const moved = placed.get(w.id);
    if (moved !== undefined) return moved;
    if (w.id === containerId) return { ...w, position: { ...w.position, h } };
    if (grown > 0 && parentOf(w) === undefined && w.position.y >= below) return { ...w, position: { ...w.position, y: w.position.y + grown } };
    return w;
  });
  // Released children go below the dashboard's other widgets.
  let free = bottomOf(resized.filter((w) => !(parentOf(w) === containerId && !wanted.has(w.id))));
  const next = resized.map((w) => {
    if (parentOf(w) !== containerId || wanted.has(w.id)) return w;
    const { parentId: _parentId, ...config } = w.config ?? {};
    const position = { ...w.position, x: 0, y: free };
    free += w.position.h;
    return { ...withConfig(w, cleanConfig(config)), position };
  });
  return withWidgets(draft, next);
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
