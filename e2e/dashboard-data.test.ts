import { mkdirSync, readFileSync } from 'node:fs';
import Papa from 'papaparse';
import type { Download, Frame, Page } from 'playwright-core';
import { readSheet } from 'read-excel-file/node';
import { beforeAll, describe, expect, it } from 'vitest';
import { demoRows } from '../apps/server/test/warehouse.js';
import { hasChromium } from './browser.js';
import { demoDashboardItems, e2eAccount, exportItem, exportMenu, hostEvents, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack, waitForHostEvent } from './embed-harness.js';
import type { HostWindow } from './embed-harness.js';

const HOST_PAGE = hostPageHtml({ embedStyle: 'width:1300px;height:2300px' });

const ARTIFACTS = 'e2e/artifacts';

/**
 * A copy of it whose revenue-by-category widget asks for a member no view declares, and whose top-customers widget
 * has a report snapshot with no query at all (as the demo's q1-review once had).
 */
function brokenItems(): unknown[] {
  const [workbook, folder] = structuredClone(demoDashboardItems()) as Array<Record<string, unknown>>;
  const dashboard = workbook!.dashboard as { publicId: string; reportSnapshots: Array<{ report: string; meta: { query?: { measures: string[] } } }> };
  dashboard.publicId = 'sales-broken';
  dashboard.reportSnapshots[3]!.meta.query!.measures = ['orders.profit'];
  dashboard.reportSnapshots[4]!.meta = {};
  for (const snapshot of dashboard.reportSnapshots) snapshot.report = `${snapshot.report}-b`;
  const reports = (folder!.children as Array<{ ref: string }>).map((report) => ({ ...report, ref: `${report.ref}-b` }));
  return [{ ...workbook, ref: 'wb-broken' }, { ...folder, ref: 'f-broken', name: 'Broken reports', children: reports }];
}

const suite = hasChromium ? describe : describe.skip;

suite('dashboards with real data in Chromium', () => {
  const stack = setUpEmbedStack({ page: HOST_PAGE, account: (host) => e2eAccount([host.origin], { items: [...demoDashboardItems(), ...brokenItems()] }), browser: { timeout: 10_000 } });
  const { orders, products, customers } = demoRows();

  beforeAll(() => {
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  /** Embeds a dashboard with exports allowed; every event lands in window.events. Resolves at dashboard-loaded. */
  async function mount(publicId = 'sales-performance', extra: Record<string, unknown> = {}, before?: (page: Page) => void): Promise<{ page: Page; frame: Frame }> {
    const page = await openHostPage(stack.browser.context, `${stack.host.origin}/`);
    before?.(page);
    const frame = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'dashboard', publicId, allowExport: true, ...extra }, { record: ['ready', 'view', 'navigate', 'dashboard-loaded', 'download', 'drilldown', 'error'] });
    await waitForHostEvent(page, 'dashboard-loaded');
    return { page, frame };
  }

  const kpi = (frame: Frame, id: string) => frame.locator(`[data-widget-id="${id}"] .kpi-value`).innerText();
  const money = (value: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0, minimumFractionDigits: 0 }).format(value);
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const categoryOf = new Map(products.map((p) => [p.id, p.category]));

  it('renders every widget type with its data, then reports dashboard-loaded', async () => {
    const { page, frame } = await mount();
    const loaded = (await hostEvents(page)).find(([n]) => n === 'dashboard-loaded')![1] as { widgetCount: number; loadDurationMs: number; publicId: string };
    expect(loaded).toMatchObject({ publicId: 'sales-performance', widgetCount: 19 });
    expect(loaded.loadDurationMs).toBeGreaterThan(0);
    const types = await frame.locator('[data-widget-type]').evaluateAll((nodes) => [...new Set(nodes.map((n) => (n as HTMLElement).dataset.widgetType))].sort());
    expect(types).toEqual(['AI', 'CHART', 'CONTAINER', 'DIVIDER', 'FIELD', 'FILTER', 'SPACER', 'TEXT', 'TIME_GRAIN']);
    // Every chart kind drew its data.
    expect(await kpi(frame, 'kpi-revenue')).toBe(money(sum(orders.filter((o) => o.created_at.startsWith('2025')).map((o) => o.amount))));
    expect(await kpi(frame, 'kpi-orders')).toBe(new Intl.NumberFormat('en-US').format(orders.filter((o) => o.created_at.startsWith('2025')).length));
    expect(await frame.locator('[data-widget-id="kpi-revenue"] [data-testid="kpi-change"]').innerText()).toMatch(/%/);
    await expect.poll(() => frame.locator('[data-widget-id="trend"] svg .mark-symbol.role-mark path').count()).toBe(24);
    expect(await frame.locator('[data-widget-id="by-category"] svg .mark-rect.role-mark path').count()).toBe(6);
    expect(await frame.locator('[data-widget-id="top-customers"] [role="row"]').count()).toBeGreaterThan(5);
    // Virtual scrolling: 500 rows, far fewer in the DOM.
    expect(await frame.locator('[data-widget-id="top-customers"] [role="grid"]').getAttribute('aria-rowcount')).toBe('501');
    expect(await frame.locator('[data-widget-id="top-customers"] [role="row"]').count()).toBeLessThan(60);
    expect(await frame.locator('[data-widget-id="map"] svg .mark-symbol.role-mark path').count()).toBe(new Set(customers.map((c) => c.city)).size);
    expect(await frame.locator('[data-widget-id="flows"] path.sankey-link').count()).toBe(24);
    const html = frame.locator('[data-widget-id="average"] iframe');
    expect(await html.getAttribute('sandbox')).toBe('');
    expect(await html.getAttribute('srcdoc')).toMatch(/\$\d+\.\d\d/);
    expect(await frame.locator('[data-widget-id="returns"] svg .mark-symbol.role-mark path').count()).toBe(31);
    expect(await frame.locator('[data-widget-id="by-status"] [role="row"]').count()).toBe(6);
    // Markdown is sanitised: the bold shows, the script does not exist.
    expect(await frame.locator('[data-widget-id="intro"] strong').first().innerText()).toBe('Sales performance');
    expect(await frame.locator('[data-widget-id="intro"] script').count()).toBe(0);
    expect(await frame.locator('[data-widget-id="f-category"] option').allInnerTexts()).toEqual(['All', 'Books', 'Electronics', 'Garden', 'Home', 'Sports', 'Toys']);
    expect((await hostEvents(page)).filter(([n]) => n === 'error')).toEqual([]);
    await page.screenshot({ path: `${ARTIFACTS}/data-dashboard-light.png`, fullPage: true });
    await page.evaluate(() => (window as unknown as HostWindow).handle.setColorScheme('dark'));
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('dark');
    await page.waitForTimeout(500);
    await page.screenshot({ path: `${ARTIFACTS}/data-dashboard-dark.png`, fullPage: true });
    await page.close();
  });

  it('formats currency one way on KPIs, tables and chart axes in every locale: US$ in en-GB, a trailing $ in de-DE', async () => {
    const { page, frame } = await mount('sales-performance', { locale: 'en-GB' });
    // The y axes of revenue: the default line chart's and the author's own "$,.2s" on the bars.
    const axisLabels = async (id: string) => (await frame.locator(`[data-widget-id="${id}"] svg .role-axis-label text`).allTextContents()).filter((text) => /\d/.test(text) && !/^\D{3} \d{4}$|^\d{4}$/.test(text));
    const revenue = sum(orders.filter((o) => o.created_at.startsWith('2025')).map((o) => o.amount));
    expect(await kpi(frame, 'kpi-revenue')).toBe(new Intl.NumberFormat('en-GB', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 }).format(revenue));
    expect(await kpi(frame, 'kpi-revenue')).toMatch(/^US\$/);
    for (const id of ['trend', 'by-category']) {
      const labels = await axisLabels(id);
      expect(labels.length, id).toBeGreaterThan(2);
      // Before: "$400,000" and "$1.8M" beside the KPI's "US$1,765,608".
      for (const label of labels) expect(label, id).toMatch(/^US\$\d/);
    }
    expect(await frame.locator('[data-widget-id="top-customers"] [role="row"]').nth(1).innerText()).toMatch(/US\$/);
    // A point's tooltip too.
    await frame.locator('[data-widget-id="trend"] svg .mark-symbol.role-mark path').nth(3).hover({ force: true });
    await expect.poll(() => frame.locator('#vg-tooltip-element.visible').innerText()).toMatch(/US\$\d{1,3}(,\d{3})+\b/);

    await page.evaluate(() => (window as unknown as HostWindow).handle.setLocale('de-DE'));
    await expect.poll(() => kpi(frame, 'kpi-revenue')).toBe(new Intl.NumberFormat('de-DE', { style: 'currency', currency: 'USD', maximumFractionDigits: 0 }).format(revenue));
    await expect.poll(async () => (await axisLabels('trend')).every((label) => /^[\d.]+\u00a0\$$/.test(label))).toBe(true);
    await expect.poll(async () => (await axisLabels('by-category')).every((label) => /^[\d,]+\s?[kMG]?\u00a0\$$/.test(label))).toBe(true);
    await page.close();
  });

  it('filters change the numbers: a FILTER control and set-filter share one state', async () => {
    const { page, frame } = await mount();
    const books = orders.filter((o) => o.created_at.startsWith('2025') && categoryOf.get(o.product_id) === 'Books');
    await frame.locator('[data-widget-id="f-category"] select').selectOption({ label: 'Books' });
    await expect.poll(() => kpi(frame, 'kpi-revenue'), { timeout: 10_000 }).toBe(money(sum(books.map((o) => o.amount))));
    expect(await frame.locator('[data-filter="products.category"]').innerText()).toContain('Books');
    // The host's set-filter lands in the same state: the control shows it, and the numbers follow.
    await page.evaluate(() => (window as unknown as HostWindow).handle.setFilter('products', 'category', 'Toys'));
    const toys = orders.filter((o) => o.created_at.startsWith('2025') && categoryOf.get(o.product_id) === 'Toys');
    await expect.poll(() => kpi(frame, 'kpi-revenue'), { timeout: 10_000 }).toBe(money(sum(toys.map((o) => o.amount))));
    expect(await frame.locator('[data-widget-id="f-category"] select').inputValue()).toBe('"Toys"');
    // A filter no row matches: each widget shows its empty state; the dashboard stays.
    await page.evaluate(() => (window as unknown as HostWindow).handle.setFilter('products', 'category', 'Nothing'));
    await expect.poll(() => frame.locator('[data-widget-id="by-category"] .widget-empty').count(), { timeout: 10_000 }).toBe(1);
    expect(await frame.locator('[data-widget-id="by-category"] .widget-empty').innerText()).toBe('No data for these filters.');
    await expect.poll(() => kpi(frame, 'kpi-revenue'), { timeout: 10_000 }).toBe('–');
    await page.evaluate(() => (window as unknown as HostWindow).handle.setFilter('products', 'category', null));
    await expect.poll(() => frame.locator('[data-filter="products.category"]').count(), { timeout: 10_000 }).toBe(0);
    await page.close();
  });

  it('set-timezone re-runs time-bucketed queries in that zone', async () => {
    const { page, frame } = await mount();
    const count2025 = (timeZone: string) => {
      const year = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric' });
      return orders.filter((o) => year.format(new Date(o.created_at)) === '2025').length;
    };
    await page.evaluate(() => (window as unknown as HostWindow).handle.setTimezone('Pacific/Kiritimati'));
    const expected = new Intl.NumberFormat('en-US').format(count2025('Pacific/Kiritimati'));
    expect(expected).not.toBe(new Intl.NumberFormat('en-US').format(count2025('UTC')));
    await expect.poll(() => kpi(frame, 'kpi-orders'), { timeout: 10_000 }).toBe(expected);
    expect(await frame.locator('[data-testid="timezone"]').innerText()).toBe('Pacific/Kiritimati');
    await page.close();
  });

  it('TIME_GRAIN and FIELD controls drive the queries', async () => {
    const { frame, page } = await mount();
    await frame.locator('[data-widget-id="grain"] select').selectOption('quarter');
    await expect.poll(() => frame.locator('[data-widget-id="trend"] svg .mark-symbol.role-mark path').count(), { timeout: 10_000 }).toBe(8);
    await frame.locator('[data-widget-id="measure"] select').selectOption('orders.count');
    const count = new Intl.NumberFormat('en-US').format(orders.filter((o) => o.created_at.startsWith('2025')).length);
    await expect.poll(() => kpi(frame, 'kpi-revenue'), { timeout: 10_000 }).toBe(count);
    await page.close();
  });

  async function saved(download: Download): Promise<Buffer> {
    return readFileSync((await download.path())!);
  }

  it('exports csv, xlsx, png and pdf files that open, and tells the host without the rows', async () => {
    const { page, frame } = await mount();
    // A widget's exports are behind its Export menu; the dashboard's own stay in its header.
    const take = async (format: string, widgetId = 'by-status') => {
      const item = widgetId === 'dashboard' ? frame.locator(`.dashboard-exports button[data-format="${format}"]`) : await exportItem(frame, widgetId, format);
      const [download] = await Promise.all([page.waitForEvent('download'), item.click()]);
      return { download, bytes: await saved(download) };
    };
    const csv = await take('csv');
    expect(csv.download.suggestedFilename()).toBe('orders-by-status.csv');
    const parsed = Papa.parse<string[]>(csv.bytes.toString('utf8').replace(/^\ufeff/, ''), { skipEmptyLines: true });
    expect(parsed.data[0]).toEqual(['Status', 'Orders', 'Revenue']);
    expect(parsed.data).toHaveLength(6);
    const returned = parsed.data.find((row) => row[0] === 'returned')!;
    expect(Number(returned[1])).toBe(orders.filter((o) => o.status === 'returned').length);

    const xlsx = await take('xlsx');
    const sheet = await readSheet(xlsx.bytes);
    expect(sheet[0]).toEqual(['Status', 'Orders', 'Revenue']);
    expect(sheet).toHaveLength(6);

    const png = await take('png', 'by-category');
    expect([...png.bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const pdf = await take('pdf', 'top-customers');
    expect(pdf.bytes.subarray(0, 5).toString()).toBe('%PDF-');

    const whole = await take('xlsx', 'dashboard');
    expect(whole.download.suggestedFilename()).toBe('sales-performance.xlsx');
    await waitForHostEvent(page, 'download', { count: 5 });
    const downloads = (await hostEvents(page)).filter(([n]) => n === 'download').map(([, p]) => p as Record<string, unknown>);
    expect(downloads[0]).toEqual({ format: 'csv', target: 'widget', widgetId: 'by-status', title: 'Orders by status', rowCount: 5 });
    expect(downloads[1]).toEqual({ format: 'xlsx', target: 'widget', widgetId: 'by-status', title: 'Orders by status', rowCount: 5 });
    expect(downloads[2]).toEqual({ format: 'png', target: 'widget', widgetId: 'by-category', title: 'Revenue by category' });
    expect(downloads[3]).toMatchObject({ format: 'pdf', target: 'widget', widgetId: 'top-customers' });
    expect(downloads[4]).toMatchObject({ format: 'xlsx', target: 'dashboard', title: 'Sales performance' });
    for (const payload of downloads) expect(Object.keys(payload).sort()).not.toContain('rows');
    await page.close();
  });

  it('draws the map widget over the world\'s country outlines, read from svc itself', async () => {
    const requests: string[] = [];
    const listen = (page: Page) => page.on('request', (request) => requests.push(request.url()));
    const { page, frame } = await mount('sales-performance', {}, listen);
    const map = frame.locator('[data-widget-id="map"]');
    // Natural Earth 1:110m has 177 countries; each is one path of the outline layer.
    await expect.poll(() => map.locator('svg .mark-shape.role-mark').nth(1).locator('path').count(), { timeout: 10_000 }).toBeGreaterThan(170);
    expect(await map.locator('svg .mark-symbol.role-mark path').count()).toBeGreaterThan(0);
    const atlas = requests.filter((url) => url.includes('countries-110m'));
    expect(atlas).toHaveLength(1);
    expect(atlas[0]!.startsWith(`${stack.svc.origin}/embed/assets/`)).toBe(true);
    await page.close();
  });

  it('puts a widget\'s four exports behind one Export menu button that the keyboard opens, walks and closes', async () => {
    const { page, frame } = await mount();
    const trigger = frame.locator('[data-widget-id="by-status"] button.export-trigger');
    const menu = exportMenu(frame, 'by-status');
    // One button per widget in its header, and no export pill beside it.
    await expect.poll(() => trigger.count()).toBe(1);
    expect(await frame.locator('[data-widget-id="by-status"] button[data-format]').count()).toBe(0);
    expect(await trigger.getAttribute('aria-haspopup')).toBe('menu');
    expect(await trigger.getAttribute('aria-expanded')).toBe('false');
    expect(await trigger.getAttribute('aria-controls')).toBe(await menu.getAttribute('id'));
    expect(await menu.isVisible()).toBe(false);
    const focusedFormat = () => frame.locator(':focus').getAttribute('data-format');

    await trigger.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => menu.isVisible()).toBe(true);
    expect(await trigger.getAttribute('aria-expanded')).toBe('true');
    expect(await menu.locator('[role="menuitem"]').allInnerTexts()).toEqual(['CSV', 'XLSX', 'PNG', 'PDF']);
    await expect.poll(focusedFormat).toBe('csv');
    await page.keyboard.press('ArrowDown');
    expect(await focusedFormat()).toBe('xlsx');
    await page.keyboard.press('End');
    expect(await focusedFormat()).toBe('pdf');
    await page.keyboard.press('ArrowDown');
    expect(await focusedFormat()).toBe('csv');
    await page.keyboard.press('ArrowUp');
    expect(await focusedFormat()).toBe('pdf');
    await page.keyboard.press('Escape');
    await expect.poll(() => menu.isVisible()).toBe(false);
    expect(await trigger.getAttribute('aria-expanded')).toBe('false');
    expect(await frame.locator(':focus').getAttribute('class')).toBe('export-trigger');

    // ArrowUp opens on the last item; Enter on an item exports it (the host hears download) and closes the menu.
    await page.keyboard.press('ArrowUp');
    await expect.poll(focusedFormat).toBe('pdf');
    await page.keyboard.press('Home');
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    expect(download.suggestedFilename()).toBe('orders-by-status.csv');
    await expect.poll(() => menu.isVisible()).toBe(false);

    // A click elsewhere closes an open menu; the menu is not clipped by its widget.
    await trigger.click();
    await expect.poll(() => menu.isVisible()).toBe(true);
    const box = (await menu.boundingBox())!;
    const widgetBox = (await frame.locator('[data-widget-id="by-status"]').boundingBox())!;
    expect(box.height).toBeGreaterThan(60);
    expect(box.x + box.width).toBeLessThanOrEqual(widgetBox.x + widgetBox.width + 1);
    await frame.locator('#dashboard-title').click();
    await expect.poll(() => menu.isVisible()).toBe(false);
    await page.close();
  });

  it("lays widgets out by DashboardLayout's breakpoints and cols, and by a widget's responsiveLayouts", async () => {
    const { page, frame } = await mount();
    const width = (id: string) => frame.locator(`[data-widget-id="${id}"]`).evaluate((n) => n.getBoundingClientRect().width);
    const grid = await frame.locator('.widget-grid').evaluate((n) => n.getBoundingClientRect().width);
    // lg (12 cols): the KPI spans 3 of 12 columns, the trend chart 6.
    expect((await width('kpi-revenue')) / grid).toBeCloseTo(3 / 12, 1);
    expect((await width('trend')) / grid).toBeCloseTo(6 / 12, 1);
    // sm (a grid of 640-900 px, 6 cols): the revenue KPI's own sm layout spans all 6; the orders KPI, which has none,
    // is derived (deriveLayout): its lg width scaled to 6 cols, round(3 * 6 / 12) = 2, beside the Measure control, then
    // widened over the 2 empty columns to its right: 4 of 6.
    await page.evaluate(() => { document.getElementById('embed')!.style.width = '1100px'; });
    const share = async (id: string) => (await width(id)) / (await frame.locator('.widget-grid').evaluate((n) => n.getBoundingClientRect().width));
    await expect.poll(async () => frame.locator('.widget-grid').evaluate((n) => n.getBoundingClientRect().width), { timeout: 10_000 }).toBeLessThan(900);
    expect(await frame.locator('.widget-grid').evaluate((n) => n.getBoundingClientRect().width)).toBeGreaterThan(640);
    await expect.poll(() => share('kpi-revenue'), { timeout: 10_000 }).toBeGreaterThan(0.95);
    expect(await share('kpi-orders')).toBeCloseTo(4 / 6, 1);
    await page.close();
  });

  it('shows no export without allowExport=true', async () => {
    const { page, frame } = await mount('sales-performance', { allowExport: false });
    expect(await frame.locator('button[data-format]').count()).toBe(0);
    await page.close();
  });

  it('drills into a bar: drilldown, navigate and view events, and the rows behind it in the embed', async () => {
    const { page, frame } = await mount();
    await frame.locator('[data-widget-id="by-category"] svg .mark-rect.role-mark path').first().click();
    const drill = await waitForHostEvent(page, 'drilldown') as { member: string; value: number; widgetId: string };
    expect(drill.member).toBe('orders.revenue');
    expect(drill.widgetId).toBe('by-category');
    expect(typeof drill.value).toBe('number');
    const dialog = frame.locator('[role="dialog"]');
    await dialog.locator('[data-testid="drill-count"]').waitFor();
    expect(await dialog.locator('tbody tr').count()).toBeGreaterThan(10);
    const navigate = (await hostEvents(page)).filter(([n]) => n === 'navigate').map(([, p]) => p);
    expect(navigate.at(-1)).toEqual({ path: '/embed/dashboard/sales-performance/drilldown/by-category', previousPath: '/embed/dashboard/sales-performance' });
    const view = (await hostEvents(page)).filter(([n]) => n === 'view').map(([, p]) => p).at(-1);
    expect(view).toMatchObject({ surface: 'dashboard', path: '/embed/dashboard/sales-performance/drilldown/by-category' });
    await page.screenshot({ path: `${ARTIFACTS}/data-drilldown.png` });
    await dialog.getByRole('button', { name: 'Back to the dashboard' }).click();
    await waitForHostEvent(page, 'navigate', { count: 2 });
    expect((await hostEvents(page)).filter(([n]) => n === 'navigate').at(-1)![1]).toEqual({ path: '/embed/dashboard/sales-performance', previousPath: '/embed/dashboard/sales-performance/drilldown/by-category' });
    await page.close();
  });

  it('a broken widget shows the viewer a friendly sentence, never the internal text, and sends the detail to the host; the others render and dashboard-loaded still comes', async () => {
    const { page, frame } = await mount('sales-broken');
    const errors = (await hostEvents(page)).filter(([n]) => n === 'error').map(([, p]) => p as { context: string; fatal: boolean; message: string; name: string });
    expect(errors.map((e) => e.context).sort()).toEqual(['widget:by-category', 'widget:top-customers']);
    const byContext = new Map(errors.map((e) => [e.context, e]));
    expect(byContext.get('widget:by-category')).toMatchObject({ fatal: false, name: 'ApiError' });
    expect(byContext.get('widget:by-category')!.message).toMatch(/orders\.profit/);
    expect(byContext.get('widget:top-customers')).toMatchObject({ fatal: false, name: 'ApiError' });
    expect(byContext.get('widget:top-customers')!.message).toMatch(/^report snapshot \d+ has neither meta\.query nor sqlQuery$/);
    for (const id of ['by-category', 'top-customers']) {
      const alert = frame.locator(`[data-widget-id="${id}"] [role="alert"]`);
      expect(await alert.count()).toBe(1);
      expect(await alert.innerText()).toBe('This widget could not load its data.');
    }
    const shown = await frame.locator('body').innerText();
    for (const internal of ['orders.profit', 'meta.query', 'sqlQuery', 'report snapshot']) expect(shown).not.toContain(internal);
    expect(await frame.locator('[data-widget-id="trend"] svg .mark-symbol.role-mark path').count()).toBe(24);
    expect(await kpi(frame, 'kpi-orders')).toMatch(/^\d/);
    await page.close();
  });

  it('refresh re-runs every query past the result cache, and a filter change does not force', async () => {
    const { page, frame } = await mount();
    const asked: Array<{ widget: string; force: boolean }> = [];
    const answered: string[] = [];
    page.on('request', (request) => {
      if (!request.url().includes('/widgets/') || !request.url().endsWith('/data')) return;
      const body = JSON.parse(request.postData() ?? '{}') as { force?: boolean };
      asked.push({ widget: request.url().split('/widgets/')[1]!.split('/')[0]!, force: body.force === true });
    });
    page.on('response', (response) => {
      if (!response.url().includes('/widgets/') || !response.url().endsWith('/data') || !response.ok()) return;
      // A body still unread when the test closes its page is of no answer this test looks at.
      void response.json().then((body: { source: string }) => answered.push(body.source), () => undefined);
    });
    await page.evaluate(() => (window as unknown as HostWindow).handle.refresh());
    await waitForHostEvent(page, 'dashboard-loaded', { count: 2 });
    // Each query once: the refresh reloads the dashboard, and its widgets ask as they mount.
    expect(asked.map((a) => a.widget).sort()).toEqual(['f-category', 'f-region', 'kpi-revenue', 'kpi-orders', 'trend', 'by-category', 'top-customers', 'map', 'flows', 'average', 'by-status', 'returns'].sort());
    expect(asked.every((a) => a.force), JSON.stringify(asked)).toBe(true);
    await expect.poll(() => answered.length).toBeGreaterThan(0);
    expect(answered).not.toContain('cache');
    // A viewer's choice asks without force: the cache may answer it.
    asked.length = 0;
    await page.evaluate(() => (window as unknown as HostWindow).handle.setFilter('products', 'category', 'Toys'));
    await expect.poll(() => asked.length).toBeGreaterThan(0);
    expect(asked.some((a) => a.force)).toBe(false);
    void frame;
    await page.close();
  });
});
