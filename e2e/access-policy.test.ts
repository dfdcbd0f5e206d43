import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import readXlsxFile from 'read-excel-file/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_SEMANTIC_VIEWS } from '../apps/server/src/data/warehouse/warehouse.demo.js';
import type { ImportAccount } from '../apps/server/src/import/import.js';
import { demoRows } from '../apps/server/test/warehouse.js';
import { hasChromium } from './browser.js';
import { e2eAccount, exportMenu, hostEvents, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack, waitForHostEvent } from './embed-harness.js';

// Issue 20: a widget built on a member an access policy hides shows the viewer a calm "not available to you" state,
// not an error; the rest of the dashboard works, and a viewer the policy lets through sees the numbers.

const HOST_PAGE = hostPageHtml({ embedStyle: 'width:1640px;height:1000px' });

const HIDDEN = ['amount', 'revenue', 'average_order_value', 'smallest_order', 'largest_order'];

/** The demo views, the orders view guarded: every viewer but group finance loses its money members. */
function guardedViews(): unknown[] {
  const views = structuredClone(DEMO_SEMANTIC_VIEWS);
  const orders = views.find((view) => view.name === 'orders')!;
  orders.accessPolicy = [{ group: '*', memberLevel: { excludes: HIDDEN } }, { group: 'finance' }];
  return views;
}

const chart = (id: string, snapshotIndex: number, position: { x: number; y: number; w: number; h: number }) => ({ id, type: 'CHART', position, config: { snapshotIndex } });
const YEAR_2025 = [{ dimension: 'orders.created_at', dateRange: ['2025-01-01', '2025-12-31'] }];

/** One dashboard over the guarded views: two controls, two KPIs, raw SQL, a table and a bar chart. */
function policyItems(): unknown[] {
  const reports = ['rp-revenue', 'rp-orders', 'rp-sql', 'rp-status', 'rp-category'];
  return [
    { ref: 'wb-policy', type: 'WORKBOOK', name: 'Policies', createdBy: 'alice',
      dashboard: { publicId: 'policy-e2e', status: 'published', allowEmbed: true, title: 'Sales under policies',
        config: { kind: 'CLASSIC', layout: { rowHeight: 40, cols: { lg: 12 } }, widgets: [
          { id: 'f-status', type: 'FILTER', position: { x: 0, y: 0, w: 4, h: 2 }, config: { title: 'Status', member: 'orders.status' } },
          { id: 'f-amount', type: 'FILTER', position: { x: 4, y: 0, w: 4, h: 2 }, config: { title: 'Order amount', member: 'orders.amount' } },
          chart('kpi-revenue', 0, { x: 0, y: 2, w: 4, h: 3 }),
          chart('kpi-orders', 1, { x: 4, y: 2, w: 4, h: 3 }),
          chart('raw-sql', 2, { x: 8, y: 2, w: 4, h: 6 }),
          chart('by-status', 3, { x: 0, y: 5, w: 8, h: 6 }),
          chart('by-category', 4, { x: 0, y: 11, w: 12, h: 6 }),
        ] },
        reportSnapshots: [
          { report: 'rp-revenue', title: 'Revenue 2025', kind: 'kpi', meta: { query: { measures: ['orders.revenue'], timeDimensions: YEAR_2025 } } },
          { report: 'rp-orders', title: 'Orders 2025', kind: 'kpi', meta: { query: { measures: ['orders.count'], timeDimensions: YEAR_2025 } } },
          { report: 'rp-sql', title: 'Orders by status (SQL)', kind: 'table', sqlQuery: 'SELECT status, COUNT(*) AS orders FROM orders GROUP BY status ORDER BY status' },
          { report: 'rp-status', title: 'Orders by status', kind: 'table', meta: { query: { measures: ['orders.count'], dimensions: ['orders.status'] } } },
          { report: 'rp-category', title: 'Orders by category', kind: 'vega', meta: { query: { measures: ['orders.count'], dimensions: ['products.category'] } } },
        ] } },
    { ref: 'f-policy', type: 'FOLDER', name: 'Policy reports', createdBy: 'alice',
      children: reports.map((ref) => ({ ref, type: 'REPORT', name: ref, createdBy: 'alice' })) },
  ];
}

function policyAccount(hostOrigin: string): ImportAccount {
  const account = e2eAccount([hostOrigin], {
    items: policyItems(),
    viewers: [{ ref: 'fiona', externalId: 'fiona-1', username: 'fiona', email: 'fiona@a.test', firstName: 'Fiona' }],
  });
  (account.deployments![0] as { semanticViews?: unknown[] }).semanticViews = guardedViews();
  return account;
}

const suite = hasChromium ? describe : describe.skip;

suite('access policies in Chromium: a widget on a hidden member', () => {
  // `?viewer=finance` mints for an embed user in group finance; without it, for one in no group.
  const stack = setUpEmbedStack({
    page: HOST_PAGE,
    account: (host) => policyAccount(host.origin),
    mint: (svc, query) => svc.mint(query.get('viewer') === 'finance' ? { externalId: 'fiona-1', groups: ['finance'] } : { externalId: 'ann-1', groups: [] }),
    browser: { timeout: 10_000 },
  });
  // SVC_E2E_SHOTS=<dir> keeps the screenshots there; else they go to a temporary directory, removed at the end.
  const shots = process.env.SVC_E2E_SHOTS ?? mkdtempSync(join(tmpdir(), 'svc-access-policy-'));
  const { orders } = demoRows();
  const orders2025 = orders.filter((o) => o.created_at.startsWith('2025'));

  beforeAll(() => {
    mkdirSync(shots, { recursive: true });
  });

  afterAll(() => {
    if (process.env.SVC_E2E_SHOTS === undefined) rmSync(shots, { recursive: true, force: true });
  });

  /** Embeds policy-e2e with exports allowed, every event in window.events; resolves at dashboard-loaded. */
  async function mount(viewer: 'plain' | 'finance', extra: Record<string, unknown> = {}): Promise<{ page: Page; frame: Frame }> {
    const page = await openHostPage(stack.browser.context, `${stack.host.origin}/${viewer === 'finance' ? '?viewer=finance' : ''}`);
    const frame = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'dashboard', publicId: 'policy-e2e', allowExport: true, ...extra }, { record: ['ready', 'dashboard-loaded', 'download', 'drilldown', 'error'] });
    await waitForHostEvent(page, 'dashboard-loaded');
    return { page, frame };
  }

  const widget = (frame: Frame, id: string) => frame.locator(`[data-widget-id="${id}"]`);
  const money = (value: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0, minimumFractionDigits: 0 }).format(value);

  it('shows a viewer outside finance "not available" on the hidden widgets, with no error, no export and no server text; the rest renders', async () => {
    const { page, frame } = await mount('plain');
    const loaded = (await hostEvents(page)).find(([n]) => n === 'dashboard-loaded')![1] as { widgetCount: number };
    expect(loaded.widgetCount).toBe(7);
    // A permission is no failure: the host hears no error.
    expect((await hostEvents(page)).filter(([n]) => n === 'error')).toEqual([]);

    // The export menus load lazily: once a widget with data shows its own, a locked one would have too.
    await expect.poll(() => exportMenu(frame, 'by-status').locator('button[data-format]').count()).toBe(4);
    for (const id of ['kpi-revenue', 'raw-sql']) {
      const locked = widget(frame, id);
      expect(await locked.getAttribute('data-state')).toBe('forbidden');
      expect(await locked.locator('[data-testid="not-available"]').innerText()).toBe('This widget is not available to you.');
      expect(await locked.locator('[data-testid="not-available"] svg.lock').count()).toBe(1);
      // Not the error state, and nothing of the server's message (which names the member and the policy).
      expect(await locked.locator('[role="alert"], .widget-error').count()).toBe(0);
      expect(await locked.innerText()).not.toMatch(/orders\.|polic|403|forbidden/i);
      // Nothing to export.
      expect(await locked.locator('button.export-trigger').count()).toBe(0);
      expect(await exportMenu(frame, id).locator('button[data-format]').count()).toBe(0);
    }
    const amount = widget(frame, 'f-amount');
    expect(await amount.locator('[data-testid="not-available"]').innerText()).toBe('This filter is not available to you.');
    expect(await amount.getAttribute('data-state')).toBe('forbidden');
    expect(await amount.locator('select').count()).toBe(0);
    expect(await amount.locator('[role="alert"]').count()).toBe(0);

    // The rest of the dashboard works: numbers, a table, a chart, a filter.
    expect(await widget(frame, 'kpi-orders').locator('.kpi-value').innerText()).toBe(new Intl.NumberFormat('en-US').format(orders2025.length));
    expect(await widget(frame, 'by-status').locator('[role="row"]').count()).toBe(6);
    await expect.poll(() => widget(frame, 'by-category').locator('svg .mark-rect.role-mark path').count()).toBe(6);
    expect(await widget(frame, 'f-status').locator('select').isDisabled()).toBe(false);
    expect(await widget(frame, 'f-status').locator('option').count()).toBe(6);

    // The dashboard's workbook has a sheet for each widget with data, none for the hidden ones.
    const [download] = await Promise.all([page.waitForEvent('download'), frame.locator('.dashboard-exports button[data-format="xlsx"]').click()]);
    const sheets = await readXlsxFile(readFileSync((await download.path())!));
    expect(sheets.map((s) => s.sheet).sort()).toEqual(['Orders 2025', 'Orders by category', 'Orders by status']);

    // A filter still narrows what the viewer may see, and the hidden widgets stay calm.
    await widget(frame, 'f-status').locator('select').selectOption({ label: 'returned' });
    const returned = orders2025.filter((o) => o.status === 'returned').length;
    await expect.poll(() => widget(frame, 'kpi-orders').locator('.kpi-value').innerText(), { timeout: 10_000 }).toBe(new Intl.NumberFormat('en-US').format(returned));
    expect(await widget(frame, 'kpi-revenue').getAttribute('data-state')).toBe('forbidden');
    expect((await hostEvents(page)).filter(([n]) => n === 'error')).toEqual([]);

    // A drill-down lists the rows behind a bar, without the hidden column.
    await widget(frame, 'by-category').locator('svg .mark-rect.role-mark path').first().click();
    const dialog = frame.locator('[role="dialog"]');
    await dialog.locator('[data-testid="drill-count"]').waitFor();
    const headers = await dialog.locator('thead th').allInnerTexts();
    expect(headers).toContain('Status');
    expect(headers).not.toContain('Amount');
    await dialog.getByRole('button', { name: 'Back to the dashboard' }).click();

    await widget(frame, 'f-status').locator('select').selectOption({ label: 'All' });
    await expect.poll(() => widget(frame, 'kpi-orders').locator('.kpi-value').innerText(), { timeout: 10_000 }).toBe(new Intl.NumberFormat('en-US').format(orders2025.length));
    await page.screenshot({ path: join(shots, 'access-policy-plain.png'), fullPage: true });
    await page.close();
  });

  it("says it in the viewer's language", async () => {
    const { page, frame } = await mount('plain', { locale: 'de-DE' });
    expect(await widget(frame, 'kpi-revenue').locator('[data-testid="not-available"]').innerText()).toBe('Dieses Element ist für Sie nicht verfügbar.');
    expect(await widget(frame, 'f-amount').locator('[data-testid="not-available"]').innerText()).toBe('Dieser Filter ist für Sie nicht verfügbar.');
    await page.close();
  });

  it('shows a viewer in group finance the same widgets with their numbers', async () => {
    const { page, frame } = await mount('finance');
    expect((await hostEvents(page)).filter(([n]) => n === 'error')).toEqual([]);
    expect(await frame.locator('[data-testid="not-available"]').count()).toBe(0);
    expect(await widget(frame, 'kpi-revenue').getAttribute('data-state')).toBe('ready');
    expect(await widget(frame, 'kpi-revenue').locator('.kpi-value').innerText()).toBe(money(orders2025.reduce((sum, o) => sum + o.amount, 0)));
    await expect.poll(() => exportMenu(frame, 'kpi-revenue').locator('button[data-format]').count()).toBe(4);
    // Raw SQL runs for a viewer no policy restricts.
    expect(await widget(frame, 'raw-sql').locator('[role="row"]').count()).toBe(6);
    expect(await widget(frame, 'f-amount').locator('select').isDisabled()).toBe(false);
    expect(await widget(frame, 'f-amount').locator('option').count()).toBeGreaterThan(10);
    await widget(frame, 'by-category').locator('svg .mark-rect.role-mark path').first().click();
    const dialog = frame.locator('[role="dialog"]');
    await dialog.locator('[data-testid="drill-count"]').waitFor();
    expect(await dialog.locator('thead th').allInnerTexts()).toContain('Amount');
    await dialog.getByRole('button', { name: 'Back to the dashboard' }).click();
    await page.screenshot({ path: join(shots, 'access-policy-finance.png'), fullPage: true });
    await page.close();
  });
});
