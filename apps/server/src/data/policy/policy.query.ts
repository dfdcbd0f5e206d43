import { baseViewOf } from '../semantic/semantic.model.js';
import type { ResolvedMember, SemanticModel, SemanticView } from '../semantic/semantic.model.js';
import type { QueryFilter, SemanticQuery } from '../semantic/semantic.query.js';
import type { BoundFilter, ModelAccess } from './policy.access.js';

// The policy as a step (issue 32), as Cube rewrites a query with its row filters before any SQL is made
// (CompilerApi.applyRowLevelSecurity): a viewer's query passes applyPolicies once, which refuses a member a policy
// hides (403 naming it) and attaches the row filters of every view the query reads. What comes out is a
// PolicedQuery, and the compiler and the rollup matcher accept nothing else: a query that has not passed the
// policies does not compile (policy.query.types.test.ts holds that to the type checker).

declare const POLICED: unique symbol;

/** The row filters of one view the query reads: the OR of the matching policies' filter lists, each ANDed. */
export interface ViewRowFilter {
  view: string;
  /** No alternative at all: no policy of the view matches the viewer, so no row. */
  rows: ReadonlyArray<readonly BoundFilter[]>;
}

/**
 * A semantic query that has passed the access policies: every member it names is one the viewer may see, and
 * `rowFilters` holds the row filters of each view it reads whose rows are restricted (a view open to the viewer
 * has none). Made only in this file: by applyPolicies for a viewer, by withoutPolicies for svc's own queries, by
 * derivePoliced for a rollup's translation of one.
 */
export interface PolicedQuery {
  readonly [POLICED]: true;
  readonly model: SemanticModel;
  readonly query: SemanticQuery;
  readonly rowFilters: readonly ViewRowFilter[];
}

const policed = (model: SemanticModel, query: SemanticQuery, rowFilters: readonly ViewRowFilter[]) => ({ model, query, rowFilters }) as unknown as PolicedQuery;

/** The members a filter list names, with the field each stands at (`query.filters[0].and[1].member`). */
function filterMembers(filters: readonly QueryFilter[], field: string): Array<[unknown, string]> {
  return filters.flatMap((filter, i): Array<[unknown, string]> => {
    const at = `${field}[${i}]`;
    if ('member' in filter) return [[filter.member, `${at}.member`]];
    return 'and' in filter ? filterMembers(filter.and, `${at}.and`) : filterMembers(filter.or, `${at}.or`);
  });
}

/**
 * A viewer's query under the model's access policies. Every member the query names (dimensions, time dimensions,
 * measures, filters, and order entries that name a declared member) must be declared (400 naming its field) and
 * visible to the viewer (403 naming it), checked in the order the compiler reads them. The views read are the
 * query's own (its first member's) and each other view a member comes from; the row filters of each that
 * restricts the viewer are attached. Whether the query is otherwise sound (joins, kinds, values) is the
 * compiler's to say. `root` is the field the query stands at, which every error names below (`query.measures[0]`).
 */
export function applyPolicies(access: ModelAccess, query: SemanticQuery, root = 'query'): PolicedQuery {
  const model = access.model;
  const measures = query.measures ?? [];
  const dimensions = query.dimensions ?? [];
  const timeDimensions = query.timeDimensions ?? [];
  const base = baseViewOf(model, query, root);
  const read: SemanticView[] = [base];
  const named: Array<[unknown, string]> = [
    ...dimensions.map((name, i): [unknown, string] => [name, `${root}.dimensions[${i}]`]),
    ...timeDimensions.map((td, i): [unknown, string] => [td.dimension, `${root}.timeDimensions[${i}].dimension`]),
    ...measures.map((name, i): [unknown, string] => [name, `${root}.measures[${i}]`]),
    ...filterMembers(query.filters ?? [], `${root}.filters`),
  ];
  for (const [name, field] of named) {
    const member: ResolvedMember = model.member(name, field);
    access.requireVisible(member, field);
    if (!read.includes(member.view)) read.push(member.view);
  }
  // An order entry names a result column; one that names a hidden member is refused as hidden, not as missing.
  const asked = query.order === undefined ? [] : Array.isArray(query.order) ? query.order : Object.entries(query.order);
  asked.forEach(([name], i) => {
    const [viewName, memberName] = /^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*/.exec(name)?.[0]?.split('.') ?? [];
    const view = viewName === undefined ? undefined : model.views.get(viewName);
    if (view !== undefined && [...view.dimensions, ...view.measures].some((m) => m.name === memberName)) {
      access.requireVisible({ name: `${viewName}.${memberName}`, view }, `${root}.order[${i}]`);
    }
  });
  const rowFilters: ViewRowFilter[] = [];
  for (const view of read) {
    const { rows } = access.view(view);
    if (rows !== 'all') rowFilters.push({ view: view.name, rows });
  }
  return policed(model, query, rowFilters);
}

/**
 * A query svc runs for itself, under no viewer's policies: a pre-aggregation's build (every row, read later
 * through each viewer's row filters) and the import's check that a policy's filter compiles. Never a viewer's.
 */
export function withoutPolicies(model: SemanticModel, query: SemanticQuery): PolicedQuery {
  return policed(model, query, []);
}

/**
 * A PolicedQuery carried over to another model: a pre-aggregation's table, with the viewer's row filters
 * translated to its columns (preagg.match.ts). Made only from a PolicedQuery, so only a query that passed the
 * policies has a translation.
 */
export function derivePoliced(_from: PolicedQuery, model: SemanticModel, query: SemanticQuery, rowFilters: readonly ViewRowFilter[]): PolicedQuery {
  return policed(model, query, rowFilters);
}
