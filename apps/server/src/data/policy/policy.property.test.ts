import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/dialects.js';
import { mintViewer } from '../../../test/embed.js';
import { seedAccount, uniqueSuffix } from '../../../test/factory.js';
import { RAISED_RATE_LIMITS } from '../../../test/limits.js';
import { POLICY_ROWS, policyViews, policyWarehouseSource } from '../../../test/policy-warehouse.js';
import type { PolicyCustomer, PolicyOrder } from '../../../test/policy-warehouse.js';
import { buildApp } from '../../app.js';
import type { SemanticView } from '../semantic/semantic.model.js';
import type { AccessPolicy } from '../semantic/semantic.model.js';
import type { PreAggregation } from '../semantic/semantic.model.js';
import type { QueryFilter, SemanticQuery } from '../semantic/semantic.query.js';
import { buildDue } from '../preagg/preagg.scheduler.js';
import type { BuilderContext } from '../preagg/preagg.scheduler.js';
import { RollupStore } from '../preagg/preagg.store.js';
import { WarehouseRegistry } from '../warehouse/warehouse.registry.js';
import { testConfig } from '../../../test/config.js';

/**
 * Issue 20, "Tests that must exist": for random access policies, security contexts and semantic queries, the rows
 * of the APP query endpoint (through the real app, import and warehouse) equal the rows of a REFERENCE written
 * here in plain TypeScript over the warehouse's raw rows (POLICY_ROWS): the policies applied row by row, then the
 * query's filters, group by, aggregates and default order. A query naming a member the policies hide is a 403 in
 * both. The reference shares no code with policy.access.ts or the compiler.
 *
 * Issue 35: every query is also asked of the explore endpoint (POST /api/v1/embed/explore/query), of both apps, by
 * the same viewer (minted with settings.explore create): its rows, or its 403, must be the reference's too.
 *
 * Issue 31 item 19: the model also declares pre-aggregations (ROLLUPS), built for each case's deployment, and every
 * query is asked of a second app that reads them: its answer must be the reference's too, whether a rollup answered
 * (its source says which) or the matcher sent it to the warehouse. So a policy filter the rollup path widens, drops
 * or mistranslates shows as a difference from the reference, as it would on the warehouse path.
 */

type Scalar = string | number | boolean;
type Row = Record<string, string | number | null>;
type ViewName = 'orders' | 'customers';

const GROUPS = ['acme', 'globex', 'north', 'south'] as const;
const MEMBERS: Record<ViewName, { dimensions: Record<string, 'string' | 'number'>; measures: string[] }> = {
  orders: { dimensions: { id: 'number', code: 'string', tenant: 'string', region: 'string', status: 'string', amount: 'number' }, measures: ['count', 'revenue', 'customers'] },
  customers: { dimensions: { id: 'number', name: 'string', tenant: 'string', region: 'string', tier: 'string' }, measures: ['count'] },
};
const allMembers = (view: ViewName) => [...Object.keys(MEMBERS[view].dimensions), 'created_at', ...MEMBERS[view].measures].filter((m) => view === 'orders' || m !== 'created_at').map((m) => `${view}.${m}`);

/**
 * The rollups of the model. `grain` holds every dimension but the time (one row per order and customer): most
 * queries and policies name only members it holds, so the rollup path meets most generated policies. `coarse` is
 * smaller and answers when the policies and the query name only its dimensions (the smallest build answers).
 * `buyers` holds the count_distinct measure, answering only at its own grain.
 */
const ROLLUPS: PreAggregation[] = [
  {
    name: 'grain', measures: ['orders.count', 'orders.revenue'],
    dimensions: [...Object.keys(MEMBERS.orders.dimensions).map((d) => `orders.${d}`), ...Object.keys(MEMBERS.customers.dimensions).map((d) => `customers.${d}`)],
  },
  { name: 'coarse', measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.tenant', 'orders.region', 'orders.status', 'customers.tier', 'customers.tenant'] },
  { name: 'buyers', measures: ['orders.customers'], dimensions: ['orders.tenant', 'orders.region'], additive: false },
];

function viewsWithRollups(policies: Record<ViewName, AccessPolicy[]>): SemanticView[] {
  const views = policyViews(policies);
  views[0]!.preAggregations = ROLLUPS;
  return views;
}

interface Subject {
  securityContext: Record<string, unknown>;
  userAttributes: Record<string, unknown>;
  groups: string[];
  embedTenant: string;
}

// ---------------------------------------------------------------- the reference

const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean';

/** A filter value as the reference reads it: a literal, or a reference's scalars; undefined: the session lacks it. */
function resolveValue(value: Scalar, subject: Subject): Scalar[] | undefined {
  if (typeof value !== 'string' || !value.startsWith('{')) return [value];
  const [root, key] = value.slice(1, -1).split('.') as [string, string | undefined];
  let read: unknown;
  const attributes = root === 'userAttributes' ? subject.userAttributes : subject.securityContext;
  if (root === 'groups') read = subject.groups;
  else if (root === 'embedTenant') read = subject.embedTenant;
  else read = key !== undefined && Object.hasOwn(attributes, key) ? attributes[key] : undefined;
  if (isScalar(read)) return [read];
  if (Array.isArray(read) && read.length > 0 && read.every(isScalar)) return read;
  return undefined;
}

/** A value as the dimension's type, or undefined when it is not one (that filter then holds for no row). */
function typed(value: Scalar, type: 'string' | 'number'): string | number | undefined {
  if (type === 'string') return String(value);
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

function leafHolds(row: Row, view: ViewName, filter: { member: string; operator: string; values?: Scalar[] }, subject: Subject): boolean {
  const name = filter.member.includes('.') ? filter.member.split('.')[1]! : filter.member;
  const type = MEMBERS[view].dimensions[name]!;
  const values: Array<string | number> = [];
  for (const value of filter.values ?? []) {
    const read = resolveValue(value, subject);
    if (read === undefined) return false;
    for (const v of read) {
      const t = typed(v, type);
      if (t === undefined) return false;
      values.push(t);
    }
  }
  const x = row[`${view}.${name}`] ?? null;
  switch (filter.operator) {
    case 'equals': return x !== null && values.includes(x);
    case 'notEquals': return x === null || !values.includes(x);
    case 'gt': return values.length === 1 && x !== null && x > values[0]!;
    case 'lt': return values.length === 1 && x !== null && x < values[0]!;
    case 'contains': return x !== null && values.some((v) => String(x).toLowerCase().includes(String(v).toLowerCase()));
    default: throw new Error(`the reference has no operator ${filter.operator}`);
  }
}

function holds(row: Row, view: ViewName, filter: QueryFilter, subject: Subject): boolean {
  if ('and' in filter) return filter.and.every((f) => holds(row, view, f, subject));
  if ('or' in filter) return filter.or.some((f) => holds(row, view, f, subject));
  return leafHolds(row, view, filter, subject);
}

/** What a subject may do with a view: visible members, and a row test (Cube: union of members, OR of row filters). */
function referenceAccess(view: ViewName, policies: AccessPolicy[], subject: Subject): { visible: (member: string) => boolean; row: (row: Row) => boolean } {
  if (policies.length === 0) return { visible: () => true, row: () => true };
  const matching = policies.filter((p) => (p.groups ?? [p.group!]).some((g) => g === '*' || subject.groups.includes(g)));
  const qualify = (m: string) => (m.includes('.') ? m : `${view}.${m}`);
  const visible = new Set<string>();
  for (const p of matching) {
    const includes = p.memberLevel?.includes ?? '*';
    const excludes = (p.memberLevel?.excludes ?? []).map(qualify);
    for (const m of includes === '*' ? allMembers(view) : includes.map(qualify)) if (!excludes.includes(m)) visible.add(m);
  }
  const everyRow = matching.some((p) => p.rowLevel === undefined || p.rowLevel.allowAll === true);
  return {
    visible: (member) => visible.has(member),
    row: (row) => everyRow || matching.some((p) => (p.rowLevel?.filters ?? []).every((f) => holds(row, view, f, subject))),
  };
}

const customerById = new Map(POLICY_ROWS.customers.map((c) => [c.id, c]));
/** An order with its customer's members, as the LEFT JOIN reads it (a missing customer: NULL members). */
const joinedRow = (o: PolicyOrder): Row => {
  const c: PolicyCustomer | undefined = customerById.get(o.customer_id);
  return {
    'orders.id': o.id, 'orders.code': o.code, 'orders.tenant': o.tenant, 'orders.region': o.region, 'orders.status': o.status, 'orders.amount': o.amount,
    'customers.id': c?.id ?? null, 'customers.name': c?.name ?? null, 'customers.tenant': c?.tenant ?? null, 'customers.region': c?.region ?? null, 'customers.tier': c?.tier ?? null,
  };
};

type Expected = { status: 403; hidden: string[] } | { status: 200; rows: unknown[][] };

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return (a as string | number) < (b as string | number) ? -1 : 1;
}

function reference(policies: Record<ViewName, AccessPolicy[]>, subject: Subject, query: SemanticQuery): Expected {
  const access = { orders: referenceAccess('orders', policies.orders, subject), customers: referenceAccess('customers', policies.customers, subject) };
  const measures = query.measures ?? [];
  const dimensions = query.dimensions ?? [];
  const filters = query.filters ?? [];
  const filterMembers = (f: QueryFilter): string[] => ('and' in f ? f.and.flatMap(filterMembers) : 'or' in f ? f.or.flatMap(filterMembers) : [f.member]);
  const named = [...dimensions, ...measures, ...filters.flatMap(filterMembers)];
  const viewOf = (member: string) => member.split('.')[0] as ViewName;
  const hidden = named.filter((m) => !access[viewOf(m)].visible(m));
  if (hidden.length > 0) return { status: 403, hidden };

  const joined = named.some((m) => viewOf(m) === 'customers');
  let rows = POLICY_ROWS.orders.map(joinedRow).filter(access.orders.row);
  if (joined) rows = rows.filter(access.customers.row);
  rows = rows.filter((row) => filters.every((f) => holds(row, viewOf(firstMember(f)), f, subject)));

  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const key = JSON.stringify(dimensions.map((d) => row[d] ?? null));
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  if (dimensions.length === 0 && groups.size === 0) groups.set('[]', []);
  const aggregate = (measure: string, group: Row[]): number | null => {
    if (measure === 'orders.count') return group.length;
    if (measure === 'orders.customers') return new Set(group.map((r) => customerIdOf(r))).size;
    return group.length === 0 ? null : group.reduce((sum, r) => sum + (r['orders.amount'] as number), 0);
  };
  const result = [...groups.entries()].map(([key, group]) => [...(JSON.parse(key) as unknown[]), ...measures.map((m) => aggregate(m, group))]);
  // Cube's default order: the first measure descending, then every dimension ascending, NULLs last.
  const m0 = dimensions.length;
  result.sort((a, b) => {
    if (measures.length > 0 && a[m0] !== b[m0]) return a[m0] === null ? 1 : b[m0] === null ? -1 : compare(b[m0], a[m0]);
    for (let i = 0; i < dimensions.length; i++) {
      const c = compare(a[i], b[i]);
      if (c !== 0) return c;
    }
    return 0;
  });
  return { status: 200, rows: result };
}

const firstMember = (f: QueryFilter): string => ('and' in f ? firstMember(f.and[0]!) : 'or' in f ? firstMember(f.or[0]!) : f.member);
const customerIdOf = (row: Row) => POLICY_ROWS.orders.find((o) => o.id === row['orders.id'])!.customer_id;

// ---------------------------------------------------------------- the generators

const REFERENCES = {
  string: ['{securityContext.tenant}', '{securityContext.region}', '{groups}', '{embedTenant}', '{userAttributes.region}', '{securityContext.constructor}'],
  number: ['{securityContext.min}'],
};
const LITERALS: Record<string, Scalar[]> = {
  'orders.code': ['acme-north', 'globex', 'o1', 'SOUTH'],
  'orders.tenant': ['acme', 'globex', 'initech', 'nobody'],
  'orders.region': ['north', 'south'],
  'orders.status': ['paid', 'open', 'refunded'],
  'orders.amount': [20, 45, 60, 99],
  'customers.name': ['acme', 'gold-c', 'c1', 'Basic'],
  'customers.tenant': ['acme', 'globex', 'initech'],
  'customers.region': ['north', 'south'],
  'customers.tier': ['gold', 'basic'],
  'customers.id': [3, 7],
  'orders.id': [10, 40],
};

/** A member filter on a dimension of `view`; in a policy, values may be references and the view may be left out. */
function leafArb(view: ViewName, inPolicy: boolean): fc.Arbitrary<QueryFilter> {
  const dims = Object.entries(MEMBERS[view].dimensions).filter(([name]) => `${view}.${name}` in LITERALS);
  return fc.constantFrom(...dims).chain(([name, type]) => {
    const member = `${view}.${name}`;
    const literal = fc.constantFrom(...LITERALS[member]!);
    const value = inPolicy ? fc.oneof({ weight: 2, arbitrary: literal }, { weight: 3, arbitrary: fc.constantFrom(...REFERENCES[type]) }) : literal;
    const operators = type === 'number' ? ['equals', 'notEquals', 'gt', 'lt'] as const : ['equals', 'notEquals', 'contains'] as const;
    return fc.record({
      member: inPolicy ? fc.constantFrom(member, name) : fc.constant(member),
      operator: fc.constantFrom(...operators),
      values: fc.array(value, { minLength: 1, maxLength: 2 }),
    }).map((f) => (f.operator === 'gt' || f.operator === 'lt' ? { ...f, values: f.values.slice(0, 1) } : f) as QueryFilter);
  });
}

function filterArb(view: ViewName, inPolicy: boolean): fc.Arbitrary<QueryFilter> {
  const leaf = leafArb(view, inPolicy);
  return fc.oneof(
    { weight: 4, arbitrary: leaf },
    { weight: 1, arbitrary: fc.array(leaf, { minLength: 1, maxLength: 3 }).map((and) => ({ and })) },
    { weight: 1, arbitrary: fc.tuple(leaf, fc.oneof(leaf, fc.array(leaf, { minLength: 1, maxLength: 2 }).map((and) => ({ and })))).map((or) => ({ or })) },
  );
}

function policyArb(view: ViewName): fc.Arbitrary<AccessPolicy> {
  const own = allMembers(view);
  const memberName = fc.constantFrom(...own).chain((m) => fc.constantFrom(m, m.split('.')[1]!));
  const who = fc.oneof(
    fc.constantFrom('*', ...GROUPS).map((group) => ({ group })),
    fc.subarray([...GROUPS], { minLength: 1 }).map((groups) => ({ groups })),
  );
  const memberLevel = fc.record({
    includes: fc.oneof(fc.constant('*' as const), fc.array(memberName, { minLength: 0, maxLength: 6 })),
    excludes: fc.array(memberName, { maxLength: 2 }),
  }, { requiredKeys: [] });
  const rowLevel = fc.oneof(
    { weight: 1, arbitrary: fc.constant({ allowAll: true }) },
    { weight: 5, arbitrary: fc.array(filterArb(view, true), { minLength: 1, maxLength: 2 }).map((filters) => ({ filters })) },
  );
  return fc.tuple(who, fc.option(memberLevel, { freq: 4 }), fc.option(rowLevel, { freq: 6 })).map(([w, m, r]) => ({
    ...w, ...(m === null ? {} : { memberLevel: m }), ...(r === null ? {} : { rowLevel: r }),
  }));
}

const contextArb = fc.record({
  tenant: fc.oneof(fc.constantFrom<unknown>('acme', 'globex', 'initech', 7, true), fc.constant(['acme', 'initech']), fc.constant([]), fc.constant(['globex'])),
  region: fc.oneof(fc.constantFrom<unknown>('north', 'south'), fc.constant(['north', 'south']), fc.constant([])),
  min: fc.oneof(fc.constantFrom<unknown>(30, 60, '45', 'abc'), fc.constant([20, 70]), fc.constant([50])),
}, { requiredKeys: [] });

const queryArb: fc.Arbitrary<SemanticQuery> = fc.record({
  measures: fc.subarray(['orders.count', 'orders.revenue', 'orders.customers'], { minLength: 1, maxLength: 2 }),
  dimensions: fc.shuffledSubarray(['orders.tenant', 'orders.region', 'orders.status', 'customers.tier', 'customers.tenant'], { maxLength: 2 }),
  filters: fc.array(fc.oneof(filterArb('orders', false), filterArb('customers', false)), { maxLength: 2 }),
});

const caseArb = fc.record({
  policies: fc.record({ orders: fc.array(policyArb('orders'), { maxLength: 3 }), customers: fc.array(policyArb('customers'), { maxLength: 2 }) }),
  groups: fc.subarray([...GROUPS]),
  embedTenant: fc.constantFrom('acme', 'globex', 'initech'),
  securityContext: contextArb,
  userAttributes: fc.record({ region: fc.oneof(fc.constantFrom<unknown>('north', 'south'), fc.constant(['south'])) }, { requiredKeys: [] }),
  queries: fc.array(queryArb, { minLength: 1, maxLength: 3 }),
});

// ---------------------------------------------------------------- the property

/** Issue 35: the embed's explore endpoint, which a viewer minted with settings.explore create may ask. */
const EXPLORE_URL = '/api/v1/embed/explore/query';

describeEachDialect('access policies: the endpoint against a reference in plain TypeScript', (t) => {
  /** Reads no rollup: every answer comes from the warehouse (or its result cache). */
  let app: FastifyInstance;
  /** Reads the rollups built for each case, without a result cache: an answer is a rollup's or the warehouse's. */
  let rollupApp: FastifyInstance;
  let dir: string;
  let store: RollupStore;
  let warehouses: WarehouseRegistry;
  let builder: BuilderContext;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-policy-property-'));
    app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, data: { preAggregationDir: join(dir, 'never-built') } }), { db: t().db });
    rollupApp = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, data: { preAggregationDir: join(dir, 'rollups'), resultCacheBytes: 0 } }), { db: t().db });
    store = new RollupStore(join(dir, 'rollups'));
    warehouses = new WarehouseRegistry({ timeoutMs: 30_000, demoPath: () => join(dir, 'none.db') });
    builder = { db: t().db, warehouses, store, timeoutMs: 60_000, now: () => new Date() };
  });

  afterAll(async () => {
    await app?.close();
    await rollupApp?.close();
    store?.close();
    await warehouses?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('for random policies, security contexts and semantic queries, the APP query endpoint and the explore endpoint answer what the reference computes (rows, or 403 for a hidden member), from the warehouse and through rollups alike', async () => {
    const seen = { rows: 0, empty: 0, hidden: 0, rollupRows: 0, rollupEmpty: 0, rollupHidden: 0, exploreRows: 0 };
    const sources = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const publicId = `prop-${uniqueSuffix()}`;
        // Every generated policy is one the import accepts: a refusal here is a defect of the generator or the import.
        const s = await seedAccount(t().db.kysely, {
          users: [{ ref: 'admin', role: 'admin' }],
          deployments: [{
            ref: 'prod', name: 'P', dataSource: policyWarehouseSource(t().dialect)!, semanticViews: viewsWithRollups(c.policies),
            items: [{ ref: 'wb', type: 'WORKBOOK', name: 'App', dashboard: { publicId, status: 'published', allowEmbed: true, config: { kind: 'APP', app: { html: '<p/>' } } } }],
          }],
        });
        // Issue 35: the viewer may explore, so its own queries also go through the explore endpoint.
        const viewer = await mintViewer(app, s.keys.admin!, {
          deploymentId: s.refs.prod!, groups: c.groups, embedTenantName: c.embedTenant, securityContext: c.securityContext, userAttributes: c.userAttributes,
          settings: { explore: 'create' },
        });
        // The rollups hold no policy: one build per deployment serves every viewer, each filtered when read.
        const reports = await buildDue(builder, { deploymentId: s.refs.prod! });
        expect(reports.map((r) => r.status), JSON.stringify(reports)).toEqual(['built', 'built', 'built']);
        const appUrl = `/api/v1/embed/dashboard/${publicId}/query`;
        const subject: Subject = { securityContext: c.securityContext, userAttributes: c.userAttributes, groups: c.groups, embedTenant: c.embedTenant };
        for (const query of c.queries) {
          const want = reference(c.policies, subject, query);
          const paths = [['warehouse', app, appUrl], ['rollups', rollupApp, appUrl], ['explore', app, EXPLORE_URL], ['explore', rollupApp, EXPLORE_URL]] as const;
          for (const [path, server, url] of paths) {
            const res = await server.inject({ method: 'POST', url, headers: viewer.headers, payload: { query } });
            if (url === EXPLORE_URL) {
              // Issue 35: a viewer's explore query is answered as the APP query is, from either app.
              const label = `explore: ${JSON.stringify(c.policies)} ${JSON.stringify(subject)} ${JSON.stringify(query)} -> ${res.body.slice(0, 500)}`;
              expect(res.statusCode, label).toBe(want.status);
              if (want.status === 200) {
                seen.exploreRows += 1;
                expect(res.json().rows, label).toEqual(want.rows);
              } else {
                expect(res.json().error.code, label).toBe('forbidden');
                expect(want.hidden.some((member) => (res.json().error.message as string).includes(`${member} is not available to you`)), label).toBe(true);
              }
              continue;
            }
            const label = `${path} app: ${JSON.stringify(c.policies)} ${JSON.stringify(subject)} ${JSON.stringify(query)} -> ${res.body.slice(0, 500)}`;
            expect(res.statusCode, label).toBe(want.status);
            const fromRollup = path === 'rollups' && res.statusCode === 200 && String(res.json().source).startsWith('rollup:');
            if (path === 'rollups' && res.statusCode === 200) sources.set(res.json().source, (sources.get(res.json().source) ?? 0) + 1);
            if (want.status === 403) {
              if (path === 'warehouse') seen.hidden += 1;
              else seen.rollupHidden += 1;
              expect(res.json().error.code, label).toBe('forbidden');
              const message = res.json().error.message as string;
              expect(want.hidden.some((member) => message.includes(`${member} is not available to you`)), label).toBe(true);
            } else {
              const measures = query.measures!.length;
              const empty = want.rows.every((r) => r.slice(-measures).every((v) => v === 0 || v === null));
              if (path === 'warehouse') seen[empty ? 'empty' : 'rows'] += 1;
              else if (fromRollup) seen[empty ? 'rollupEmpty' : 'rollupRows'] += 1;
              expect(res.json().rows, `${label} (source ${res.json().source})`).toEqual(want.rows);
            }
          }
        }
      }),
      { seed: 20_2620, numRuns: 80 },
    );
    // Not a vacuous property: the runs met rows, empty answers and hidden members alike, and so did the rollups,
    // each of which answered some queries.
    console.info(`policy property: ${JSON.stringify(seen)}; answers of the rollup app by source: ${JSON.stringify(Object.fromEntries(sources))}`);
    expect(seen.rows).toBeGreaterThan(20);
    expect(seen.exploreRows).toBeGreaterThan(40);
    expect(seen.empty).toBeGreaterThan(10);
    expect(seen.hidden).toBeGreaterThan(10);
    expect(seen.rollupRows).toBeGreaterThan(10);
    expect(seen.rollupEmpty).toBeGreaterThan(5);
    for (const rollup of ROLLUPS) expect(sources.get(`rollup:orders.${rollup.name}`) ?? 0, `answers from rollup ${rollup.name}`).toBeGreaterThan(0);
  }, 300_000);
});
