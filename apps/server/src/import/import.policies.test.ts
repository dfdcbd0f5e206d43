import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { uniqueSuffix } from '../../test/factory.js';
import { MATRIX_POLICIES, policyViews } from '../../test/policy-warehouse.js';
import type { AccessPolicy } from '../data/semantic/semantic.model.js';
import type { Database } from '../db/db.schema.js';
import { ImportError, importFile } from './import.js';
import type { ImportFile, ImportReportSnapshot } from './import.js';

/**
 * Issue 20, "Refusals": a bad access policy (unknown member, unknown reference root, malformed filter...) or a
 * policy-aware snapshot without references fails the import at its JSON path, and nothing is written.
 */

/** Every tenant name of this file starts with it: "nothing written" counts this file's accounts only (STYLE.md). */
const NAMESPACE = `p${uniqueSuffix()}`;
const TABLES = ['accounts', 'users', 'groups', 'group_members', 'api_keys', 'deployments', 'workspace_items', 'dashboards', 'report_snapshots', 'embed_tenants'] as const;

async function countRows(db: Kysely<Database>): Promise<Record<(typeof TABLES)[number], number>> {
  const pattern = `${NAMESPACE}-%`;
  const counts = {} as Record<(typeof TABLES)[number], number>;
  for (const table of TABLES) {
    const scope = table === 'accounts' ? sql`tenant_name like ${pattern}` : sql`account_id in (select id from accounts where tenant_name like ${pattern})`;
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where ${scope}`.execute(db);
    counts[table] = Number(rows[0]?.n);
  }
  return counts;
}

const VIEW = '$.accounts[0].deployments[0].semanticViews[0]';
const SNAPSHOT = '$.accounts[0].deployments[0].items[0].dashboard.reportSnapshots[0]';

/** A whole account whose `orders` view has the given policies (and `customers` the matrix's), and one snapshot. */
function fileWith(orders: unknown[], snapshot: Partial<ImportReportSnapshot> = {}): ImportFile {
  const s = uniqueSuffix();
  return {
    accounts: [{
      name: 'Policies', tenantName: `${NAMESPACE}-${s}`,
      users: [{ ref: 'admin', email: 'admin@p.test', role: 'admin', apiKeys: [`svc_policies_${s}_key`] }],
      groups: [{ ref: 'g', name: 'customer', members: ['admin'] }],
      deployments: [{
        ref: 'prod', name: 'P', dataSource: { type: 'sqlite', path: '/nonexistent/never-opened.db' },
        semanticViews: policyViews({ orders: orders as AccessPolicy[], customers: MATRIX_POLICIES.customers }),
        items: [
          {
            ref: 'wb', type: 'WORKBOOK', name: 'W', dashboard: {
              publicId: `policies-${s}`, status: 'published', allowEmbed: true, config: {},
              reportSnapshots: [{ report: 'r', kind: 'table', sqlQuery: 'SELECT code FROM orders WHERE tenant = {securityContext.tenant}', meta: { policyAware: true }, ...snapshot }],
            },
          },
          { ref: 'r', type: 'REPORT', name: 'R' },
        ],
      }],
      embedTenants: [{ name: 'customer-a' }],
    }],
  };
}

const tenantFilter = (values: unknown[] = ['{securityContext.tenant}']) => ({ member: 'tenant', operator: 'equals', values });
/** A policy whose only row filter is `filter`. */
const rowPolicy = (filter: unknown) => ({ group: 'customer', rowLevel: { filters: [filter] } });

/** [what is wrong, the policies of `orders`, the path the import names, a part of its message]. */
const POLICY_CASES: Array<[string, unknown[], string, RegExp]> = [
  // Members
  ['an unknown member in includes', [{ group: 'customer', memberLevel: { includes: ['count', 'nope'] } }], `${VIEW}.accessPolicy[0].memberLevel.includes[1]`, /"nope" is not a member of view orders/],
  ['a member of another view in excludes', [{ group: '*' }, { group: 'customer', memberLevel: { excludes: ['customers.name'] } }], `${VIEW}.accessPolicy[1].memberLevel.excludes[0]`, /is not a member of view orders/],
  ['an unknown member in a row filter', [rowPolicy({ member: 'nope', operator: 'equals', values: ['x'] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].member`, /"nope" is not a dimension of view orders/],
  ['a row filter on another view', [rowPolicy({ member: 'customers.tier', operator: 'equals', values: ['gold'] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].member`, /reads that view's members, not customers\.tier/],
  ['a measure in a row filter', [rowPolicy({ member: 'revenue', operator: 'gt', values: [1] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].member`, /orders\.revenue is a measure: row filters read dimensions/],
  ['an unknown member deep in an or group', [rowPolicy({ or: [tenantFilter(), { and: [tenantFilter(), { member: 'orders.nope', operator: 'set' }] }] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].or[1].and[1].member`, /is not a dimension of view orders/],
  // References
  ['an unknown reference root', [rowPolicy(tenantFilter(['{session.tenant}']))], `${VIEW}.accessPolicy[0].rowLevel.filters[0].values[0]`, /unknown root "session"/],
  ['a reference inside other text', [rowPolicy(tenantFilter(['tenant-{securityContext.tenant}']))], `${VIEW}.accessPolicy[0].rowLevel.filters[0].values[0]`, /is not a reference/],
  ['an unclosed reference', [rowPolicy(tenantFilter(['acme', '{securityContext.tenant']))], `${VIEW}.accessPolicy[0].rowLevel.filters[0].values[1]`, /is not a reference/],
  ['securityContext as a whole', [rowPolicy(tenantFilter(['{securityContext}']))], `${VIEW}.accessPolicy[0].rowLevel.filters[0].values[0]`, /name a key/],
  ['a key of groups', [rowPolicy(tenantFilter(['{groups.first}']))], `${VIEW}.accessPolicy[0].rowLevel.filters[0].values[0]`, /has no keys/],
  // Malformed filters
  ['a filter without operator', [rowPolicy({ member: 'tenant', values: ['acme'] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].operator`, /is required/],
  ['an unknown operator', [rowPolicy({ member: 'tenant', operator: 'like', values: ['acme'] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].operator`, /must be equal to one of the allowed values/],
  ['an empty and group', [rowPolicy({ and: [] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].and`, /must NOT have fewer than 1 items/],
  ['an and group holding a filter without member', [rowPolicy({ and: [tenantFilter(), { operator: 'equals', values: ['x'] }] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].and[1].member`, /is required/],
  ['an and group that is not a list', [rowPolicy({ and: tenantFilter() })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].and`, /must be array/],
  ['an and group with a member beside it', [rowPolicy({ and: [tenantFilter()], member: 'tenant' })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].member`, /is not a known field/],
  ['an operator the dimension type does not take', [rowPolicy({ member: 'amount', operator: 'contains', values: ['1'] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].operator`, /applies to string dimensions/],
  ['a value the dimension type does not take', [rowPolicy({ member: 'amount', operator: 'gt', values: ['a lot'] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].values[0]`, /is not a number/],
  ['gt with two values', [rowPolicy({ member: 'amount', operator: 'gt', values: [1, 2] })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].values`, /takes one value/],
  ['equals without values', [rowPolicy({ member: 'tenant', operator: 'equals' })], `${VIEW}.accessPolicy[0].rowLevel.filters[0].values`, /takes at least one value/],
  // Who a policy is for, and its levels
  ['both group and groups', [{ group: 'customer', groups: ['admins'] }], `${VIEW}.accessPolicy[0]`, /give group .* or groups .*, not both/],
  ['neither group nor groups', [{ rowLevel: { allowAll: true } }], `${VIEW}.accessPolicy[0]`, /give group .* or groups/],
  ['an empty groups list', [{ groups: [] }], `${VIEW}.accessPolicy[0].groups`, /must NOT have fewer than 1 items/],
  ['rowLevel with both allowAll and filters', [{ group: 'customer', rowLevel: { allowAll: true, filters: [tenantFilter()] } }], `${VIEW}.accessPolicy[0].rowLevel`, /allowAll: true or filters, not both/],
  ['rowLevel with neither allowAll nor filters', [{ group: 'customer', rowLevel: {} }], `${VIEW}.accessPolicy[0].rowLevel`, /allowAll: true or filters/],
  ['rowLevel with no filter in its list', [{ group: 'customer', rowLevel: { filters: [] } }], `${VIEW}.accessPolicy[0].rowLevel.filters`, /must NOT have fewer than 1 items/],
  ['an unknown field in a policy', [{ group: 'customer', role: 'viewer' }], `${VIEW}.accessPolicy[0].role`, /is not a known field/],
  ['an unknown field in memberLevel', [{ group: 'customer', memberLevel: { include: ['count'] } }], `${VIEW}.accessPolicy[0].memberLevel.include`, /is not a known field/],
];

/** [what is wrong, the snapshot's fields, a part of the message]: refused at the snapshot's sqlQuery. */
const SNAPSHOT_CASES: Array<[string, Partial<ImportReportSnapshot>, RegExp]> = [
  ['a policy-aware snapshot without references', { sqlQuery: 'SELECT code FROM orders' }, /binds at least one reference/],
  ['a policy-aware snapshot whose only reference has an unknown root', { sqlQuery: 'SELECT code FROM orders WHERE tenant = {session.tenant}' }, /binds at least one reference/],
  ['a policy-aware snapshot naming securityContext as a whole', { sqlQuery: 'SELECT code FROM orders WHERE tenant = {securityContext}' }, /name a key/],
  ['a policy-aware snapshot without sqlQuery', { sqlQuery: null }, /needs sqlQuery/],
];

describeEachDialect('import: access policies and policy-aware snapshots', (t) => {
  const db = () => t().db.kysely;

  async function expectRefused(file: ImportFile, path: string, message: RegExp): Promise<void> {
    const before = await countRows(db());
    const error = await importFile(db(), file).then(() => new Error('the import was accepted'), (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ImportError);
    expect((error as ImportError).path).toBe(path);
    expect((error as ImportError).message.startsWith(`${path}: `), (error as ImportError).message).toBe(true);
    expect((error as ImportError).message).toMatch(message);
    expect(await countRows(db())).toEqual(before);
    const tenantName = file.accounts[0]!.tenantName;
    expect(await db().selectFrom('accounts').select('id').where('tenant_name', '=', tenantName).executeTakeFirst()).toBeUndefined();
  }

  it("imports the isolation matrix's policies and a policy-aware snapshot (the refusals below differ from it by one entry)", async () => {
    const before = await countRows(db());
    const { refs } = await importFile(db(), fileWith(MATRIX_POLICIES.orders));
    expect(refs.prod).toBeGreaterThan(0);
    const after = await countRows(db());
    expect(after.accounts - before.accounts).toBe(1);
    expect(after.report_snapshots - before.report_snapshots).toBe(1);
    const row = await db().selectFrom('deployments').select('semantic_views').where('id', '=', refs.prod!).executeTakeFirstOrThrow();
    expect((JSON.parse(row.semantic_views!) as Array<{ accessPolicy?: unknown }>)[0]!.accessPolicy).toEqual(MATRIX_POLICIES.orders);
  });

  it.each(POLICY_CASES)('refuses %s at its JSON path, writing nothing', async (_, policies, path, message) => {
    await expectRefused(fileWith(policies), path, message);
  });

  it.each(SNAPSHOT_CASES)('refuses %s at its sqlQuery, writing nothing', async (_, snapshot, message) => {
    await expectRefused(fileWith(MATRIX_POLICIES.orders, snapshot), `${SNAPSHOT}.sqlQuery`, message);
  });
});
