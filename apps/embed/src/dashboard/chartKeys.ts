import { useRef, useState } from 'react';
import type { KeyboardEvent } from 'react';

/** One mark of a chart that the keyboard can reach: the element drawn for it, what it says, and its drill-down. */
export interface KeyPoint {
  element: Element | undefined;
  /** Read out when the point is reached, e.g. `Electronics: Revenue $1,234`. */
  label: string;
  drill(): void;
}

/** The attribute on the element of the point the keyboard is on (styles.css draws an outline from it). */
export const ACTIVE_POINT = 'data-key-active';

/**
 * The index a key moves to among `count` points from `at` (-1: none yet): Right and Down go to the next point,
 * Left and Up to the previous one, Home and End to the ends; never past an edge. `undefined` for other keys.
 */
export function nextPoint(at: number, key: string, count: number): number | undefined {
  if (count === 0) return undefined;
  switch (key) {
    case 'ArrowRight':
    case 'ArrowDown': return Math.min(count - 1, at + 1);
    case 'ArrowLeft':
    case 'ArrowUp': return Math.max(0, at < 0 ? 0 : at - 1);
    case 'Home': return 0;
    case 'End': return count - 1;
    default: return undefined;
  }
}

/**
 * A chart as one tab stop whose marks the arrow keys walk through and Enter (or Space) drills into, as a click on the
 * mark does (issue 31 item 10). The chart keeps the focus; the point reached is outlined and read out through a live
 * region (`announcement`). `points()` is asked at each key press: a chart redrawn at another size has new elements.
 */
export function useChartKeys(points: () => readonly KeyPoint[]) {
  const [announcement, setAnnouncement] = useState('');
  const at = useRef(-1);
  const shown = useRef<Element | undefined>(undefined);
  const outline = (element: Element | undefined) => {
    shown.current?.removeAttribute(ACTIVE_POINT);
    element?.setAttribute(ACTIVE_POINT, 'true');
    shown.current = element;
  };
  const onKeyDown = (event: KeyboardEvent<HTMLElement>) => {
    const all = points();
    if ((event.key === 'Enter' || event.key === ' ') && all[at.current] !== undefined) {
      event.preventDefault();
      all[at.current]!.drill();
      return;
    }
    const next = nextPoint(Math.min(at.current, all.length - 1), event.key, all.length);
    if (next === undefined) return;
    event.preventDefault();
    at.current = next;
    outline(all[next]!.element);
    setAnnouncement(`${all[next]!.label} (${next + 1}/${all.length})`);
  };
  const onFocus = () => {
    const point = points()[at.current];
    if (point !== undefined) outline(point.element);
  };
  const onBlur = () => outline(undefined);
  return { announcement, onKeyDown, onFocus, onBlur };
}
