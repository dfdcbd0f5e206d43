import type { ReactNode } from 'react';
import { ResponsiveGridLayout, useContainerWidth } from 'react-grid-layout';
import type { Layout, LayoutItem, ResponsiveLayouts } from 'react-grid-layout';
import 'react-grid-layout/css/styles.css';
import type { Dashboard, DashboardWidget, ReportSnapshot } from '../api.js';
import { Widget } from './Widget.js';
import { BREAKPOINTS, DEFAULT_BREAKPOINTS, DEFAULT_COLS, byReadingOrder, deriveLayout, isFullWidth, perBreakpoint } from './layout.js';

const parentOf = (widget: DashboardWidget) => (typeof widget.config?.parentId === 'string' ? widget.config.parentId : undefined);

/**
 * The widgets (those without a `parentId`) on react-grid-layout's responsive grid, with DashboardLayout's
 * breakpoints, cols, margin, containerPadding and rowHeight. The `lg` layout is the author's; the narrower ones are
 * derived from it by `deriveLayout` (same reading order, no holes, full width on xs and xxs), except where a
 * widget's `responsiveLayouts` places it. Viewers do not move or resize widgets: every item is static.
 */
export function DashboardGrid({ dashboard, snapshotOf }: { dashboard: Dashboard; snapshotOf(widget: DashboardWidget): ReportSnapshot | undefined }) {
  const { width, containerRef, mounted } = useContainerWidth({ measureBeforeMount: true });
  const config = dashboard.config.layout ?? {};
  const widgets = dashboard.config.widgets ?? [];
  const top = widgets.filter((w) => parentOf(w) === undefined);
  const cols = perBreakpoint(config.cols, DEFAULT_COLS);
  const layouts: ResponsiveLayouts<string> = {};
  const placed = top.map((widget) => ({ id: widget.id, lg: widget.position, own: widget.responsiveLayouts ?? undefined, smallH: smallHeightOf(widget, widgets, cols.lg) }));
  const breakpoints = perBreakpoint(config.breakpoints, DEFAULT_BREAKPOINTS);
  // react-grid-layout's rule: the widest breakpoint whose width the grid's exceeds.
  const active = [...BREAKPOINTS].find((breakpoint) => width > breakpoints[breakpoint]) ?? 'xxs';
  const stacked = isFullWidth(active);
  for (const breakpoint of BREAKPOINTS) {
    const positions = deriveLayout(placed, breakpoint, cols[breakpoint], cols.lg);
    layouts[breakpoint] = top.map((widget): LayoutItem => ({ i: widget.id, ...positions[widget.id]!, static: true })) as Layout;
  }
  const margin = (config.margin?.length === 2 ? config.margin : [12, 12]) as [number, number];
  const padding = (config.containerPadding?.length === 2 ? config.containerPadding : [0, 0]) as [number, number];
  const render = (widget: DashboardWidget): ReactNode => {
    const children = widgets.filter((w) => parentOf(w) === widget.id);
    return (
      <Widget widget={widget} snapshot={snapshotOf(widget)}>
        {children.length > 0 ? <NestedGrid widgets={children} stacked={stacked} rowHeight={config.rowHeight ?? 60} margin={margin} render={render} /> : null}
      </Widget>
    );
  };
  return (
    <div className="widget-grid" id="widgets" ref={containerRef}>
      {mounted ? (
        <ResponsiveGridLayout
          width={width}
          layouts={layouts}
          breakpoints={breakpoints}
          cols={cols}
          rowHeight={config.rowHeight ?? 60}
          margin={margin}
          containerPadding={padding}
          dragConfig={{ enabled: false }}
          resizeConfig={{ enabled: false }}
        >
          {top.map((widget) => <div key={widget.id} className="grid-item">{render(widget)}</div>)}
        </ResponsiveGridLayout>
      ) : null}
    </div>
  );
}

/**
 * A widget's height on the full-width breakpoints: a container's children go one under the other there (spacers
 * left out), and a wide text wraps into about twice as many lines.
 */
function smallHeightOf(widget: DashboardWidget, widgets: readonly DashboardWidget[], lgCols: number): number | undefined {
  const children = widgets.filter((w) => parentOf(w) === widget.id);
  if (children.length > 0) {
    const chrome = Math.max(0, widget.position.h - Math.max(...children.map((c) => c.position.y + c.position.h)));
    return chrome + children.filter((c) => c.type !== 'SPACER').reduce((sum, c) => sum + c.position.h, 0);
  }
  if (widget.type === 'TEXT' && widget.position.w > lgCols / 2) return widget.position.h * 2;
  return undefined;
}

/**
 * The children of a CONTAINER or PARENT on a CSS grid of their own, positions relative to the container; on the
 * full-width breakpoints (`stacked`), one under the other in reading order, without spacers.
 */
function NestedGrid({ widgets, stacked, rowHeight, margin, render }: { widgets: DashboardWidget[]; stacked: boolean; rowHeight: number; margin: [number, number]; render(widget: DashboardWidget): ReactNode }) {
  const shown = stacked ? [...widgets].sort((a, b) => byReadingOrder(a.position, b.position)) : widgets;
  const cols = stacked ? 1 : Math.max(1, ...widgets.map((w) => w.position.x + w.position.w));
  return (
    <div className="nested-grid" style={{ gridTemplateColumns: `repeat(${cols}, minmax(0, 1fr))`, gridAutoRows: `${rowHeight}px`, gap: `${margin[1]}px ${margin[0]}px` }}>
      {shown.map((widget) => (
        // A spacer stays mounted when stacked (every widget settles for dashboard-loaded), but takes no room.
        <div key={widget.id} className="grid-item" style={stacked
          ? (widget.type === 'SPACER' ? { display: 'none' } : { gridColumn: '1', gridRow: `auto / span ${widget.position.h}` })
          : { gridColumn: `${widget.position.x + 1} / span ${widget.position.w}`, gridRow: `${widget.position.y + 1} / span ${widget.position.h}` }}>
          {render(widget)}
        </div>
      ))}
    </div>
  );
}
