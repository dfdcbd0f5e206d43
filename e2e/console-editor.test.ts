import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectNoBlocking } from './axe.js';
import { hasChromium, launchChromium } from './browser.js';
import { demoUsers, demoWithMemberPassword } from './console-harness.js';
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
      const handle = page.getByRole('button', { name: 'Move or resize Revenue by month' });
      await handle.focus();
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('Shift+ArrowRight');
      await saved();
      await expect.poll(async () => (await positions())['chart-1']).toEqual({ x: 1, y: 0, w: 7, h: 4 });
      await page.getByRole('button', { name: 'Undo' }).click();
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
    });

    it('restores version 1 into the draft', async () => {
      await page.getByRole('button', { name: 'Restore version 1' }).click();
      await expect.poll(() => page.locator('.done').textContent()).toBe('Version 1 is restored into the draft: publish it to show it.');
      await expect.poll(() => page.locator('[data-widget-type="TEXT"]').count()).toBe(0);
      const restored = await api<Authored>('GET', `/api/v1/dashboards/${publicId}`);
      expect(restored.draft?.config.widgets?.map((w) => [w.id, w.type])).toEqual([['chart-1', 'CHART']]);
      expect((restored.draft?.reportSnapshots[0]?.meta as { query: unknown }).query).toEqual(EXPECTED_QUERY);
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
