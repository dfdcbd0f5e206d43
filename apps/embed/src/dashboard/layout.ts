import type { WidgetPosition } from '../api.js';

/** react-grid-layout's breakpoints, widest first. */
export const BREAKPOINTS = ['lg', 'md', 'sm', 'xs', 'xxs'] as const;
export type Breakpoint = (typeof BREAKPOINTS)[number];

/** react-grid-layout's own breakpoints and cols, which DashboardLayout's values replace one by one. */
export const DEFAULT_BREAKPOINTS: Readonly<Record<Breakpoint, number>> = { lg: 1200, md: 996, sm: 768, xs: 480, xxs: 0 };
export const DEFAULT_COLS: Readonly<Record<Breakpoint, number>> = { lg: 12, md: 10, sm: 6, xs: 4, xxs: 2 };

/** DashboardLayout's per-breakpoint values over react-grid-layout's defaults (null keeps the default). */
export function perBreakpoint(given: Record<string, number | null> | null | undefined, defaults: Readonly<Record<Breakpoint, number>>): Record<Breakpoint, number> {
  const result = { ...defaults };
  for (const key of BREAKPOINTS) {
    const value = given?.[key];
    if (typeof value === 'number') result[key] = value;
  }
  return result;
}

/**
 * The grid width above which the author's `lg` layout is shown as laid out: the breakpoint of the narrowest grid,
 * counting down from lg, that still has lg's cols (deriveLayout keeps the lg places there). The grid needs more
 * than this; below it, widgets are rescaled or stacked.
 *
 * @example
 * authorLayoutWidth({ breakpoints: { lg: 1100, md: 900, sm: 640 }, cols: { lg: 12, md: 12, sm: 6 } }) // => 900
 */
export function authorLayoutWidth(layout: { breakpoints?: Record<string, number | null> | null; cols?: Record<string, number | null> | null } | null | undefined): number {
  const breakpoints = perBreakpoint(layout?.breakpoints, DEFAULT_BREAKPOINTS);
  const cols = perBreakpoint(layout?.cols, DEFAULT_COLS);
  let needed = breakpoints.lg;
  for (const breakpoint of BREAKPOINTS) {
    if (cols[breakpoint] < cols.lg) break;
    needed = breakpoints[breakpoint];
  }
  return needed;
}

/** The breakpoints where every widget takes the grid's full width, one under the other ("small"). */
const FULL_WIDTH: readonly Breakpoint[] = ['xs', 'xxs'];

export interface PlacedWidget {
  id: string;
  /** Its place on the `lg` grid: the author's layout, from which the others are derived. */
  lg: WidgetPosition;
  /** Its own places at other breakpoints (`responsiveLayouts`), which win over the derived ones. */
  own?: Partial<Record<Breakpoint, WidgetPosition | null | undefined>>;
  /** Its height on the full-width breakpoints, when it needs more rows there (wrapped text, stacked children). */
  smallH?: number;
}

/** Whether every widget takes the full width on this breakpoint. */
export const isFullWidth = (breakpoint: Breakpoint) => FULL_WIDTH.includes(breakpoint);

/** Reading order: top to bottom, then left to right. */
export const byReadingOrder = (a: WidgetPosition, b: WidgetPosition) => a.y - b.y || a.x - b.x;

/**
 * Places the widgets on a grid of `cols` columns, derived from their `lg` places: widths scaled to the columns
 * (the full width on small breakpoints), in the `lg` reading order, each one at the first free place after the
 * previous one, then stretched down over any hole left under it. Widgets with their own place there keep it.
 *
 * @example
 * deriveLayout([{ id: 'a', lg: { x: 0, y: 0, w: 6, h: 2 } }, { id: 'b', lg: { x: 6, y: 0, w: 6, h: 2 } }], 'xs', 2, 12)
 * // => { a: { x: 0, y: 0, w: 2, h: 2 }, b: { x: 0, y: 2, w: 2, h: 2 } }
 */
export function deriveLayout(widgets: readonly PlacedWidget[], breakpoint: Breakpoint, cols: number, lgCols: number): Record<string, WidgetPosition> {
  const placed: Record<string, WidgetPosition> = {};
  const taken: boolean[][] = [];
  const isFree = (x: number, y: number, w: number, h: number) => {
    for (let row = y; row < y + h; row++) for (let col = x; col < x + w; col++) if (taken[row]?.[col]) return false;
    return true;
  };
  const take = (p: WidgetPosition) => {
    for (let row = p.y; row < p.y + p.h; row++) {
      taken[row] ??= [];
      for (let col = p.x; col < p.x + p.w; col++) taken[row]![col] = true;
    }
  };
  for (const widget of widgets) {
    const own = breakpoint === 'lg' ? widget.own?.lg ?? widget.lg : widget.own?.[breakpoint];
    if (own) {
      placed[widget.id] = { ...own };
      take(own);
    }
  }
  // A grid as wide as lg's keeps the author's places.
  if (cols >= lgCols && breakpoint !== 'lg') {
    for (const widget of widgets) if (!placed[widget.id]) take(placed[widget.id] = { ...widget.lg });
    return placed;
  }
  if (breakpoint === 'lg') {
    for (const widget of widgets) if (!placed[widget.id]) take(placed[widget.id] = { ...widget.lg });
    return placed;
  }
  const derived = widgets.filter((widget) => !placed[widget.id]).sort((a, b) => byReadingOrder(a.lg, b.lg));
  const full = FULL_WIDTH.includes(breakpoint);
  let previous = { x: -1, y: 0 };
  for (const widget of derived) {
    const w = full ? cols : Math.max(1, Math.min(cols, Math.round((widget.lg.w * cols) / lgCols)));
    const h = Math.max(1, full ? widget.smallH ?? widget.lg.h : widget.lg.h);
    // The first free place after the previous widget in reading order: order is kept, and earlier gaps fill.
    let spot: WidgetPosition | undefined;
    for (let y = previous.y; spot === undefined; y++) {
      for (let x = y === previous.y ? previous.x + 1 : 0; x + w <= cols; x++) {
        if (isFree(x, y, w, h)) {
          spot = { x, y, w, h };
          break;
        }
      }
    }
    placed[widget.id] = spot;
    take(spot);
    previous = spot;
  }
  // A derived widget with empty columns to its right (widths that do not add up to the cols) widens into them, then
  // one with empty rows under it (the next widget below is lower) grows down: the grid has no holes.
  const fill = (p: WidgetPosition, from: WidgetPosition) => {
    for (let row = from.y; row < p.y + p.h; row++) for (let col = from.x; col < p.x + p.w; col++) (taken[row] ??= [])[col] = true;
  };
  for (const widget of derived) {
    const p = placed[widget.id]!;
    const before = { ...p };
    while (p.x + p.w < cols && isFree(p.x + p.w, p.y, 1, p.h)) p.w++;
    fill(p, { ...before, x: before.x + before.w - 1 });
  }
  const bottom = Math.max(0, ...Object.values(placed).map((p) => p.y + p.h));
  for (const widget of derived) {
    const p = placed[widget.id]!;
    let end = p.y + p.h;
    while (end < bottom && isFree(p.x, end, p.w, 1)) end++;
    if (end === bottom) continue;
    const before = { ...p };
    p.h = end - p.y;
    fill(p, { ...before, y: before.y + before.h - 1 });
  }
  return placed;
}
