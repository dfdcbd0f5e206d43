import { authorLayoutWidth } from '../dashboard/layout.js';

/** How the host asks the comment panel to start: the embed URL's `comments`, the SDK's `comments` option. */
export type CommentsStart = 'open' | 'collapsed' | 'auto';

/** The embed URL's `comments` parameter; anything else (or none) is `auto`. */
export function parseCommentsStart(value: string | undefined): CommentsStart {
  return value === 'open' || value === 'collapsed' ? value : 'auto';
}

/**
 * The room the open panel takes beside the grid, as styles.css lays it out: `.dashboard-page`'s padding and gap,
 * `.comments-aside`'s width, and the frame width at or under which the panel leaves the row (its media query).
 */
export const PANEL_ROOM = { padding: 16, gap: 16, width: 340, rowAbove: 720 } as const;

/**
 * Whether the comment panel starts open. `auto` opens it only when the grid beside it keeps the author's layout
 * (wider than `authorLayoutWidth`): in a narrower frame an open panel would squeeze the widgets into fewer columns,
 * or push them under the fold, so it starts as its button (with the count of open threads) instead.
 *
 * @example
 * isPanelOpenAtStart('auto', { breakpoints: { lg: 1100, md: 900 }, cols: { lg: 12, md: 12 } }, 886) // => false
 */
export function isPanelOpenAtStart(start: CommentsStart, layout: Parameters<typeof authorLayoutWidth>[0], frameWidth: number): boolean {
  if (start !== 'auto') return start === 'open';
  if (frameWidth <= PANEL_ROOM.rowAbove) return false;
  const gridBeside = frameWidth - 2 * PANEL_ROOM.padding - PANEL_ROOM.gap - PANEL_ROOM.width;
  // react-grid-layout shows a breakpoint when the grid is wider than it.
  return gridBeside > authorLayoutWidth(layout);
}
