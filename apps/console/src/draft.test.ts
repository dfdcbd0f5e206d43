import { describe, expect, it } from 'vitest';
import type { AuthoredDashboard, Draft } from './api.js';
import { addChart, addText, draftOf, nudge, placeWidgets, record, redo, removeWidget, snapshotIndexFor, startHistory, undo, widgetsOf } from './draft.js';

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
});
