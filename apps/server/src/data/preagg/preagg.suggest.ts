import { baseViewOf, GRANULARITIES, IDENTIFIER } from '../semantic/semantic.model.js';
import type { Granularity, PreAggregation, SemanticView } from '../semantic/semantic.model.js';
import type { QueryFilter } from '../semantic/semantic.query.js';
import type { BoundFilter } from '../policy/policy.access.js';
import type { PolicedQuery } from '../policy/policy.query.js';
import { preAggregationProblem } from './preagg.definitions.js';
import { matchRollup } from './preagg.match.js';

// "Why is this slow" (issue 34): for a query the data source answered, why each pre-aggregation of its view did not,
// and one that would, in the model's own JSON shape (a view's `preAggregations` entry), checked by the same matcher
// the plan uses, so that added to the model and built it answers the query.

/** Why one rollup of the view did not answer. */
export interface RollupReason {
  /** `<view>.<rollup>` */
  rollup: string;
  reason: string;
}

export interface RollupHint {
  reasons: RollupReason[];
  /** A pre-aggregation that covers the query, to add to `view`'s `preAggregations`; null with `unsuggested` when none can. */
  suggestion: { view: string; preAggregation: PreAggregation } | null;
  unsuggested?: string;
}

/** Measures whose rollup columns re-aggregate: a rollup holding another kind is not additive (preagg.definitions.ts). */
const ADDITIVE = new Set(['count', 'sum', 'min', 'max', 'avg']);

/** The members (`view.member`) a filter list names, through `and` and `or`. */
function filterMembers(filters: ReadonlyArray<QueryFilter | BoundFilter>): string[] {
  return filters.flatMap((filter): string[] => {
    if ('never' in filter) return [];
    if ('and' in filter) return filterMembers(filter.and);
    if ('or' in filter) return filterMembers(filter.or);
    return [filter.member];
  });
}

/** A rollup name from its members: `count_revenue_by_status_month`, unique in the view. */
function rollupName(view: SemanticView, measures: readonly string[], dimensions: readonly string[], granularity: Granularity | undefined): string {
  const short = (member: string) => member.split('.')[1]!;
  const parts = [measures.map(short).join('_'), ...(dimensions.length > 0 || granularity !== undefined ? ['by', ...dimensions.map(short), ...(granularity !== undefined ? [granularity] : [])] : [])];
  let base = parts.join('_').slice(0, 56).replace(/_+$/, '');
  if (!IDENTIFIER.test(base)) base = 'suggested';
  const taken = new Set((view.preAggregations ?? []).map((r) => r.name));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}_${n}`)) return `${base}_${n}`;
}

/**
 * Why no rollup of the query's view answered it, and a pre-aggregation that would. `built(rollup)` says whether a
 * rollup has a current build in the query's zone: one that matches but is not built is named as such.
 */
export function rollupHint(policed: PolicedQuery, options: { timezone: string; now: Date; built: (view: SemanticView, rollup: PreAggregation) => boolean }): RollupHint {
  const { model, query } = policed;
  const view = baseViewOf(model, query);
  const matchOptions = { timezone: options.timezone, now: options.now, table: 'b_0' };
  const reasons = (view.preAggregations ?? []).map((rollup): RollupReason => {
    const match = matchRollup(policed, view, rollup, matchOptions);
    const reason = 'reason' in match ? match.reason : options.built(view, rollup) ? 'it matches, but the statement over it could not be compiled' : 'it matches, but has no current build (svc preagg build makes one)';
    return { rollup: `${view.name}.${rollup.name}`, reason };
  });
  const unsuggested = (why: string): RollupHint => ({ reasons, suggestion: null, unsuggested: why });

  const kindOf = (member: string) => {
    const [viewName, name] = member.split('.') as [string, string];
    const of = model.views.get(viewName);
    const measure = of?.measures.find((m) => m.name === name);
    if (measure !== undefined) return { measure, view: of! };
    const dimension = of?.dimensions.find((d) => d.name === name);
    return dimension === undefined ? undefined : { dimension, view: of! };
  };
  const filtered = [...filterMembers(query.filters ?? []), ...policed.rowFilters.flatMap((r) => r.rows.flatMap((list) => filterMembers(list)))];
  const measures: string[] = [];
  const dimensions: string[] = [];
  const times = new Set((query.timeDimensions ?? []).map((td) => td.dimension));
  for (const member of [...(query.measures ?? []), ...(query.dimensions ?? []), ...filtered]) {
    const found = kindOf(member);
    if (found === undefined) continue;
    if ('measure' in found) {
      if (found.view !== view) return unsuggested(`the measure ${member} is not of view ${view.name}: a rollup holds its own view's measures`);
      if (!measures.includes(member)) measures.push(member);
    } else if (found.dimension.type === 'time') {
      times.add(member);
    } else if (!dimensions.includes(member)) {
      dimensions.push(member);
    }
  }
  if (times.size > 1) return unsuggested(`it reads ${times.size} time dimensions (${[...times].join(', ')}); a rollup buckets one`);
  if (measures.length === 0) return unsuggested('it has no measure: a rollup aggregates measures');
  const timeDimension = [...times][0];
  const asked = (query.timeDimensions ?? []).map((td) => td.granularity).filter((g): g is Granularity => g !== undefined);
  // The finest granularity the query asks (buckets nest into coarser ones); else, for a range or filter only, days
  // and then finer, until the matcher agrees.
  const finest = asked.sort((a, b) => GRANULARITIES.indexOf(a) - GRANULARITIES.indexOf(b))[0];
  const grains: Array<Granularity | undefined> = timeDimension === undefined ? [undefined] : finest !== undefined ? [finest] : ['day', 'hour', 'minute', 'second'];
  const additive = measures.every((m) => ADDITIVE.has(view.measures.find((x) => `${view.name}.${x.name}` === m)!.type));
  let lastReason = '';
  for (const granularity of grains) {
    const preAggregation: PreAggregation = {
      name: rollupName(view, measures, dimensions, granularity),
      measures,
      ...(dimensions.length > 0 ? { dimensions } : {}),
      ...(timeDimension !== undefined ? { timeDimension, granularity } : {}),
      ...(timeDimension !== undefined && options.timezone !== 'UTC' ? { timezones: [options.timezone] } : {}),
      ...(additive ? {} : { additive: false }),
      refresh: { every: '1 hour' },
    };
    const problem = preAggregationProblem({ ...view, preAggregations: [...(view.preAggregations ?? []), preAggregation] }, model);
    if (problem !== undefined) return unsuggested(problem.message);
    const match = matchRollup(policed, view, preAggregation, matchOptions);
    if (!('reason' in match)) return { reasons, suggestion: { view: view.name, preAggregation } };
    lastReason = match.reason;
  }
  return unsuggested(`even a rollup of its own members would not answer it: ${lastReason}`);
}
