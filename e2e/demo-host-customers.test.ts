import { readFileSync } from 'node:fs';
import Papa from 'papaparse';
import type { FrameLocator, Page } from 'playwright-core';
import { readSheet } from 'read-excel-file/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SEMANTIC_VIEWS } from '../apps/server/src/data/warehouse/warehouse.demo.js';
import type { DemoOrder } from '../apps/server/src/data/warehouse/warehouse.demo.js';
import { demoRows } from '../apps/server/test/warehouse.js';
import { hasChromium, launchChromium } from './browser.js';
import type { Chromium } from './browser.js';
import { closeAll, DEMO_ADMIN_KEY, exportItem, readDemoAccount, startDemoStack } from './embed-harness.js';
import type { DemoStack, RunningSvc } from './embed-harness.js';

// Issue 20, "the demo shows it": the demo account of apps/server/demo/demo.json (as `npm start` loads it) behind the
// demo host, whose switch signs in a viewer of customer-a or of customer-b. The access policy on `orders` keeps each
// to the orders of its own account (`orders.tenant`, from securityContext.tenant); staff of the Analysts group read
// every row.


const TENANTS = ['customer-a', 'customer-b'] as const;
type Tenant = (typeof TENANTS)[number];
const LABELS: Record<Tenant, string> = { 'customer-a': 'Customer A · Ann', 'customer-b': 'Customer B · Ben' };

/**
 * The KPI figures of `sales-performance` (2025, UTC, en-US) for each viewer, written out; the first test checks
 * them against the generator's rows, so a change of the generator shows here first.
 */
const KPIS: Record<Tenant | 'everyone', { revenue: string; orders: string }> = {
  'customer-a': { revenue: '$1,765,608', orders: '5,842' },
  'customer-b': { revenue: '$1,710,103', orders: '5,795' },
  everyone: { revenue: '$17,186,099', orders: '57,883' },
};

const { orders, customers, ordersOf } = demoRows();
const in2025 = (o: DemoOrder) => o.created_at.startsWith('2025');
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const money = (value: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0, minimumFractionDigits: 0 }).format(value);
const count = (value: number) => new Intl.NumberFormat('en-US').format(value);
const kpisOf = (rows: DemoOrder[]) => ({ revenue: money(sum(rows.filter(in2025).map((o) => o.amount))), orders: count(rows.filter(in2025).length) });
const nameOf = new Map(customers.map((c) => [c.id, c.name]));

/** The "Top customers" table of one account, from the generator: customer name -> orders (every order, no date range). */
function topCustomersOf(tenant: Tenant): Map<string, { orders: number; revenue: number }> {
  const out = new Map<string, { orders: number; revenue: number }>();
  for (const order of ordersOf(tenant)) {
    const name = nameOf.get(order.customer_id)!;
    const entry = out.get(name) ?? { orders: 0, revenue: 0 };
    entry.orders += 1;
    entry.revenue += order.amount;
    out.set(name, entry);
  }
  return out;
}

/** The "Orders by status" table of one account: status -> orders. */
function statusCountsOf(tenant: Tenant): Map<string, number> {
  const out = new Map<string, number>();
  for (const order of ordersOf(tenant)) out.set(order.status, (out.get(order.status) ?? 0) + 1);
  return out;
}

describe('the demo data: ten customer accounts, and the demo deployment filters orders by them', () => {
  it('gives every order the account of its customer, some orders to each of the ten, and the KPIs written above', () => {
    const tenants = new Set(orders.map((o) => o.tenant));
    expect([...tenants].sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map((x) => `customer-${x}`));
    for (const tenant of tenants) expect(ordersOf(tenant).length).toBeGreaterThan(5_000);
    expect(orders.every((o) => o.tenant === `customer-${'abcdefghij'[(o.customer_id - 1) % 10]}`)).toBe(true);
    expect(kpisOf(ordersOf('customer-a'))).toEqual(KPIS['customer-a']);
    expect(kpisOf(ordersOf('customer-b'))).toEqual(KPIS['customer-b']);
    expect(kpisOf(orders)).toEqual(KPIS.everyone);
  });

  it("declares the demo's semantic views with one row-level policy on orders: each customer its own tenant, Analysts every row", () => {
    const views = readDemoAccount().deployments![0]!.semanticViews as Array<{ name: string; accessPolicy?: unknown }>;
    const withoutPolicies = views.map(({ accessPolicy: _, ...view }) => view);
    expect(withoutPolicies).toEqual(DEMO_SEMANTIC_VIEWS);
    expect(views.filter((v) => v.accessPolicy !== undefined).map((v) => v.name)).toEqual(['orders']);
    expect(views.find((v) => v.name === 'orders')!.accessPolicy).toEqual([
      { group: '*', rowLevel: { filters: [{ member: 'orders.tenant', operator: 'equals', values: ['{securityContext.tenant}'] }] } },
      { group: 'Analysts', rowLevel: { allowAll: true } },
    ]);
  });
});

describe('the demo host switches between two customers, each reading only its own rows', () => {
  let demo: DemoStack;
  let svc: RunningSvc;
  let hostOrigin: string;
  let browser: Chromium | undefined;

  beforeAll(async () => {
    demo = await startDemoStack();
    ({ svc, hostOrigin } = demo);
    if (hasChromium) browser = await launchChromium({ timeout: 20_000 });
  }, 60_000);

  afterAll(() => closeAll(browser, demo));

  /** POSTs to the demo host's backend (no Origin header: as curl would). */
  const hostPost = (path: string, body?: unknown) => fetch(`${hostOrigin}${path}`, {
    method: 'POST',
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });

  /** The embed token of a session the demo host minted for one customer. */
  async function tokenOf(tenant: Tenant | undefined): Promise<string> {
    const minted = await hostPost('/api/svc-session', tenant === undefined ? undefined : { customer: tenant });
    expect(minted.status).toBe(200);
    const { sessionId } = (await minted.json()) as { sessionId: string };
    const exchanged = await fetch(`${svc.origin}/api/v1/embed/session/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId }) });
    expect(exchanged.status).toBe(200);
    return ((await exchanged.json()) as { token: string }).token;
  }

  /** One widget's data as `authorization` reads it, each row keyed by its columns' names (a period comparison's have suffixes). */
  async function widgetRows(authorization: string, widgetId: string): Promise<{ status: number; rows: Array<Record<string, unknown>> }> {
    const response = await fetch(`${svc.origin}/api/v1/embed/dashboard/sales-performance/widgets/${widgetId}/data`, {
      method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify({ timezone: 'UTC' }),
    });
    const body = (await response.json()) as { columns?: Array<{ name: string }>; rows?: unknown[][] };
    const names = (body.columns ?? []).map((column) => column.name);
    return { status: response.status, rows: (body.rows ?? []).map((row) => Object.fromEntries(names.map((name, i) => [name, row[i]]))) };
  }

  it("mints each customer's session with its tenant: the widget data holds that account's orders, and only this dashboard opens", async () => {
    const expected: Record<Tenant, number> = { 'customer-a': 5_842, 'customer-b': 5_795 };
    for (const tenant of TENANTS) {
      const token = await tokenOf(tenant);
      const kpi = await widgetRows(`Embed-Token ${token}`, 'kpi-orders');
      expect(kpi.status).toBe(200);
      expect(Number(kpi.rows[0]!['orders.count'])).toBe(expected[tenant]);
      expect(expected[tenant]).toBe(ordersOf(tenant).filter(in2025).length);
      // The session names sales-performance only (Generate Session's `dashboards`): another embeddable dashboard of
      // the deployment is not opened with it.
      const other = await fetch(`${svc.origin}/api/v1/embed/dashboard/company-overview`, { headers: { authorization: `Embed-Token ${token}` } });
      expect(other.status).toBe(403);
      expect(((await other.json()) as { error: { field: string } }).error.field).toBe('publicId');
    }
    // No body: the first customer, as before the switch existed.
    expect(Number((await widgetRows(`Embed-Token ${await tokenOf(undefined)}`, 'kpi-orders')).rows[0]!['orders.count'])).toBe(expected['customer-a']);
  });

  it('refuses a customer it does not know (400), and never sends the API key to the browser', async () => {
    const unknown = await hostPost('/api/svc-session', { customer: 'customer-c' });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain('customer-a, customer-b');
    expect((await hostPost('/api/svc-session', { customer: 42 })).status).toBe(400);
    for (const path of ['/', '/app.js', '/sdk.js']) {
      const text = await (await fetch(`${hostOrigin}${path}`)).text();
      expect(text).not.toContain(DEMO_ADMIN_KEY);
      expect(text).not.toContain('svc_demo_');
    }
  });

  it("reads every order for alice, whose group Analysts has allowAll (staff read through a policy too)", async () => {
    const alice = await widgetRows(`Bearer ${DEMO_ADMIN_KEY}`, 'kpi-orders');
    expect(alice.status).toBe(200);
    expect(Number(alice.rows[0]!['orders.count'])).toBe(57_883);
    expect(57_883).toBe(orders.filter(in2025).length);
  });

  // ---- in Chromium ----

  const embedFrame = (page: Page): FrameLocator => page.frameLocator('#embed iframe');
  const kpi = (page: Page, id: string) => embedFrame(page).locator(`[data-widget-id="${id}"] .kpi-value`).innerText();

  async function switchTo(page: Page, tenant: Tenant): Promise<void> {
    await page.getByRole('button', { name: LABELS[tenant] }).click();
    await expect.poll(() => page.getByRole('button', { name: LABELS[tenant] }).getAttribute('aria-pressed')).toBe('true');
  }

  /** Waits until the embed shows `tenant`'s KPIs (both differ between the customers, so a stale embed never passes). */
  async function expectKpisOf(page: Page, tenant: Tenant): Promise<void> {
    await expect.poll(() => kpi(page, 'kpi-revenue'), { timeout: 30_000 }).toBe(KPIS[tenant].revenue);
    await expect.poll(() => kpi(page, 'kpi-orders'), { timeout: 10_000 }).toBe(KPIS[tenant].orders);
  }

  /** Exports one widget of the embed; the file's cells as strings (CSV: papaparse; XLSX: read-excel-file). */
  async function exportWidget(page: Page, widgetId: string, format: 'csv' | 'xlsx'): Promise<string[][]> {
    const button = await exportItem(embedFrame(page), widgetId, format);
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    const bytes = readFileSync((await download.path())!);
    if (format === 'csv') return Papa.parse<string[]>(bytes.toString('utf8').replace(/^\ufeff/, ''), { skipEmptyLines: true }).data;
    return (await readSheet(bytes)).map((row) => row.map((cell) => (cell === null ? '' : String(cell))));
  }

  it.skipIf(!hasChromium)('shows different KPI figures for the two customers, each its own account\'s, and switches back and forth', async () => {
    expect(KPIS['customer-a']).not.toEqual(KPIS['customer-b']);
    const page = await browser!.context.newPage();
    await page.goto(`${hostOrigin}/`);
    await expectKpisOf(page, 'customer-a');
    expect(await page.locator('#viewer-name').innerText()).toBe('Ann');
    expect(await page.locator('#viewer-tenant').innerText()).toBe('customer-a');

    await switchTo(page, 'customer-b');
    await expectKpisOf(page, 'customer-b');
    expect(await page.locator('#viewer-name').innerText()).toBe('Ben');
    expect(await page.locator('#viewer-id').innerText()).toBe('ben-1');
    expect(await page.getByRole('button', { name: LABELS['customer-a'] }).getAttribute('aria-pressed')).toBe('false');
    expect(new URL(page.url()).searchParams.get('customer')).toBe('customer-b');
    const log = await page.locator('#log').innerText();
    expect(log).toContain('switch customer: Customer B (Ben, tenant customer-b)');
    // One embed at a time: the switch replaced the iframe.
    expect(await page.locator('#embed iframe').count()).toBe(1);

    // A reload keeps the customer (?customer=customer-b); switching back shows customer-a's figures again.
    await page.reload();
    await expectKpisOf(page, 'customer-b');
    await switchTo(page, 'customer-a');
    await expectKpisOf(page, 'customer-a');
    await page.close();
  });

  it.skipIf(!hasChromium)("exports CSV and XLSX with each customer's own rows only, and none of the other's", async () => {
    const page = await browser!.context.newPage();
    await page.goto(`${hostOrigin}/`);
    for (const tenant of TENANTS) {
      if (tenant !== 'customer-a') await switchTo(page, tenant);
      await expectKpisOf(page, tenant);
      const other: Tenant = tenant === 'customer-a' ? 'customer-b' : 'customer-a';
      const mine = topCustomersOf(tenant);
      const theirs = new Set(topCustomersOf(other).keys());
      // Each account has some two hundred customers: the table's limit of 500 leaves every one in the file.
      expect(mine.size).toBeGreaterThan(150);
      expect(mine.size).toBeLessThan(500);
      const statuses = statusCountsOf(tenant);

      for (const format of ['csv', 'xlsx'] as const) {
        const [header, ...rows] = await exportWidget(page, 'top-customers', format);
        expect(header).toEqual(['Name', 'City', 'Revenue', 'Orders']);
        expect(rows.map((row) => row[0]).sort()).toEqual([...mine.keys()].sort());
        for (const [name, , revenue, ordered] of rows) {
          expect(Number(ordered), `${format} ${tenant} ${name}`).toBe(mine.get(name!)!.orders);
          expect(Number(revenue)).toBeCloseTo(mine.get(name!)!.revenue, 2);
        }
        // The other customer's marker (its customers' names) is in no cell of the file.
        expect(rows.flat().filter((cell) => theirs.has(cell))).toEqual([]);

        const [statusHeader, ...statusRows] = await exportWidget(page, 'by-status', format);
        expect(statusHeader).toEqual(['Status', 'Orders', 'Revenue']);
        expect(new Map(statusRows.map(([status, n]) => [status!, Number(n)]))).toEqual(statuses);
        expect(sum(statusRows.map(([, n]) => Number(n)))).toBe(ordersOf(tenant).length);
      }
    }
    await page.close();
  });
});
