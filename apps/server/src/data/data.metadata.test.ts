import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { eventually } from '../../test/eventually.js';
import { seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { RAISED_RATE_LIMITS } from '../../test/limits.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { openDatabase } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import { DEMO_SEMANTIC_VIEWS } from './warehouse/warehouse.demo.js';

/**
 * Issue 21, the cached path: a widget request holds the dashboard, its snapshots, the deployment's model and the
 * account's time zone in memory (data.metadata.ts). What another process writes must still show on this one's next
 * requests: the writes here go through a second connection with its own change feed, as `svc import` or a second
 * `svc serve` would, and this app must see each of them (on PostgreSQL once the notification arrives).
 */
describeEachDialect('widget metadata held in memory', (t) => {
  let app: FastifyInstance;
  let other: Db;
  let s: SeededAccount;
  let headers: Record<string, string>;
  const publicId = `held-${uniqueSuffix()}`;

  beforeAll(async () => {
    app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS }), { db: t().db });
    other = openDatabase(t().url);
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{
        ref: 'dep', name: 'Held', semanticViews: DEMO_SEMANTIC_VIEWS,
        items: [
          { ref: 'wb', type: 'WORKBOOK', name: 'Held', dashboard: {
            publicId, status: 'published', allowEmbed: true,
            config: { widgets: [{ id: 'kpi', type: 'CHART', position: { x: 0, y: 0, w: 3, h: 2 } }] },
            reportSnapshots: [{ report: 'r-kpi', kind: 'kpi', meta: { query: { measures: ['orders.count'] } } }],
          } },
          { ref: 'r-kpi', type: 'REPORT', name: 'KPI' },
        ],
      }],
    });
    headers = (await mintViewer(app, s.keys.admin!, { deploymentId: s.refs.dep! })).headers;
  });

  afterAll(async () => {
    await app?.close();
    await other?.close();
  });

  const kpi = async () => {
    const response = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/kpi/data`, headers, payload: {} });
    return { status: response.statusCode, body: response.json() as { columns?: Array<{ member: string; title: string }>; timezone?: string; error?: { field?: string } } };
  };
  const accountId = async () => (await other.kysely.selectFrom('users').select('account_id').where('id', '=', s.refs.admin!).executeTakeFirstOrThrow()).account_id;

  it("sees another process's change to the widget's report snapshot", async () => {
    expect((await kpi()).body.columns?.map((c) => c.member)).toEqual(['orders.count']);
    expect((await kpi()).body.columns?.map((c) => c.member)).toEqual(['orders.count']);
    await other.kysely.updateTable('report_snapshots').set({ meta: JSON.stringify({ query: { measures: ['orders.revenue'] } }) })
      .where('dashboard_id', 'in', other.kysely.selectFrom('dashboards').select('id').where('public_id', '=', publicId)).execute();
    expect(await eventually(async () => (await kpi()).body.columns?.[0]?.member === 'orders.revenue')).toBe(true);
  });

  it("sees another process's change to the deployment's semantic model", async () => {
    const renamed = DEMO_SEMANTIC_VIEWS.map((view) => ({ ...view, measures: view.measures.map((m) => (m.name === 'revenue' ? { ...m, title: 'Turnover' } : m)) }));
    expect((await kpi()).body.columns?.[0]?.title).toBe('Revenue');
    await other.kysely.updateTable('deployments').set({ semantic_views: JSON.stringify(renamed) }).where('id', '=', s.refs.dep!).execute();
    expect(await eventually(async () => (await kpi()).body.columns?.[0]?.title === 'Turnover')).toBe(true);
  });

  it("sees another process's change to the account's time zone", async () => {
    expect((await kpi()).body.timezone).toBe('UTC');
    await other.kysely.updateTable('accounts').set({ settings: JSON.stringify({ timezone: 'Europe/Berlin' }) }).where('id', '=', await accountId()).execute();
    expect(await eventually(async () => (await kpi()).body.timezone === 'Europe/Berlin')).toBe(true);
  });

  it("sees another process's unpublishing of the dashboard: the next request is refused", async () => {
    expect((await kpi()).status).toBe(200);
    await other.kysely.updateTable('dashboards').set({ status: 'draft' }).where('public_id', '=', publicId).execute();
    expect(await eventually(async () => {
      const answer = await kpi();
      return answer.status === 403 && answer.body.error?.field === 'publicId';
    })).toBe(true);
  });
});
