import { AppError } from '../../core/core.errors.js';
import type { AccessPolicy, ResolvedMember, SemanticModel, SemanticView } from '../semantic/semantic.model.js';
import type { MemberFilter, QueryFilter } from '../semantic/semantic.query.js';

// Issue 20: access policies on semantic views, in the shape of Cube's `access_policy`. A policy names who it is for
// (`group`: one group or `*`; `groups`: a list) and holds a member level (which members that viewer may name) and a
// row level (which rows it may read). The policies of a view that match a viewer combine as Cube's do: the union
// of their member sets, and the OR of their row filters. A view with policies of which none matches gives that
// viewer nothing. This file is that rule, once: the compiler asks it which members and rows a query may touch.

/** Who reads, as policies see them (the roots a reference may name). */
export interface AccessSubject {
  securityContext: Readonly<Record<string, unknown>>;
  userAttributes: Readonly<Record<string, unknown>>;
  groups: readonly string[];
  /** The embed session's tenant name; null for a platform user. */
  embedTenant: string | null;
}

/** A policy filter with its references read: a member filter with values, a group, or one that matches no row. */
export type BoundFilter = MemberFilter | { and: BoundFilter[] } | { or: BoundFilter[] } | { never: string };

/** What one viewer may do with one view. */
export interface ViewAccess {
  /** The members (`view.member`) the viewer may name, or every member. */
  members: 'all' | ReadonlySet<string>;
  /** Every row, or the OR of the matching policies' filter lists (each list ANDed; no list at all: no row). */
  rows: 'all' | ReadonlyArray<readonly BoundFilter[]>;
}

const OPEN: ViewAccess = { members: 'all', rows: 'all' };

export const REFERENCE_ROOTS = ['securityContext', 'userAttributes', 'groups', 'embedTenant'] as const;
export type ReferenceRoot = (typeof REFERENCE_ROOTS)[number];

/** `{securityContext.tenant_id}`, `{userAttributes.region}`, `{groups}`, `{embedTenant}`: a whole value, spaces allowed inside. */
const REFERENCE = /^\{\s*([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_$-]+)*)\s*\}$/;
const BRACES = /[{}]/;

export interface Reference {
  root: string;
  path: string[];
}

/** The reference a filter value is, or undefined for a literal; `malformed` for a string with braces that is neither. */
export function parseReference(value: unknown): Reference | 'malformed' | undefined {
  if (typeof value !== 'string' || !BRACES.test(value)) return undefined;
  const match = REFERENCE.exec(value);
  if (match === null) return 'malformed';
  return { root: match[1]!, path: match[2] === '' ? [] : match[2]!.slice(1).split('.') };
}

/** Whether a reference names something a subject can hold: a known root, with a path where the root is an object. */
export function referenceProblem(reference: Reference): string | undefined {
  if (!(REFERENCE_ROOTS as readonly string[]).includes(reference.root)) {
    return `names an unknown root "${reference.root}" (known: ${REFERENCE_ROOTS.join(', ')})`;
  }
  const isObjectRoot = reference.root === 'securityContext' || reference.root === 'userAttributes';
  if (isObjectRoot && reference.path.length === 0) return `names ${reference.root} as a whole: name a key, as {${reference.root}.tenant_id}`;
  if (!isObjectRoot && reference.path.length > 0) return `{${reference.root}} has no keys`;
  return undefined;
}

type Scalar = string | number | boolean;
const isScalar = (value: unknown): value is Scalar => typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean';

/** The scalars a reference reads from a subject, or undefined when it is missing, empty or not made of scalars. */
export function readReference(reference: Reference, subject: AccessSubject): Scalar[] | undefined {
  if (referenceProblem(reference) !== undefined) return undefined;
  let value: unknown;
  if (reference.root === 'groups') value = subject.groups;
  else if (reference.root === 'embedTenant') value = subject.embedTenant;
  else {
    value = reference.root === 'securityContext' ? subject.securityContext : subject.userAttributes;
    for (const key of reference.path) {
      // Own keys only: `{securityContext.constructor}` must not read Object's prototype.
      if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) return undefined;
      value = (value as Record<string, unknown>)[key];
    }
  }
  if (isScalar(value)) return [value];
  if (Array.isArray(value) && value.length > 0 && value.every(isScalar)) return value;
  return undefined;
}

/** A member name of a policy: `view.member`, or the bare member name of the policy's own view. */
export function qualify(viewName: string, member: string): string {
  return member.includes('.') ? member : `${viewName}.${member}`;
}

/**
 * Binds a policy filter to a subject: references become their values (a list reference is `equals` any item), a
 * member named without its view gets the policy's view. A reference the subject lacks, a value with braces that is
 * no reference, or a member of another view makes that filter match no row: the filter is never dropped.
 */
export function bindFilter(filter: QueryFilter, view: SemanticView, subject: AccessSubject): BoundFilter {
  if ('and' in filter) return { and: filter.and.map((inner) => bindFilter(inner, view, subject)) };
  if ('or' in filter) return { or: filter.or.map((inner) => bindFilter(inner, view, subject)) };
  const member = qualify(view.name, filter.member);
  if (member.split('.')[0] !== view.name) return { never: `${member} is not a member of view ${view.name}` };
  if (filter.values === undefined) return { member, operator: filter.operator };
  const values: Scalar[] = [];
  for (const value of filter.values) {
    const reference = parseReference(value);
    if (reference === undefined) {
      values.push(value);
      continue;
    }
    if (reference === 'malformed') return { never: `${JSON.stringify(value)} is not a reference` };
    const read = readReference(reference, subject);
    if (read === undefined) return { never: `the session has no ${reference.root}${reference.path.map((k) => `.${k}`).join('')}` };
    values.push(...read);
  }
  return { member, operator: filter.operator, values };
}

function applies(policy: AccessPolicy, subject: AccessSubject): boolean {
  const names = policy.groups ?? (policy.group === undefined ? [] : [policy.group]);
  return names.some((name) => name === '*' || subject.groups.includes(name));
}

function membersOf(view: SemanticView): string[] {
  return [...view.dimensions, ...view.measures].map((member) => `${view.name}.${member.name}`);
}

/** What a subject may do with a view under its policies (a view without policies is open). */
export function viewAccess(view: SemanticView, subject: AccessSubject): ViewAccess {
  const policies = view.accessPolicy ?? [];
  if (policies.length === 0) return OPEN;
  let members: 'all' | Set<string> = new Set();
  let rows: 'all' | BoundFilter[][] = [];
  for (const policy of policies.filter((p) => applies(p, subject))) {
    const level = policy.memberLevel;
    const includes = level?.includes ?? '*';
    const excludes = new Set((level?.excludes ?? []).map((name) => qualify(view.name, name)));
    if (members !== 'all') {
      if (includes === '*' && excludes.size === 0) members = 'all';
      else for (const name of includes === '*' ? membersOf(view) : includes.map((n) => qualify(view.name, n))) if (!excludes.has(name)) members.add(name);
    }
    if (rows !== 'all') {
      const filters = policy.rowLevel?.allowAll === true ? [] : policy.rowLevel?.filters ?? [];
      if (filters.length === 0) rows = 'all';
      else rows.push(filters.map((filter) => bindFilter(filter, view, subject)));
    }
  }
  return { members, rows };
}

/** A filter of literal values as a bound one (a value with braces stays a value: locked filters name no reference). */
function literal(filter: QueryFilter): BoundFilter {
  if ('and' in filter) return { and: filter.and.map(literal) };
  if ('or' in filter) return { or: filter.or.map(literal) };
  return filter;
}

/** A locked filter (issue 38) on the view it restricts: literal values, or `never` when its dimension is gone. */
export interface LockedFilter {
  view: string;
  filter: BoundFilter;
}

/** A locked filter of literal values on a view. */
export function lockedFilter(filter: QueryFilter, view: string): LockedFilter {
  return { view, filter: literal(filter) };
}

/** A view's access with the locked filters on its own members ANDed into every row list it allows. */
function withLocked(access: ViewAccess, view: SemanticView, locked: readonly LockedFilter[]): ViewAccess {
  const mine = locked.filter((entry) => entry.view === view.name).map((entry) => entry.filter);
  if (mine.length === 0) return access;
  return { members: access.members, rows: access.rows === 'all' ? [mine] : access.rows.map((list) => [...list, ...mine]) };
}

/**
 * One viewer's access to a deployment's semantic model, computed per view on first use. Every query the data
 * path compiles carries one: it refuses a hidden member (403 naming it) and adds the row filters of every view
 * the query reads.
 */
export class ModelAccess {
  readonly #model: SemanticModel;
  readonly #subject: AccessSubject;
  readonly #views = new Map<string, ViewAccess>();
  readonly #locked: readonly LockedFilter[];

  /**
   * `locked`: filters the session's host locked (Generate Session's filters with settings.lockedFilters; issue 38),
   * each on its view. Each is ANDed into the rows of its view, as a row filter of a policy is: every query that
   * reads the view applies it, on every data path.
   */
  constructor(model: SemanticModel, subject: AccessSubject, locked: readonly LockedFilter[] = []) {
    this.#model = model;
    this.#subject = subject;
    this.#locked = locked;
  }

  view(view: SemanticView): ViewAccess {
    let access = this.#views.get(view.name);
    if (access === undefined) {
      access = withLocked(viewAccess(view, this.#subject), view, this.#locked);
      this.#views.set(view.name, access);
    }
    return access;
  }

  canSee(member: ResolvedMember | { name: string; view: SemanticView }): boolean {
    const { members } = this.view(member.view);
    return members === 'all' || members.has(member.name);
  }

  /** A member the viewer names (in a query, a filter, a control): a 403 naming it when a policy hides it. */
  requireVisible(member: ResolvedMember | { name: string; view: SemanticView }, field: string): void {
    if (!this.canSee(member)) {
      throw new AppError('forbidden', `${field}: ${member.name} is not available to you (an access policy of view ${member.view.name} hides it)`, field);
    }
  }

  /** Whether any view hides a member or a row from this viewer: raw SQL, which cannot be filtered, is refused then. */
  get restricted(): boolean {
    return [...this.#model.views.values()].some((view) => {
      const access = this.view(view);
      return access.members !== 'all' || access.rows !== 'all';
    });
  }

  /** Whether any view hides a member from this viewer: raw SQL may read any column, so even a policy-aware one is refused. */
  get hidesMembers(): boolean {
    return [...this.#model.views.values()].some((view) => this.view(view).members !== 'all');
  }

  get subject(): AccessSubject {
    return this.#subject;
  }

  get model(): SemanticModel {
    return this.#model;
  }
}

/** A problem of a view's policies: the path below the view (`.accessPolicy[0].rowLevel.filters[1].member`) and what is wrong. */
export interface PolicyProblem {
  path: string;
  message: string;
}

const SAMPLE_VALUES: Record<string, Scalar> = { string: 'x', number: 0, boolean: true, time: '2020-01-01' };

/**
 * Checks the access policies of a view beyond their JSON shape: who each is for, members that exist in the view,
 * row filters on the view's own dimensions with operators and values its type takes, and references with a known
 * root. `compile` compiles a one-filter query over the model (compiler.query.ts, given by the caller so this file
 * stays below the compiler); its 400 is mapped to the filter's path. Returns the first problem, or undefined.
 */
export function accessPolicyProblem(
  view: SemanticView,
  model: SemanticModel,
  compile: (query: { dimensions?: string[]; timeDimensions?: Array<{ dimension: string }>; filters: QueryFilter[] }) => void,
): PolicyProblem | undefined {
  const own = new Set(membersOf(view));
  for (const [p, policy] of (view.accessPolicy ?? []).entries()) {
    const pp = `.accessPolicy[${p}]`;
    if ((policy.group === undefined) === (policy.groups === undefined)) return { path: pp, message: 'give group (one group, or "*") or groups (a list), not both' };
    const level = policy.memberLevel;
    const lists = [['includes', level?.includes === '*' ? [] : level?.includes ?? []], ['excludes', level?.excludes ?? []]] as const;
    for (const [key, names] of lists) {
      for (const [i, name] of names.entries()) {
        if (!own.has(qualify(view.name, name))) return { path: `${pp}.memberLevel.${key}[${i}]`, message: `"${name}" is not a member of view ${view.name}` };
      }
    }
    const rowLevel = policy.rowLevel;
    if (rowLevel !== undefined && (rowLevel.allowAll === true) === (rowLevel.filters !== undefined)) {
      return { path: `${pp}.rowLevel`, message: 'give allowAll: true or filters, not both' };
    }
    for (const [f, filter] of (rowLevel?.filters ?? []).entries()) {
      const problem = filterProblem(filter, `${pp}.rowLevel.filters[${f}]`, view, model, compile);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

function filterProblem(
  filter: QueryFilter,
  path: string,
  view: SemanticView,
  model: SemanticModel,
  compile: Parameters<typeof accessPolicyProblem>[2],
): PolicyProblem | undefined {
  if ('and' in filter || 'or' in filter) {
    const [key, list] = 'and' in filter ? ['and', filter.and] as const : ['or', filter.or] as const;
    for (const [i, inner] of list.entries()) {
      const problem = filterProblem(inner, `${path}.${key}[${i}]`, view, model, compile);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  const name = qualify(view.name, filter.member);
  if (name.split('.')[0] !== view.name) return { path: `${path}.member`, message: `a row filter of view ${view.name} reads that view's members, not ${name}` };
  const dimension = view.dimensions.find((d) => `${view.name}.${d.name}` === name);
  if (dimension === undefined) {
    const isMeasure = view.measures.some((m) => `${view.name}.${m.name}` === name);
    return { path: `${path}.member`, message: isMeasure ? `${name} is a measure: row filters read dimensions` : `"${filter.member}" is not a dimension of view ${view.name}` };
  }
  const values: Scalar[] = [];
  for (const [i, value] of (filter.values ?? []).entries()) {
    const reference = parseReference(value);
    if (reference === 'malformed') return { path: `${path}.values[${i}]`, message: `${JSON.stringify(value)} is not a reference: write a whole value such as "{securityContext.tenant_id}"` };
    const problem = reference === undefined ? undefined : referenceProblem(reference);
    if (problem !== undefined) return { path: `${path}.values[${i}]`, message: `${JSON.stringify(value)} ${problem}` };
    values.push(reference === undefined ? value : SAMPLE_VALUES[dimension.type]!);
  }
  const sample: MemberFilter = { member: name, operator: filter.operator, ...(filter.values !== undefined ? { values } : {}) };
  try {
    compile({ ...(dimension.type === 'time' ? { timeDimensions: [{ dimension: name }] } : { dimensions: [name] }), filters: [sample] });
  } catch (error) {
    if (!(error instanceof AppError) || error.field === undefined) throw error;
    // The sample's one filter stands at query.filters[0]: a problem below it is the policy filter's, at its path.
    const sampleAt = 'query.filters[0]';
    if (!error.field.startsWith(sampleAt)) return { path, message: error.message };
    const rest = error.field.slice(sampleAt.length);
    return { path: `${path}${rest.startsWith('.') ? rest : ''}`, message: error.detail };
  }
  return undefined;
}

/** `{securityContext.tenant_id}`-style references in a policy-aware snapshot's SQL (known roots only; the rest is SQL). */
export const SQL_REFERENCE = /\{\s*(?:securityContext|userAttributes|groups|embedTenant)(?:\.[A-Za-z0-9_$-]+)*\s*\}/g;

/**
 * References in a policy-aware snapshot's SQL: `{securityContext.x}` style, known roots only. A policy-aware
 * snapshot names at least one, each well formed. Returns a problem message, or undefined.
 */
export function policyAwareSqlProblem(sqlQuery: unknown): string | undefined {
  if (typeof sqlQuery !== 'string') return 'a policy-aware snapshot (meta.policyAware) needs sqlQuery';
  const found = sqlQuery.match(SQL_REFERENCE) ?? [];
  if (found.length === 0) return 'a policy-aware snapshot binds at least one reference such as {securityContext.tenant_id} in its sqlQuery';
  for (const text of found) {
    const reference = parseReference(text);
    const problem = reference === undefined || reference === 'malformed' ? 'is not a reference' : referenceProblem(reference);
    if (problem !== undefined) return `${text} ${problem}`;
  }
  return undefined;
}
