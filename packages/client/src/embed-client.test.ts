import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../apps/server/test/dialects.js';
import { mintViewer } from '../../../apps/server/test/embed.js';
import { seedAccount, uniqueSuffix } from '../../../apps/server/test/factory.js';
import { buildApp } from '../../../apps/server/src/app.js';
import { testConfig } from '../../../apps/server/test/config.js';
import { SvcApiError, SvcEmbedClient } from './index.js';

// Issue 35: SvcEmbedClient against a real server: saved charts and views of two viewers of one embed tenant.
describeEachDialect('@svc/client SvcEmbedClient (issue 35 saved charts and views)', (t) => {
  let server: FastifyInstance;
  let ann: SvcEmbedClient;
  let ben: SvcEmbedClient;
  const publicId = `client-views-${uniqueSuffix()}`;

  beforeAll(async () => {
    const seeded = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'Views', dashboard: { publicId, status: 'published', allowEmbed: true, title: 'Views', config: { widgets: [] } } }] }],
      embedTenants: [{ name: 'customer-a' }],
    });
    server = await buildApp(testConfig(), { db: t().db });
    await server.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/`;
    const viewer = async (name: string) => {
      const minted = await mintViewer(server, seeded.keys.admin!, {
        deploymentId: seeded.refs.prod!, externalId: `${name}-${uniqueSuffix()}`, username: name, embedTenantName: 'customer-a', securityContext: { tenant: 'customer-a' }, settings: { explore: 'create' },
      });
      return new SvcEmbedClient({ baseUrl, embedToken: minted.token });
    };
    ann = await viewer('ann');
    ben = await viewer('ben');
  });

  afterAll(async () => {
    await server.close();
  });

  it('saves, shares, pages, renames and deletes charts; another viewer reads a shared one and may not change it', async () => {
    const made = [];
    for (const title of ['One', 'Two', 'Three']) {
      made.push(await ann.createSavedChart({ title, query: { measures: ['orders.count'], dimensions: ['orders.status'] }, kind: 'bar', visibility: 'tenant', spec: { stacked: title === 'One' } }));
    }
    expect(made[0]).toMatchObject({ title: 'One', kind: 'bar', visibility: 'tenant', mine: true, spec: { stacked: true }, author: { username: 'ann' } });
    const seen: string[] = [];
    for await (const chart of ben.savedCharts({ first: 2, visibility: 'tenant' })) seen.push(chart.title);
    expect(seen).toEqual(['Three', 'Two', 'One']);
    expect(await ben.getSavedChart(made[0]!.id)).toMatchObject({ mine: false, query: { measures: ['orders.count'] } });
    const refused = await ben.updateSavedChart(made[0]!.id, { title: 'Mine now' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SvcApiError);
    expect(refused).toMatchObject({ status: 403, field: 'chartId' });
    expect(await ann.updateSavedChart(made[0]!.id, { title: 'Renamed', visibility: 'private' })).toMatchObject({ title: 'Renamed', visibility: 'private' });
    expect(await ben.getSavedChart(made[0]!.id).catch((e: unknown) => e)).toMatchObject({ status: 404 });
    await ann.deleteSavedChart(made[0]!.id);
    expect((await ann.listSavedCharts()).charts.map((c) => c.title)).toEqual(['Three', 'Two']);
    const malformed = await ann.createSavedChart({ title: 'Bad', query: { measures: ['orders.nope'] }, kind: 'bar' }).catch((e: unknown) => e);
    expect(malformed).toMatchObject({ status: 400, field: 'query.measures[0]' });
  });

  it('saves a view of a dashboard with a layout of saved charts, and lists, renames and deletes it', async () => {
    const chart = await ann.createSavedChart({ title: 'Beside', query: { measures: ['orders.count'] }, kind: 'kpi', visibility: 'tenant' });
    const view = await ann.createSavedView(publicId, {
      name: 'Books', visibility: 'tenant',
      state: { filters: { 'products.category': 'Books' }, granularity: 'quarter', charts: [{ chartId: chart.id, x: 0, y: 0, w: 4, h: 3 }] },
    });
    expect(view).toMatchObject({ publicId, name: 'Books', mine: true, state: { filters: { 'products.category': 'Books' }, granularity: 'quarter' } });
    expect((await ben.listSavedViews(publicId)).views.map((v) => v.id)).toContain(view.id);
    expect(await ben.getSavedView(publicId, view.id)).toMatchObject({ mine: false, state: { charts: [{ chartId: chart.id }] } });
    expect(await ann.updateSavedView(publicId, view.id, { name: 'Only books' })).toMatchObject({ name: 'Only books' });
    const bad = await ann.createSavedView(publicId, { name: 'x', state: { filters: { 'orders.nope': 1 } } }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, field: 'state.filters.orders.nope' });
    await ann.deleteSavedView(publicId, view.id);
    expect((await ann.listSavedViews(publicId, { visibility: 'tenant' })).views).toEqual([]);
  });
});
