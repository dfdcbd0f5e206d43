import type { FastifyInstance } from 'fastify';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { demoRows } from '../../test/warehouse.js';
import type { SemanticView } from './semantic/semantic.model.js';
import { DEMO_SEMANTIC_VIEWS } from './warehouse/warehouse.demo.js';

/**
 * Issue 33 part 3, the authors' preview (docs/authoring.md "Previewing a query"): a semantic query or a report
 * snapshot run on a deployment for a platform user; an admin runs it as a viewer would see it, through the same
 * policy step, and sees the statement; a member runs it as themselves only.
 */
describeEachDialect('the authors\' query preview', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  const count = { measures: ['orders.count'] };

  beforeAll(async () => {
    app = t().app;
    // The demo's row policy: every viewer reads its own tenant's orders; group Analysts reads them all.
    const views: SemanticView[] = structuredClone(DEMO_SEMANTIC_VIEWS).map((view) => (view.name !== 'orders' ? view : {
      ...view, preAggregations: undefined,
      accessPolicy: [
        { group: '*', rowLevel: { filters: [{ member: 'orders.tenant', operator: 'equals', values: ['{securityContext.tenant}'] }] } },
        { group: 'Analysts', rowLevel: { allowAll: true } },
      ],
    }));
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }, { ref: 'ana', role: 'member' }],
      groups: [{ ref: 'analysts', name: 'Analysts', members: ['ana'] }],
      deployments: [{ ref: 'prod', name: 'Prod', semanticViews: views }],
    });
    other = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Theirs' }] });
  });

  const preview = (body: unknown, key = s.keys.alice!, deploymentId = s.refs.prod!) =>
    app.inject({ method: 'POST', url: `/api/v1/deployments/${deploymentId}/query`, headers: { ...bearer(key), 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const counted = async (body: unknown, key?: string) => {
    const res = await preview(body, key);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: unknown[][]; statement?: { sql: string; parameters: unknown[]; on: string } }>();
  };

  it('runs a query as each viewer would see it: customer-a its own orders, customer-b its own, Analysts all; the admin sees the statement', async () => {
    const { orders, ordersOf } = demoRows();
    const asA = await counted({ query: count, asViewer: { securityContext: { tenant: 'customer-a' }, embedTenantName: 'customer-a' } });
    expect(Number(asA.rows[0]![0])).toBe(ordersOf('customer-a').length);
    expect(asA.statement).toMatchObject({ on: 'warehouse', parameters: expect.arrayContaining(['customer-a']) as unknown[] });
    expect(asA.statement!.sql.toLowerCase()).toContain('tenant');
    const asB = await counted({ query: count, asViewer: { securityContext: { tenant: 'customer-b' } } });
    expect(Number(asB.rows[0]![0])).toBe(ordersOf('customer-b').length);
    expect(Number((await counted({ query: count, asViewer: { groups: ['Analysts'] } })).rows[0]![0])).toBe(orders.length);
  });

  it('runs a member\'s preview as the member (their groups), never as a viewer, and shows them no statement', async () => {
    const ana = await counted({ query: count }, s.keys.ana!);
    expect(Number(ana.rows[0]![0])).toBe(demoRows().orders.length);
    expect(ana.statement).toBeUndefined();
    const res = await preview({ query: count, asViewer: { securityContext: { tenant: 'customer-a' } } }, s.keys.bob!);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.field).toBe('asViewer');
  });

  it('previews a draft\'s report snapshot: its meta.query, or its raw SQL for an admin only', async () => {
    const byStatus = await counted({ snapshot: { kind: 'table', title: 'x', meta: { query: { measures: ['orders.count'], dimensions: ['orders.status'] } } }, asViewer: { groups: ['Analysts'] } });
    expect(byStatus.rows.length).toBeGreaterThan(1);
    // Raw SQL passes no row filter: it runs only for a viewer no policy restricts (policy.raw-sql.ts).
    const sql = await counted({ snapshot: { sqlQuery: 'SELECT 1 AS one' }, asViewer: { groups: ['Analysts'] } });
    expect(sql.statement).toMatchObject({ sql: 'SELECT 1 AS one', on: 'warehouse' });
    expect((await preview({ snapshot: { sqlQuery: 'SELECT 1 AS one' }, asViewer: { securityContext: { tenant: 'customer-a' } } })).statusCode).toBe(403);
    expect(sql.rows).toEqual([[1]]);
    const member = await preview({ snapshot: { sqlQuery: 'SELECT 1' } }, s.keys.ana!);
    expect(member.statusCode).toBe(403);
    expect(member.json().error.field).toBe('snapshot.sqlQuery');
  });

  it('refuses bad input with the field named: both or neither of query and snapshot, an unknown member, another account\'s deployment', async () => {
    const cases: Array<[unknown, number, string]> = [
      [{}, 400, 'query'],
      [{ query: count, snapshot: { meta: { query: count } } }, 400, 'query'],
      [{ query: { measures: ['orders.nope'] } }, 400, 'query.measures[0]'],
      [{ snapshot: { meta: { query: { measures: ['orders.nope'] } } } }, 400, 'snapshot.meta.query.measures[0]'],
      [{ query: count, asViewer: { secret: 1 } }, 400, 'asViewer.secret'],
    ];
    for (const [body, status, field] of cases) {
      const res = await preview(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json().error.field, JSON.stringify(body)).toBe(field);
    }
    const foreign = await preview({ query: count }, s.keys.alice!, other.refs.prod!);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.field).toBe('deploymentId');
  });
});
