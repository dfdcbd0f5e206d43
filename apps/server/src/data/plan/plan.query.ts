import { compileSemanticQuery, resultColumns } from '../compiler/compiler.query.js';
import type { CompiledSemanticQuery } from '../compiler/compiler.query.js';
import type { DataSourceConfig, WarehouseDialect } from '../semantic/semantic.model.js';
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
 */
export function planQuery(policed: PolicedQuery, settings: PlanSettings): Plan {
  if (settings.countRows !== true) {
    const rollup = rollupPlan(policed, settings);
    if (rollup !== undefined) return rollup;
  }
  const compiled = compileSemanticQuery(policed, {
    dialect: settings.dialect, timezone: settings.timezone, now: settings.now, rowCap: settings.rowCap,
    ...(settings.countRows === true ? { countRows: true } : {}), ...(settings.root !== undefined ? { root: settings.root } : {}),
  });
  return { kind: 'warehouse', compiled, key: [compiled.sql, compiled.parameters, settings.countRows === true ? 1 : compiled.limit] };
}

function rollupPlan(policed: PolicedQuery, settings: PlanSettings): Plan | undefined {
  const store = settings.rollups;
  const { query, model } = policed;
  const first = query.measures?.[0] ?? query.dimensions?.[0] ?? query.timeDimensions?.[0]?.dimension;
  if (store === undefined || first === undefined) return undefined;
  const view = model.member(first, 'query').view;
  let best: Extract<Plan, { kind: 'rollup' }> | undefined;
  for (const rollup of view.preAggregations ?? []) {
    const target: RollupTarget = {
      accountId: settings.accountId, deploymentId: settings.deploymentId, source: settings.source, model, view, rollup, timezone: builtZone(rollup, settings.timezone),
    };
    const manifest = store.currentBuild(target);
    if (manifest === undefined || (best !== undefined && manifest.rows >= best.manifest.rows)) continue;
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
