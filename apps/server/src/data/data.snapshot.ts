import type { DashboardConfig, ReportSnapshot } from '../workspace/workspace.dashboard-schema.js';
import { AppError } from '../core/core.errors.js';
import { compileSemanticQuery } from './compiler/compiler.query.js';
import { withoutPolicies } from './policy/policy.query.js';
import type { SemanticModel } from './semantic/semantic.model.js';
import { parseSemanticQuery } from './semantic/semantic.query.js';
import type { SemanticQuery } from './semantic/semantic.query.js';

// A dashboard's own queries, and whose fault a refused one is: a query the dashboard's author wrote that the model
// cannot run is the dashboard's (422 naming `meta.query`), a viewer's ask that the model refuses is the viewer's
// (400). Each error is made at its own path: nothing is compiled twice, and no message is rewritten.

export type Widget = NonNullable<DashboardConfig['widgets']>[number];

/** The report snapshot a CHART widget shows: `config.reportId`, else `config.snapshotIndex`, else its place among the charts. */
export function snapshotOf(widget: Widget, widgets: readonly Widget[], snapshots: readonly ReportSnapshot[]): ReportSnapshot | undefined {
  const config = (widget.config ?? {}) as { reportId?: unknown; snapshotIndex?: unknown };
  if (typeof config.reportId === 'number') return snapshots.find((s) => s.reportId === config.reportId);
  if (typeof config.snapshotIndex === 'number') return snapshots[config.snapshotIndex];
  return snapshots[widgets.filter((w) => w.type === 'CHART').indexOf(widget)];
}

/** A snapshot's semantic query, parsed: a malformed one is the dashboard's fault, a 422 naming `meta.query`. */
export function snapshotQuery(raw: unknown, snapshot: ReportSnapshot): SemanticQuery {
  try {
    return parseSemanticQuery(raw, 'meta.query');
  } catch (error) {
    throw asSnapshotFault(error, snapshot);
  }
}

/** The snapshot queries found sound against each model: checked once per model and query text, not per request. */
const SOUND = new WeakMap<SemanticModel, Set<string>>();

/**
 * Compiles a snapshot's query alone, under no viewer's policies, at `meta.query`: a query the model cannot run is
 * the dashboard's fault, a 422 naming the snapshot's member (`meta.query.measures[0]`). Done once per model and
 * query; a viewer's ask is then compiled once, and what it gets wrong is the viewer's 400. (A member a policy
 * hides from the viewer is the viewer's 403, found by the policies.)
 */
export function checkSnapshotQuery(model: SemanticModel, query: SemanticQuery, snapshot: ReportSnapshot): void {
  let sound = SOUND.get(model);
  if (sound === undefined) {
    sound = new Set();
    SOUND.set(model, sound);
  }
  const text = JSON.stringify(query);
  if (sound.has(text)) return;
  try {
    compileSemanticQuery(withoutPolicies(model, query), { dialect: 'sqlite', timezone: 'UTC', now: new Date(0), rowCap: 1, root: 'meta.query' });
  } catch (error) {
    throw asSnapshotFault(error, snapshot);
  }
  if (sound.size > 10_000) sound.clear();
  sound.add(text);
}

/** A 400 of a snapshot's own query (made at `meta.query`) as the dashboard's fault: a 422 naming the snapshot. */
function asSnapshotFault(error: unknown, snapshot: ReportSnapshot): unknown {
  if (!(error instanceof AppError) || error.status !== 400) return error;
  return new AppError('invalid_query', `report snapshot ${snapshot.reportId}: ${error.message}`, error.field);
}

/**
 * A swap the dashboard's own FIELD control offers that the model refuses (an option of another view or kind) is the
 * dashboard's fault, not the viewer's: a 422 naming the control's options. Any other refused swap stays a 400.
 */
export function offeredSwapFault(error: AppError, widgets: readonly Widget[], fields: Record<string, string>): AppError | undefined {
  const from = error.field?.startsWith('fields.') === true ? error.field.slice('fields.'.length) : undefined;
  if (from === undefined || fields[from] === undefined) return undefined;
  const control = widgets.find((w) => {
    const config = (w.config ?? {}) as { member?: unknown; options?: unknown };
    const options = Array.isArray(config.options) ? config.options.map((o: unknown) => (typeof o === 'object' && o !== null ? (o as { member?: unknown }).member : o)) : [];
    return w.type === 'FIELD' && config.member === from && options.includes(fields[from]);
  });
  if (control === undefined) return undefined;
  return new AppError('invalid_query', `widget ${control.id} offers ${fields[from]} for ${from}, which the model refuses: ${error.message}`, `widgets.${control.id}.config.options`);
}

/** One way a dashboard would not run on a model: its widget, the JSON path of what is wrong, and why. */
export interface DashboardProblem {
  widgetId: string;
  field: string;
  message: string;
}

/**
 * What of a dashboard a model cannot run (an author's check before a model change or a publish; docs/authoring.md):
 * each CHART's semantic query (`meta.query` of its report snapshot: parsed and compiled under no viewer's policy),
 * and the members its FILTER and FIELD controls name. A raw-SQL snapshot is not the model's to check. Empty: the
 * dashboard runs.
 */
export function dashboardProblems(model: SemanticModel, config: DashboardConfig, snapshots: readonly ReportSnapshot[]): DashboardProblem[] {
  const problems: DashboardProblem[] = [];
  const widgets = config.widgets ?? [];
  const attempt = (widgetId: string, check: () => void) => {
    try {
      check();
    } catch (error) {
      if (!(error instanceof AppError) || error.status >= 500) throw error;
      problems.push({ widgetId, field: error.field ?? 'config', message: error.detail });
    }
  };
  for (const widget of widgets) {
    const widgetConfig = (widget.config ?? {}) as { member?: unknown; options?: unknown };
    if (widget.type === 'CHART') {
      const snapshot = snapshotOf(widget, widgets, snapshots);
      const raw = (snapshot?.meta as { query?: unknown } | null | undefined)?.query;
      if (snapshot === undefined || raw === undefined) continue;
      attempt(widget.id, () => {
        const query = parseSemanticQuery(raw, 'meta.query');
        compileSemanticQuery(withoutPolicies(model, query), { dialect: 'sqlite', timezone: 'UTC', now: new Date(0), rowCap: 1, root: 'meta.query' });
      });
    } else if (widget.type === 'FILTER' && widgetConfig.member !== undefined) {
      attempt(widget.id, () => model.dimension(widgetConfig.member, 'config.member'));
    } else if (widget.type === 'FIELD' && widgetConfig.member !== undefined) {
      attempt(widget.id, () => model.member(widgetConfig.member, 'config.member'));
      const options = Array.isArray(widgetConfig.options) ? widgetConfig.options : [];
      options.forEach((option: unknown, o) => {
        const member = typeof option === 'object' && option !== null ? (option as { member?: unknown }).member : option;
        attempt(widget.id, () => model.member(member, `config.options[${o}].member`));
      });
    }
  }
  return problems;
}
