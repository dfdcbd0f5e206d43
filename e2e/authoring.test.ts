import type { Frame } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { demoRows } from '../apps/server/test/warehouse.js';
import { hasChromium } from './browser.js';
import { DEMO_ADMIN_KEY, demoAccountFor, mountEmbed, openHostPage, setUpEmbedStack, waitForHostEvent } from './embed-harness.js';

// Issue 33's end-to-end check of the authoring API: an admin key makes a dashboard with a CHART (revenue by month)
// and a KPI through the API, publishes it, and a customer-a session on the demo sees that customer's figures in
// Chromium (the demo's row policy on orders.tenant); a changed draft is not seen until the second publish; a
// restore brings version 1 back.

const suite = hasChromium ? describe : describe.skip;
const money = (value: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0, minimumFractionDigits: 0 }).format(value);

suite('a dashboard made through the authoring API, in Chromium', () => {
  const stack = setUpEmbedStack({
    account: demoAccountFor,
    svc: { adminKey: DEMO_ADMIN_KEY },
    mint: (svc) => svc.mint({ securityContext: { tenant: 'customer-a' } }),
  });
  const orders = demoRows().ordersOf('customer-a');
  const revenueIn = (prefix: string) => orders.filter((o) => o.created_at.startsWith(prefix)).reduce((sum, o) => sum + o.amount, 0);

  /** The draft: revenue by month of `year` as a table, and the year's revenue as a KPI. */
  const draftFor = (year: string) => ({
    title: `Revenue ${year}`,
    config: {
      widgets: [
        { id: 'total', type: 'CHART', position: { x: 0, y: 0, w: 4, h: 3 }, config: { snapshotIndex: 0 } },
        { id: 'by-month', type: 'CHART', position: { x: 4, y: 0, w: 8, h: 6 }, config: { snapshotIndex: 1 } },
      ],
    },
    reportSnapshots: [
      { title: `Revenue ${year}`, kind: 'kpi', meta: { query: { measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: [`${year}-01-01`, `${year}-12-31`] }] } } },
      { title: 'Revenue by month', kind: 'table', meta: { query: { measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month', dateRange: [`${year}-01-01`, `${year}-12-31`] }] } } },
    ],
  });

  async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; etag: string | null; json: Record<string, unknown> }> {
    const res = await fetch(`${stack.svc.origin}${path}`, {
      method, headers: { authorization: `Bearer ${DEMO_ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, etag: res.headers.get('etag'), json: (await res.json()) as Record<string, unknown> };
  }

  /** A fresh host page with the dashboard embedded for a customer-a viewer; resolves at dashboard-loaded. */
  async function open(publicId: string): Promise<Frame> {
    const page = await openHostPage(stack.browser.context, `${stack.host.origin}/`);
    const frame = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'dashboard', publicId }, { record: ['ready', 'dashboard-loaded', 'error'] });
    await waitForHostEvent(page, 'dashboard-loaded', { timeout: 30_000 });
    return frame;
  }
  const kpi = (frame: Frame) => frame.locator('[data-widget-id="total"] .kpi-value').innerText();
  const cell = (frame: Frame, row: number, col: number) =>
    frame.locator(`[data-widget-id="by-month"] [role="row"][aria-rowindex="${row + 1}"] [role="gridcell"]`).nth(col).innerText();

  it('creates, publishes, shows customer-a its own figures; a new draft only after the second publish; a restore brings version 1 back', async () => {
    const deploymentId = stack.svc.refs.prod!;
    const created = await api('POST', `/api/v1/deployments/${deploymentId}/dashboards`, { ...draftFor('2025'), publicId: 'made-by-api' });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect((await api('POST', '/api/v1/dashboards/made-by-api/publish')).status).toBe(200);

    let frame = await open('made-by-api');
    await expect.poll(() => kpi(frame), { timeout: 15_000 }).toBe(money(revenueIn('2025')));
    // The other tenants' orders are not in it: customer-a's revenue is a part of the whole.
    expect(revenueIn('2025')).toBeLessThan(demoRows().orders.filter((o) => o.created_at.startsWith('2025')).reduce((sum, o) => sum + o.amount, 0));
    expect(await cell(frame, 1, 1)).toBe(money(revenueIn('2025-01')));
    expect(await cell(frame, 12, 1)).toBe(money(revenueIn('2025-12')));

    const read = await api('GET', '/api/v1/dashboards/made-by-api');
    const drafted = await api('PUT', '/api/v1/dashboards/made-by-api/draft', draftFor('2024'), { 'if-match': read.etag! });
    expect(drafted.status, JSON.stringify(drafted.json)).toBe(200);
    frame = await open('made-by-api');
    await expect.poll(() => kpi(frame), { timeout: 15_000 }).toBe(money(revenueIn('2025')));

    expect((await api('POST', '/api/v1/dashboards/made-by-api/publish')).status).toBe(200);
    frame = await open('made-by-api');
    await expect.poll(() => kpi(frame), { timeout: 15_000 }).toBe(money(revenueIn('2024')));
    expect(await cell(frame, 1, 1)).toBe(money(revenueIn('2024-01')));

    expect((await api('POST', '/api/v1/dashboards/made-by-api/versions/1/restore')).status).toBe(200);
    expect((await api('POST', '/api/v1/dashboards/made-by-api/publish')).json).toMatchObject({ published: { versionNumber: 3, title: 'Revenue 2025' } });
    frame = await open('made-by-api');
    await expect.poll(() => kpi(frame), { timeout: 15_000 }).toBe(money(revenueIn('2025')));
  });
});
