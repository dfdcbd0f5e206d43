import { AppError } from '../core/core.errors.js';
import { ResultCache } from './cache/cache.results.js';
import type { AnswerSource, CachedRows } from './cache/cache.results.js';
import type { DataContext, DataScope } from './data.scope.js';
import { planQuery } from './plan/plan.query.js';
import { builtZone } from './preagg/preagg.definitions.js';
import { rollupHint } from './preagg/preagg.suggest.js';
import type { RollupHint } from './preagg/preagg.suggest.js';
import type { Plan, PlanSettings } from './plan/plan.query.js';
import { applyPolicies } from './policy/policy.query.js';
import { bindRawSql } from './policy/policy.raw-sql.js';
import type { RawSql } from './policy/policy.raw-sql.js';
import { dialectOf } from './semantic/semantic.model.js';
import type { PreAggregation, ResultColumn, SemanticView } from './semantic/semantic.model.js';
import type { SemanticQuery } from './semantic/semantic.query.js';
import type { QueryResult } from './semantic/semantic.results.js';

// How a viewer's query is answered, one way: its scope, then the policies (policy/), then the plan (plan/), then
// the result cache keyed on that plan (cache/), then the data source or the rollup the plan chose.

/** A query's answer and where it came from. */
export type SourcedResult = QueryResult & { source: AnswerSource };

/**
 * Runs a viewer's semantic query under its access policies (widgets, drill-downs, the AI and apps all come here).
 * `root`: the field the query stands at, which its errors name (default `query`; the AI's tool call: `toolCall`).
 * `onlyRollups`: a plan that no built pre-aggregation answers is a 400 `query_too_broad` at `root`, nothing run.
 */
export async function runSemanticQuery(dc: DataContext, scope: DataScope, query: SemanticQuery, root = 'query', onlyRollups = false): Promise<SourcedResult> {
  const plan = planQuery(applyPolicies(scope.access, query, root), { ...planSettings(dc, scope), root });
  // Issue 35: a data source marked exploreRequiresRollup answers viewers' own queries from built rollups only.
  if (onlyRollups && plan.kind !== 'rollup') throw new AppError('query_too_broad', 'too broad: add a filter or a grain', root);
  return runPlan(dc, scope, plan);
}

/** The statement a plan runs, where: what an admin's preview shows (data.preview.ts). */
export interface PlannedStatement {
  sql: string;
  parameters: readonly unknown[];
  /** `warehouse`, or `rollup:<view>.<name>`. */
  on: string;
}

/** The statement a viewer's query would run, under its policies, with its columns, without running it (Cube's `sql`). */
export function explainQuery(dc: DataContext, scope: DataScope, query: SemanticQuery, root = 'query'): PlannedStatement & { columns: Plan['compiled']['columns'] } {
  const plan = planQuery(applyPolicies(scope.access, query, root), { ...planSettings(dc, scope), root });
  return { ...statementOf(plan), columns: plan.compiled.columns };
}

const statementOf = (plan: Plan): PlannedStatement => ({ sql: plan.compiled.sql, parameters: plan.compiled.parameters, on: plan.kind === 'rollup' ? `rollup:${plan.name}` : 'warehouse' });

/** runSemanticQuery, with the statement its plan chose. */
export async function runExplainedQuery(dc: DataContext, scope: DataScope, query: SemanticQuery, root: string): Promise<SourcedResult & { statement: PlannedStatement; rollupHint?: RollupHint }> {
  const policed = applyPolicies(scope.access, query, root);
  const plan = planQuery(policed, { ...planSettings(dc, scope), root });
  const statement = statementOf(plan);
  const result = await runPlan(dc, scope, plan);
  if (result.source !== 'warehouse') return { ...result, statement };
  // The data source answered: why no rollup did, and one that would ("why is this slow", preagg.suggest.ts).
  const built = (view: SemanticView, rollup: PreAggregation) =>
    dc.rollups?.currentBuild({ accountId: scope.accountId, deploymentId: scope.deploymentId, source: scope.source, model: policed.model, view, rollup, timezone: builtZone(rollup, scope.timezone) }) !== undefined;
  return { ...result, statement, rollupHint: rollupHint(policed, { timezone: scope.timezone, now: dc.now(), built }) };
}

/** How many rows a viewer's query has, under its access policies, through the result cache. */
export async function countRows(dc: DataContext, scope: DataScope, query: SemanticQuery): Promise<number> {
  const plan = planQuery(applyPolicies(scope.access, query), { ...planSettings(dc, scope), countRows: true });
  const { value } = await cachedRows(dc, scope, plan.key, async () => {
    dc.cache.counters.warehouseQueries++;
    const { rows } = await dc.warehouses.get(scope.source).run(plan.compiled.sql, plan.compiled.parameters, { maxRows: 1, timeoutMs: dc.timeoutMs });
    return { value: { rows, truncated: false }, source: 'warehouse' };
  });
  return Number(value.rows[0]?.[0] ?? 0);
}

const planSettings = (dc: DataContext, scope: DataScope): PlanSettings => ({
  dialect: dialectOf(scope.source), timezone: scope.timezone, now: dc.now(), rowCap: dc.rowCap,
  accountId: scope.accountId, deploymentId: scope.deploymentId, source: scope.source, ...(dc.rollups !== undefined ? { rollups: dc.rollups } : {}),
});

/** A plan's answer: kept in the cache under the plan's key, else run where the plan says. */
async function runPlan(dc: DataContext, scope: DataScope, plan: Plan): Promise<SourcedResult> {
  const { compiled } = plan;
  const { value, source } = await cachedRows(dc, scope, plan.key, async () => {
    if (plan.kind === 'rollup') {
      const store = dc.rollups!;
      await store.table(plan.target, plan.manifest);
      dc.cache.counters.rollupQueries++;
      const answer = await store.run(compiled.sql, compiled.parameters, compiled.limit);
      return { value: { rows: answer.slice(0, compiled.limit), truncated: answer.length > compiled.limit }, source: `rollup:${plan.name}` };
    }
    dc.cache.counters.warehouseQueries++;
    const { rows } = await dc.warehouses.get(scope.source).run(compiled.sql, compiled.parameters, { maxRows: compiled.limit, timeoutMs: dc.timeoutMs });
    return { value: { rows: rows.slice(0, compiled.limit), truncated: rows.length > compiled.limit }, source: 'warehouse' };
  });
  // The entry keeps whether more rows matched; whether that is the row cap's doing is this query's: a query whose own
  // limit equals another's cap (an explore query's at SVC_EXPLORE_MAX_ROWS) shares the entry, not the flag.
  return { columns: compiled.columns, rows: value.rows, truncated: compiled.capped && value.truncated, source };
}

/**
 * One statement's rows through the result cache: keyed by the account, the data source, its refresh key's
 * current value, and the statement that runs with its bound values and row limit (a policy's row filter is in
 * both; a rollup's statement names its build).
 */
async function cachedRows(dc: DataContext, scope: DataScope, statementKey: readonly unknown[], compute: () => Promise<{ value: CachedRows; source: AnswerSource }>): Promise<{ value: CachedRows; source: AnswerSource }> {
  const { refreshKey, ...source } = scope.source;
  const sourceKey = JSON.stringify(source);
  const generation = await dc.cache.refreshValue(`${scope.accountId}:${sourceKey}`, refreshKey, dc.now().getTime(), async (refreshSql) => {
    dc.cache.counters.warehouseQueries++;
    try {
      const { rows } = await dc.warehouses.get(scope.source).run(refreshSql, [], { maxRows: 1, timeoutMs: dc.timeoutMs });
      return rows[0] ?? null;
    } catch (error) {
      // The deployment's own setting failed, not the viewer's ask: said as such.
      if (error instanceof AppError) throw new AppError(error.code, `dataSource.refreshKey.sql: ${error.message}`, 'dataSource.refreshKey.sql');
      throw error;
    }
  });
  const key = ResultCache.key([scope.accountId, sourceKey, generation, ...statementKey]);
  return dc.cache.answer(key, scope.force, compute);
}

const SOURCE_RANK = (source: AnswerSource) => (source === 'warehouse' ? 2 : source === 'cache' ? 0 : 1);
/** Of several answers' sources, the least cached one (the one that tells why an answer was slow). */
export const leastCached = (sources: readonly AnswerSource[]): AnswerSource => sources.reduce((worst, next) => (SOURCE_RANK(next) > SOURCE_RANK(worst) ? next : worst), 'cache');

/** A dashboard's raw SQL, bound by the policies (policy.raw-sql.ts), read-only, inside a row cap: one SELECT (or WITH ... SELECT). */
export async function runRawSql(dc: DataContext, scope: DataScope, raw: RawSql): Promise<SourcedResult> {
  const bound = bindRawSql(scope.access, raw, dialectOf(scope.source));
  const statement = bound.statement.trim().replace(/;\s*$/, '');
  if (!/^(select|with)\b/i.test(statement)) throw new AppError('invalid_query', 'sqlQuery: only a SELECT (or WITH ... SELECT) runs', 'sqlQuery');
  const placeholder = dialectOf(scope.source) === 'postgres' ? `$${bound.parameters.length + 1}` : '?';
  const wrapped = { sql: `SELECT * FROM (${statement}) AS svc_q LIMIT ${placeholder}`, parameters: [...bound.parameters, dc.rowCap + 1] };
  // The column names travel with the rows: a raw statement has no model to name them.
  const { value, source } = await cachedRows(dc, scope, [wrapped.sql, wrapped.parameters, dc.rowCap], async () => {
    dc.cache.counters.warehouseQueries++;
    const answer = await dc.warehouses.get(scope.source).run(wrapped.sql, wrapped.parameters, { maxRows: dc.rowCap, timeoutMs: dc.timeoutMs });
    return { value: { rows: [answer.fields, ...answer.rows.slice(0, dc.rowCap)], truncated: answer.rows.length > dc.rowCap }, source: 'warehouse' };
  });
  const fields = value.rows[0] as string[];
  const rows = value.rows.slice(1);
  const columns: ResultColumn[] = fields.map((name, i) => {
    const sample = rows.find((row) => row[i] !== null)?.[i];
    return { name, member: name, title: name, type: typeof sample === 'number' ? 'number' : 'string', kind: typeof sample === 'number' ? 'measure' : 'dimension' };
  });
  return { columns, rows, truncated: value.truncated, source };
}
