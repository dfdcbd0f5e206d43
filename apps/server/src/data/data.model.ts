import { AppError } from '../core/core.errors.js';
import { compileSemanticQuery } from './data.compiler.js';
import { accessPolicyProblem } from './data.policy.js';
import type { AccessPolicy } from './data.policy.js';
import { preAggregationProblem } from './data.preagg.js';
import type { PreAggregation } from './data.preagg.js';

/**
 * The semantic layer: views over a table (or a SELECT) of a deployment's data source that declare the members a
 * query may use. A member is named `<view>.<name>`; nothing else of the data source is reachable through a
 * semantic query.
 */
export type DimensionType = 'string' | 'number' | 'time' | 'boolean';
export type MeasureType = 'count' | 'sum' | 'avg' | 'min' | 'max' | 'count_distinct';
/**
 * How a pre-aggregation's columns re-aggregate (data.preagg.ts), never declared by an import: a count is summed
 * (0 over no row), an average divides its summed sum by its summed count, a measure at its rollup's grain is read.
 */
export type RollupMeasureType = 'rollup_count' | 'rollup_avg' | 'rollup_grain';
export const GRANULARITIES = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

export interface ColumnFormat {
  type: 'currency' | 'percent' | 'number';
  decimalPlaces?: number | null;
}

export interface SemanticDimension {
  name: string;
  type: DimensionType;
  /** The column of the view's table (default: the name). */
  column?: string;
  /** An SQL expression instead of a column; `{view}` placeholders name views (trusted: written by the account's analysts). */
  sql?: string;
  title?: string;
  primaryKey?: boolean;
  /** How its values show in a table (a number dimension without one shows as written, ungrouped: an id, a year). */
  format?: ColumnFormat;
}

export interface SemanticMeasure {
  name: string;
  type: MeasureType | RollupMeasureType;
  /** The column aggregated (none for `count`: rows are counted). */
  column?: string;
  sql?: string;
  title?: string;
  format?: ColumnFormat;
}

export interface SemanticJoin {
  /** The view joined, many to one: each row of this view has at most one row there. */
  view: string;
  /** This view's column holding the other view's key. */
  foreignKey: string;
  /** The other view's key column (default `id`). */
  primaryKey?: string;
}

export interface SemanticView {
  name: string;
  title?: string;
  /** A table (optionally `schema.table`) ... */
  table?: string;
  /** ... or a SELECT (trusted, as `sql` of a member). */
  sql?: string;
  joins?: SemanticJoin[];
  dimensions: SemanticDimension[];
  measures: SemanticMeasure[];
  /** The members a drill-down into this view's measures lists (default: every dimension of the view). */
  drillMembers?: string[];
  /** Who may read which members and rows of this view (issue 20; data.policy.ts). None: everyone reads everything. */
  accessPolicy?: AccessPolicy[];
  /** Rollups of this view's measures that answer matching queries (issue 21; data.preagg.ts). */
  preAggregations?: PreAggregation[];
}

/** When cached answers of the source go stale (data.cache.ts). */
export interface SourceRefreshKey {
  every?: string;
  sql?: string;
}

export type DataSourceConfig = (
  | { type: 'demo' }
  | { type: 'sqlite'; path: string }
  | { type: 'postgres'; url: string; schema?: string }
  /** Issue 21: a DuckDB database file (read-only), and/or tables read from Parquet or CSV files (`{ table: path or glob }`). */
  | { type: 'duckdb'; path?: string; files?: Record<string, string> }
) & { refreshKey?: SourceRefreshKey };

export type ResolvedMember =
  | { kind: 'dimension'; name: string; view: SemanticView; dimension: SemanticDimension }
  | { kind: 'measure'; name: string; view: SemanticView; measure: SemanticMeasure };

export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A deployment's semantic views, indexed for member lookups. */
export class SemanticModel {
  readonly views: ReadonlyMap<string, SemanticView>;

  constructor(views: readonly SemanticView[]) {
    this.views = new Map(views.map((view) => [view.name, view]));
  }

  view(name: string, field: string): SemanticView {
    const view = this.views.get(name);
    if (view === undefined) throw new AppError('invalid_parameter', `${field}: no semantic view "${name}" (views: ${[...this.views.keys()].join(', ')})`, field);
    return view;
  }

  /** `view.member` as a declared dimension or measure; anything else is a 400 naming the field. */
  member(name: unknown, field: string): ResolvedMember {
    if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new AppError('invalid_parameter', `${field} must name a member as "<view>.<member>", got ${JSON.stringify(name)}`, field);
    }
    const [viewName, memberName] = name.split('.') as [string, string];
    const view = this.view(viewName, field);
    const dimension = view.dimensions.find((d) => d.name === memberName);
    if (dimension !== undefined) return { kind: 'dimension', name, view, dimension };
    const measure = view.measures.find((m) => m.name === memberName);
    if (measure !== undefined) return { kind: 'measure', name, view, measure };
    throw new AppError('invalid_parameter', `${field}: "${name}" is not a declared member of view ${viewName}`, field);
  }

  dimension(name: unknown, field: string): Extract<ResolvedMember, { kind: 'dimension' }> {
    const member = this.member(name, field);
    if (member.kind !== 'dimension') throw new AppError('invalid_parameter', `${field}: "${member.name}" is a measure, not a dimension`, field);
    return member;
  }

  measure(name: unknown, field: string): Extract<ResolvedMember, { kind: 'measure' }> {
    const member = this.member(name, field);
    if (member.kind !== 'measure') throw new AppError('invalid_parameter', `${field}: "${member.name}" is a dimension, not a measure`, field);
    return member;
  }
}

/**
 * Checks views beyond their JSON shape: unique names, joins to declared views, drill members that exist, access
 * policies that name what exists (data.policy.ts). Returns the path and message of the first problem, or undefined.
 */
export function semanticViewsProblem(views: readonly SemanticView[]): { path: string; message: string } | undefined {
  const names = new Set<string>();
  for (const [v, view] of views.entries()) {
    if (names.has(view.name)) return { path: `[${v}].name`, message: `duplicate view name "${view.name}"` };
    names.add(view.name);
    if ((view.table === undefined) === (view.sql === undefined)) return { path: `[${v}]`, message: 'a view needs exactly one of table or sql' };
    const members = new Set<string>();
    for (const [kind, list] of [['dimensions', view.dimensions], ['measures', view.measures]] as const) {
      for (const [m, member] of list.entries()) {
        if (members.has(member.name)) return { path: `[${v}].${kind}[${m}].name`, message: `duplicate member name "${member.name}"` };
        members.add(member.name);
        if (member.column !== undefined && member.sql !== undefined) return { path: `[${v}].${kind}[${m}]`, message: 'give column or sql, not both' };
      }
    }
  }
  for (const [v, view] of views.entries()) {
    for (const [j, join] of (view.joins ?? []).entries()) {
      if (!names.has(join.view) || join.view === view.name) return { path: `[${v}].joins[${j}].view`, message: `names no other view ("${join.view}")` };
    }
    const model = new SemanticModel(views);
    for (const [d, drill] of (view.drillMembers ?? []).entries()) {
      try {
        model.dimension(drill, 'drillMembers');
      } catch {
        return { path: `[${v}].drillMembers[${d}]`, message: `"${drill}" is not a declared dimension` };
      }
    }
    const policy = accessPolicyProblem(view, model, (query) => {
      compileSemanticQuery(model, query, { dialect: 'sqlite', timezone: 'UTC', now: new Date(0), rowCap: 1 });
    });
    if (policy !== undefined) return { path: `[${v}]${policy.path}`, message: policy.message };
    const rollup = preAggregationProblem(view, model);
    if (rollup !== undefined) return { path: `[${v}]${rollup.path}`, message: rollup.message };
  }
  return undefined;
}
