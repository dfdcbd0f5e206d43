import { AppError } from '../core/core.errors.js';
import { countRows, runSemanticQuery } from './data.run.js';
import type { SourcedResult } from './data.run.js';
import type { DataContext, DataScope } from './data.scope.js';
import { addPeriods, formatBucket, parseBucket } from './semantic/semantic.calendar.js';
import type { FilterScalar } from './data.viewer.js';
import type { QueryFilter, SemanticQuery } from './semantic/semantic.query.js';

/** The mark a viewer drills into: a measure of the widget, at the point of the mark's dimension values. */
export interface Drill {
  member: string;
  point?: Record<string, FilterScalar | null>;
}

/**
 * The rows under one mark of a measure: the widget's filters, plus the mark's dimension values (a time bucket
 * becomes its period), listing the measure's view's drill members (default: its dimensions) that the viewer may see.
 */
export async function drilldown(dc: DataContext, scope: DataScope, query: SemanticQuery, drill: Drill): Promise<SourcedResult & { totalRows: number }> {
  const { model } = scope;
  const measure = model.measure(drill.member, 'drilldown.member');
  if (!(query.measures ?? []).includes(measure.name)) throw new AppError('invalid_parameter', `drilldown.member: ${measure.name} is not a measure of this widget`, 'drilldown.member');
  scope.access.requireVisible(measure, 'drilldown.member');
  const filters: QueryFilter[] = [...(query.filters ?? [])];
  for (const [name, value] of Object.entries(drill.point ?? {})) {
    const field = `drilldown.point.${name}`;
    const td = query.timeDimensions?.find((t) => t.granularity !== undefined && `${t.dimension}.${t.granularity}` === name);
    if (td !== undefined) {
      const wall = typeof value === 'string' ? parseBucket(value) : undefined;
      if (wall === undefined) throw new AppError('invalid_parameter', `${field}: a time bucket as YYYY-MM-DDTHH:MM:SS.000`, field);
      const end = addPeriods(wall, td.granularity!, 1) - 1000;
      filters.push({ member: td.dimension, operator: 'inDateRange', values: [formatBucket(wall).slice(0, 19), formatBucket(end).slice(0, 19)] });
      continue;
    }
    if (!(query.dimensions ?? []).includes(name)) throw new AppError('invalid_parameter', `${field}: ${name} is not a dimension of this widget`, field);
    filters.push(value === null ? { member: name, operator: 'notSet' } : { member: name, operator: 'equals', values: [value] });
  }
  const members = measure.view.drillMembers ?? measure.view.dimensions.map((d) => `${measure.view.name}.${d.name}`);
  const dimensions: string[] = [];
  const timeDimensions: NonNullable<SemanticQuery['timeDimensions']> = [];
  for (const name of members) {
    const member = model.dimension(name, 'drillMembers');
    // A drill member a policy hides from this viewer is left out of the listing (the rest still shows).
    if (!scope.access.canSee(member)) continue;
    if (member.dimension.type === 'time') timeDimensions.push({ dimension: name, granularity: 'second' });
    else dimensions.push(name);
  }
  for (const td of query.timeDimensions ?? []) if (td.dateRange !== undefined) timeDimensions.push({ dimension: td.dimension, dateRange: td.dateRange });
  const key = measure.view.dimensions.find((d) => d.primaryKey);
  const order: Array<[string, 'asc' | 'desc']> = key !== undefined && dimensions.includes(`${measure.view.name}.${key.name}`) ? [[`${measure.view.name}.${key.name}`, 'asc']] : [];
  const listing: SemanticQuery = { dimensions, timeDimensions, filters, order };
  // The drill's own cap, as the row cap: past it the listing is `truncated`, and its rows are counted.
  const result = await runSemanticQuery({ ...dc, rowCap: Math.min(dc.rowCap, DRILL_ROWS) }, scope, listing);
  return { ...result, totalRows: result.truncated ? await countRows(dc, scope, listing) : result.rows.length };
}

/** Most rows a drill-down lists. */
export const DRILL_ROWS = 1000;
