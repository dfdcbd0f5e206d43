import { AppError } from '../../core/core.errors.js';
import type { Granularity, QueryFilter } from './semantic.query.js';

/**
 * The semantic layer: views over a table (or a SELECT) of a deployment's data source that declare the members a
 * query may use. A member is named `<view>.<name>`; nothing else of the data source is reachable through a
 * semantic query.
 */
export type DimensionType = 'string' | 'number' | 'time' | 'boolean';
export type MeasureType = 'count' | 'sum' | 'avg' | 'min' | 'max' | 'count_distinct';
/**
 * How a pre-aggregation's columns re-aggregate (preagg.definitions.ts), never declared by an import: a count is summed
 * (0 over no row), an average divides its summed sum by its summed count, a measure at its rollup's grain is read.
 */
export type RollupMeasureType = 'rollup_count' | 'rollup_avg' | 'rollup_grain';
// Granularities belong to the query format (semantic.query.ts), which the model's declarations use too.
export { GRANULARITIES } from './semantic.query.js';
export type { Granularity } from './semantic.query.js';

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
  /** Who may read which members and rows of this view (issue 20; policy.access.ts). None: everyone reads everything. */
  accessPolicy?: AccessPolicy[];
  /** Rollups of this view's measures that answer matching queries (issue 21; preagg.definitions.ts). */
  preAggregations?: PreAggregation[];
}

/** When cached answers of the source go stale (cache.results.ts). */
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
) & {
  refreshKey?: SourceRefreshKey;
  /** Issue 35: an explore query (a viewer's own) that no built pre-aggregation answers is refused, never run here. */
  exploreRequiresRollup?: boolean;
};

/** A column of a result: a member (a time dimension with its granularity: `orders.created_at.month`). */
export interface ResultColumn {
  name: string;
  /** The member the column comes from (the time dimension without granularity). */
  member: string;
  title: string;
  type: DimensionType;
  kind: 'dimension' | 'measure';
  granularity?: Granularity;
  measureType?: SemanticMeasure['type'];
  format?: ColumnFormat;
}

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
    if (view === undefined) throw AppError.at('invalid_parameter', field, `no semantic view "${name}" (views: ${[...this.views.keys()].join(', ')})`);
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
    throw AppError.at('invalid_parameter', field, `"${name}" is not a declared member of view ${viewName}`);
  }

  dimension(name: unknown, field: string): Extract<ResolvedMember, { kind: 'dimension' }> {
    const member = this.member(name, field);
    if (member.kind !== 'dimension') throw AppError.at('invalid_parameter', field, `"${member.name}" is a measure, not a dimension`);
    return member;
  }

  measure(name: unknown, field: string): Extract<ResolvedMember, { kind: 'measure' }> {
    const member = this.member(name, field);
    if (member.kind !== 'measure') throw AppError.at('invalid_parameter', field, `"${member.name}" is a dimension, not a measure`);
    return member;
  }
}

// What a view declares of access (issue 20; the rule that reads it: policy/policy.access.ts). Cube's access_policy shape.

export interface MemberLevel {
  /** The members the policy lets through: `*` (every member of the view, the default) or a list of names. */
  includes?: '*' | string[];
  /** Members taken out of `includes`. */
  excludes?: string[];
}

export interface RowLevel {
  /** Every row. */
  allowAll?: boolean;
  /** Filters in the query format, ANDed; values may be references such as `{securityContext.tenant_id}`. */
  filters?: QueryFilter[];
}

export interface AccessPolicy {
  /** One group, or `*`: every viewer. */
  group?: string;
  /** Several groups: a viewer in any of them. */
  groups?: string[];
  /** Omitted: every member. */
  memberLevel?: MemberLevel;
  /** Omitted: every row. */
  rowLevel?: RowLevel;
}

/**
 * A pre-aggregation (Cube's rollup) declared on a view (issue 21): the rule that matches queries to it is
 * preagg/preagg.match.ts, the builds are preagg/preagg.store.ts.
 */
export interface PreAggregation {
  /** Unique in its view; an answer from it says `rollup:<view>.<name>`. */
  name: string;
  /** Measures of the view (`view.member`). */
  measures: string[];
  /** Dimensions of the view or of views it joins (`view.member`), not time dimensions. */
  dimensions?: string[];
  /** A time dimension of the view or of a view it joins, bucketed at `granularity` in each of `timezones`. */
  timeDimension?: string;
  granularity?: Granularity;
  /** One file per period of the time dimension; an incremental refresh rebuilds only the recent ones. */
  partitionGranularity?: 'month' | 'quarter' | 'year';
  /** When a build is due (as a data source's refreshKey); `incremental` rebuilds the partitions of `updateWindow` only. */
  refresh?: SourceRefreshKey & { incremental?: boolean; updateWindow?: string };
  /** IANA time zones it is built for (default UTC): a query in another zone goes to the data source. */
  timezones?: string[];
  /**
   * Default true: every measure re-aggregates (count, sum, min, max, avg), so the rollup answers coarser queries.
   * false: it may hold `count_distinct`, and answers only queries at its own grain.
   */
  additive?: boolean;
}

/** The SQL a data source speaks. */
export type WarehouseDialect = 'sqlite' | 'postgres' | 'duckdb';

/** The SQL dialect of a data source. */
export const dialectOf = (source: DataSourceConfig): WarehouseDialect => (source.type === 'postgres' || source.type === 'duckdb' ? source.type : 'sqlite');

/**
 * The view a query reads (its first measure's, else its first dimension's, else its first time dimension's) and the
 * field that names it; a query with no member is a 400 at `<root>.measures`. Its other members come from this view
 * or from views it joins.
 */
export function baseViewOf(model: SemanticModel, query: { measures?: string[]; dimensions?: string[]; timeDimensions?: Array<{ dimension: string }> }, root = 'query'): SemanticView {
  const [first, field] = query.measures?.[0] !== undefined ? [query.measures[0], `${root}.measures[0]`]
    : query.dimensions?.[0] !== undefined ? [query.dimensions[0], `${root}.dimensions[0]`]
      : query.timeDimensions?.[0] !== undefined ? [query.timeDimensions[0].dimension, `${root}.timeDimensions[0].dimension`] : [undefined, ''];
  if (first === undefined) throw new AppError('invalid_parameter', `${root}: a query needs at least one measure or dimension`, `${root}.measures`);
  return model.member(first, field).view;
}
