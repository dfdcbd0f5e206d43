import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { RAISED_RATE_LIMITS } from '../../test/limits.js';
import { expectSameRows } from '../../test/rows.js';
import { POLICY_ROWS, policyViews, policyWarehouseSource } from '../../test/policy-warehouse.js';
import type { PolicyCustomer, PolicyOrder } from '../../test/policy-warehouse.js';
import { buildApp } from '../app.js';
import type { SemanticView } from './semantic/semantic.model.js';
import type { AccessPolicy } from './semantic/semantic.model.js';
import type { PreAggregation } from './semantic/semantic.model.js';
import type { SemanticQuery } from './semantic/semantic.query.js';
import { buildDue } from './preagg/preagg.scheduler.js';
import { RollupStore } from './preagg/preagg.store.js';
import { WarehouseRegistry } from './warehouse/warehouse.registry.js';
import { testConfig } from '../../test/config.js';

/**
 * Issue 31 item 19: the fail-closed rules of the data path, held where a query is answered from a pre-aggregation.
 * A row filter that cannot hold (a reference the session lacks, holds as null, an object or an empty list, or a
 * value the dimension's type refuses) matches no row: from a rollup exactly as from the warehouse. Each case asks
 * the APP query endpoint of an app that reads rollups and of one that does not (same database, same warehouse, no
 * result cache), checks the answer's source, and compares both answers with the rows a plain TypeScript rule
 * picks out of the warehouse (POLICY_ROWS). Replacing preagg.definitions.ts's `if ('never' in filter) return filter;` by
 * an empty `and` (every row) fails the missing, null and mistyped cases here; docs/security.md "Fail-closed rules
 * and the tests that hold them" lists the other rules and the test that catches each one's mutation.
 */

const tenantIs = (reference: string): AccessPolicy['rowLevel'] => ({ filters: [{ member: 'tenant', operator: 'equals', values: [reference] }] });

const POLICIES: { orders: AccessPolicy[]; customers: AccessPolicy[] } = {
  orders: [
    { group: 'customer', rowLevel: tenantIs('{securityContext.tenant}') },
    // A number dimension: a reference holding text the compiler cannot read as a number.
    { group: 'floor', rowLevel: { filters: [{ member: 'amount', operator: 'gt', values: ['{securityContext.min}'] }] } },
    // A missing reference inside an or group is false there; the other branch still decides.
    { group: 'either', rowLevel: { filters: [{ or: [{ member: 'tenant', operator: 'equals', values: ['{securityContext.tenant}'] }, { member: 'region', operator: 'equals', values: ['north'] }] }] } },
    // orders.status is in no rollup: the matcher must send these viewers to the warehouse, never drop the filter.
    { group: 'status-bound', rowLevel: { filters: [{ member: 'status', operator: 'equals', values: ['{securityContext.status}'] }] } },
    { group: 'cross', rowLevel: { filters: [{ member: 'region', operator: 'equals', values: ['{securityContext.region}'] }] } },
    { group: 'tiered', rowLevel: { allowAll: true } },
  ],
  customers: [
    { group: 'customer', rowLevel: tenantIs('{securityContext.tenant}') },
    { groups: ['cross', 'tiered'], rowLevel: { filters: [{ member: 'tier', operator: 'equals', values: ['{securityContext.tier}'] }] } },
  ],
};

const MONTHLY: PreAggregation = {
  name: 'monthly', measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.tenant', 'orders.region', 'customers.tenant', 'customers.tier'],
  timeDimension: 'orders.created_at', granularity: 'month',
};
const BY_AMOUNT: PreAggregation = { name: 'by_amount', measures: ['orders.count'], dimensions: ['orders.amount', 'orders.tenant'] };

function views(): SemanticView[] {
  const all = policyViews(POLICIES);
  all[0]!.preAggregations = [MONTHLY, BY_AMOUNT];
  return all;
}

const KPI: SemanticQuery = { measures: ['orders.count', 'orders.revenue'] };
const BY_MONTH: SemanticQuery = { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] };
const BY_REGION: SemanticQuery = { measures: ['orders.count'], dimensions: ['orders.region'] };
const BY_TIER: SemanticQuery = { measures: ['orders.count'], dimensions: ['customers.tier'] };
const COUNT: SemanticQuery = { measures: ['orders.count'] };
const BY_TENANT: SemanticQuery = { measures: ['orders.count'], dimensions: ['orders.tenant'] };

/** Which rows a viewer reads: orders, and (when the query reads the customers view) their customer. */
interface Sees {
  orders: (order: PolicyOrder) => boolean;
  customers?: (customer: PolicyCustomer | undefined) => boolean;
}
const NO_ROW: Sees = { orders: () => false, customers: () => false };
/** Every order of the query's view, none of the joined view's rows: no row either. */
const NO_CUSTOMER: Sees = { orders: () => true, customers: () => false };

interface Case {
  rule: string;
  groups: string[];
  securityContext: Record<string, unknown>;
  sees: Sees;
  queries: SemanticQuery[];
  /** Where the answers come from: a rollup, unless a policy filters on a member no rollup holds. */
  source: 'rollup' | 'warehouse';
}

const TENANT_QUERIES = [KPI, BY_MONTH, BY_REGION, BY_TIER];
const CASES: Case[] = [
  {
    rule: 'a tenant reads its own rows from a rollup (the control: the rollup answers rows)',
    groups: ['customer'], securityContext: { tenant: 'acme' }, queries: TENANT_QUERIES, source: 'rollup',
    sees: { orders: (o) => o.tenant === 'acme', customers: (c) => c?.tenant === 'acme' },
  },
  { rule: 'a securityContext without the referenced key reads no row from a rollup', groups: ['customer'], securityContext: { tenant_id: 'acme', region: 'north' }, queries: TENANT_QUERIES, source: 'rollup', sees: NO_ROW },
  { rule: 'an empty securityContext reads no row from a rollup', groups: ['customer'], securityContext: {}, queries: TENANT_QUERIES, source: 'rollup', sees: NO_ROW },
  { rule: 'a reference holding null reads no row from a rollup', groups: ['customer'], securityContext: { tenant: null }, queries: TENANT_QUERIES, source: 'rollup', sees: NO_ROW },
  { rule: 'a reference holding an object reads no row from a rollup', groups: ['customer'], securityContext: { tenant: { id: 'acme' } }, queries: TENANT_QUERIES, source: 'rollup', sees: NO_ROW },
  { rule: 'a reference holding an empty list reads no row from a rollup', groups: ['customer'], securityContext: { tenant: [] }, queries: TENANT_QUERIES, source: 'rollup', sees: NO_ROW },
  { rule: 'a reference holding a list with a non-scalar item reads no row from a rollup', groups: ['customer'], securityContext: { tenant: ['acme', { id: 'globex' }] }, queries: TENANT_QUERIES, source: 'rollup', sees: NO_ROW },
  {
    rule: 'a number dimension compared with a number reads the rows above it from a rollup (the control)',
    groups: ['floor'], securityContext: { min: 45 }, queries: [COUNT, BY_TENANT], source: 'rollup', sees: { orders: (o) => o.amount > 45 },
  },
  { rule: 'a reference whose text is no number, on a number dimension, reads no row from a rollup', groups: ['floor'], securityContext: { min: 'abc' }, queries: [COUNT, BY_TENANT], source: 'rollup', sees: NO_ROW },
  { rule: 'a reference holding a boolean, on a number dimension, reads no row from a rollup', groups: ['floor'], securityContext: { min: true }, queries: [COUNT, BY_TENANT], source: 'rollup', sees: NO_ROW },
  {
    rule: 'a missing reference in an or group is false there, and the other branch still decides, from a rollup',
    groups: ['either'], securityContext: {}, queries: [KPI, BY_MONTH, BY_REGION], source: 'rollup', sees: { orders: (o) => o.region === 'north' },
  },
  {
    rule: 'a joined view\'s row filter with a missing reference drops every row from a rollup (the query\'s own view is open)',
    groups: ['tiered'], securityContext: {}, queries: [BY_TIER], source: 'rollup', sees: NO_CUSTOMER,
  },
  {
    rule: 'a joined view\'s row filter applies through a rollup (the control)',
    groups: ['tiered'], securityContext: { tier: 'gold' }, queries: [BY_TIER], source: 'rollup', sees: { orders: () => true, customers: (c) => c?.tier === 'gold' },
  },
  {
    rule: 'the row filters of the query\'s view and of a joined view both hold through a rollup (ANDed, neither replaces the other)',
    groups: ['cross'], securityContext: { region: 'north', tier: 'gold' }, queries: [BY_TIER], source: 'rollup',
    sees: { orders: (o) => o.region === 'north', customers: (c) => c?.tier === 'gold' },
  },
  {
    rule: 'a policy filtering on a member no rollup holds sends the query to the warehouse, filtered',
    groups: ['status-bound'], securityContext: { status: 'paid' }, queries: [KPI, BY_MONTH, BY_REGION], source: 'warehouse', sees: { orders: (o) => o.status === 'paid' },
  },
  {
    // The filter that cannot hold names no member any more: a rollup may answer it, with no row.
    rule: 'a policy filtering on a member no rollup holds, with its reference missing, reads no row (from a rollup, which need not hold the member)',
    groups: ['status-bound'], securityContext: {}, queries: [KPI, BY_REGION], source: 'rollup', sees: NO_ROW,
  },
];

const customerById = new Map(POLICY_ROWS.customers.map((c) => [c.id, c]));
const readsCustomers = (query: SemanticQuery) => (query.dimensions ?? []).some((d) => d.startsWith('customers.'));

/** The answer's rows as the rule picks them out of the warehouse: grouped, counted and summed in TypeScript. */
function expectedRows(query: SemanticQuery, sees: Sees): unknown[][] {
  const orders = POLICY_ROWS.orders.filter((o) => sees.orders(o) && (!readsCustomers(query) || sees.customers!(customerById.get(o.customer_id))));
  const key = (o: PolicyOrder): unknown[] => [
    ...(query.dimensions ?? []).map((d) => (d === 'orders.region' ? o.region : d === 'orders.tenant' ? o.tenant : customerById.get(o.customer_id)?.tier ?? null)),
    ...(query.timeDimensions ?? []).map(() => `${o.created_at.slice(0, 7)}-01T00:00:00.000`),
  ];
  const groups = new Map<string, { key: unknown[]; rows: PolicyOrder[] }>();
  for (const o of orders) {
    const k = key(o);
    const group = groups.get(JSON.stringify(k)) ?? { key: k, rows: [] };
    group.rows.push(o);
    groups.set(JSON.stringify(k), group);
  }
  const grouped = (query.dimensions ?? []).length > 0 || (query.timeDimensions ?? []).length > 0;
  if (!grouped && groups.size === 0) groups.set('[]', { key: [], rows: [] });
  return [...groups.values()].map(({ key: k, rows }) => [
    ...k,
    ...(query.measures ?? []).map((m) => (m === 'orders.count' ? rows.length : rows.length === 0 ? null : rows.reduce((sum, o) => sum + o.amount, 0))),
  ]);
}
const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();

describeEachDialect('fail-closed row filters through pre-aggregations', (t) => {
  let withRollups: FastifyInstance;
  let without: FastifyInstance;
  let s: SeededAccount;
  let dir: string;
  let store: RollupStore;
  let warehouses: WarehouseRegistry;
  const appId = `fail-closed-${uniqueSuffix()}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-fail-closed-'));
    const data = { resultCacheBytes: 0 };
    withRollups = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, data: { ...data, preAggregationDir: join(dir, 'rollups') } }), { db: t().db });
    without = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, data: { ...data, preAggregationDir: join(dir, 'never-built') } }), { db: t().db });
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{
        ref: 'prod', name: 'Fail closed', dataSource: policyWarehouseSource(t().dialect)!, semanticViews: views(),
        items: [{ ref: 'wb', type: 'WORKBOOK', name: 'App', dashboard: { publicId: appId, status: 'published', allowEmbed: true, config: { kind: 'APP', app: { html: '<p>app</p>' } } } }],
      }],
    });
    store = new RollupStore(join(dir, 'rollups'));
    warehouses = new WarehouseRegistry({ timeoutMs: 30_000, demoPath: () => join(dir, 'none.db') });
    const reports = await buildDue({ db: t().db, warehouses, store, timeoutMs: 60_000, now: () => new Date() }, { deploymentId: s.refs.prod! });
    expect(reports.map((r) => `${r.rollup} ${r.status}`).sort()).toEqual(['orders.by_amount built', 'orders.monthly built']);
  });

  afterAll(async () => {
    await withRollups?.close();
    await without?.close();
    store?.close();
    await warehouses?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (app: FastifyInstance, who: Record<string, string>, query: SemanticQuery) => {
    const response = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${appId}/query`, headers: who, payload: { query, timezone: 'UTC' } });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { rows: unknown[][]; source: string };
  };

  it.each(CASES)('$rule', async ({ groups, securityContext, sees, queries, source }) => {
    const viewer = (await mintViewer(withRollups, s.keys.admin!, { deploymentId: s.refs.prod!, groups, securityContext })).headers;
    for (const query of queries) {
      const label = `${JSON.stringify(securityContext)} ${JSON.stringify(query)}`;
      const fromRollups = await ask(withRollups, viewer, query);
      const fromWarehouse = await ask(without, viewer, query);
      expect(fromRollups.source, label).toMatch(source === 'rollup' ? /^rollup:orders\./ : /^warehouse$/);
      expect(fromWarehouse.source, label).toBe('warehouse');
      expect(sorted(fromRollups.rows), `${label} from ${fromRollups.source}`).toEqual(sorted(expectedRows(query, sees)));
      expectSameRows(fromRollups.rows, fromWarehouse.rows, label);
    }
  });

  it('the cases are no degenerate table: each control reads some rows and not all of them', () => {
    for (const c of CASES.filter((x) => x.sees !== NO_ROW && x.sees !== NO_CUSTOMER)) {
      for (const query of c.queries) {
        const rows = expectedRows(query, c.sees);
        const all = expectedRows(query, { orders: () => true, customers: () => true });
        expect(rows.length, `${c.rule} ${JSON.stringify(query)}`).toBeGreaterThan(0);
        expect(sorted(rows), `${c.rule} ${JSON.stringify(query)}`).not.toEqual(sorted(all));
      }
    }
  });
});
