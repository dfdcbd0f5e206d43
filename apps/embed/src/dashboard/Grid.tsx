import { ResponsiveGridLayout, useContainerWidth } from 'react-grid-layout';
import type { Layout, LayoutItem, ResponsiveLayouts } from 'react-grid-layout';
import 'react-grid-layout/css/styles.css';
import type { Dashboard, DashboardWidget, ReportSnapshot } from '../api.js';
import { Widget } from './Widget.js';

const BREAKPOINTS = ['lg', 'md', 'sm', 'xs', 'xxs'] as const;
const DEFAULT_BREAKPOINTS = { lg: 1200, md: 996, sm: 768, xs: 480, xxs: 0 };
const DEFAULT_COLS = { lg: 12, md: 10, sm: 6, xs: 4, xxs: 2 };

/** DashboardLayout's per-breakpoint values over react-grid-layout's defaults (null keeps the default). */
function perBreakpoint(given: Record<string, number | null> | null | undefined, defaults: Record<string, number>): Record<string, number> {
  const result = { ...defaults };
  for (const key of BREAKPOINTS) {
    const value = given?.[key];
    if (typeof value === 'number') result[key] = value;
  }
  return result;
}

const parentOf = (widget: DashboardWidget) => (typeof widget.config?.parentId === 'string' ? widget.config.parentId : undefined);

/**
 * The widgets (those without a `parentId`) on react-grid-layout's responsive grid, with DashboardLayout's
 * breakpoints, cols, margin, containerPadding and rowHeight; a widget's `responsiveLayouts` place it per
 * breakpoint, and breakpoints without one are derived by react-grid-layout from the next larger. Viewers do not
 * move or resize widgets: every item is static.
 */
export function DashboardGrid({ dashboard, snapshotOf }: { dashboard: Dashboard; snapshotOf(widget: DashboardWidget): ReportSnapshot | undefined }) {
  const { width, containerRef, mounted } = useContainerWidth({ measureBeforeMount: true });
  const config = dashboard.config.layout ?? {};
  const widgets = dashboard.config.widgets ?? [];
  const top = widgets.filter((w) => parentOf(w) === undefined);
  const cols = perBreakpoint(config.cols, DEFAULT_COLS);
  const layouts: ResponsiveLayouts<string> = {};
  for (const breakpoint of BREAKPOINTS) {
    // A breakpoint that no widget places is left to react-grid-layout, which derives it from the next larger one.
    // Where some widgets have their own position, the others keep their lg place scaled to this breakpoint's cols.
    if (breakpoint !== 'lg' && !top.some((widget) => widget.responsiveLayouts?.[breakpoint])) continue;
    const scale = cols[breakpoint]! / cols.lg!;
    layouts[breakpoint] = top.map((widget): LayoutItem => {
      const own = breakpoint === 'lg' ? widget.responsiveLayouts?.lg ?? widget.position : widget.responsiveLayouts?.[breakpoint];
      const position = own ?? {
        x: Math.min(cols[breakpoint]! - 1, Math.floor(widget.position.x * scale)), y: widget.position.y,
        w: Math.max(1, Math.min(cols[breakpoint]!, Math.round(widget.position.w * scale))), h: widget.position.h,
      };
      return { i: widget.id, x: position.x, y: position.y, w: position.w, h: position.h, static: true };
    }) as Layout;
  }
  const margin = (config.margin?.length === 2 ? config.margin : [12, 12]) as [number, number];
  const padding = (config.containerPadding?.length === 2 ? config.containerPadding : [0, 0]) as [number, number];
  const render = (widget: DashboardWidget): React.ReactNode => {
    const children = widgets.filter((w) => parentOf(w) === widget.id);
    return (
      <Widget widget={widget} snapshot={snapshotOf(widget)}>
        {children.length > 0 ? <NestedGrid widgets={children} rowHeight={config.rowHeight ?? 60} margin={margin} render={render} /> : null}
      </Widget>
    );
  };
  return (
    <div className="widget-grid" ref={containerRef}>
      {mounted ? (
        <ResponsiveGridLayout
          width={width}
          layouts={layouts}
          breakpoints={perBreakpoint(config.breakpoints, DEFAULT_BREAKPOINTS)}
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

/** The children of a CONTAINER or PARENT on a CSS grid of their own, positions relative to the container. */
function NestedGrid({ widgets, rowHeight, margin, render }: { widgets: DashboardWidget[]; rowHeight: number; margin: [number, number]; render(widget: DashboardWidget): React.ReactNode }) {
  const cols = Math.max(1, ...widgets.map((w) => w.position.x + w.position.w));
  return (
    <div className="nested-grid" style={{ gridTemplateColumns: `repeat(${cols}, minmax(0, 1fr))`, gridAutoRows: `${rowHeight}px`, gap: `${margin[1]}px ${margin[0]}px` }}>
      {widgets.map((widget) => (
        <div key={widget.id} className="grid-item" style={{ gridColumn: `${widget.position.x + 1} / span ${widget.position.w}`, gridRow: `${widget.position.y + 1} / span ${widget.position.h}` }}>
          {render(widget)}
        </div>
      ))}
    </div>
  );
}
