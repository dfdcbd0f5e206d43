import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { WidgetPosition } from '../api.js';
import { byReadingOrder, deriveLayout } from './layout.js';
import type { Breakpoint, PlacedWidget } from './layout.js';

interface DemoWidget { id: string; position: WidgetPosition; config?: { parentId?: string }; responsiveLayouts?: PlacedWidget['own'] }

/** The demo dashboard's top-level widgets, as apps/server/demo/demo.json has them. */
function demoWidgets(): PlacedWidget[] {
  const demo = JSON.parse(readFileSync(new URL('../../../server/demo/demo.json', import.meta.url), 'utf8')) as { accounts: Array<{ deployments: Array<{ items: Array<{ ref: string; dashboard?: { config: { widgets: DemoWidget[] } } }> }> }> };
  const item = demo.accounts[0]!.deployments[0]!.items.find((i) => i.ref === 'wb-sales-performance')!;
  return item.dashboard!.config.widgets.filter((w) => w.config?.parentId === undefined).map((w) => ({ id: w.id, lg: w.position, own: w.responsiveLayouts }));
}

/** Cells covered by more than one widget, and rows of a column left empty between two widgets. */
function defects(placed: Record<string, WidgetPosition>, cols: number) {
  const boxes = Object.values(placed);
  const bottom = Math.max(...boxes.map((p) => p.y + p.h));
  let overlaps = 0;
  let holes = 0;
  for (let x = 0; x < cols; x++) {
    let lastBottom = 0;
    for (let y = 0; y < bottom; y++) {
      const covering = boxes.filter((p) => p.x <= x && x < p.x + p.w && p.y <= y && y < p.y + p.h);
      if (covering.length > 1) overlaps++;
      if (covering.length > 0) {
        if (y > lastBottom) holes++;
        lastBottom = y + 1;
      }
    }
  }
  return { overlaps, holes };
}

const CASES: Array<[Breakpoint, number]> = [['md', 10], ['sm', 6], ['xs', 4], ['xxs', 1]];

describe('deriveLayout', () => {
  it.each(CASES)('derives %s (%i cols) from lg with no overlap, no hole and the lg reading order', (breakpoint, cols) => {
    // Without their own places, so that every widget is derived.
    const widgets = demoWidgets().map(({ id, lg }) => ({ id, lg }));
    const placed = deriveLayout(widgets, breakpoint, cols, 12);
    expect(defects(placed, cols)).toEqual({ overlaps: 0, holes: 0 });
    const lgOrder = [...widgets].sort((a, b) => byReadingOrder(a.lg, b.lg)).map((w) => w.id);
    expect(Object.keys(placed).sort((a, b) => byReadingOrder(placed[a]!, placed[b]!))).toEqual(lgOrder);
    for (const p of Object.values(placed)) expect(p.x + p.w).toBeLessThanOrEqual(cols);
  });

  it('gives every widget the full width on xs and xxs', () => {
    for (const [breakpoint, cols] of [['xs', 4], ['xxs', 1]] as const) {
      for (const p of Object.values(deriveLayout(demoWidgets(), breakpoint, cols, 12))) expect(p).toMatchObject({ x: 0, w: cols });
    }
  });

  it("keeps a widget's own place at a breakpoint and flows the others around it", () => {
    const widgets = demoWidgets();
    const placed = deriveLayout(widgets, 'sm', 6, 12);
    expect(placed['kpi-revenue']).toEqual({ x: 0, y: 0, w: 6, h: 3 });
    expect(defects(placed, 6).overlaps).toBe(0);
  });

  it('keeps the lg places on lg, and on a breakpoint as wide as lg', () => {
    const widgets = demoWidgets().map(({ id, lg }) => ({ id, lg }));
    for (const breakpoint of ['lg', 'md'] as const) {
      const placed = deriveLayout(widgets, breakpoint, 12, 12);
      for (const widget of widgets) expect(placed[widget.id]).toEqual(widget.lg);
    }
  });
});
