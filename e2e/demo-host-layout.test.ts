import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, pngPixels } from './browser.js';
import type { Chromium } from './browser.js';
import { closeAll, openDemoPage, startDemoStack } from './embed-harness.js';
import type { DemoStack } from './embed-harness.js';

// Issue 31 items 4 and 5: the demo host (as `npm start` serves it, with autoResize) over the demo account of
// apps/server/demo/demo.json. The grid takes the frame's width, the first screen at 1280 x 800 shows data, and a
// drill-down opens where the viewer is looking, whatever the frame's height.

const ARTIFACTS = 'e2e/artifacts';

interface Rect { top: number; bottom: number; left: number; right: number }

const suite = hasChromium ? describe : describe.skip;

suite('the demo host: the grid, the first screen and the drill-down dialog (Chromium)', () => {
  let demo: DemoStack;
  let browser: Chromium;

  beforeAll(async () => {
    demo = await startDemoStack({ publicId: 'sales-performance', webhooks: false });
    browser = await launchChromium({ timeout: 20_000 });
  }, 60_000);

  afterAll(() => closeAll(browser, demo));

  /** The demo host at `width` x `height`, once the dashboard reported dashboard-loaded and the frame took its height. */
  async function open(width: number, height: number): Promise<{ page: Page; frame: Frame }> {
    const { page, frame } = await openDemoPage(browser.context, demo, { viewport: { width, height }, timeout: 20_000 });
    // autoResize: the iframe is as tall as the dashboard (react-grid-layout animates heights for 200 ms).
    await expect.poll(async () => {
      const frameHeight = await page.evaluate(() => document.querySelector('#embed iframe')!.getBoundingClientRect().height);
      const contentHeight = await frame.evaluate(() => Math.ceil(document.querySelector('.embed > *')!.getBoundingClientRect().bottom));
      return Math.abs(frameHeight - contentHeight);
    }).toBeLessThanOrEqual(1);
    return { page, frame };
  }

  /** Where `selector`'s first match in the frame is in the host's viewport. */
  async function inHost(page: Page, frame: Frame, selector: string): Promise<Rect> {
    const offset = await page.evaluate(() => {
      const box = document.querySelector('#embed iframe')!.getBoundingClientRect();
      return { top: box.top, left: box.left };
    });
    const box = await frame.locator(selector).first().evaluate((n) => {
      const r = n.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
    });
    return { top: box.top + offset.top, bottom: box.bottom + offset.top, left: box.left + offset.left, right: box.right + offset.left };
  }

  it('shows the KPIs and a drawn chart above the fold at 1280 x 800 (the comment panel starts as its button)', async () => {
    const { page, frame } = await open(1280, 800);
    const fold = 800;
    // The panel would squeeze the grid out of its author's layout at this width: it starts collapsed, with its count.
    const toggle = frame.locator('button.comments-toggle');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await expect.poll(() => frame.getByTestId('comments-count').textContent()).toMatch(/^\d+\+?$/);
    expect(await frame.locator('#comment-panel').isHidden()).toBe(true);

    for (const id of ['kpi-revenue', 'kpi-orders']) {
      const box = await inHost(page, frame, `[data-widget-id="${id}"]`);
      expect(box.bottom, `${id} ends above the fold`).toBeLessThanOrEqual(fold);
      expect(await frame.locator(`[data-widget-id="${id}"] .kpi-value`).innerText()).toMatch(/\d/);
    }

    // Charts whose marks vega drew (svg paths with a shape), wholly above the fold.
    const charts = await frame.evaluate(() => [...document.querySelectorAll('[data-widget-id] .vega-chart svg')].map((svg) => {
      const marks = [...svg.querySelectorAll('.role-mark path, .role-mark line, .role-mark rect, .role-mark circle')]
        .filter((mark) => mark.getAttribute('d') !== '' && mark.getBoundingClientRect().width > 0);
      const box = svg.getBoundingClientRect();
      return { id: (svg.closest('[data-widget-id]') as HTMLElement).dataset.widgetId!, marks: marks.length, top: box.top, bottom: box.bottom, left: box.left, right: box.right };
    }));
    const frameTop = await page.evaluate(() => document.querySelector('#embed iframe')!.getBoundingClientRect().top);
    const aboveFold = charts.filter((chart) => chart.marks > 0 && chart.top + frameTop >= 0 && chart.bottom + frameTop <= fold);
    expect(aboveFold.map((chart) => chart.id), `charts with marks above the fold, of ${JSON.stringify(charts)}`).not.toEqual([]);

    // The screenshot shows it: inside the chart's box, pixels of the marks' colour, not a blank widget.
    const chart = aboveFold[0]!;
    const frameLeft = await page.evaluate(() => document.querySelector('#embed iframe')!.getBoundingClientRect().left);
    const shot = await page.screenshot({ path: `${ARTIFACTS}/demo-host-1280x800.png` });
    const box = { top: chart.top + frameTop, bottom: chart.bottom + frameTop, left: chart.left + frameLeft, right: chart.right + frameLeft };
    const data = await pngPixels(page, shot, { x: Math.round(box.left), y: Math.round(box.top), width: Math.round(box.right - box.left), height: Math.round(box.bottom - box.top) });
    // Saturated pixels: the marks (vega's default blue), not the grey axes and text or the white ground.
    let drawn = 0;
    for (let i = 0; i < data.length; i += 4) if (Math.max(data[i]!, data[i + 1]!, data[i + 2]!) - Math.min(data[i]!, data[i + 1]!, data[i + 2]!) > 60) drawn++;
    expect(drawn, `coloured pixels of ${chart.id} in the screenshot`).toBeGreaterThan(200);
    await page.close();
  });

  it('opens the comment panel when the grid beside it keeps the author layout (1920 px)', async () => {
    const { page, frame } = await open(1920, 1080);
    expect(await frame.locator('button.comments-toggle').getAttribute('aria-expanded')).toBe('true');
    expect(await frame.locator('#comment-panel').isVisible()).toBe(true);
    await page.close();
  });

  it.each([768, 1046])('gives the grid the frame\'s width with the comment panel open (demo host at %i px)', async (width) => {
    const { page, frame } = await open(width, 900);
    const toggle = frame.locator('button.comments-toggle');
    if (await toggle.getAttribute('aria-expanded') === 'false') await toggle.click();
    await frame.locator('#comment-panel').waitFor();
    const frameWidth = await page.evaluate(() => document.querySelector('#embed iframe')!.getBoundingClientRect().width);
    expect(frameWidth).toBeLessThanOrEqual(720);
    // 16 px of padding on each side, nothing kept for a panel that is no longer beside the grid.
    await expect.poll(() => frame.locator('.widget-grid').evaluate((n) => n.getBoundingClientRect().width)).toBeGreaterThanOrEqual(frameWidth - 33);
    // The panel unfolds under its button, above the dashboard.
    const panel = await frame.locator('#comment-panel').evaluate((n) => n.getBoundingClientRect().bottom);
    expect(panel).toBeLessThanOrEqual(await frame.locator('.dashboard-header').evaluate((n) => n.getBoundingClientRect().top));
    await page.close();
  });

  it('keeps "Export ▾" on one line and shows names, not three letters, in the table at 420 px', async () => {
    const { page, frame } = await open(420, 900);
    const triggers = await frame.locator('button.export-trigger').evaluateAll((buttons) => buttons.map((b) => {
      const style = getComputedStyle(b);
      const lineHeight = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.45;
      const chrome = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom) + parseFloat(style.borderTopWidth) + parseFloat(style.borderBottomWidth);
      return { lines: Math.round((b.getBoundingClientRect().height - chrome) / lineHeight), text: b.textContent };
    }));
    expect(triggers.length).toBeGreaterThan(5);
    for (const trigger of triggers) expect(trigger.lines, `${trigger.text} is on one line`).toBe(1);

    // Top customers: the name and city columns show at least 7 characters before their ellipsis (they showed 3).
    const widths = await frame.locator('[data-widget-id="top-customers"]').evaluate((widget) => {
      const cell = widget.querySelector('.table-row [role="gridcell"]') as HTMLElement;
      const probe = document.createElement('span');
      probe.textContent = '0000000000';
      probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap';
      cell.append(probe);
      const ch = probe.getBoundingClientRect().width / 10;
      probe.remove();
      const cells = [...widget.querySelectorAll('.table-row')[0]!.querySelectorAll('[role="gridcell"]')] as HTMLElement[];
      return cells.map((c) => ({ chars: c.getBoundingClientRect().width / ch, clipped: c.scrollWidth > c.clientWidth + 1, numeric: c.classList.contains('numeric') }));
    });
    for (const [i, cell] of widths.entries()) {
      if (cell.numeric) expect(cell.clipped, `figure column ${i} is never clipped`).toBe(false);
      else expect(cell.chars, `text column ${i} shows at least 7 characters`).toBeGreaterThanOrEqual(6.9);
    }
    await page.close();
  });

  it.each([1920, 420])('opens a drill-down in the visible part of the host page with autoResize (%i px): its title and Back are on screen', async (width) => {
    const { page, frame } = await open(width, 900);
    // A mark far down the dashboard: the frame is several screens tall at 420 px.
    const mark = frame.locator('[data-widget-id="top-customers"] .drillable').first();
    await mark.scrollIntoViewIfNeeded();
    await mark.click();
    const dialog = frame.locator('[role="dialog"]');
    await dialog.locator('[data-testid="drill-count"]').waitFor();
    const back = dialog.getByRole('button', { name: 'Back to the dashboard' });
    await expect.poll(() => back.evaluate((n) => n === document.activeElement)).toBe(true);
    const viewport = page.viewportSize()!;
    for (const selector of ['#drill-title', '.drill-panel header button']) {
      const box = await inHost(page, frame, selector);
      expect(box.top, `${selector} top in the host viewport`).toBeGreaterThanOrEqual(0);
      expect(box.bottom, `${selector} bottom in the host viewport`).toBeLessThanOrEqual(viewport.height);
    }
    const panel = await inHost(page, frame, '.drill-panel');
    expect(panel.bottom).toBeLessThanOrEqual(viewport.height);
    await page.screenshot({ path: `${ARTIFACTS}/demo-host-drill-${width}.png` });
    await back.click();
    await dialog.waitFor({ state: 'detached' });
    await page.close();
  });
});
