import { describe, expect, it } from 'vitest';
import type { AuthoredDashboard, Draft } from './api.js';
import { addChart, addText, addWidget, draftOf, editText, editWidget, nudge, placeWidgets, record, redo, removeWidget, replaceChart, setChildren, snapshotIndexFor, startHistory, undo, widgetsOf } from './draft.js';

const blank: Draft = { title: 'T', description: null, allowEmbed: true, config: { widgets: [] }, reportSnapshots: [] };
const snapshot = (title: string) => ({ title, kind: 'table', meta: { query: { measures: ['orders.count'] } } });

describe("the editor's draft", () => {
  it('edits the published version when nothing changed since, without the fields a draft does not take', () => {
    const dashboard = {
      publicId: 'p', deploymentId: 1, workbookId: 2, status: 'published', draftRevision: 3, draft: null,
      published: { title: 'P', allowEmbed: false, versionNumber: 1, config: { widgets: [{ id: 'w', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 } }] },
        reportSnapshots: [{ id: 9, reportId: 4, versionNumber: 1, title: 'S', kind: 'kpi', meta: { query: {} } }] },
    } as AuthoredDashboard;
    expect(draftOf(dashboard)).toEqual({
      title: 'P', description: null, allowEmbed: false, config: { widgets: [{ id: 'w', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 } }] },
      reportSnapshots: [{ reportId: 4, title: 'S', kind: 'kpi', meta: { query: {} } }],
    });
  });

  it('adds charts below each other, each naming its snapshot, and a full-width text', () => {
    const one = addChart(blank, snapshot('A'));
    const two = addChart(one.draft, snapshot('B'));
    const text = addText(two.draft, '# Hi');
    expect([one.widgetId, two.widgetId, text.widgetId]).toEqual(['chart-1', 'chart-2', 'text-1']);
    expect(widgetsOf(text.draft).map((w) => [w.id, w.position, w.config])).toEqual([
      ['chart-1', { x: 0, y: 0, w: 6, h: 4 }, { snapshotIndex: 0 }],
      ['chart-2', { x: 0, y: 4, w: 6, h: 4 }, { snapshotIndex: 1 }],
      ['text-1', { x: 0, y: 8, w: 12, h: 2 }, { markdown: '# Hi' }],
    ]);
    expect(text.draft.reportSnapshots.map((s) => s.title)).toEqual(['A', 'B']);
  });

  it('deletes a chart with its snapshot, and the later charts still show theirs', () => {
    let draft = addChart(blank, snapshot('A')).draft;
    draft = addChart(draft, snapshot('B')).draft;
    draft = addChart(draft, snapshot('C')).draft;
    const removed = removeWidget(draft, 'chart-1');
    expect(removed.reportSnapshots.map((s) => s.title)).toEqual(['B', 'C']);
    expect(widgetsOf(removed).map((w) => removed.reportSnapshots[snapshotIndexFor(removed, w)!]!.title)).toEqual(['B', 'C']);
  });

  it('pins charts found by their place before deleting one', () => {
    const draft: Draft = {
      ...blank,
      config: { widgets: [{ id: 'a', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 } }, { id: 'b', type: 'CHART', position: { x: 6, y: 0, w: 6, h: 4 } }] },
      reportSnapshots: [snapshot('A'), snapshot('B')],
    };
    const removed = removeWidget(draft, 'a');
    expect(removed.reportSnapshots.map((s) => s.title)).toEqual(['B']);
    expect(removed.reportSnapshots[snapshotIndexFor(removed, widgetsOf(removed)[0]!)!]!.title).toBe('B');
  });

  it('takes the grid\'s positions, and is the same draft when nothing moved', () => {
    const draft = addChart(blank, snapshot('A')).draft;
    expect(placeWidgets(draft, [{ i: 'chart-1', x: 0, y: 0, w: 6, h: 4 }])).toBe(draft);
    expect(widgetsOf(placeWidgets(draft, [{ i: 'chart-1', x: 6, y: 2, w: 3, h: 5 }]))[0]!.position).toEqual({ x: 6, y: 2, w: 3, h: 5 });
  });

  it('moves a widget by the arrow keys and resizes it with Shift, within the grid', () => {
    const at = { x: 0, y: 0, w: 6, h: 4 };
    expect(nudge(at, 'ArrowRight', false)).toEqual({ x: 1, y: 0, w: 6, h: 4 });
    expect(nudge(at, 'ArrowLeft', false)).toEqual(at);
    expect(nudge(at, 'ArrowUp', false)).toEqual(at);
    expect(nudge(at, 'ArrowDown', false)).toEqual({ x: 0, y: 1, w: 6, h: 4 });
    expect(nudge({ ...at, x: 6 }, 'ArrowRight', false)).toEqual({ x: 6, y: 0, w: 6, h: 4 });
    expect(nudge({ ...at, x: 6 }, 'ArrowRight', true)).toEqual({ x: 6, y: 0, w: 6, h: 4 });
    expect(nudge(at, 'ArrowRight', true)).toEqual({ x: 0, y: 0, w: 7, h: 4 });
    expect(nudge({ ...at, w: 1, h: 1 }, 'ArrowLeft', true)).toEqual({ x: 0, y: 0, w: 1, h: 1 });
    expect(nudge(at, 'ArrowDown', true)).toEqual({ x: 0, y: 0, w: 6, h: 5 });
    expect(nudge(at, 'Enter', false)).toBeUndefined();
  });

  it('undoes and redoes; a new change drops what could be redone', () => {
    const a = addChart(blank, snapshot('A')).draft;
    const b = addText(a, 'x').draft;
    let history = record(record(startHistory(blank), a), b);
    history = undo(history);
    expect(history.present).toBe(a);
    history = undo(undo(history));
    expect(history.present).toBe(blank);
    history = redo(history);
    expect(history.present).toBe(a);
    history = record(history, removeWidget(a, 'chart-1'));
    expect(history.future).toEqual([]);
    expect(redo(history)).toBe(history);
  });

  it('adds a FILTER, a TIME_GRAIN, a FIELD, a container and a divider below the others, each with the config the embed reads', () => {
    let draft = addChart(blank, snapshot('A')).draft;
    const filter = addWidget(draft, 'FILTER', { member: 'customers.region', title: 'Region' });
    const grain = addWidget(filter.draft, 'TIME_GRAIN', { options: ['week', 'month'], title: undefined });
    const field = addWidget(grain.draft, 'FIELD', { member: 'orders.revenue', options: [{ member: 'orders.revenue', title: 'Revenue' }, { member: 'orders.count', title: 'Orders' }] });
    const container = addWidget(field.draft, 'CONTAINER', { title: 'Status' });
    const divider = addWidget(container.draft, 'DIVIDER');
    draft = divider.draft;
    expect([filter.widgetId, grain.widgetId, field.widgetId, container.widgetId, divider.widgetId]).toEqual(['filter-1', 'grain-1', 'field-1', 'container-1', 'divider-1']);
    expect(widgetsOf(draft).slice(1)).toEqual([
      { id: 'filter-1', type: 'FILTER', position: { x: 0, y: 4, w: 3, h: 2 }, config: { member: 'customers.region', title: 'Region' } },
      { id: 'grain-1', type: 'TIME_GRAIN', position: { x: 0, y: 6, w: 3, h: 2 }, config: { options: ['week', 'month'] } },
      { id: 'field-1', type: 'FIELD', position: { x: 0, y: 8, w: 3, h: 2 }, config: { member: 'orders.revenue', options: [{ member: 'orders.revenue', title: 'Revenue' }, { member: 'orders.count', title: 'Orders' }] } },
      { id: 'container-1', type: 'CONTAINER', position: { x: 0, y: 10, w: 12, h: 2 }, config: { title: 'Status' } },
      { id: 'divider-1', type: 'DIVIDER', position: { x: 0, y: 12, w: 12, h: 1 } },
    ]);
    expect(draft.reportSnapshots).toHaveLength(1);
  });

  it('edits a widget in place: same id, same position and place in the list, keys it does not edit kept, a key cleared removed', () => {
    let draft = addText(blank, 'old').draft;
    draft = addWidget(draft, 'TIME_GRAIN', { options: ['month'], title: 'Grain', extra: 1 }).draft;
    draft = placeWidgets(draft, [{ i: 'grain-1', x: 6, y: 0, w: 4, h: 2 }]);
    const edited = editWidget(editText(draft, 'text-1', '**new**'), 'grain-1', { options: ['week', 'quarter'], title: undefined });
    expect(widgetsOf(edited)).toEqual([
      { id: 'text-1', type: 'TEXT', position: { x: 0, y: 0, w: 12, h: 2 }, config: { markdown: '**new**' } },
      { id: 'grain-1', type: 'TIME_GRAIN', position: { x: 6, y: 0, w: 4, h: 2 }, config: { options: ['week', 'quarter'], extra: 1 } },
    ]);
    expect(editWidget(edited, 'grain-1', { options: ['week', 'quarter'] })).toBe(edited);
    expect(editWidget(edited, 'nope', { title: 'x' })).toBe(edited);
  });

  it("edits a chart in place: its snapshot replaced where it lies, keeping its reportId, name and column formats", () => {
    const draft: Draft = {
      ...blank,
      config: { widgets: [{ id: 'a', type: 'CHART', position: { x: 6, y: 2, w: 6, h: 4 }, config: { reportId: 7 } }, { id: 'b', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 } }] },
      reportSnapshots: [{ reportId: 7, name: 'rev', title: 'Revenue', kind: 'vega', spec: { mark: 'line' }, sqlQuery: 'select 1', preferences: { columnFormats: { 'orders.revenue': { type: 'currency' } } }, meta: { query: { measures: ['orders.revenue'] } } }, { reportId: 8, ...snapshot('B') }],
    };
    const edited = replaceChart(draft, 'a', { title: 'Orders', kind: 'kpi', spec: null, meta: { query: { measures: ['orders.count'] } } });
    expect(widgetsOf(edited)).toEqual(widgetsOf(draft));
    expect(edited.reportSnapshots).toEqual([
      { reportId: 7, name: 'rev', preferences: { columnFormats: { 'orders.revenue': { type: 'currency' } } }, title: 'Orders', kind: 'kpi', spec: null, meta: { query: { measures: ['orders.count'] } } },
      draft.reportSnapshots[1],
    ]);
  });

  it('edits a chart whose snapshot another chart shows too by giving it a snapshot of its own; the other keeps the old', () => {
    const draft: Draft = {
      ...blank,
      config: { widgets: [{ id: 'a', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 }, config: { snapshotIndex: 0 } }, { id: 'b', type: 'CHART', position: { x: 6, y: 0, w: 6, h: 4 }, config: { snapshotIndex: 0 } }] },
      reportSnapshots: [snapshot('A')],
    };
    const edited = replaceChart(draft, 'b', snapshot('B'));
    expect(edited.reportSnapshots.map((s) => s.title)).toEqual(['A', 'B']);
    expect(widgetsOf(edited).map((w) => edited.reportSnapshots[snapshotIndexFor(edited, w)!]!.title)).toEqual(['A', 'B']);
    expect(widgetsOf(edited).map((w) => w.position)).toEqual(widgetsOf(draft).map((w) => w.position));
  });

  it("puts widgets in a container on its own grid (config.parentId, positions relative to it) and takes them out again", () => {
    let draft = addChart(blank, snapshot('A')).draft;
    draft = addWidget(draft, 'FILTER', { member: 'orders.status' }).draft;
    draft = addWidget(draft, 'CONTAINER', { title: 'Status' }).draft;
    draft = addText(draft, 'below').draft;
    const filled = setChildren(draft, 'container-1', ['chart-1', 'filter-1']);
    const at = (d: Draft, id: string) => widgetsOf(d).find((w) => w.id === id)!;
    expect(at(filled, 'chart-1')).toMatchObject({ position: { x: 0, y: 0, w: 6, h: 4 }, config: { snapshotIndex: 0, parentId: 'container-1' } });
    expect(at(filled, 'filter-1')).toMatchObject({ position: { x: 6, y: 0, w: 3, h: 2 }, config: { member: 'orders.status', parentId: 'container-1' } });
    expect(at(filled, 'container-1').position).toEqual({ x: 0, y: 6, w: 12, h: 5 });
    // The text below the container moved down as it grew.
    expect(at(filled, 'text-1').position).toEqual({ x: 0, y: 11, w: 12, h: 2 });
    // The chart still shows its snapshot, and the list keeps its order (the server finds snapshots by it too).
    expect(widgetsOf(filled).map((w) => w.id)).toEqual(['chart-1', 'filter-1', 'container-1', 'text-1']);
    expect(setChildren(filled, 'container-1', ['filter-1', 'chart-1'])).toBe(filled);
    // Taking the filter out: it goes back below the dashboard's widgets, without parentId.
    const emptied = setChildren(filled, 'container-1', ['chart-1']);
    expect(at(emptied, 'filter-1')).toEqual({ id: 'filter-1', type: 'FILTER', position: { x: 0, y: 13, w: 3, h: 2 }, config: { member: 'orders.status' } });
    expect(at(emptied, 'container-1').position.h).toBe(5);
    // A container is never put in a container, nor a widget in itself.
    expect(setChildren(filled, 'container-1', ['container-1', 'chart-1', 'filter-1'])).toBe(filled);
    // Deleting the container keeps its children, on the dashboard's grid.
    const removed = removeWidget(filled, 'container-1');
    expect(widgetsOf(removed).map((w) => [w.id, w.config?.parentId])).toEqual([['chart-1', undefined], ['filter-1', undefined], ['text-1', undefined]]);
    expect(removed.reportSnapshots).toHaveLength(1);
  });

  it('undoes and redoes an edit of a widget', () => {
    const a = addWidget(blank, 'FILTER', { member: 'orders.status', title: 'Status' }).draft;
    const b = editWidget(a, 'filter-1', { member: 'customers.region', title: 'Region' });
    let history = record(record(startHistory(blank), a), b);
    history = undo(history);
    expect(widgetsOf(history.present)[0]!.config).toEqual({ member: 'orders.status', title: 'Status' });
    history = redo(history);
    expect(widgetsOf(history.present)[0]).toEqual({ id: 'filter-1', type: 'FILTER', position: { x: 0, y: 0, w: 3, h: 2 }, config: { member: 'customers.region', title: 'Region' } });
  });
});
