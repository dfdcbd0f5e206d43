import { compileSemanticQuery, resultColumns } from '../compiler/compiler.query.js';
import type { CompiledSemanticQuery } from '../compiler/compiler.query.js';
import type { DataSourceConfig, SemanticModel, WarehouseDialect } from '../semantic/semantic.model.js';
import { offsetAt } from '../semantic/semantic.timezone.js';
import type { PolicedQuery } from '../policy/policy.query.js';
import { builtZone } from '../preagg/preagg.definitions.js';
import { matchRollup } from '../preagg/preagg.match.js';
import type { Manifest, RollupStore, RollupTarget } from '../preagg/preagg.store.js';

// The plan (issue 32): where a policed query is answered, chosen once, and the one statement that answers it.
// Cube's orchestrator does the same: it picks the pre-aggregation first, then keys its cache on the SQL it will
// actually run. The plan's key is that statement with its values and row limit; the caller adds whose data
// source and which refresh-key value it is read under (data.run.ts).

/** Where a query is answered and what it runs. */
export type Plan =
  | { kind: 'warehouse'; compiled: CompiledSemanticQuery; key: readonly unknown[] }
  | {
    kind: 'rollup';
    compiled: CompiledSemanticQuery;
    key: readonly unknown[];
    /** `<view>.<rollup>`: the answer's source says `rollup:<name>`. */
    name: string;
    /** The build that answers, to attach before its statement runs. */
    target: RollupTarget;
    manifest: Manifest;
  };

export interface PlanSettings {
  dialect: WarehouseDialect;
  /** IANA name: time buckets and date ranges are read in it. */
  timezone: string;
  now: Date;
  /** Most rows any answer carries. */
  rowCap: number;
  /** Whose data source: the builds of this deployment may answer. */
  accountId: number;
  deploymentId: number;
  source: DataSourceConfig;
  /** Built pre-aggregations; none: every query goes to the data source. */
  rollups?: Pick<RollupStore, 'currentBuild'>;
  /** The field the query stands at, which the compiler's errors name below (default `query`). */
  root?: string;
  /** The statement counts the query's rows (a drill-down's total): always the data source's. */
  countRows?: boolean;
}

/**
 * The plan of a policed query: the built rollup of its view that answers it exactly with the fewest rows (Cube
 * prefers the smallest too), else the data source. The query is compiled once, for where it runs; a query no
 * rollup can express (a value its column's type refuses) goes to the data source, whose compiler says why.
 *
 * A plan is kept and given again for the same query, row filters, settings, builds and local date: every cached
 * widget request plans before it looks in the cache, and planning (matching each rollup, compiling) costs more than
 * the cache's answer. The plan depends on `now` only through its local date: relative ranges (`today`,
 * `last 7 days`) resolve to whole days of the query's zone (semantic.dates.ts).
 */
export function planQuery(policed: PolicedQuery, settings: PlanSettings): Plan {
  const candidates = settings.countRows === true ? [] : rollupCandidates(policed, settings);
  const key = JSON.stringify([
    policed.query, policed.rowFilters, settings.dialect, settings.timezone, localDay(settings.now, settings.timezone), settings.rowCap,
    settings.root ?? null, settings.countRows === true, settings.accountId, settings.deploymentId, settings.source, candidates.map((c) => c.manifest.buildId),
  ]);
  let plans = PLANS.get(policed.model);
  if (plans === undefined) {
    plans = new Map();
    PLANS.set(policed.model, plans);
  }
  const known = plans.get(key);
  if (known !== undefined) return known;
  const plan = rollupPlan(policed, settings, candidates) ?? warehousePlan(policed, settings);
  if (plans.size >= MAX_PLANS_PER_MODEL) plans.clear();
  plans.set(key, plan);
  return plan;
}

/** Plans by model (a parsed model is shared by its deployment's requests, and a changed model is a new object). */
const PLANS = new WeakMap<SemanticModel, Map<string, Plan>>();
const MAX_PLANS_PER_MODEL = 2_000;

/** Days since the epoch in the zone: what relative date ranges resolve by. */
function localDay(now: Date, timezone: string): number {
  const seconds = Math.floor(now.getTime() / 1000);
  return Math.floor((seconds + offsetAt(timezone, seconds)) / 86_400);
}

function warehousePlan(policed: PolicedQuery, settings: PlanSettings): Plan {
  const compiled = compileSemanticQuery(policed, {
    dialect: settings.dialect, timezone: settings.timezone, now: settings.now, rowCap: settings.rowCap,
    ...(settings.countRows === true ? { countRows: true } : {}), ...(settings.root !== undefined ? { root: settings.root } : {}),
  });
  return { kind: 'warehouse', compiled, key: [compiled.sql, compiled.parameters, settings.countRows === true ? 1 : compiled.limit] };
}

interface Candidate {
  rollup: NonNullable<RollupTarget['view']['preAggregations']>[number];
  target: RollupTarget;
  manifest: Manifest;
}

/** The rollups of the query's view with a current build, in their declared order. */
function rollupCandidates(policed: PolicedQuery, settings: PlanSettings): Candidate[] {
  const store = settings.rollups;
  const { query, model } = policed;
  const first = query.measures?.[0] ?? query.dimensions?.[0] ?? query.timeDimensions?.[0]?.dimension;
  if (store === undefined || first === undefined) return [];
  const view = model.member(first, 'query').view;
  const candidates: Candidate[] = [];
  for (const rollup of view.preAggregations ?? []) {
    const target: RollupTarget = {
      accountId: settings.accountId, deploymentId: settings.deploymentId, source: settings.source, model, view, rollup, timezone: builtZone(rollup, settings.timezone),
    };
    const manifest = store.currentBuild(target);
    if (manifest !== undefined) candidates.push({ rollup, target, manifest });
  }
  return candidates;
}

function rollupPlan(policed: PolicedQuery, settings: PlanSettings, candidates: readonly Candidate[]): Plan | undefined {
  let best: Extract<Plan, { kind: 'rollup' }> | undefined;
  for (const { rollup, target, manifest } of candidates) {
    if (best !== undefined && manifest.rows >= best.manifest.rows) continue;
    const { view } = target;
    const match = matchRollup(policed, view, rollup, { timezone: settings.timezone, now: settings.now, table: `b_${manifest.buildId}` });
    if (!('policed' in match)) continue;
    try {
      // The rollup's buckets are wall-clock time of the build's zone, read as UTC without zone arithmetic.
      const onRollup = compileSemanticQuery(match.policed, { dialect: 'duckdb', timezone: 'UTC', wallClock: true, now: settings.now, rowCap: settings.rowCap });
      // Its rows answer under the query's own columns (the rollup's are `r.m0`, `r.t.month`, ...).
      const compiled = { ...onRollup, columns: resultColumns(policed) };
      best = { kind: 'rollup', compiled, key: [compiled.sql, compiled.parameters, compiled.limit], name: `${view.name}.${rollup.name}`, target, manifest };
    } catch {
      // A query the rollup's columns cannot express: another rollup, or the data source.
    }
  }
  return best;
}
