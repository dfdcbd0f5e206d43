import { GridLayout, useContainerWidth } from 'react-grid-layout';
import type { Layout, LayoutItem } from 'react-grid-layout';
import 'react-grid-layout/css/styles.css';
import type { DashboardWidget, WidgetPosition } from './api.js';
import { GRID_COLS, nudge, topLevel } from './draft.js';
import type { Translate } from './i18n.js';
import { WidgetBody } from './widgets/WidgetBody.js';
import type { BoardContext } from './widgets/WidgetBody.js';

/** The embed's grid (apps/embed/src/dashboard/Grid.tsx): 12 columns of rows 60 px high, 12 px apart. */
const ROW_HEIGHT = 60;
const MARGIN: [number, number] = [12, 12];

/**
 * The dashboard's widgets on react-grid-layout, as the embed lays them out (its lg layout): dragged by their handle
 * and resized by their corner with a pointer, or, with the handle focused, moved by the arrow keys and resized by
 * Shift and the arrow keys. Each change of place is given to `onPlace` once, when the drag or resize ends. Widgets in a
 * container lie on the container's own grid (its body, WidgetBody), not on the board's. Each one has Edit and Delete.
 */
export function Board({ t, widgets: all, nameOf, onPlace, onMove, onEdit, onDelete, ctx }: {
  t: Translate;
  widgets: readonly DashboardWidget[];
  nameOf: (widget: DashboardWidget) => string;
  onPlace: (layout: ReadonlyArray<{ i: string } & WidgetPosition>) => void;
  onMove: (widgetId: string, position: WidgetPosition) => void;
  onEdit: (widget: DashboardWidget) => void;
  onDelete: (widget: DashboardWidget) => void;
  /** What a cell's body (WidgetBody) needs. */
  ctx: BoardContext;
}) {
  const { width, containerRef, mounted } = useContainerWidth({ measureBeforeMount: true });
  const widgets = topLevel(all);
  const layout = widgets.map((w): LayoutItem => ({ i: w.id, x: w.position.x, y: w.position.y, w: w.position.w, h: w.position.h })) as Layout;
  const placed = (changed: Layout) => onPlace(changed.map(({ i, x, y, w, h }) => ({ i, x, y, w, h })));
  const onKey = (widget: DashboardWidget, event: KeyboardEvent) => {
    const next = nudge(widget.position, event.key, event.shiftKey);
    if (next === undefined) return;
    event.preventDefault();
    onMove(widget.id, next);
  };
  return (
    <div class="board-grid" ref={containerRef}>
      {mounted ? (
        <GridLayout width={width} layout={layout} gridConfig={{ cols: GRID_COLS, rowHeight: ROW_HEIGHT, margin: MARGIN, containerPadding: [0, 0] }}
          dragConfig={{ enabled: true, handle: '.drag-handle' }} resizeConfig={{ enabled: true, handles: ['se'] }}
          onDragStop={placed} onResizeStop={placed}>
          {widgets.map((widget) => {
            const name = nameOf(widget);
            return (
              <div key={widget.id} class="board-item" data-widget-id={widget.id} data-widget-type={widget.type}>
                <div class="board-item-head">
                  <button type="button" class="drag-handle" aria-label={t('moveWidget', { name })} aria-describedby="board-keys"
                    onKeyDown={(event) => onKey(widget, event as unknown as KeyboardEvent)}>
                    <span aria-hidden="true">⠿</span>
                  </button>
                  <span class="name">{name}</span>
                  <button type="button" class="edit" onClick={() => onEdit(widget)}>{t('editWidget', { name })}</button>
                  <button type="button" class="delete" onClick={() => onDelete(widget)}>{t('deleteWidget', { name })}</button>
                </div>
                <WidgetBody widget={widget} ctx={ctx} />
              </div>
            );
          })}
        </GridLayout>
      ) : null}
    </div>
  );
}
