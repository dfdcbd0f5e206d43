import type { FastifyInstance } from 'fastify';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

/**
 * Issue 38 part 1: filters the host locks. Generate Session's `filters` with `settings.lockedFilters: true` are
 * applied by the access step (policy.access.ts ModelAccess) to every query of the session, as a policy's row
 * filter is: widget data, drill-down, the Cube API alike; the viewer's own filter on a locked member is a 400.
 * Without the setting, the same filters are only what the embed starts with.
 */
describeEachDialect('locked filters', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  const publicId = `locked-${uniqueSuffix()}`;
  type Rows = Array<Array<string | number | null>>;

  beforeAll(async () => {
    app = t().app;
    s = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Prod' }] });
    const widget = (id: string) => ({ id, type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 } });
    const created = await app.inject({
      method: 'POST', url: `/api/v1/deployments/${s.refs.prod}/dashboards`, headers: bearer(s.keys.alice!),
      payload: {
        publicId, title: 'Orders by status', allowEmbed: true,
        config: { widgets: [widget('by-status'), widget('by-month')] },
        reportSnapshots: [
          { title: 'By status', kind: 'table', meta: { query: { measures: ['orders.count'], dimensions: ['orders.status'], order: { 'orders.status': 'asc' } } } },
          { title: 'By month', kind: 'table', meta: { query: { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: ['2025-01-01', '2025-12-31'] }] } } },
        ],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect((await app.inject({ method: 'POST', url: `/api/v1/dashboards/${publicId}/publish`, headers: bearer(s.keys.alice!) })).statusCode).toBe(200);
  });

  const viewer = (body: Record<string, unknown> = {}) => mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: 'customer-a', ...body });
  const data = (headers: Record<string, string>, widgetId: string, body: Record<string, unknown> = {}) =>
    app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/${widgetId}/data`, headers, payload: body });
  const rowsOf = async (headers: Record<string, string>, widgetId: string): Promise<Rows> => {
    const res = await data(headers, widgetId);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Rows }>().rows;
  };

  it('applies a locked filter to widget data and the Cube API, and refuses the viewer\'s own filter on its member', async () => {
    const free = await rowsOf((await viewer()).headers, 'by-status');
    expect(free.length).toBeGreaterThan(1);
    const [status, count] = free[0]! as [string, number];
    const locked = await viewer({ filters: { 'orders.status': status }, settings: { lockedFilters: true } });
    expect(await rowsOf(locked.headers, 'by-status')).toEqual([[status, count]]);

    const session = (await app.inject({ url: '/api/v1/embed/session', headers: locked.headers })).json().session;
    expect(session).toMatchObject({ filters: { 'orders.status': status }, lockedFilters: ['orders.status'] });

    // The viewer's own filter on the locked member: refused on widget data and on the filter check; clearing it is a no-op.
    const other = free[1]![0];
    for (const res of [
      await data(locked.headers, 'by-status', { filters: { 'orders.status': other } }),
      await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/filters/check`, headers: locked.headers, payload: { filters: { 'orders.status': other } } }),
    ]) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error.field).toBe('filters.orders.status');
    }
    const cleared = await data(locked.headers, 'by-status', { filters: { 'orders.status': null } });
    expect(cleared.json().rows).toEqual([[status, count]]);

    // Another data path of the same session: Cube's load (the embed token as a bare credential).
    const cube = await app.inject({
      url: `/cubejs-api/v1/load?query=${encodeURIComponent(JSON.stringify({ measures: ['orders.count'], dimensions: ['orders.status'] }))}`,
      headers: { authorization: locked.token },
    });
    expect(cube.statusCode, cube.body).toBe(200);
    expect(cube.json().data).toEqual([{ 'orders.status': status, 'orders.count': String(count) }]);
  });

  it('locks a date range: the months outside it are gone', async () => {
    const free = await rowsOf((await viewer()).headers, 'by-month');
    expect(free.length).toBe(12);
    const locked = await viewer({ filters: { 'orders.created_at': { gte: '2025-01-01', lte: '2025-03-31' } }, settings: { lockedFilters: true } });
    const rows = await rowsOf(locked.headers, 'by-month');
    expect(rows).toEqual(free.slice(0, 3));
  });

  it('leaves filters without settings.lockedFilters to the viewer: the embed starts with them, the server applies none', async () => {
    const free = await rowsOf((await viewer()).headers, 'by-status');
    const initial = await viewer({ filters: { 'orders.status': free[0]![0] } });
    expect(await rowsOf(initial.headers, 'by-status')).toEqual(free);
    expect((await app.inject({ url: '/api/v1/embed/session', headers: initial.headers })).json().session).toMatchObject({ filters: { 'orders.status': free[0]![0] }, lockedFilters: [] });
    expect((await data(initial.headers, 'by-status', { filters: { 'orders.status': free[1]![0] } })).statusCode).toBe(200);
  });

  it('checks the filters at Generate Session: a 400 naming the filter, and no session', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ 'orders.nope': 'x' }, 'filters.orders.nope'],
      [{ 'orders.count': 3 }, 'filters.orders.count'],
      [{ 'orders.amount': 'a lot' }, 'filters.orders.amount'],
      [{ 'orders.created_at': { gte: 'someday' } }, 'filters.orders.created_at'],
      [{ 'orders.status': { gte: 'a', lte: 'b', eq: 'c' } }, 'filters'],
    ];
    for (const [filters, field] of cases) {
      const res = await app.inject({
        method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(s.keys.alice!),
        payload: { deploymentId: s.refs.prod, externalId: `bad-${uniqueSuffix()}`, filters, settings: { lockedFilters: true } },
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error.field, JSON.stringify(filters)).toContain(field);
    }
  });
});
