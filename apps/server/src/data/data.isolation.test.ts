import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { startFakeAi, toolCallReply } from '../../test/fake-ai.js';
import type { FakeAi } from '../../test/fake-ai.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { RAISED_RATE_LIMITS } from '../../test/limits.js';
import { MATRIX_POLICIES, ORPHAN_CUSTOMER_ID, POLICY_ROWS, markersIn, policyViews, policyWarehouseSource } from '../../test/policy-warehouse.js';
import type { Marker, PolicyCustomer, PolicyOrder } from '../../test/policy-warehouse.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';

/**
 * Issue 20, "Tests that must exist": the isolation matrix. Every data path × every kind of credential, over the
 * multi-tenant warehouse of test/policy-warehouse.ts with the policies of MATRIX_POLICIES. The table MATRIX
 * writes the expected status of each cell and which rows each credential reads; the figures of a 200 are computed
 * from the warehouse's rows under that rule. Every response body is also searched for MARKERS: a customer name
 * or order code of a row the credential must not see fails the test, whatever the path.
 */

const PASSWORD = 'correct horse battery staple';
const { customers, orders } = POLICY_ROWS;
const customerOf = (order: PolicyOrder): PolicyCustomer | undefined => customers.find((c) => c.id === order.customer_id);

type Path = 'chart' | 'names' | 'codes' | 'drill' | 'kpi' | 'fill' | 'raw' | 'aware' | 'app' | 'ai';
const PATHS: readonly Path[] = ['chart', 'names', 'codes', 'drill', 'kpi', 'fill', 'raw', 'aware', 'app', 'ai'];

/** Which rows a credential reads: orders, and customers (undefined: an order's missing customer, NULL members). */
interface Sees {
  orders: (order: PolicyOrder) => boolean;
  customers: (customer: PolicyCustomer | undefined) => boolean;
  /** Members the credential may not name (403 naming them); `*`: every member of both views. */
  hidden: readonly string[] | '*';
  /** Which markers a body may carry on a path. */
  markers: (marker: Marker, path: Path) => boolean;
}

const ofTenants = (...tenants: string[]): Sees => ({
  orders: (o) => tenants.includes(o.tenant),
  customers: (c) => c !== undefined && tenants.includes(c.tenant),
  hidden: [],
  markers: (m) => tenants.includes(m.tenant),
});
const ofRegion = (region: 'north' | 'south'): Sees => ({
  orders: (o) => o.region === region,
  customers: (c) => c?.tier === 'gold',
  hidden: [],
  markers: (m) => (m.kind === 'order' ? m.region === region : m.tier === 'gold'),
});
const NOTHING: Sees = { orders: () => false, customers: () => false, hidden: '*', markers: () => false };
const NO_ROWS: Sees = { ...NOTHING, hidden: [] };
const EVERYTHING: Sees = { orders: () => true, customers: () => true, hidden: [], markers: () => true };
const LIMITED: Sees = {
  ...ofTenants('acme'),
  hidden: ['orders.amount', 'orders.revenue', 'orders.code'],
  // Order codes are a hidden member: no path shows one. A policy-aware snapshot is refused to a viewer from whom
  // members are hidden (its SQL may read any column).
  markers: (m) => m.tenant === 'acme' && m.kind === 'customer',
};

type Credential =
  | 'tenantA' | 'tenantB' | 'groupX' | 'groupY' | 'missingAttribute' | 'listAttribute' | 'emptyListAttribute' | 'memberExcluded'
  | 'noMatchingPolicy' | 'platformMember' | 'admin' | 'adminWithoutGroup' | 'privateMode' | 'internalId';

const S = 200;
const F = 403;
type Cells = Record<Path, 200 | 403>;
const cells = (chart: 200 | 403, names: 200 | 403, codes: 200 | 403, drill: 200 | 403, kpi: 200 | 403, fill: 200 | 403, raw: 200 | 403, aware: 200 | 403, app: 200 | 403, ai: 200 | 403): Cells =>
  ({ chart, names, codes, drill, kpi, fill, raw, aware, app, ai });

/**
 * THE MATRIX. Per credential: how it is made, which rows it reads, the tenant a policy-aware snapshot binds for
 * it (`{securityContext.tenant}`), and the status of each path. Raw SQL runs only for a viewer no policy
 * restricts; a policy-aware snapshot runs for a session holding one tenant.
 */
const MATRIX: Record<Credential, { made: string; sees: Sees; awareTenant: string | null; cells: Cells }> = {
  //                                                                                                      chart names codes drill kpi fill raw aware app ai
  tenantA: { made: 'embed: group customer, securityContext.tenant acme', sees: ofTenants('acme'), awareTenant: 'acme', cells: cells(S, S, S, S, S, S, F, S, S, S) },
  tenantB: { made: 'embed: group customer, securityContext.tenant globex', sees: ofTenants('globex'), awareTenant: 'globex', cells: cells(S, S, S, S, S, S, F, S, S, S) },
  groupX: { made: 'embed: group region-north, no securityContext', sees: ofRegion('north'), awareTenant: null, cells: cells(S, S, S, S, S, S, F, F, S, S) },
  groupY: { made: 'embed: group region-south, no securityContext', sees: ofRegion('south'), awareTenant: null, cells: cells(S, S, S, S, S, S, F, F, S, S) },
  missingAttribute: { made: 'embed: group customer, securityContext without tenant', sees: NO_ROWS, awareTenant: null, cells: cells(S, S, S, S, S, S, F, F, S, S) },
  listAttribute: { made: 'embed: group customer, securityContext.tenant [acme, initech]', sees: ofTenants('acme', 'initech'), awareTenant: null, cells: cells(S, S, S, S, S, S, F, F, S, S) },
  emptyListAttribute: { made: 'embed: group customer, securityContext.tenant []', sees: NO_ROWS, awareTenant: null, cells: cells(S, S, S, S, S, S, F, F, S, S) },
  memberExcluded: { made: 'embed: group limited (no amount, revenue, code), tenant acme', sees: LIMITED, awareTenant: null, cells: cells(S, S, F, S, S, S, F, F, S, S) },
  noMatchingPolicy: { made: 'embed: a group no policy names', sees: NOTHING, awareTenant: null, cells: cells(F, F, F, F, F, F, F, F, F, F) },
  platformMember: { made: 'API key of a member in platform group region-south', sees: ofRegion('south'), awareTenant: null, cells: cells(S, S, S, S, S, S, F, F, S, S) },
  admin: { made: 'API key of an admin in platform group admins', sees: EVERYTHING, awareTenant: null, cells: cells(S, S, S, S, S, S, S, F, S, S) },
  adminWithoutGroup: { made: 'API key of an admin in no group (no bypass)', sees: NOTHING, awareTenant: null, cells: cells(F, F, F, F, F, F, F, F, F, F) },
  privateMode: { made: 'console cookie of a member in platform group region-north', sees: ofRegion('north'), awareTenant: null, cells: cells(S, S, S, S, S, S, F, F, S, S) },
  internalId: { made: 'internalId session of a member in platform group customer, securityContext.tenant globex', sees: ofTenants('globex'), awareTenant: 'globex', cells: cells(S, S, S, S, S, S, F, S, S, S) },
};

// Expected figures of a 200, from the rows a credential reads.
const visibleOrders = (sees: Sees) => orders.filter(sees.orders);
/** Orders joined to their customer: both views' policies hold (a LEFT JOIN's missing customer is NULL members). */
const visibleJoined = (sees: Sees) => visibleOrders(sees).filter((o) => sees.customers(customerOf(o)));
const countBy = (rows: PolicyOrder[], key: (o: PolicyOrder) => unknown[]): unknown[][] => {
  const groups = new Map<string, { key: unknown[]; n: number }>();
  for (const row of rows) {
    const k = key(row);
    const entry = groups.get(JSON.stringify(k)) ?? { key: k, n: 0 };
    entry.n += 1;
    groups.set(JSON.stringify(k), entry);
  }
  return [...groups.values()].map(({ key: k, n }) => [...k, n]);
};
const distinct = (rows: unknown[][]) => [...new Map(rows.map((r) => [JSON.stringify(r), r])).values()];
/** Rows compared as a set: the order of equal keys is the compiler's business (the property test checks it). */
const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();
const isHidden = (sees: Sees, member: string) => sees.hidden === '*' || sees.hidden.includes(member);
const inYear = (year: string) => (o: PolicyOrder) => o.created_at.startsWith(year);

const CHART_QUERY = { measures: ['orders.count'], dimensions: ['orders.tenant', 'customers.name'] };
const APP_QUERY = { measures: ['orders.count', 'orders.customers'], dimensions: ['orders.tenant', 'orders.region'] };
const AI_QUERY = { measures: ['orders.count'], dimensions: ['customers.name'] };
const MONTHS = ['01', '02', '03', '04', '05', '06'];

function expectedRows(path: Path, sees: Sees, awareTenant: string | null): { columns?: string[]; rows: unknown[][] } {
  switch (path) {
    case 'chart':
      return { rows: countBy(visibleJoined(sees), (o) => [o.tenant, customerOf(o)?.name ?? null]) };
    case 'names':
      return { rows: customers.filter((c) => sees.customers(c)).map((c) => [c.name]) };
    case 'codes':
      return { rows: visibleOrders(sees).map((o) => [o.code]) };
    case 'drill': {
      const members = ['orders.code', 'orders.tenant', 'orders.amount', 'customers.name'].filter((m) => !isHidden(sees, m));
      const value = (o: PolicyOrder, m: string) => ({ 'orders.code': o.code, 'orders.tenant': o.tenant, 'orders.amount': o.amount, 'customers.name': customerOf(o)?.name ?? null })[m];
      return { columns: members, rows: distinct(visibleJoined(sees).filter((o) => o.region === 'north').map((o) => members.map((m) => value(o, m)))) };
    }
    case 'kpi':
      return { rows: [[visibleOrders(sees).filter(inYear('2025')).length, visibleOrders(sees).filter(inYear('2024')).length]] };
    case 'fill':
      return { rows: MONTHS.map((m) => [`2025-${m}-01T00:00:00.000`, visibleOrders(sees).filter(inYear(`2025-${m}`)).length]) };
    case 'raw':
      return { rows: visibleOrders(sees).map((o) => [o.code]) };
    case 'aware':
      return { rows: orders.filter((o) => o.tenant === awareTenant).map((o) => [o.code]) };
    case 'app':
      return {
        rows: countBy(visibleOrders(sees), (o) => [o.tenant, o.region]).map(([tenant, region, n]) => {
          const group = visibleOrders(sees).filter((o) => o.tenant === tenant && o.region === region);
          return [tenant, region, n, new Set(group.map((o) => o.customer_id)).size];
        }),
      };
    case 'ai':
      return { rows: countBy(visibleJoined(sees), (o) => [customerOf(o)?.name ?? null]) };
  }
}

/** A CLASSIC dashboard with a widget per data path; CHART widgets take the snapshots in order. */
function classicDashboard(publicId: string) {
  const position = { x: 0, y: 0, w: 6, h: 3 };
  return {
    publicId, status: 'published' as const, allowEmbed: true, title: 'Policies',
    config: {
      widgets: [
        { id: 'names', type: 'FILTER', position, config: { member: 'customers.name' } },
        { id: 'codes', type: 'FILTER', position, config: { member: 'orders.code' } },
        { id: 'chart', type: 'CHART', position },
        { id: 'by-region', type: 'CHART', position },
        { id: 'kpi', type: 'CHART', position },
        { id: 'fill', type: 'CHART', position },
        { id: 'raw', type: 'CHART', position },
        { id: 'aware', type: 'CHART', position },
        { id: 'revenue', type: 'CHART', position },
      ],
    },
    reportSnapshots: [
      { report: 'r-chart', kind: 'table' as const, meta: { query: CHART_QUERY } },
      { report: 'r-region', kind: 'table' as const, meta: { query: { measures: ['orders.count'], dimensions: ['orders.region'] } } },
      {
        report: 'r-kpi', kind: 'kpi' as const,
        meta: { query: { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2025-01-01', '2025-12-31'] }] } },
        periodComparisons: [{ measure: 'orders.count', timeDimension: 'orders.created_at', offset: { amount: 1, unit: 'year' }, outputs: ['previous'] }],
      },
      {
        report: 'r-fill', kind: 'table' as const,
        meta: { query: { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-01-01', '2025-06-30'] }] } },
        fillMissingRows: { member: 'orders.created_at' },
      },
      { report: 'r-raw', kind: 'table' as const, sqlQuery: 'SELECT code FROM orders' },
      { report: 'r-aware', kind: 'table' as const, sqlQuery: 'SELECT code FROM orders WHERE tenant = {securityContext.tenant}', meta: { policyAware: true } },
      { report: 'r-revenue', kind: 'kpi' as const, meta: { query: { measures: ['orders.count', 'orders.revenue'] } } },
    ],
  };
}

const REPORTS = ['r-chart', 'r-region', 'r-kpi', 'r-fill', 'r-raw', 'r-aware', 'r-revenue', 'r-other'];

describeEachDialect('access policies: isolation matrix', (t) => {
  let fake: FakeAi;
  let app: FastifyInstance;
  let s: SeededAccount;
  const sfx = uniqueSuffix();
  const classicId = `policies-${sfx}`;
  const appId = `policies-app-${sfx}`;
  const otherId = `policies-other-${sfx}`;
  const headers = {} as Record<Credential, Record<string, string>>;
  const emails: Record<string, string> = {};
  let aiQuery: unknown = AI_QUERY;

  beforeAll(async () => {
    fake = await startFakeAi();
    fake.respond = () => ({ status: 200, body: toolCallReply(aiQuery) });
    app = await buildApp(testConfig({ ai: { baseUrl: fake.baseUrl, model: 'svc-test-model', apiKey: 'sk-test' }, rateLimits: RAISED_RATE_LIMITS }), { db: t().db });
    s = await seedAccount(t().db.kysely, {
      settings: { allowEmbedComments: true },
      users: [
        { ref: 'admin', role: 'admin' },
        { ref: 'bare', role: 'admin' },
        { ref: 'member', role: 'member' },
        { ref: 'console', role: 'member', password: PASSWORD },
        { ref: 'dave', role: 'member' },
      ],
      groups: [
        { ref: 'g-admins', name: 'admins', members: ['admin'] },
        { ref: 'g-south', name: 'region-south', members: ['member'] },
        { ref: 'g-north', name: 'region-north', members: ['console'] },
        { ref: 'g-customer', name: 'customer', members: ['dave'] },
      ],
      deployments: [{
        ref: 'prod', name: 'Policies', dataSource: policyWarehouseSource(t().dialect)!, semanticViews: policyViews(MATRIX_POLICIES),
        items: [
          {
            ref: 'shared', type: 'FOLDER', name: 'Shared', grants: [{ group: 'g-south' }, { group: 'g-north' }, { group: 'g-customer' }],
            children: [
              { ref: 'wb', type: 'WORKBOOK', name: 'Policies', dashboard: classicDashboard(classicId) },
              { ref: 'wb-app', type: 'WORKBOOK', name: 'App', dashboard: { publicId: appId, status: 'published', allowEmbed: true, config: { kind: 'APP', app: { html: '<p>app</p>' } } } },
            ],
          },
          {
            ref: 'private', type: 'FOLDER', name: 'Private', createdBy: 'admin',
            children: [{
              ref: 'wb-other', type: 'WORKBOOK', name: 'Other', createdBy: 'admin', dashboard: {
                publicId: otherId, status: 'published', allowEmbed: true,
                config: { widgets: [{ id: 'count', type: 'CHART', position: { x: 0, y: 0, w: 3, h: 2 } }] },
                reportSnapshots: [{ report: 'r-other', kind: 'kpi', meta: { query: { measures: ['orders.count'] } } }],
              },
            }],
          },
          ...REPORTS.map((ref) => ({ ref, type: 'REPORT' as const, name: ref })),
        ],
      }],
    });
    for (const ref of ['console', 'dave']) {
      emails[ref] = (await t().db.kysely.selectFrom('users').select('email').where('id', '=', s.refs[ref]!).executeTakeFirstOrThrow()).email;
    }
    const mint = async (body: Record<string, unknown>) => (await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, ...body })).headers;
    headers.tenantA = await mint({ groups: ['customer'], securityContext: { tenant: 'acme' }, embedTenantName: 'customer-acme' });
    headers.tenantB = await mint({ groups: ['customer'], securityContext: { tenant: 'globex' }, embedTenantName: 'customer-globex' });
    headers.groupX = await mint({ groups: ['region-north'] });
    headers.groupY = await mint({ groups: ['region-south'] });
    headers.missingAttribute = await mint({ groups: ['customer'], securityContext: { region: 'north', tenant_id: 'acme' } });
    headers.listAttribute = await mint({ groups: ['customer'], securityContext: { tenant: ['acme', 'initech'] } });
    headers.emptyListAttribute = await mint({ groups: ['customer'], securityContext: { tenant: [] } });
    headers.memberExcluded = await mint({ groups: ['limited'], securityContext: { tenant: 'acme' } });
    headers.noMatchingPolicy = await mint({ groups: ['someone-else'] });
    headers.platformMember = bearer(s.keys.member!);
    headers.admin = bearer(s.keys.admin!);
    headers.adminWithoutGroup = bearer(s.keys.bare!);
    const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { host: 'localhost:3000' }, payload: { email: emails.console, password: PASSWORD } });
    expect(login.statusCode, login.body).toBe(200);
    const cookie = String([login.headers['set-cookie']].flat()[0]).split(';')[0]!;
    headers.privateMode = { cookie, 'x-requested-with': 'svc' };
    headers.internalId = await mint({ internalId: emails.dave, securityContext: { tenant: 'globex' } });
  });

  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  const widget = (id: string, who: Record<string, string>, payload: object = {}, publicId = classicId) =>
    app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/${id}/data`, headers: who, payload });
  const appQuery = (who: Record<string, string>, query: unknown, publicId = appId) =>
    app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/query`, headers: who, payload: { query } });
  const ask = (who: Record<string, string>, payload: object = { question: 'Orders by customer?', publicId: classicId }) =>
    app.inject({ method: 'POST', url: '/api/v1/embed/ai/query', headers: who, payload });

  async function callPath(path: Path, who: Record<string, string>): Promise<LightMyRequestResponse> {
    switch (path) {
      case 'chart': return widget('chart', who);
      case 'names': return widget('names', who);
      case 'codes': return widget('codes', who);
      case 'drill': return widget('by-region', who, { drilldown: { member: 'orders.count', point: { 'orders.region': 'north' } } });
      case 'kpi': return widget('kpi', who);
      case 'fill': return widget('fill', who);
      case 'raw': return widget('raw', who);
      case 'aware': return widget('aware', who);
      case 'app': return appQuery(who, APP_QUERY);
      case 'ai': return ask(who);
    }
  }

  /** No body may carry a marker its credential must not see. */
  function expectNoForeignMarkers(credential: Credential, path: Path, body: string): void {
    const foreign = markersIn(body).filter((m) => !MATRIX[credential].sees.markers(m, path)).map((m) => m.text);
    expect(foreign, `${credential} × ${path}: markers it must not see`).toEqual([]);
  }

  describe.each(Object.keys(MATRIX) as Credential[])('%s', (credential) => {
    const { made, sees, awareTenant, cells: expected } = MATRIX[credential];

    it.each(PATHS)(`${made}: %s answers as the matrix says, with only its rows`, async (path) => {
      aiQuery = AI_QUERY;
      const res = await callPath(path, headers[credential]);
      const label = `${credential} × ${path}: ${res.body.slice(0, 300)}`;
      expectNoForeignMarkers(credential, path, res.body);
      expect(res.statusCode, label).toBe(expected[path]);
      if (expected[path] === 403) {
        const message = res.json().error.message as string;
        if (path === 'raw') expect(message).toMatch(/raw SQL, which access policies cannot filter/);
        else if (path === 'aware') expect(message).toMatch(sees.hidden.length > 0 ? /may read any column, and a policy hides members from you/ : /needs \{securityContext\.tenant\} as one value/);
        else expect(message).toMatch(/is not available to you \(an access policy of view (orders|customers) hides it\)/);
        return;
      }
      const body = res.json();
      const want = expectedRows(path, sees, awareTenant);
      if (path === 'fill') expect(body.rows, label).toEqual(want.rows);
      else expect(sorted(body.rows), label).toEqual(sorted(want.rows));
      if (want.columns !== undefined) expect(body.columns.map((c: { name: string }) => c.name), label).toEqual(want.columns);
    });

    it("the AI's prompt names exactly the members this credential may see, and no data", async () => {
      aiQuery = AI_QUERY;
      const before = fake.requests.length;
      await ask(headers[credential]);
      expect(fake.requests.length).toBe(before + 1);
      const prompt = fake.requests.at(-1)!.body.messages[0]!.content;
      for (const view of policyViews()) {
        for (const member of [...view.dimensions.map((d) => ['dimension', d.name]), ...view.measures.map((m) => ['measure', m.name])]) {
          const name = `${view.name}.${member[1]}`;
          expect(prompt.includes(`${member[0]} ${name}:`), `${credential}: prompt names ${name}`).toBe(!isHidden(sees, name));
        }
      }
      expect(markersIn(prompt)).toEqual([]);
    });
  });

  it('the fixture is no degenerate matrix: each tenant and region reads rows, and the others exist', () => {
    for (const credential of ['tenantA', 'tenantB', 'groupX', 'groupY', 'listAttribute', 'memberExcluded', 'internalId'] as const) {
      const { sees } = MATRIX[credential];
      expect(visibleJoined(sees).length, credential).toBeGreaterThan(0);
      expect(visibleOrders(sees).length, credential).toBeLessThan(orders.length);
    }
    expect(orders.some((o) => o.customer_id === ORPHAN_CUSTOMER_ID)).toBe(true);
    expect(orders.some((o) => o.status === null)).toBe(true);
  });

  describe('a member-level exclusion', () => {
    const limited = () => headers.memberExcluded;
    const expectHidden = (res: LightMyRequestResponse, member: string, field: string) => {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
      expect(res.json().error.field).toBe(field);
      expect(res.json().error.message).toContain(member);
      expectNoForeignMarkers('memberExcluded', 'app', res.body);
    };

    it('refuses a hidden member in a query (measure, dimension, filter) with 403 naming it', async () => {
      expectHidden(await appQuery(limited(), { measures: ['orders.revenue'] }), 'orders.revenue', 'query.measures[0]');
      expectHidden(await appQuery(limited(), { measures: ['orders.count'], dimensions: ['orders.tenant', 'orders.amount'] }), 'orders.amount', 'query.dimensions[1]');
      expectHidden(await appQuery(limited(), { measures: ['orders.count'], filters: [{ member: 'orders.code', operator: 'set' }] }), 'orders.code', 'query.filters[0].member');
      expectHidden(
        await appQuery(limited(), { measures: ['orders.count'], filters: [{ or: [{ member: 'orders.tenant', operator: 'set' }, { member: 'orders.amount', operator: 'gt', values: [1] }] }] }),
        'orders.amount', 'query.filters[0].or[1].member',
      );
    });

    // Issue 20: "A hidden member is refused with a 403 that names it, on every path: query, filter, order, ...".
    it('refuses ordering by a hidden member with 403 naming it', async () => {
      const res = await appQuery(limited(), { measures: ['orders.count'], order: { 'orders.revenue': 'desc' } });
      expectHidden(res, 'orders.revenue', 'query.order[0]');
    });

    it("refuses a viewer's filter, a FILTER control, a FIELD swap and a widget built on a hidden member, naming it", async () => {
      expectHidden(await widget('chart', limited(), { filters: { 'orders.amount': { gte: 1 } } }), 'orders.amount', 'filters.orders.amount');
      expectHidden(await widget('codes', limited()), 'orders.code', 'widgets.codes.config.member');
      const swapped = await widget('chart', limited(), { fields: { 'orders.count': 'orders.revenue' } });
      expect(swapped.statusCode).toBe(403);
      expect(swapped.json().error.message).toContain('orders.revenue');
      const revenue = await widget('revenue', limited());
      expect(revenue.statusCode).toBe(403);
      expect(revenue.json().error.message).toContain('orders.revenue');
      // Drilling into that widget is refused the same way: its measure is hidden.
      const drill = await widget('revenue', limited(), { drilldown: { member: 'orders.revenue' } });
      expect(drill.statusCode).toBe(403);
      expect(drill.json().error.message).toContain('orders.revenue');
    });

    it('refuses an AI query on a hidden member with 403 (not the 422 of a model mistake)', async () => {
      aiQuery = { measures: ['orders.revenue'] };
      const res = await ask(limited());
      aiQuery = AI_QUERY;
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error.message).toContain('orders.revenue');
    });

    it('lets the visible members work: a filter on a visible member narrows the rows, and the drill-down lists only visible members', async () => {
      const paid = await widget('chart', limited(), { filters: { 'orders.status': 'paid' } });
      expect(paid.statusCode, paid.body).toBe(200);
      const want = countBy(visibleJoined(LIMITED).filter((o) => o.status === 'paid'), (o) => [o.tenant, customerOf(o)!.name]);
      expect(sorted(paid.json().rows)).toEqual(sorted(want));
      const app1 = await appQuery(limited(), { measures: ['orders.count'], dimensions: ['orders.status'], filters: [{ member: 'customers.tier', operator: 'equals', values: ['gold'] }] });
      expect(app1.statusCode, app1.body).toBe(200);
      const gold = countBy(visibleJoined(LIMITED).filter((o) => customerOf(o)!.tier === 'gold'), (o) => [o.status]);
      expect(sorted(app1.json().rows)).toEqual(sorted(gold));
      const drill = await widget('by-region', limited(), { drilldown: { member: 'orders.count', point: { 'orders.region': 'south' } } });
      expect(drill.json().columns.map((c: { name: string }) => c.name)).toEqual(['orders.tenant', 'customers.name']);
    });
  });

  it('groups and userAttributes left out of a later Generate Session do not carry over: policies read what each call sent', async () => {
    const externalId = `carry-${uniqueSuffix()}`;
    const first = (await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, externalId, groups: ['admins'] })).headers;
    const everything = await callPath('chart', first);
    expect(everything.statusCode, everything.body).toBe(200);
    expect(sorted(everything.json().rows)).toEqual(sorted(expectedRows('chart', EVERYTHING, null).rows));
    // The same viewer again, sent only a tenant: the embed user keeps its stored groups, but this session is in none.
    const later = (await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, externalId, securityContext: { tenant: 'acme' } })).headers;
    const res = await callPath('chart', later);
    expectNoForeignMarkers('noMatchingPolicy', 'chart', res.body);
    expect(res.statusCode, res.body).toBe(403);
    // Sent again with its group, it reads the tenant's rows.
    const again = (await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, externalId, groups: ['customer'], securityContext: { tenant: 'acme' } })).headers;
    const acme = await callPath('chart', again);
    expect(sorted(acme.json().rows)).toEqual(sorted(expectedRows('chart', ofTenants('acme'), 'acme').rows));
    expectNoForeignMarkers('tenantA', 'chart', acme.body);
  });

  it('binds references as values, never as SQL: a tenant holding quotes reads no row, on row policies and policy-aware SQL alike', async () => {
    for (const tenant of ["acme' OR '1'='1", 'acme" OR "1"="1', "') OR 1=1 --", 'ACME', ' acme']) {
      const who = (await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, groups: ['customer'], securityContext: { tenant } })).headers;
      for (const path of ['chart', 'names', 'codes', 'aware', 'app'] as const) {
        const res = await callPath(path, who);
        expect(res.statusCode, `${tenant} × ${path}: ${res.body}`).toBe(200);
        expect(res.json().rows, `${tenant} × ${path}`).toEqual([]);
      }
    }
  });

  describe("Generate Session's dashboards", () => {
    const comments = (who: Record<string, string>, publicId: string) => app.inject({ url: `/api/v1/embed/dashboard/${publicId}/comments`, headers: who });

    it('limit data, comments and the AI to those dashboards (403 elsewhere, naming publicId)', async () => {
      const limited = (await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, groups: ['customer'], securityContext: { tenant: 'acme' }, dashboards: [classicId] })).headers;
      const open = (await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, groups: ['customer'], securityContext: { tenant: 'acme' } })).headers;
      const expectElsewhere = (res: LightMyRequestResponse) => {
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json().error.field).toBe('publicId');
      };
      // Its own dashboard: data, comments, the AI.
      const chart = await widget('chart', limited);
      expect(chart.statusCode).toBe(200);
      expect(sorted(chart.json().rows)).toEqual(sorted(expectedRows('chart', ofTenants('acme'), null).rows));
      expect((await comments(limited, classicId)).statusCode).toBe(200);
      expect((await ask(limited)).statusCode).toBe(200);
      // Any other dashboard of the deployment: 403, where a session without the list reads it.
      expectElsewhere(await widget('count', limited, {}, otherId));
      expect((await widget('count', open, {}, otherId)).statusCode).toBe(200);
      expectElsewhere(await appQuery(limited, APP_QUERY));
      expect((await appQuery(open, APP_QUERY)).statusCode).toBe(200);
      expectElsewhere(await comments(limited, otherId));
      expect((await comments(open, otherId)).statusCode).toBe(200);
      expectElsewhere(await ask(limited, { question: 'How many orders?', publicId: otherId }));
      expect((await ask(open, { question: 'How many orders?', publicId: otherId })).statusCode).toBe(200);
      expectElsewhere(await app.inject({ url: `/api/v1/embed/dashboard/${otherId}`, headers: limited }));
      expect((await app.inject({ url: `/api/v1/embed/deployments/${s.refs.prod}/workbooks/${s.refs['wb-other']}/dashboard`, headers: limited })).statusCode).toBe(403);
      expect((await app.inject({ url: `/api/v1/embed/deployments/${s.refs.prod}/workbooks/${s.refs.wb}/dashboard`, headers: limited })).statusCode).toBe(200);
      expectElsewhere(await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${otherId}/comments`, headers: limited, payload: { body: 'hello' } }));
      expect((await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${classicId}/comments`, headers: limited, payload: { body: 'hello' } })).statusCode).toBe(201);
      // Without publicId the AI would ask about the whole deployment: refused for a limited session.
      expectElsewhere(await ask(limited, { question: 'How many orders?' }));
      expect((await ask(open, { question: 'How many orders?' })).statusCode).toBe(200);
    });

    it('refuses an unknown publicId, or one of another deployment or account, with a 400 naming dashboards[i]', async () => {
      const stranger = await seedAccount(t().db.kysely, {
        users: [{ ref: 'admin', role: 'admin' }],
        deployments: [{ ref: 'p', name: 'P', items: [{ ref: 'w', type: 'WORKBOOK', name: 'W', dashboard: { publicId: `stranger-${sfx}`, status: 'published', allowEmbed: true, config: {} } }] }],
      });
      expect(stranger.refs.p).toBeGreaterThan(0);
      for (const [dashboards, field] of [
        [[classicId, `nope-${sfx}`], 'dashboards[1]'],
        [[`stranger-${sfx}`], 'dashboards[0]'],
        [[appId, classicId, otherId, 'x'], 'dashboards[3]'],
      ] as const) {
        const res = await app.inject({
          method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(s.keys.admin!),
          payload: { deploymentId: s.refs.prod, externalId: `v-${uniqueSuffix()}`, dashboards },
        });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error.field).toBe(field);
      }
    });
  });

  describe("Generate Session's securityContext", () => {
    const generate = (securityContext: unknown) => app.inject({
      method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(s.keys.admin!),
      payload: { deploymentId: s.refs.prod, externalId: `v-${uniqueSuffix()}`, securityContext },
    });

    it('takes an object of at most 8 KiB of JSON (UTF-8 bytes), and refuses a larger one with 400 naming securityContext', async () => {
      const frame = Buffer.byteLength(JSON.stringify({ k: '' }));
      expect((await generate({ k: 'x'.repeat(8192 - frame) })).statusCode).toBe(200);
      for (const context of [{ k: 'x'.repeat(8192 - frame + 1) }, { k: 'é'.repeat(4093) }, { blob: 'x'.repeat(20_000) }]) {
        const res = await generate(context);
        expect(res.statusCode, res.body.slice(0, 200)).toBe(400);
        expect(res.json().error.field).toBe('securityContext');
      }
    });

    it('refuses a securityContext that is not an object (array, string, null, number) with 400 naming securityContext', async () => {
      for (const context of [[], ['acme'], 'acme', null, 42, true]) {
        const res = await generate(context);
        expect(res.statusCode, JSON.stringify(context)).toBe(400);
        expect(res.json().error.field, JSON.stringify(context)).toBe('securityContext');
      }
    });
  });

  describe('an internalId session', () => {
    it('reaches only the dashboards its platform user could open through the API', async () => {
      const dashboard = (who: Record<string, string>, publicId: string) => app.inject({ url: `/api/v1/embed/dashboard/${publicId}`, headers: who });
      const dave = bearer(s.keys.dave!);
      const session = headers.internalId;
      for (const [publicId, status] of [[classicId, 200], [appId, 200], [otherId, 403]] as const) {
        expect((await dashboard(dave, publicId)).statusCode, `API key, ${publicId}`).toBe(status);
        expect((await dashboard(session, publicId)).statusCode, `internalId session, ${publicId}`).toBe(status);
      }
      expect((await widget('count', session, {}, otherId)).statusCode).toBe(403);
      expect((await widget('count', dave, {}, otherId)).statusCode).toBe(403);
      expect((await ask(session, { question: 'How many orders?', publicId: otherId })).statusCode).toBe(403);
      // The admin's own internalId session reaches it (an admin reaches the whole account).
      const adminEmail = (await t().db.kysely.selectFrom('users').select('email').where('id', '=', s.refs.admin!).executeTakeFirstOrThrow()).email;
      const adminSession = (await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.prod!, internalId: adminEmail })).headers;
      expect((await dashboard(adminSession, otherId)).statusCode).toBe(200);
      const count = await widget('count', adminSession, {}, otherId);
      expect(count.statusCode, count.body).toBe(200);
      expect(count.json().rows).toEqual([[orders.length]]);
    });

    it("reads with its platform user's groups, not groups given at minting (those are refused)", async () => {
      const res = await app.inject({
        method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(s.keys.admin!),
        payload: { deploymentId: s.refs.prod, internalId: emails.dave, groups: ['admins'] },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.field).toBe('groups');
    });
  });
});
