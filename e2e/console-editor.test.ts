import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectNoBlocking } from './axe.js';
import { hasChromium, launchChromium } from './browser.js';
import { callApi, demoUsers, demoWithMemberPassword } from './console-harness.js';
import type { Chromium } from './browser.js';
import { DEMO_ADMIN_KEY, demoAccountFor, embedCaller, hostPageHtml, mountEmbed, openHostPage, serveHost, sessionRoute, startSvc } from './embed-harness.js';
import type { Host, RunningSvc } from './embed-harness.js';

// Issue 34's dashboard editor, driven in Chromium on the demo account: the demo's admin makes "revenue by month for
// completed orders" from a blank dashboard only by clicking and typing, sees the preview and where it came from,
// publishes; each customer's viewer gets its own figures from the new widget; a second page's stale save shows the
// conflict; version 1 is restored.

const demo = demoAccountFor({ origin: 'http://localhost' });
const { admin, member } = demoUsers(demo);
const MEMBER_PASSWORD = 'member-builder-pass-1';

const TITLE = 'Revenue by month, completed';
const EXPECTED_QUERY = {
  measures: ['orders.revenue'],
  timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }],
  filters: [{ member: 'orders.status', operator: 'equals', values: ['completed'] }],
};

const postgresUrl = inject('postgresUrl');
let browser: Chromium | undefined;

beforeAll(async () => {
  if (hasChromium) browser = await launchChromium({ timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

interface Position { x: number; y: number; w: number; h: number }
interface Authored { status: string; draftRevision: number; draft: null | { title: string | null; config: { widgets?: Array<{ id: string; type: string; position: Position; config?: Record<string, unknown> }> }; reportSnapshots: Array<Record<string, unknown>> } }

for (const dialect of ['sqlite', 'postgres'] as const) {
  const skipped = !hasChromium ? 'no Chromium' : dialect === 'postgres' && postgresUrl === null ? 'no SVC_TEST_POSTGRES_URL' : undefined;
  const title = `the console's dashboard editor in Chromium [${dialect}${skipped === undefined ? '' : `: SKIPPED, ${skipped}`}]`;
  (skipped === undefined ? describe : describe.skip)(title, () => {
    let svc: RunningSvc;
    let host: Host;
    let page: Page;
    let publicId: string;
    let editorAddress: string;

    /** An authoring API call with the demo's admin key (as a script would). */
    const api = async <T,>(method: string, path: string, body?: unknown): Promise<T> => {
      const response = await fetch(`${svc.origin}${path}`, {
        method, headers: { authorization: `Bearer ${DEMO_ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
      return (await response.json()) as T;
    };

    beforeAll(async () => {
      // A host page that embeds a dashboard for the customer named in its address (`/?tenant=customer-b`).
      host = await serveHost(hostPageHtml({ embedStyle: 'width:1280px;height:800px' }), sessionRoute((query) => {
        const tenant = query.get('tenant') ?? 'customer-a';
        return svc.mint({ externalId: tenant === 'customer-b' ? 'ben-1' : 'ann-1', embedTenantName: tenant, securityContext: { tenant } });
      }));
      svc = await startSvc({ account: demoWithMemberPassword(MEMBER_PASSWORD, demoAccountFor(host)), adminKey: DEMO_ADMIN_KEY, ...(dialect === 'postgres' ? { postgresUrl: postgresUrl! } : {}) });
      page = await browser!.context.newPage();
      await page.setViewportSize({ width: 1280, height: 900 });
    }, 60_000);

    afterAll(async () => {
      await page?.close();
      host?.close();
      const started = Date.now();
      await svc?.close();
      console.log(`console editor e2e [${dialect}]: svc closed in ${Date.now() - started} ms`);
    }, 120_000);

    it('signs the demo admin in and makes a blank dashboard from the workspace: the editor opens, at an address that survives a reload', async () => {
      await page.goto(`${svc.origin}/console`);
      await page.getByLabel('Email').fill(admin.email);
      await page.getByLabel('Password').fill(admin.password);
      await page.getByLabel('Password').press('Enter');
      await page.getByRole('heading', { name: 'Production', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'New dashboard' }).click();
      // An empty title is refused in words; the form stays.
      await page.getByRole('button', { name: 'Create' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('Type a title for the dashboard.');
      await page.getByLabel('Title of the new dashboard').fill(TITLE);
      await page.getByLabel('Title of the new dashboard').press('Enter');
      await page.getByRole('heading', { name: TITLE, level: 1 }).waitFor();
      const url = new URL(page.url());
      publicId = url.searchParams.get('dashboard')!;
      expect(publicId).toMatch(/\S/);
      expect(url.searchParams.get('deployment')).toBe(String(svc.refs.prod));
      editorAddress = page.url();
      await page.reload();
      await page.getByRole('heading', { name: TITLE, level: 1 }).waitFor();
      expect(await page.getByRole('status').filter({ hasText: 'Draft saved' }).count()).toBe(1);
      await expectNoBlocking(page, 'editor');
    });

    it('builds revenue by month for completed orders by clicking and typing; the preview shows rows and their source, and a line is suggested', async () => {
      await page.getByLabel('View').selectOption('orders');
      await page.getByRole('group', { name: 'Measures' }).getByRole('checkbox', { name: 'Revenue', exact: true }).check();
      await page.getByLabel('Time dimension').selectOption('orders.created_at');
      await page.getByLabel('Grain').selectOption('month');
      await page.getByRole('button', { name: 'Add a filter' }).click();
      await page.getByLabel('Filter 1: member').selectOption('orders.status');
      await page.getByLabel('Filter 1: operator').selectOption('equals');
      await page.getByLabel('Filter 1: values').fill('completed');
      const source = page.locator('.source');
      await expect.poll(() => source.getAttribute('data-source'), { timeout: 15_000 }).toMatch(/^(cache|warehouse|rollup:.+)$/);
      expect(await source.textContent()).toMatch(/^Answered from: (cache|warehouse|rollup:\S+) · \d+ rows$/);
      expect(await page.locator('.preview-table tbody tr').count()).toBeGreaterThan(3);
      expect(await page.locator('.preview-table thead th').allTextContents()).toEqual(['Ordered at (month)', 'Revenue']);
      expect(await page.getByLabel('Chart', { exact: true }).inputValue()).toBe('line');
      // The preview draws the line as the embed draws a widget: its marks in an SVG, one point per month.
      const preview = page.locator('.preview-chart');
      await expect.poll(() => preview.locator('.vega-chart svg .role-mark path').count(), { timeout: 15_000 }).toBeGreaterThan(3);
      expect(await preview.locator('.vega-chart svg .role-axis').count()).toBeGreaterThan(0);
      // The admin reads the SQL that ran, and where.
      const sql = page.locator('details.statement');
      expect(await sql.locator('summary').textContent()).toMatch(/^SQL \(ran on (warehouse|rollup:orders\.\w+)\)$/);
      await sql.locator('summary').click();
      expect((await sql.locator('pre.sql').textContent())!.toUpperCase()).toContain('SELECT');
      expect(await sql.locator('ol.parameters li').allTextContents()).toContain('"completed"');
      // A format for Revenue: currency with 2 decimals, in the preview's cells at once.
      await page.getByLabel('Format of Revenue').selectOption('currency');
      await page.getByLabel('Decimal places of Revenue').fill('2');
      await expect.poll(() => page.locator('.preview-table tbody tr:first-child td:last-child').textContent()).toMatch(/^\$[\d,]+\.\d\d$/);
      await expectNoBlocking(page, 'editor with a preview');
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoBlocking(page, 'editor with a preview, dark');
      await page.emulateMedia({ colorScheme: 'light' });
    });

    it('adds the chart to the draft, saved over its ETag', async () => {
      await page.getByLabel('Chart title').fill('Revenue by month');
      await page.getByRole('button', { name: 'Add to dashboard' }).click();
      await page.locator('[data-widget-id="chart-1"]').waitFor();
      await expect.poll(() => page.locator('.save-status').textContent()).toBe('Draft saved');
      const saved = await api<Authored>('GET', `/api/v1/dashboards/${publicId}`);
      expect(saved.draft?.config.widgets?.map((w) => [w.id, w.type])).toEqual([['chart-1', 'CHART']]);
      const snapshot = saved.draft!.reportSnapshots[0]!;
      expect(snapshot.title).toBe('Revenue by month');
      expect(snapshot.kind).toBe('vega');
      expect((snapshot.meta as { query: unknown }).query).toEqual(EXPECTED_QUERY);
      expect(snapshot.spec).toMatchObject({ mark: { type: 'line' }, encoding: { x: { field: 'orders.created_at.month', type: 'temporal' }, y: { field: 'orders.revenue', axis: { format: '$,.2f' } } } });
      expect(snapshot.preferences).toEqual({ columnFormats: { 'orders.revenue': { type: 'currency', decimalPlaces: 2 } } });
      // The board draws the widget with its chart, as the preview draws it: its marks in an SVG that fits its cell.
      const cell = page.locator('[data-widget-id="chart-1"]');
      await expect.poll(() => cell.locator('.vega-chart svg .role-mark path').count(), { timeout: 15_000 }).toBeGreaterThan(3);
      expect(await cell.locator('.vega-chart svg .role-axis').count()).toBeGreaterThan(0);
      const [svgWidth, cellWidth] = await cell.evaluate((c) => [c.querySelector('.vega-chart svg')!.getBoundingClientRect().width, c.getBoundingClientRect().width]);
      expect(svgWidth).toBeGreaterThan(cellWidth * 0.8);
      expect(svgWidth).toBeLessThanOrEqual(cellWidth);
      await expectNoBlocking(page, 'editor with a chart on the board');
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoBlocking(page, 'editor with a chart on the board, dark');
      await page.emulateMedia({ colorScheme: 'light' });
    });

    it('draws a KPI and a table in the preview, and for a query no pre-aggregation answers, says why and which one would', async () => {
      const preview = page.locator('.preview-chart');
      await page.getByLabel('Time dimension').selectOption('');
      await page.getByLabel('Chart', { exact: true }).selectOption('kpi');
      // One figure, in the format chosen.
      await expect.poll(() => preview.locator('.kpi-value').textContent(), { timeout: 15_000 }).toMatch(/^\$[\d,]+\.\d\d$/);
      await page.getByLabel('Chart', { exact: true }).selectOption('table');
      await page.getByRole('group', { name: 'Dimensions' }).getByRole('checkbox', { name: 'Status', exact: true }).check();
      await page.getByRole('group', { name: 'Measures' }).getByRole('checkbox', { name: 'Units', exact: true }).check();
      // Revenue and units by status: no rollup of the demo holds both with the status, so the data source answers.
      await expect.poll(() => page.locator('.source').getAttribute('data-source'), { timeout: 15_000 }).toBe('warehouse');
      await expect.poll(() => preview.locator('[role="grid"] [role="columnheader"]').allTextContents()).toEqual(['Status', 'Revenue', 'Units']);
      expect(await preview.locator('[role="grid"] [role="row"]').count()).toBeGreaterThan(1);
      const hint = page.locator('details.rollup-hint');
      await hint.locator('summary').click();
      expect(await hint.locator('.reasons li').allTextContents()).toContain('orders.by_status: the measure orders.units is not in it');
      expect(JSON.parse((await hint.locator('pre.suggestion').textContent())!)).toMatchObject({ measures: ['orders.revenue', 'orders.units'], dimensions: ['orders.status'] });
      await expectNoBlocking(page, 'builder with a table and the hint');
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoBlocking(page, 'builder with a table and the hint, dark');
      await page.emulateMedia({ colorScheme: 'light' });
    });

    it("publishes: customer A's viewer and customer B's each get their own figures from the new widget", async () => {
      await page.getByRole('button', { name: 'Publish' }).click();
      await expect.poll(() => page.locator('.done').textContent()).toBe('Published as version 1.');
      await page.getByRole('button', { name: 'Restore version 1' }).waitFor();
      const figures: Record<string, unknown[][]> = {};
      for (const [tenant, externalId] of [['customer-a', 'ann-1'], ['customer-b', 'ben-1']] as const) {
        const call = await embedCaller(svc, { externalId, embedTenantName: tenant, securityContext: { tenant } });
        const data = await call<{ columns: Array<{ name: string }>; rows: unknown[][] }>('POST', `/dashboard/${publicId}/widgets/chart-1/data`, { timezone: 'UTC' });
        expect(data.columns.map((c) => c.name)).toEqual(['orders.created_at.month', 'orders.revenue']);
        expect(data.rows.length).toBeGreaterThan(3);
        // What the preview shows as that viewer (an admin's asViewer): the same rows.
        const asViewer = await api<{ rows: unknown[][] }>('POST', `/api/v1/deployments/${svc.refs.prod}/query`, { query: { ...EXPECTED_QUERY, timeDimensions: EXPECTED_QUERY.timeDimensions }, asViewer: { securityContext: { tenant }, embedTenantName: tenant } });
        expect(data.rows.map((row) => Number(row[1]))).toEqual(asViewer.rows.map((row) => Number(row[1])));
        figures[tenant] = data.rows;
      }
      expect(figures['customer-a']).not.toEqual(figures['customer-b']);
    });

    it('the embed draws the new widget as a line over the months, for a customer', async () => {
      // A Chromium of its own, closed after: the embed's connections (its comment stream) must not outlive the test,
      // or closing svc waits for them.
      const own = await launchChromium({ timeout: 20_000 });
      const hostPage = await openHostPage(own.context, `${host.origin}/?tenant=customer-b`, { viewport: { width: 1280, height: 800 } });
      try {
        const frame = await mountEmbed(hostPage, { baseUrl: svc.origin, surface: 'dashboard', publicId });
        const widget = frame.locator('[data-widget-id="chart-1"]');
        await expect.poll(() => widget.getAttribute('data-state'), { timeout: 15_000 }).toBe('ready');
        await expect.poll(() => widget.locator('.vega-chart svg .role-mark path').count(), { timeout: 15_000 }).toBeGreaterThan(0);
        expect(await widget.getAttribute('aria-label')).toContain('Revenue by month');
        // One point per month of the answer, on a time axis.
        const points = await widget.locator('.vega-chart svg .role-mark path').evaluateAll((marks) => marks.filter((m) => (m.getAttribute('d') ?? '') !== '').length);
        expect(points).toBeGreaterThan(3);
        expect(await widget.locator('.vega-chart svg .role-axis').count()).toBeGreaterThan(0);
        // The format chosen in the builder: the revenue axis in dollars with cents.
        expect(await widget.locator('.vega-chart svg .role-axis-label text').allTextContents()).toContainEqual(expect.stringMatching(/^\$[\d,]+\.\d\d$/));
      } finally {
        await own.close();
      }
    });

    it("a second page's stale save shows the conflict in words and overwrites nothing", async () => {
      const second = await browser!.context.newPage();
      try {
        await second.setViewportSize({ width: 1280, height: 900 });
        await second.goto(editorAddress);
        await second.getByRole('heading', { name: TITLE, level: 1 }).waitFor();
        // The first page saves first: a text widget.
        await page.getByLabel('Text (Markdown)').fill('**Completed orders only.**');
        await page.getByRole('button', { name: 'Add text' }).click();
        await expect.poll(() => page.locator('.save-status').textContent()).toBe('Draft saved');
        // The second page, still on the revision it read, saves a new title.
        await second.getByLabel('Dashboard title').fill('Their title');
        await second.getByLabel('Dashboard title').press('Tab');
        const alert = second.getByRole('alert').filter({ hasText: 'Someone else saved this dashboard' });
        await alert.waitFor();
        expect(await alert.textContent()).toContain('Reload to see their version');
        await expectNoBlocking(second, 'editor with a conflict');
        const stored = await api<Authored>('GET', `/api/v1/dashboards/${publicId}`);
        expect(stored.draft?.title).toBe(TITLE);
        expect(stored.draft?.config.widgets?.map((w) => w.type)).toEqual(['CHART', 'TEXT']);
        await second.getByRole('button', { name: 'Reload their version' }).click();
        await second.locator('[data-widget-type="TEXT"]').waitFor();
        expect(await second.getByLabel('Dashboard title').inputValue()).toBe(TITLE);
      } finally {
        await second.close();
      }
    });

    it('moves and resizes widgets on the grid by the keyboard and by the pointer, undoes and redoes, deletes one: each saved in the draft', async () => {
      const positions = async (): Promise<Record<string, Position>> =>
        Object.fromEntries(((await api<Authored>('GET', `/api/v1/dashboards/${publicId}`)).draft!.config.widgets ?? []).map((w) => [w.id, w.position]));
      const saved = () => expect.poll(() => page.locator('.save-status').textContent()).toBe('Draft saved');
      const chartWidth = () => page.locator('[data-widget-id="chart-1"] .vega-chart svg').evaluate((svg) => svg.getBoundingClientRect().width);
      const narrow = await chartWidth();
      const handle = page.getByRole('button', { name: 'Move or resize Revenue by month' });
      await handle.focus();
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('Shift+ArrowRight');
      await saved();
      await expect.poll(async () => (await positions())['chart-1']).toEqual({ x: 1, y: 0, w: 7, h: 4 });
      // The board's chart is drawn again at the cell's new width (6 columns of 12, then 7, then 6 again).
      await expect.poll(chartWidth).toBeGreaterThan(narrow + 40);
      expect(await page.locator('[data-widget-id="chart-1"] .vega-chart svg .role-mark path').count()).toBeGreaterThan(3);
      await page.getByRole('button', { name: 'Undo' }).click();
      await expect.poll(chartWidth).toBeLessThan(narrow + 20);
      await saved();
      await expect.poll(async () => (await positions())['chart-1']).toEqual({ x: 1, y: 0, w: 6, h: 4 });
      await page.getByRole('button', { name: 'Redo' }).click();
      await saved();
      await expect.poll(async () => (await positions())['chart-1']).toEqual({ x: 1, y: 0, w: 7, h: 4 });
      // The pointer: the text widget's corner dragged to the left makes it narrower.
      const corner = page.locator('[data-widget-id="text-1"] .react-resizable-handle');
      await corner.scrollIntoViewIfNeeded();
      const box = (await corner.boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x - 200, box.y + box.height / 2, { steps: 8 });
      await page.mouse.move(box.x - 400, box.y + box.height / 2, { steps: 8 });
      await page.mouse.up();
      await expect.poll(async () => (await positions())['text-1']!.w).toBeLessThan(12);
      await page.getByRole('button', { name: 'Delete Text' }).click();
      await saved();
      await expect.poll(async () => Object.keys(await positions())).toEqual(['chart-1']);
      // A chart whose query fails (raw SQL on a table the data source lacks) says so in its cell, in words.
      const current = await api<Authored>('GET', `/api/v1/dashboards/${publicId}`);
      const draft = current.draft!;
      const broken = {
        ...draft,
        config: { ...draft.config, widgets: [...(draft.config.widgets ?? []), { id: 'chart-9', type: 'CHART', position: { x: 0, y: 4, w: 6, h: 4 }, config: { snapshotIndex: draft.reportSnapshots.length } }] },
        reportSnapshots: [...draft.reportSnapshots, { title: 'Broken', kind: 'table', sqlQuery: 'SELECT nothing FROM no_such_table' }],
      };
      expect((await callApi(svc.origin, DEMO_ADMIN_KEY, 'PUT', `/api/v1/dashboards/${publicId}/draft`, broken, { 'if-match': `"draft-${current.draftRevision}"` })).status).toBe(200);
      await page.reload();
      const failed = page.locator('[data-widget-id="chart-9"] .board-chart-status');
      await expect.poll(() => failed.textContent(), { timeout: 15_000 }).toMatch(/^The chart could not be drawn: \S/);
      await expect.poll(() => page.locator('[data-widget-id="chart-1"] .vega-chart svg .role-mark path').count(), { timeout: 15_000 }).toBeGreaterThan(3);
    });

    it('restores version 1 into the draft', async () => {
      await page.getByRole('button', { name: 'Restore version 1' }).click();
      await expect.poll(() => page.locator('.done').textContent()).toBe('Version 1 is restored into the draft: publish it to show it.');
      await expect.poll(() => page.locator('[data-widget-type="TEXT"]').count()).toBe(0);
      const restored = await api<Authored>('GET', `/api/v1/dashboards/${publicId}`);
      expect(restored.draft?.config.widgets?.map((w) => [w.id, w.type])).toEqual([['chart-1', 'CHART']]);
      expect((restored.draft?.reportSnapshots[0]?.meta as { query: unknown }).query).toEqual(EXPECTED_QUERY);
    });

    const saved = () => expect.poll(() => page.locator('.save-status').textContent()).toBe('Draft saved');
    const draftWidgets = async () => (await api<Authored>('GET', `/api/v1/dashboards/${publicId}`)).draft!.config.widgets ?? [];

    it('adds a filter, a time grain and a divider through their forms, each drawn on the board as its control; a form names what is missing; axe light and dark with each form open', async () => {
      const form = page.locator('form.widget-form');
      await page.getByRole('button', { name: 'New filter control' }).click();
      await form.getByRole('heading', { name: 'New filter control' }).waitFor();
      await form.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(() => form.locator('#w-member-problem').textContent()).toBe('Pick the dimension to filter by.');
      expect(await form.getByLabel('Dimension to filter by').getAttribute('aria-invalid')).toBe('true');
      await expectNoBlocking(page, 'editor with a filter form and its problem');
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoBlocking(page, 'editor with a filter form and its problem, dark');
      await page.emulateMedia({ colorScheme: 'light' });
      await form.getByLabel('Dimension to filter by').selectOption('customers.region');
      await form.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(() => form.count()).toBe(0);
      // On the board, the filter is its control: a select of the dimension's values, under its title.
      const filter = page.locator('[data-widget-id="filter-1"]');
      await expect.poll(() => filter.getByLabel('Region').locator('option').count(), { timeout: 15_000 }).toBeGreaterThan(1);
      expect(await filter.getByLabel('Region').locator('option').first().textContent()).toBe('All values');

      await page.getByRole('button', { name: 'New time grain control' }).click();
      for (const grain of ['day', 'week', 'month', 'quarter', 'year']) await form.getByRole('checkbox', { name: grain }).uncheck();
      await form.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(() => form.locator('#w-grains-problem').textContent()).toBe('Pick at least one grain to offer.');
      for (const grain of ['week', 'month', 'quarter']) await form.getByRole('checkbox', { name: grain }).check();
      await expectNoBlocking(page, 'editor with a time grain form');
      await form.getByRole('button', { name: 'Save', exact: true }).click();
      const grain = page.locator('[data-widget-id="grain-1"]');
      await expect.poll(() => grain.getByLabel('Time grain').locator('option').allTextContents()).toEqual(['As designed', 'week', 'month', 'quarter']);

      // The field swap's and the container's forms, checked by axe and left unsaved.
      await page.getByRole('button', { name: 'New field swap' }).click();
      await form.getByLabel('Member to swap').selectOption('orders.revenue');
      await form.getByRole('checkbox', { name: 'Orders', exact: true }).check();
      await expectNoBlocking(page, 'editor with a field swap form');
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoBlocking(page, 'editor with a field swap form, dark');
      await page.emulateMedia({ colorScheme: 'light' });
      await form.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('button', { name: 'New container' }).click();
      await form.getByRole('checkbox', { name: 'Region' }).waitFor();
      await expectNoBlocking(page, 'editor with a container form');
      await form.getByRole('button', { name: 'Cancel' }).click();

      await page.getByRole('button', { name: 'New divider' }).click();
      await page.locator('[data-widget-id="divider-1"] hr').waitFor();
      await saved();
      await expect.poll(async () => (await draftWidgets()).map((w) => [w.id, w.type, w.config])).toEqual([
        ['chart-1', 'CHART', { snapshotIndex: 0 }],
        ['filter-1', 'FILTER', { member: 'customers.region', title: 'Region' }],
        ['grain-1', 'TIME_GRAIN', { options: ['week', 'month', 'quarter'] }],
        ['divider-1', 'DIVIDER', undefined],
      ]);
    });

    it('edits a text in place: its Markdown drawn on the board; undo brings the old text back and redo the new', async () => {
      await page.getByLabel('Text (Markdown)').fill('**Completed orders only.**');
      await page.getByRole('button', { name: 'Add text' }).click();
      const text = page.locator('[data-widget-id="text-1"]');
      await expect.poll(() => text.locator('.markdown strong').textContent()).toBe('Completed orders only.');
      await saved();
      await expect.poll(async () => (await draftWidgets()).some((w) => w.id === 'text-1')).toBe(true);
      const before = (await draftWidgets()).find((w) => w.id === 'text-1')!;
      await page.getByRole('button', { name: 'Edit Text' }).click();
      const form = page.locator('form.widget-form');
      expect(await form.getByLabel('Markdown').inputValue()).toBe('**Completed orders only.**');
      await form.getByLabel('Markdown').fill('## Orders\n\n*Completed* ones only.');
      await form.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(() => text.locator('.markdown h2').textContent()).toBe('Orders');
      expect(await text.locator('.markdown em').textContent()).toBe('Completed');
      await saved();
      await expect.poll(async () => (await draftWidgets()).find((w) => w.id === 'text-1')).toEqual({ ...before, config: { markdown: '## Orders\n\n*Completed* ones only.' } });
      await page.getByRole('button', { name: 'Undo' }).click();
      await expect.poll(() => text.locator('.markdown strong').count()).toBe(1);
      await saved();
      await expect.poll(async () => (await draftWidgets()).find((w) => w.id === 'text-1')!.config).toEqual({ markdown: '**Completed orders only.**' });
      await page.getByRole('button', { name: 'Redo' }).click();
      await expect.poll(() => text.locator('.markdown h2').count()).toBe(1);
      await saved();
    });

    it("edits the chart in the builder, which opens on its query and kind: another measure, saved in place", async () => {
      const before = (await draftWidgets()).find((w) => w.id === 'chart-1')!;
      await page.getByRole('button', { name: 'Edit Revenue by month' }).click();
      await page.getByText('Editing the chart “Revenue by month”').waitFor();
      const measures = page.getByRole('group', { name: 'Measures' });
      expect(await measures.getByRole('checkbox', { name: 'Revenue', exact: true }).isChecked()).toBe(true);
      expect(await page.getByLabel('Time dimension').inputValue()).toBe('orders.created_at');
      expect(await page.getByLabel('Filter 1: values').inputValue()).toBe('completed');
      expect(await page.getByLabel('Chart', { exact: true }).inputValue()).toBe('line');
      expect(await page.getByLabel('Chart title').inputValue()).toBe('Revenue by month');
      await measures.getByRole('checkbox', { name: 'Revenue', exact: true }).uncheck();
      await measures.getByRole('checkbox', { name: 'Orders', exact: true }).check();
      await page.getByLabel('Chart title').fill('Orders by month');
      await expect.poll(() => page.locator('.preview-table thead th').allTextContents(), { timeout: 15_000 }).toEqual(['Ordered at (month)', 'Orders']);
      await page.getByRole('button', { name: 'Save chart' }).click();
      await page.getByRole('button', { name: 'Move or resize Orders by month' }).waitFor();
      expect(await page.getByRole('button', { name: 'Save chart' }).count()).toBe(0);
      await saved();
      await expect.poll(async () => (await api<Authored>('GET', `/api/v1/dashboards/${publicId}`)).draft!.reportSnapshots[0]!.title).toBe('Orders by month');
      const stored = await api<Authored>('GET', `/api/v1/dashboards/${publicId}`);
      const after = stored.draft!.config.widgets!.find((w) => w.id === 'chart-1')!;
      expect(after).toEqual(before);
      expect(stored.draft!.reportSnapshots).toHaveLength(1);
      const snapshot = stored.draft!.reportSnapshots[0]!;
      expect(snapshot.title).toBe('Orders by month');
      expect((snapshot.meta as { query: unknown }).query).toEqual({ ...EXPECTED_QUERY, measures: ['orders.count'] });
      expect(snapshot.spec).toMatchObject({ mark: { type: 'line' }, encoding: { y: { field: 'orders.count' } } });
    });

    it("publishes; in the embed, customer A's filter control and grain control each change the chart's data", async () => {
      await page.getByRole('button', { name: 'Publish' }).click();
      await expect.poll(() => page.locator('.done').textContent()).toBe('Published as version 2.');
      const call = await embedCaller(svc, { externalId: 'ann-1', embedTenantName: 'customer-a', securityContext: { tenant: 'customer-a' } });
      const unfiltered = await call<{ rows: unknown[][] }>('POST', `/dashboard/${publicId}/widgets/chart-1/data`, { timezone: 'UTC' });
      const own = await launchChromium({ timeout: 20_000 });
      const hostPage = await openHostPage(own.context, `${host.origin}/?tenant=customer-a`, { viewport: { width: 1280, height: 800 } });
      try {
        const frame = await mountEmbed(hostPage, { baseUrl: svc.origin, surface: 'dashboard', publicId });
        const chart = frame.locator('[data-widget-id="chart-1"]');
        await expect.poll(() => chart.getAttribute('data-state'), { timeout: 15_000 }).toBe('ready');
        expect(await frame.locator('[data-widget-id="divider-1"]').getAttribute('role')).toBe('separator');
        expect(await frame.locator('[data-widget-id="text-1"] .markdown h2').textContent()).toBe('Orders');
        const chartData = (needle: string) => hostPage.waitForResponse((r) => r.url().includes(`/widgets/chart-1/data`) && (r.request().postData() ?? '').includes(needle), { timeout: 15_000 });
        // The filter: its values come from svc; choosing one asks the chart's data again, filtered.
        const select = frame.locator('[data-widget-id="filter-1"] select');
        await expect.poll(() => select.locator('option').count(), { timeout: 15_000 }).toBeGreaterThan(1);
        const region = JSON.parse((await select.locator('option').nth(1).getAttribute('value'))!) as string;
        const filtering = chartData('customers.region');
        await select.selectOption({ index: 1 });
        const filtered = (await (await filtering).json()) as { columns: Array<{ name: string }>; rows: unknown[][] };
        expect(filtered.rows.length).toBeGreaterThan(0);
        expect(filtered.rows).not.toEqual(unfiltered.rows);
        const byApi = await call<{ rows: unknown[][] }>('POST', `/dashboard/${publicId}/widgets/chart-1/data`, { timezone: 'UTC', filters: { 'customers.region': region } });
        expect(filtered.rows).toEqual(byApi.rows);
        // The grain: quarters instead of months.
        const regrained = chartData('"granularity":"quarter"');
        await frame.locator('[data-widget-id="grain-1"] select').selectOption('quarter');
        const quarterly = (await (await regrained).json()) as { columns: Array<{ name: string }>; rows: unknown[][] };
        expect(quarterly.columns.map((c) => c.name)).toEqual(['orders.created_at.quarter', 'orders.count']);
        expect(quarterly.rows.length).toBeLessThan(filtered.rows.length);
        // The chart's spec, written for months, draws the quarters (a point for each).
        const marks = () => chart.locator('.vega-chart svg .role-mark path').evaluateAll((paths) => paths.filter((p) => (p.getAttribute('d') ?? '') !== '').length);
        await expect.poll(marks, { timeout: 15_000 }).toBeGreaterThanOrEqual(quarterly.rows.length);
        expect(await chart.getAttribute('data-state')).toBe('ready');
      } finally {
        await own.close();
      }
    });

    it('puts the filter and the time grain in a new container, drawn inside it on the board; its Edit takes one out again', async () => {
      const form = page.locator('form.widget-form');
      await page.getByRole('button', { name: 'New container' }).click();
      await form.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(() => form.locator('#w-title-problem').textContent()).toBe('Type a title for the container.');
      await form.getByLabel('Title on the dashboard').fill('Controls');
      await form.getByRole('checkbox', { name: 'Region' }).check();
      await form.getByRole('checkbox', { name: 'Time grain' }).check();
      await form.getByRole('button', { name: 'Save', exact: true }).click();
      const container = page.locator('[data-widget-id="container-1"]');
      await expect.poll(() => container.locator('.board-child').evaluateAll((children) => children.map((c) => c.getAttribute('data-widget-id')))).toEqual(['filter-1', 'grain-1']);
      await expect.poll(() => container.getByLabel('Region').locator('option').count(), { timeout: 15_000 }).toBeGreaterThan(1);
      await saved();
      await expect.poll(async () => (await draftWidgets()).find((w) => w.id === 'grain-1')!.config?.parentId).toBe('container-1');
      const widgets = await draftWidgets();
      const at = (id: string) => widgets.find((w) => w.id === id)!;
      expect(at('filter-1')).toMatchObject({ position: { x: 0, y: 0, w: 3, h: 2 }, config: { member: 'customers.region', title: 'Region', parentId: 'container-1' } });
      expect(at('grain-1')).toMatchObject({ position: { x: 3, y: 0, w: 3, h: 2 }, config: { parentId: 'container-1' } });
      expect(at('container-1')).toMatchObject({ type: 'CONTAINER', position: { x: 0, w: 12, h: 3 }, config: { title: 'Controls' } });
      await container.getByRole('button', { name: 'Edit Controls' }).click();
      await form.getByRole('checkbox', { name: 'Time grain' }).uncheck();
      await form.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(() => container.locator('.board-child').count()).toBe(1);
      await saved();
      await expect.poll(async () => (await draftWidgets()).find((w) => w.id === 'grain-1')!.config).toEqual({ options: ['week', 'month', 'quarter'] });
    });

    it("shows svc's refusal of a widget at its JSON path on the widget and in its form: a filter on a dimension the model lost since the editor opened", async () => {
      type View = { name: string; dimensions: Array<{ name: string }> };
      const before = await api<{ modelRevision: number; semanticViews: View[] }>('GET', `/api/v1/deployments/${svc.refs.prod}`);
      const without = before.semanticViews.map((v) => (v.name === 'customers' ? { ...v, dimensions: v.dimensions.filter((d) => d.name !== 'segment') } : v));
      const modelPath = `/api/v1/deployments/${svc.refs.prod}/model`;
      expect((await callApi(svc.origin, DEMO_ADMIN_KEY, 'PUT', modelPath, { semanticViews: without }, { 'if-match': `"model-${before.modelRevision}"` })).status).toBe(200);
      try {
        const form = page.locator('form.widget-form');
        await page.getByRole('button', { name: 'New filter control' }).click();
        await form.getByLabel('Dimension to filter by').selectOption('customers.segment');
        await form.getByRole('button', { name: 'Save', exact: true }).click();
        const refused = page.locator('[data-widget-id="filter-2"] [role="alert"]');
        await expect.poll(() => refused.textContent(), { timeout: 15_000 }).toMatch(/^svc refused this widget: .*segment/);
        await page.getByRole('button', { name: 'Edit Segment' }).click();
        await expect.poll(() => form.getByRole('alert').first().textContent()).toMatch(/^svc refused this widget: .*segment/);
        await form.getByLabel('Dimension to filter by').selectOption('customers.city');
        await form.getByLabel('Title on the dashboard').fill('City');
        await form.getByRole('button', { name: 'Save', exact: true }).click();
        await saved();
        expect(await refused.count()).toBe(0);
        await expect.poll(async () => (await draftWidgets()).find((w) => w.id === 'filter-2')!.config).toEqual({ member: 'customers.city', title: 'City' });
      } finally {
        const { modelRevision } = await api<{ modelRevision: number }>('GET', `/api/v1/deployments/${svc.refs.prod}`);
        expect((await callApi(svc.origin, DEMO_ADMIN_KEY, 'PUT', modelPath, { semanticViews: before.semanticViews }, { 'if-match': `"model-${modelRevision}"` })).status).toBe(200);
      }
    });

    it('goes back to the workspace by the breadcrumb, saving a change made just before; the new workbook has an Edit action that opens it', async () => {
      await page.getByLabel('Dashboard title').fill(`${TITLE}, draft`);
      await page.getByLabel('Dashboard title').press('Enter');
      await page.getByRole('navigation', { name: 'Folders' }).getByRole('link', { name: 'Workspace' }).click();
      await expect.poll(async () => (await api<Authored>('GET', `/api/v1/dashboards/${publicId}`)).draft?.title).toBe(`${TITLE}, draft`);
      await page.getByRole('heading', { name: 'Production', level: 1 }).waitFor();
      await page.getByRole('button', { name: `Edit ${TITLE}` }).click();
      await page.getByRole('heading', { name: `${TITLE}, draft`, level: 1 }).waitFor();
      expect(new URL(page.url()).searchParams.get('dashboard')).toBe(publicId);
    });

    it('shows a member the preview without the SQL and without the pre-aggregation hint', async () => {
      // Signed out (the admin's console cookie gone), at the console's first page.
      await page.context().clearCookies();
      await page.goto(`${svc.origin}/console`);
      await page.getByLabel('Email').fill(member.email);
      await page.getByLabel('Password').fill(MEMBER_PASSWORD);
      await page.getByLabel('Password').press('Enter');
      await page.getByRole('heading', { name: 'Production', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'New dashboard' }).click();
      await page.getByLabel('Title of the new dashboard').fill('A member\'s dashboard');
      await page.getByLabel('Title of the new dashboard').press('Enter');
      await page.getByLabel('View').selectOption('orders');
      await page.getByRole('group', { name: 'Measures' }).getByRole('checkbox', { name: 'Units', exact: true }).check();
      await page.getByRole('group', { name: 'Dimensions' }).getByRole('checkbox', { name: 'Status', exact: true }).check();
      await expect.poll(() => page.locator('.source').getAttribute('data-source'), { timeout: 15_000 }).toBe('warehouse');
      // The demo's policies give a member without a group no order (docs/console.md): the preview says so.
      await expect.poll(() => page.locator('.preview-chart').textContent()).toBe('The query answered no rows.');
      expect(await page.locator('details.statement').count()).toBe(0);
      expect(await page.locator('details.rollup-hint').count()).toBe(0);
    });
  });
}
