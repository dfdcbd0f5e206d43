import { describe, expect, it } from 'vitest';
import { nextPoint } from './chartKeys.js';
import { moveInGrid } from './charts.js';
import { chartMarks } from './vega.js';

describe('moveInGrid: the WAI-ARIA grid keys over a table of 5 rows (header included) and 3 columns', () => {
  const at = { row: 2, col: 1 };
  it('moves one cell per arrow and stops at every edge', () => {
    expect(moveInGrid(at, 'ArrowDown', false, 5, 3)).toEqual({ row: 3, col: 1 });
    expect(moveInGrid(at, 'ArrowUp', false, 5, 3)).toEqual({ row: 1, col: 1 });
    expect(moveInGrid(at, 'ArrowRight', false, 5, 3)).toEqual({ row: 2, col: 2 });
    expect(moveInGrid(at, 'ArrowLeft', false, 5, 3)).toEqual({ row: 2, col: 0 });
    expect(moveInGrid({ row: 0, col: 0 }, 'ArrowUp', false, 5, 3)).toEqual({ row: 0, col: 0 });
    expect(moveInGrid({ row: 4, col: 2 }, 'ArrowRight', false, 5, 3)).toEqual({ row: 4, col: 2 });
  });
  it("goes to the row's ends with Home and End, to the grid's corners with Ctrl, and ten rows (at most to the edge) with the Page keys", () => {
    expect(moveInGrid(at, 'Home', false, 5, 3)).toEqual({ row: 2, col: 0 });
    expect(moveInGrid(at, 'End', false, 5, 3)).toEqual({ row: 2, col: 2 });
    expect(moveInGrid(at, 'Home', true, 5, 3)).toEqual({ row: 0, col: 0 });
    expect(moveInGrid(at, 'End', true, 5, 3)).toEqual({ row: 4, col: 2 });
    expect(moveInGrid(at, 'PageDown', false, 5, 3)).toEqual({ row: 4, col: 1 });
    expect(moveInGrid({ row: 1, col: 1 }, 'PageDown', false, 40, 3)).toEqual({ row: 11, col: 1 });
    expect(moveInGrid(at, 'PageUp', false, 5, 3)).toEqual({ row: 0, col: 1 });
  });
  it('leaves other keys to the page (Tab, letters)', () => {
    expect(moveInGrid(at, 'Tab', false, 5, 3)).toBeUndefined();
    expect(moveInGrid(at, 'a', false, 5, 3)).toBeUndefined();
  });
});

describe("nextPoint: a chart's points under the arrow keys", () => {
  it('starts at the first point with any arrow, steps by one and stops at the ends; Home and End jump', () => {
    expect(nextPoint(-1, 'ArrowRight', 4)).toBe(0);
    expect(nextPoint(-1, 'ArrowLeft', 4)).toBe(0);
    expect(nextPoint(1, 'ArrowDown', 4)).toBe(2);
    expect(nextPoint(1, 'ArrowUp', 4)).toBe(0);
    expect(nextPoint(3, 'ArrowRight', 4)).toBe(3);
    expect(nextPoint(0, 'ArrowLeft', 4)).toBe(0);
    expect(nextPoint(2, 'Home', 4)).toBe(0);
    expect(nextPoint(0, 'End', 4)).toBe(3);
    expect(nextPoint(0, 'Enter', 4)).toBeUndefined();
    expect(nextPoint(-1, 'ArrowRight', 0)).toBeUndefined();
  });
});

describe("chartMarks: the data marks of a vega scenegraph, in reading order", () => {
  const measures = new Set(['orders.revenue']);
  const bar = (category: string, y: number) => ({ datum: { 'orders.category': category, 'orders.revenue': 1 }, bounds: { x1: 0, y1: y } });
  it("keeps user marks whose datum holds a measure (not axes, legends or a line's path), adds up groups' offsets, and sorts left to right, then top to bottom", () => {
    const root = {
      marktype: 'group',
      items: [{
        x: 10, y: 5,
        items: [
          { marktype: 'rect', role: 'axis-tick', items: [{ datum: { value: 1 }, bounds: { x1: 0, y1: 0 } }] },
          { marktype: 'rect', role: 'mark', items: [bar('Sports', 40), bar('Books', 0), bar('Garden', 20)] },
          { marktype: 'line', role: 'mark', items: [{ datum: { 'orders.revenue': 2 }, bounds: { x1: 0, y1: 0 } }] },
          { marktype: 'group', items: [{ x: 100, y: 0, items: [{ marktype: 'symbol', role: 'mark', items: [{ datum: { 'orders.revenue': 3 }, bounds: { x1: -95, y1: 0 } }] }] }] },
        ],
      }],
    };
    const marks = chartMarks(root, measures);
    expect(marks.map((m) => m.datum['orders.category'] ?? m.datum['orders.revenue'])).toEqual(['Books', 'Garden', 'Sports', 3]);
  });
  it('lists a datum drawn twice (a bar and its label) once', () => {
    const datum = { 'orders.revenue': 5 };
    const root = { marktype: 'group', items: [{ items: [{ marktype: 'rect', role: 'mark', items: [{ datum, bounds: { x1: 0, y1: 0 } }] }, { marktype: 'symbol', role: 'mark', items: [{ datum, bounds: { x1: 0, y1: 0 } }] }] }] };
    expect(chartMarks(root, measures)).toHaveLength(1);
  });
});
