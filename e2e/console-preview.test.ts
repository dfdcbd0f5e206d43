import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectNoBlocking } from './axe.js';
import { hasChromium, launchChromium } from './browser.js';
import { demoUsers, demoWithMemberPassword } from './console-harness.js';
import type { Chromium } from './browser.js';
import { DEMO_ADMIN_KEY, startSvc } from './embed-harness.js';
import type { RunningSvc } from './embed-harness.js';

// Issue 34 part 4, "View as a customer", driven in Chromium on the demo account: the demo's admin opens a demo
// dashboard's preview from the editor, as customer-a and then customer-b, and sees each tenant's own figures inside
// the real embed page (the same as the authors' preview asViewer gives); 420 px shows the embed's narrow layout; a
// draft change made through the API is seen with Draft and not with Published. The console's own origin is not in
// the demo's allowedEmbedOrigins: only the preview session lets it frame the page.

const PUBLIC_ID = 'sales-performance';
const ORDERS_2025 = { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2025-01-01', '2025-12-31'] }] };
const DRAFT_TEXT = 'Only in the draft: a preview check.';
const MEMBER_PASSWORD = 'member-password-1';
/** The demo member's API key (apps/server/demo/demo.json). */
const MEMBER_KEY = 'svc_demo_member_key_0001';

const postgresUrl = inject('postgresUrl');
let browser: Chromium | undefined;

beforeAll(async () => {
  if (hasChromium) browser = await launchChromium({ timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  const skipped = !hasChromium ? 'no Chromium' : dialect === 'postgres' && postgresUrl === null ? 'no SVC_TEST_POSTGRES_URL' : undefined;
  const title = `the console's View as a customer in Chromium [${dialect}${skipped === undefined ? '' : `: SKIPPED, ${skipped}`}]`;
  (skipped === undefined ? describe : describe.skip)(title, () => {
    let svc: RunningSvc;
    let page: Page;
    const demo = demoWithMemberPassword(MEMBER_PASSWORD);
    const { admin, member } = demoUsers(demo);

    const api = async <T,>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> => {
      const response = await fetch(`${svc.origin}${path}`, {
        method, headers: { authorization: `Bearer ${DEMO_ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
      return (await response.json()) as T;
    };
    /** The embed page inside the console's frame, once its KPI of 2025's orders shows a figure. */
    const embedFrame = async (): Promise<Frame> => {
      const handle = await page.locator('iframe.preview-frame').elementHandle({ timeout: 15_000 });
      const frame = (await handle!.contentFrame())!;
      await expect.poll(() => frame.locator('[data-widget-id="kpi-orders"]').getAttribute('data-state').catch(() => null), { timeout: 20_000 }).toBe('ready');
      return frame;
    };
    const ordersShown = async () => (await (await embedFrame()).locator('[data-widget-id="kpi-orders"] .kpi-value').innerText()).trim();
    const showAs = async (tenant: string) => {
      await page.getByLabel('Embed tenant').selectOption(tenant);
      await page.getByRole('button', { name: 'Show the dashboard' }).click();
      await page.locator(`iframe.preview-frame[title*="${tenant}"]`).waitFor({ timeout: 10_000 });
    };

    beforeAll(async () => {
      svc = await startSvc({ account: demo, adminKey: DEMO_ADMIN_KEY, ...(dialect === 'postgres' ? { postgresUrl: postgresUrl! } : {}) });
      page = await browser!.context.newPage();
      await page.setViewportSize({ width: 1400, height: 900 });
    }, 60_000);

    afterAll(async () => {
      await page?.close();
      await svc?.close();
    }, 120_000);

    it("opens from the editor at an address that survives a reload, and shows customer-a's and customer-b's own figures in the embed", async () => {
      const origins = (demo as unknown as { settings: { allowedEmbedOrigins: string[] } }).settings.allowedEmbedOrigins;
      expect(origins).not.toContain(svc.origin);
      await page.goto(`${svc.origin}/console?deployment=${svc.refs.prod}&dashboard=${PUBLIC_ID}`);
      await page.getByLabel('Email').fill(admin.email);
      await page.getByLabel('Password').fill(admin.password);
      await page.getByLabel('Password').press('Enter');
      await page.getByRole('button', { name: 'View as a customer' }).click();
      await page.getByRole('heading', { name: 'View as a customer', level: 1 }).waitFor();
      expect(new URL(page.url()).searchParams.get('page')).toBe('preview');
      await page.reload();
      await page.getByRole('heading', { name: 'View as a customer', level: 1 }).waitFor();

      const format = new Intl.NumberFormat('en-US');
      const shown: Record<string, string> = {};
      for (const tenant of ['customer-a', 'customer-b']) {
        await showAs(tenant);
        const asViewer = await api<{ rows: unknown[][] }>('POST', `/api/v1/deployments/${svc.refs.prod}/query`, { query: ORDERS_2025, asViewer: { securityContext: { tenant }, embedTenantName: tenant } });
        await expect.poll(ordersShown, { timeout: 15_000 }).toBe(format.format(Number(asViewer.rows[0]![0])));
        shown[tenant] = await ordersShown();
        // The session id left the frame's address as soon as its page started.
        expect(new URL((await embedFrame()).url()).searchParams.has('session')).toBe(false);
      }
      expect(shown['customer-a']).not.toBe(shown['customer-b']);
      // The embed heard the console as its host: its content-size set the frame's height.
      await expect.poll(async () => page.locator('iframe.preview-frame').evaluate((f) => f.clientHeight), { timeout: 10_000 }).toBeGreaterThan(700);
      await expectNoBlocking(page, 'view as a customer');
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoBlocking(page, 'view as a customer, dark');
      await page.emulateMedia({ colorScheme: 'light' });
    });

    it("sizes the frame at 420 px, where the embed lays every widget at the grid's full width", async () => {
      const boxes = async () => (await embedFrame()).evaluate(() => {
        const grid = document.querySelector('.widget-grid')!.getBoundingClientRect();
        return { grid: grid.width, inner: innerWidth, items: [...document.querySelectorAll('.widget-grid .react-grid-item')].map((item) => ({ left: item.getBoundingClientRect().left - grid.left, width: item.getBoundingClientRect().width })) };
      });
      const wide = await boxes();
      expect(wide.inner).toBe(1280);
      expect(new Set(wide.items.map((b) => Math.round(b.left))).size).toBeGreaterThan(1);
      await page.getByRole('button', { name: '420 px' }).click();
      expect(await page.locator('iframe.preview-frame').evaluate((f) => f.clientWidth)).toBe(420);
      await expect.poll(async () => {
        const narrow = await boxes();
        return narrow.inner === 420 && narrow.items.length > 0 && narrow.items.every((b) => Math.round(b.left) === 0 && b.width > narrow.grid - 2);
      }, { timeout: 10_000 }).toBe(true);
      await page.getByRole('button', { name: '1280 px' }).click();
    });

    it('shows a draft change made through the API with Draft, and not with Published', async () => {
      const authored = await api<{ draftRevision: number; published: { title: string | null; description: string | null; allowEmbed: boolean; config: { widgets: Array<{ id: string; config?: Record<string, unknown> }> }; reportSnapshots: Array<Record<string, unknown>> } }>('GET', `/api/v1/dashboards/${PUBLIC_ID}`);
      const { published } = authored;
      const widgets = published.config.widgets.map((w) => (w.id === 'intro' ? { ...w, config: { markdown: DRAFT_TEXT } } : w));
      await api('PUT', `/api/v1/dashboards/${PUBLIC_ID}/draft`, {
        title: published.title, description: published.description, allowEmbed: published.allowEmbed, config: { ...published.config, widgets },
        reportSnapshots: published.reportSnapshots.map(({ id: _id, versionNumber: _v, ...rest }) => Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null))),
      }, { 'if-match': `"draft-${authored.draftRevision}"` });

      await page.getByRole('button', { name: 'Draft', exact: true }).click();
      await showAs('customer-a');
      await expect.poll(async () => (await embedFrame()).locator('[data-widget-id="intro"]').innerText(), { timeout: 15_000 }).toContain(DRAFT_TEXT);
      await page.getByRole('button', { name: 'Published', exact: true }).click();
      await page.getByRole('button', { name: 'Show the dashboard' }).click();
      await expect.poll(async () => page.locator('iframe.preview-frame').getAttribute('title')).toContain('Published');
      await expect.poll(async () => (await embedFrame()).locator('[data-widget-id="intro"]').innerText(), { timeout: 15_000 }).toContain('Sales performance');
      expect(await (await embedFrame()).locator('[data-widget-id="intro"]').innerText()).not.toContain(DRAFT_TEXT);
    });

    it('names an invalid security context in words; a member is offered no preview, and the API refuses one (403)', async () => {
      await page.getByLabel('Security context (JSON)').fill('{"tenant": ');
      expect(await page.getByRole('alert').filter({ hasText: 'The security context is not valid JSON.' }).count()).toBe(1);
      expect(await page.getByRole('button', { name: 'Show the dashboard' }).isDisabled()).toBe(true);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Email').fill(member.email);
      await page.getByLabel('Password').fill(MEMBER_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Only an admin can view a dashboard as a customer' }).waitFor();
      expect(await page.locator('iframe').count()).toBe(0);
      await page.goto(`${svc.origin}/console?deployment=${svc.refs.prod}&dashboard=${PUBLIC_ID}`);
      await page.locator('main').waitFor();
      await expect.poll(() => page.locator('main .status').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'View as a customer' }).count()).toBe(0);
      const refused = await fetch(`${svc.origin}/api/v1/dashboards/${PUBLIC_ID}/preview-sessions`, {
        method: 'POST', headers: { authorization: `Bearer ${MEMBER_KEY}`, 'content-type': 'application/json' }, body: '{}',
      });
      expect(refused.status).toBe(403);
    });
  });
}
