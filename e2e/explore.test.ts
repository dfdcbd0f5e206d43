import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { blocking, describeViolations, runAxe } from './axe.js';
import { hasChromium, launchChromium } from './browser.js';
import type { Chromium } from './browser.js';
import { closeAll, embedFrame, startDemoStack } from './embed-harness.js';
import type { DemoStack } from './embed-harness.js';

/**
 * Issue 35 in Chromium, on the demo host (whose sessions carry settings.explore "create"): Customer A's viewer (Ann)
 * explores from the "Revenue over time" widget (revenue by month), makes it revenue by category, and shares it with
 * her company; a second Customer A viewer (Amy, the demo host's `?viewer=amy-2`) sees it under "Shared" and opens it;
 * Customer B's viewer does not; a saved view restores its filter after a reload; a session without exploration shows
 * no Explore control and loads none of its code. svc on SQLite, then on PostgreSQL, each with its Chromium.
 */
const postgresUrl = inject('postgresUrl');
const TITLE = 'Revenue by category, shared by Ann';

for (const dialect of ['sqlite', 'postgres'] as const) {
  const skipped = !hasChromium ? 'no Chromium' : dialect === 'postgres' && postgresUrl === null ? 'no SVC_TEST_POSTGRES_URL' : undefined;
  (skipped === undefined ? describe : describe.skip)(`exploration in the embed on the demo host [${dialect}${skipped === undefined ? '' : `: SKIPPED, ${skipped}`}]`, () => {
    let demo: DemoStack;
    let browser: Chromium | undefined;

    // One Chromium at a time (as comments-live.test.ts: one per database), closed before the demo stack, whose
    // servers then have no open connection to wait for.
    beforeAll(async () => {
      demo = await startDemoStack({ webhooks: false, ...(dialect === 'postgres' ? { postgresUrl: postgresUrl! } : {}) });
      browser = await launchChromium({ timeout: 20_000 });
    }, 60_000);
    afterAll(() => closeAll(browser, demo), 60_000);

    /** The demo host as one viewer (`query`: `customer=` and `viewer=`), once the embed's dashboard is loaded. */
    async function openAs(query: string): Promise<{ page: Page; frame: Frame }> {
      const page = await browser!.context.newPage();
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${demo.hostOrigin}/?${query}`);
      await page.locator('#log').filter({ hasText: 'dashboard-loaded' }).waitFor({ timeout: 30_000 });
      return { page, frame: embedFrame(page, demo.svc.origin) };
    }

    async function expectNoBlockingAxe(target: Frame, name: string): Promise<void> {
      const violations = blocking(await runAxe(target));
      expect(violations.length === 0 ? '' : `${name}:\n${describeViolations(violations)}`).toBe('');
    }

    it('(1) Customer A\'s viewer explores from "Revenue over time", changes it to revenue by category, and saves it shared', async () => {
      const { page, frame } = await openAs('customer=customer-a');
      const trend = frame.locator('[data-widget-id="trend"]');
      // The demo host allows exports: Explore is an item of the widget's menu (its button and its chart stay its two tab stops).
      await trend.locator('button.export-trigger').click();
      await frame.locator('[role="menu"][data-export-for="trend"]').getByRole('menuitem', { name: 'Explore Revenue over time' }).click();
      const dialog = frame.getByRole('dialog', { name: 'Explore' });
      await dialog.waitFor();
      // The builder starts from the widget's query: revenue by month of orders.created_at.
      await expect.poll(() => dialog.getByRole('checkbox', { name: 'Revenue', exact: true }).isChecked()).toBe(true);
      expect(await dialog.getByLabel('Time dimension').inputValue()).toBe('orders.created_at');
      expect(await dialog.getByLabel('Grain').inputValue()).toBe('month');
      // Its live preview runs through explore/query under Ann's policy.
      await dialog.locator('.preview-status .source').waitFor({ timeout: 20_000 });
      await expectNoBlockingAxe(frame, 'the builder in the embed');
      // Revenue by category: no time series, the products' category.
      await dialog.getByLabel('Time dimension').selectOption('');
      await dialog.getByRole('checkbox', { name: 'Category' }).first().check();
      await expect.poll(() => dialog.getByLabel('Chart', { exact: true }).inputValue()).toBe('bar');
      await expect.poll(async () => (await dialog.locator('.preview-status .source').textContent()) ?? '', { timeout: 20_000 }).toMatch(/rows/);
      await expect.poll(() => dialog.locator('.preview-table tbody tr').count()).toBeGreaterThan(1);
      await dialog.getByLabel('Chart title').fill(TITLE);
      await dialog.getByRole('radio', { name: 'Everyone at my company' }).check();
      await dialog.getByRole('button', { name: 'Save chart' }).click();
      await expect.poll(() => frame.locator('.explore > [role="status"]').textContent()).toBe(`“${TITLE}” is saved.`);
      // Back (Escape) returns to the dashboard and to the widget's menu button.
      await dialog.press('Escape');
      await expect.poll(() => dialog.count()).toBe(0);
      await expect.poll(() => frame.evaluate(() => document.activeElement?.closest('[data-widget-id]')?.getAttribute('data-widget-id'))).toBe('trend');
      // In Ann's own list, as hers.
      await frame.getByRole('button', { name: 'Charts' }).click();
      const mine = frame.locator('#explore-charts section', { has: frame.getByRole('heading', { name: 'My charts' }) });
      await mine.getByRole('button', { name: `Open ${TITLE}` }).waitFor();
      await expect.poll(() => mine.getByRole('button', { name: `Rename ${TITLE}` }).count()).toBe(1);
      await expectNoBlockingAxe(frame, 'the charts panel');
      await page.close();
    }, 120_000);

    it('(2) a second Customer A viewer sees it under "Shared", opens it (run under her own policy), and cannot rename or delete it', async () => {
      const { page, frame } = await openAs('customer=customer-a&viewer=amy-2');
      expect(await page.locator('#viewer-id').textContent()).toBe('amy-2');
      await frame.getByRole('button', { name: 'Charts' }).click();
      const shared = frame.locator('#explore-charts section', { has: frame.getByRole('heading', { name: 'Shared' }) });
      const open = shared.getByRole('button', { name: `Open ${TITLE}` });
      await open.waitFor();
      expect(await shared.locator('li').allTextContents()).toEqual([expect.stringContaining(`${TITLE}shared by ann`)]);
      expect(await shared.getByRole('button', { name: `Rename ${TITLE}` }).count()).toBe(0);
      expect(await shared.getByRole('button', { name: `Delete ${TITLE}` }).count()).toBe(0);
      await open.click();
      const dialog = frame.getByRole('dialog', { name: 'Explore' });
      const chart = dialog.locator('.explore-chart');
      await chart.locator('.explore-chart-body').waitFor({ timeout: 20_000 });
      expect(await chart.getByRole('heading', { name: TITLE }).count()).toBe(1);
      await expectNoBlockingAxe(frame, 'a shared chart open');
      await dialog.getByRole('button', { name: /Back to the dashboard/ }).click();
      await page.close();
    }, 120_000);

    it('(3) Customer B\'s viewer does not see it', async () => {
      const { page, frame } = await openAs('customer=customer-b');
      await frame.getByRole('button', { name: 'Charts' }).click();
      const panel = frame.locator('#explore-charts');
      await panel.getByRole('heading', { name: 'Shared' }).waitFor();
      expect(await panel.getByText(TITLE).count()).toBe(0);
      expect(await panel.locator('li').count()).toBe(0);
      await page.close();
    }, 120_000);

    it('(4) a saved view restores its filter after a reload', async () => {
      const { page, frame } = await openAs('customer=customer-a');
      const category = frame.locator('[data-widget-id="f-category"] select');
      await expect.poll(() => category.locator('option').count()).toBeGreaterThan(1);
      const value = await category.locator('option').nth(1).getAttribute('value');
      await category.selectOption(value!);
      await frame.locator('.filter-chip[data-filter="products.category"]').waitFor();
      await frame.getByRole('button', { name: 'Views' }).click();
      await frame.getByLabel('View name').fill('One category');
      await frame.getByRole('button', { name: 'Save view' }).click();
      await frame.locator('#explore-views').getByRole('button', { name: 'Open view One category' }).waitFor();
      await expectNoBlockingAxe(frame, 'the views panel');
      await page.reload();
      await page.locator('#log').filter({ hasText: 'dashboard-loaded' }).waitFor({ timeout: 30_000 });
      const again = embedFrame(page, demo.svc.origin);
      expect(await again.locator('.filter-chip').count()).toBe(0);
      await again.getByRole('button', { name: 'Views' }).click();
      await again.locator('#explore-views').getByRole('button', { name: 'Open view One category' }).click();
      await again.locator('.filter-chip[data-filter="products.category"]').waitFor();
      expect(await again.locator('[data-widget-id="f-category"] select').inputValue()).toBe(value);
      await page.close();
    }, 120_000);

    it('shows no Explore control and loads no explore code for a session without exploration', async () => {
      const sessionId = await demo.svc.mint({ dashboards: ['sales-performance'], securityContext: { tenant: 'customer-a' } });
      const page = await browser!.context.newPage();
      const scripts: string[] = [];
      page.on('request', (request) => { if (request.resourceType() === 'script' || request.resourceType() === 'stylesheet') scripts.push(request.url()); });
      await page.goto(`${demo.svc.origin}/embed/dashboard/sales-performance?session=${encodeURIComponent(sessionId)}`);
      await page.locator('[data-widget-id="trend"] svg').waitFor({ timeout: 30_000 });
      await page.locator('[data-widget-id="kpi-orders"] .kpi-value').waitFor();
      expect(await page.getByRole('button', { name: /^Explore/ }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Charts' }).count()).toBe(0);
      expect(scripts.filter((url) => /\/Explore-[^/]*\.(js|css)$/.test(url))).toEqual([]);
      expect(scripts.some((url) => /\/embed\/assets\//.test(url))).toBe(true);
      await page.close();
    }, 120_000);
  });
}
