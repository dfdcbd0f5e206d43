import { createHash } from 'node:crypto';
import { GRANULARITIES } from '../semantic/semantic.model.js';
import type { DataSourceConfig, Granularity, PreAggregation, SemanticMeasure, SemanticModel, SemanticView } from '../semantic/semantic.model.js';
import { isTimeZoneName } from '../semantic/semantic.timezone.js';

/**
 * Pre-aggregations (Cube's rollups), declared on a semantic view: its measures grouped by some dimensions and a
 * time dimension at a granularity, built from the data source into files of DuckDB's (preagg.store.ts) and
 * answering every query they can answer exactly. This module is the rule: what a declaration may say, and which
 * query a built rollup answers, as a query of its own over the rollup's table.
 */
/** Measures that re-aggregate from a finer rollup: a count is summed, an average is kept as its sum and count. */
const ADDITIVE: ReadonlySet<SemanticMeasure['type']> = new Set(['count', 'sum', 'min', 'max', 'avg']);

/** Which granularity answers from which: a bucket of `coarse` is a union of buckets of `fine`. */
export function nests(fine: Granularity, coarse: Granularity): boolean {
  if (fine === coarse) return true;
  const rank = (g: Granularity) => GRANULARITIES.indexOf(g);
  if (rank(fine) > rank(coarse)) return false;
  // Weeks cross month boundaries: nothing coarser than a week is made of weeks, and a week is made of days or finer.
  if (fine === 'week') return false;
  if (coarse === 'week') return rank(fine) <= rank('day');
  return true;
}

export const timezonesOf = (rollup: PreAggregation): string[] => rollup.timezones ?? ['UTC'];

/** The zone of the build that answers a query in `timezone`: its own, or for a rollup without time, its one build. */
export const builtZone = (rollup: PreAggregation, timezone: string): string => (rollup.timeDimension === undefined ? timezonesOf(rollup)[0]! : timezone);

/** The problems of one view's pre-aggregations: the path below the view and what is wrong, or undefined. */
export function preAggregationProblem(view: SemanticView, model: SemanticModel): { path: string; message: string } | undefined {
  const names = new Set<string>();
  const joined = new Set((view.joins ?? []).map((j) => j.view));
  const reachable = (name: string) => {
    const [viewName] = name.split('.');
    return viewName === view.name || joined.has(viewName!);
  };
  for (const [i, rollup] of (view.preAggregations ?? []).entries()) {
    const at = `.preAggregations[${i}]`;
    if (names.has(rollup.name)) return { path: `${at}.name`, message: `duplicate pre-aggregation name "${rollup.name}"` };
    names.add(rollup.name);
    const additive = rollup.additive !== false;
    for (const [j, name] of rollup.measures.entries()) {
      const measure = view.measures.find((m) => `${view.name}.${m.name}` === name);
      if (measure === undefined) return { path: `${at}.measures[${j}]`, message: `"${name}" is not a measure of view ${view.name}` };
      if (additive && !ADDITIVE.has(measure.type)) {
        return { path: `${at}.measures[${j}]`, message: `${name} is a ${measure.type} measure, which does not re-aggregate: only a rollup with "additive": false (answering at its own grain) may hold it` };
      }
    }
    for (const [j, name] of (rollup.dimensions ?? []).entries()) {
      const dimension = lookupDimension(model, name);
      if (dimension === undefined || !reachable(name)) return { path: `${at}.dimensions[${j}]`, message: `"${name}" is not a dimension of view ${view.name} or of a view it joins` };
      if (dimension.type === 'time') return { path: `${at}.dimensions[${j}]`, message: `${name} is a time dimension: name it as timeDimension, with a granularity` };
    }
    if (rollup.timeDimension !== undefined) {
      const time = lookupDimension(model, rollup.timeDimension);
      if (time === undefined || !reachable(rollup.timeDimension) || time.type !== 'time') {
        return { path: `${at}.timeDimension`, message: `"${rollup.timeDimension}" is not a time dimension of view ${view.name} or of a view it joins` };
      }
      if (rollup.granularity === undefined) return { path: `${at}.granularity`, message: 'a timeDimension needs a granularity' };
      if (rollup.partitionGranularity !== undefined && !nests(rollup.granularity, rollup.partitionGranularity)) {
        return { path: `${at}.partitionGranularity`, message: `${rollup.granularity} buckets do not fall within ${rollup.partitionGranularity} partitions` };
      }
    } else {
      if (rollup.granularity !== undefined) return { path: `${at}.granularity`, message: 'a granularity needs a timeDimension' };
      if (rollup.partitionGranularity !== undefined) return { path: `${at}.partitionGranularity`, message: 'partitions need a timeDimension' };
      if (rollup.refresh?.incremental === true) return { path: `${at}.refresh.incremental`, message: 'an incremental refresh needs partitions' };
    }
    if (rollup.refresh?.incremental === true && rollup.partitionGranularity === undefined) {
      return { path: `${at}.refresh.incremental`, message: 'an incremental refresh needs a partitionGranularity' };
    }
    for (const [j, zone] of (rollup.timezones ?? []).entries()) {
      if (!isTimeZoneName(zone)) return { path: `${at}.timezones[${j}]`, message: `"${zone}" is not an IANA time zone name` };
    }
  }
  return undefined;
}

function lookupDimension(model: SemanticModel, name: string) {
  const [viewName, member] = name.split('.');
  return model.views.get(viewName!)?.dimensions.find((d) => d.name === member);
}

/** The rollup's columns: one per dimension (`d<i>`), the time bucket (`t`), and per measure `m<i>` (an average: `m<i>__sum`, `m<i>__count`). */
export interface RollupColumns {
  dimensions: Array<{ member: string; column: string }>;
  time: { member: string; column: string } | undefined;
  measures: Array<{ member: string; column: string; type: SemanticMeasure['type'] }>;
}

export function rollupColumns(view: SemanticView, rollup: PreAggregation): RollupColumns {
  return {
    dimensions: (rollup.dimensions ?? []).map((member, i) => ({ member, column: `d${i}` })),
    time: rollup.timeDimension === undefined ? undefined : { member: rollup.timeDimension, column: 't' },
    measures: rollup.measures.map((member, i) => ({ member, column: `m${i}`, type: view.measures.find((m) => `${view.name}.${m.name}` === member)!.type })),
  };
}

/**
 * What a build depends on: the rollup, the views it reads and the data source. A build made under another
 * definition is never read (the import changed it); it is rebuilt.
 */
export function definitionHash(source: DataSourceConfig, model: SemanticModel, view: SemanticView, rollup: PreAggregation, timezone: string): string {
  const { refreshKey: _refreshKey, ...where } = source;
  const compute = () => {
    const views = [view, ...(view.joins ?? []).map((j) => model.views.get(j.view))].map((v) => v && { ...v, accessPolicy: undefined, preAggregations: undefined });
    return createHash('sha256').update(JSON.stringify([where, views, { ...rollup, refresh: undefined }, timezone])).digest('base64url').slice(0, 22);
  };
  // Every widget request asks which builds are current: the hash is kept per model (a parsed model is shared by
  // the requests of its deployment, data.scope.ts, and never changes), for the model's own view and rollup.
  if (model.views.get(view.name) !== view || !(view.preAggregations ?? []).includes(rollup)) return compute();
  let known = HASHES.get(model);
  if (known === undefined) {
    known = new Map();
    HASHES.set(model, known);
  }
  const key = JSON.stringify([view.name, rollup.name, timezone, where]);
  let hash = known.get(key);
  if (hash === undefined) {
    hash = compute();
    if (known.size > 10_000) known.clear();
    known.set(key, hash);
  }
  return hash;
}

/** definitionHash's answers by model: a changed model is a new object, with none kept. */
const HASHES = new WeakMap<SemanticModel, Map<string, string>>();

/**
 * The semantic model of a rollup's table: one view `r` whose dimensions are the rollup's columns and whose
 * measures re-aggregate them. Queries matched to the rollup are compiled against it, in DuckDB's dialect, with
 * its time bucket read as wall-clock time (the time zone of the build, compiled as UTC).
 */
export function rollupModel(columns: RollupColumns, table: string, model: SemanticModel, additive: boolean): SemanticView {
  const dimensionType = (member: string) => lookupDimension(model, member)!.type;
  return {
    name: 'r', table,
    dimensions: [
      ...columns.dimensions.map(({ member, column }) => ({ name: column, type: dimensionType(member) })),
      ...(columns.time !== undefined ? [{ name: columns.time.column, type: 'time' as const }] : []),
    ],
    measures: columns.measures.map(({ column, type }) => ({ name: column, type: reaggregation(type, additive), column })),
  };
}

/** How a rollup column of a measure re-aggregates (internal measure types of the compiler: compiler.query.ts `aggregate`). */
function reaggregation(type: SemanticMeasure['type'], additive: boolean): SemanticMeasure['type'] {
  if (!additive) return 'rollup_grain';
  if (type === 'count') return 'rollup_count';
  if (type === 'avg') return 'rollup_avg';
  return type;
}
