import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blocking, countViolations, describeViolations, runAxe } from './axe.js';
import type { AxeViolation } from './axe.js';
import { hasChromium, launchChromium } from './browser.js';
import type { Chromium } from './browser.js';
import { closeAll, openDemoPage, startDemoStack } from './embed-harness.js';
import type { DemoStack, RunningSvc } from './embed-harness.js';

// Issue 31 items 10 and 11: the demo (apps/server/demo/demo.json, as `npm start` loads it) behind the demo host,
// driven with real key presses in Chromium, and checked with axe-core in every state the issue names.

const suite = hasChromium ? describe : describe.skip;

suite('accessibility of the demo in Chromium', () => {
  let demo: DemoStack;
  let svc: RunningSvc;
  let browser: Chromium;

  beforeAll(async () => {
    demo = await startDemoStack();
    svc = demo.svc;
    browser = await launchChromium({ timeout: 20_000 });
  }, 60_000);

  afterAll(() => closeAll(browser, demo));

  /** The demo host at 1280 × 800 with its embed loaded: every widget drew its data (the host logged dashboard-loaded). */
  async function openDemo(): Promise<{ page: Page; frame: Frame }> {
    const { page, frame } = await openDemoPage(browser.context, demo, { viewport: { width: 1280, height: 800 } });
    await frame.locator('[data-widget-id="top-customers"] [role="row"][aria-rowindex="2"]').waitFor();
    return { page, frame };
  }

  /** Opens the comment panel by its button when it started collapsed (the demo host at 1280 px: comments 'auto'). */
  async function openCommentPanel(frame: Frame): Promise<void> {
    const toggle = frame.locator('button.comments-toggle');
    if (await toggle.getAttribute('aria-expanded') === 'false') await toggle.click();
    await frame.locator('#comment-panel .composer-new textarea').waitFor({ state: 'visible' });
    // Its first read done (a thread list or the empty line, no "Loading"): a post typed before it could be redrawn away.
    await frame.locator('#comment-panel .comments-empty, #comment-panel .comments-threads').first().waitFor({ state: 'visible' });
    await expect.poll(() => frame.locator('#comment-panel .comments-loading').count()).toBe(0);
  }

  const report: Record<string, ReturnType<typeof countViolations>> = {};
  async function expectNoBlocking(name: string, target: Page | Frame): Promise<AxeViolation[]> {
    const violations = await runAxe(target);
    report[name] = countViolations(violations);
    console.log(`axe ${name}: ${JSON.stringify(report[name])}`);
    return violations;
  }

  it('axe finds no serious or critical violation on the demo host page or in the embed (light, dark, export menu, drill dialog, comments "All")', async () => {
    const { page, frame } = await openDemo();
    const found: Record<string, AxeViolation[]> = {};
    found.host = await expectNoBlocking('host', page);
    found.light = await expectNoBlocking('embed light', frame);
    await frame.locator('[data-widget-id="top-customers"] button.export-trigger').click();
    await frame.locator('[role="menu"][data-export-for="top-customers"]').waitFor({ state: 'visible' });
    found.exportMenu = await expectNoBlocking('embed export menu open', frame);
    await frame.locator('[data-widget-id="top-customers"] button.export-trigger').press('Escape');
    await frame.locator('[data-widget-id="kpi-orders"] .kpi-value').click();
    await frame.locator('.drill-view [data-testid="drill-count"]').waitFor();
    found.drill = await expectNoBlocking('embed drill dialog open', frame);
    await frame.locator('.drill-view').press('Escape');
    // At 1280 x 800 the panel starts as its button (comments: 'auto'): open it as a viewer would.
    await openCommentPanel(frame);
    // A resolved thread, so that the "All" tab shows an open and a resolved one (the resolved badge).
    for (const body of ['First look at the numbers', 'Second thread']) {
      const box = frame.locator('.composer-new textarea');
      const post = frame.locator('.composer-new button[type="submit"]');
      await box.fill(body);
      await expect.poll(() => box.inputValue()).toBe(body);
      await post.click();
      // Under a loaded machine a click on Post was seen to send nothing (the text still in the box, no request):
      // clicked again while the text waits there. What is tested here is axe on the "All" tab, not posting.
      await expect.poll(async () => {
        if (await frame.locator('.comments-threads').getByText(body).count() > 0) return true;
        if (await box.inputValue() === body) await post.click();
        return false;
      }, { timeout: 30_000, interval: 2_500 }).toBe(true);
    }
    await frame.locator('.comments-threads li').first().getByRole('button', { name: 'Resolve' }).click();
    await frame.locator('.comments-filter').getByRole('button', { name: 'All' }).click();
    await frame.locator('.thread-badge').first().waitFor();
    found.comments = await expectNoBlocking('embed comments All', frame);
    await page.getByRole('button', { name: 'Dark' }).click();
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('dark');
    await frame.locator('[data-widget-id="trend"] svg').waitFor();
    found.dark = await expectNoBlocking('embed dark', frame);
    found.hostDark = await expectNoBlocking('host after dark', page);
    const failures = Object.entries(found).filter(([, v]) => blocking(v).length > 0).map(([name, v]) => `${name}:\n${describeViolations(blocking(v))}`);
    expect(failures.join('\n\n')).toBe('');
    await page.close();
  }, 120_000);

  /** Where the embed's focus is: the focused element's tag, classes and widget, or `host` when it left the frame. */
  async function focused(page: Page, frame: Frame): Promise<{ inFrame: boolean; tag: string; widget: string | undefined; cell: string | undefined; dialog: boolean; text: string }> {
    const inFrame = await page.evaluate(() => document.activeElement?.tagName === 'IFRAME');
    const inside = await frame.evaluate(() => {
      const element = document.activeElement as HTMLElement | null;
      return {
        tag: `${element?.tagName.toLowerCase() ?? ''}${element?.className && typeof element.className === 'string' ? `.${element.className.split(' ').join('.')}` : ''}`,
        widget: element?.closest<HTMLElement>('[data-widget-id]')?.dataset.widgetId,
        cell: element?.dataset.cell,
        dialog: element?.closest('.drill-view') !== null && element?.closest('.drill-view') !== undefined,
        text: (element?.textContent ?? '').slice(0, 60),
      };
    });
    return { inFrame, ...inside };
  }

  it("reaches the comment box from the demo host's iframe in at most 40 Tab presses (one tab stop per widget, two for a chart with its export menu), and in 3 key presses by the skip link", async () => {
    const { page, frame } = await openDemo();
    const commentBox = frame.locator('#comment-panel .composer-new textarea');
    const isOnCommentBox = () => commentBox.evaluate((box) => document.activeElement === box);
    // Start on the host page just before the iframe (its heading): the first Tab enters the frame.
    const beforeFrame = () => page.locator('#embed-heading').evaluate((heading) => { heading.tabIndex = -1; heading.focus(); });
    await beforeFrame();
    const stops: Array<Awaited<ReturnType<typeof focused>>> = [];
    let presses = 0;
    const isOnCollapsedToggle = () => frame.locator('button.comments-toggle[aria-expanded="false"]').evaluate((toggle) => document.activeElement === toggle).catch(() => false);
    while (presses < 500) {
      await page.keyboard.press('Tab');
      presses += 1;
      if (await isOnCommentBox()) break;
      stops.push(await focused(page, frame));
      // The panel starts as its button at 1280 px: Enter opens it (a key press like any other), and Tab goes on into it.
      if (await isOnCollapsedToggle()) {
        await page.keyboard.press('Enter');
        presses += 1;
      }
    }
    console.log(`Tab presses from the demo host's iframe to the comment box: ${presses}`);
    expect(await isOnCommentBox()).toBe(true);
    expect(presses).toBeLessThanOrEqual(40);
    // Every widget is at most two stops (its export menu button and its content): never a stop per cell or mark.
    const perWidget = new Map<string, number>();
    for (const stop of stops) if (stop.widget !== undefined) perWidget.set(stop.widget, (perWidget.get(stop.widget) ?? 0) + 1);
    expect([...perWidget].filter(([id, count]) => count > 2 && id !== 'ask')).toEqual([]);

    // The skip links: the frame's first two stops; Enter on the second puts the focus in the comment box.
    await beforeFrame();
    await page.keyboard.press('Tab');
    expect((await focused(page, frame)).text).toBe('Skip to the widgets');
    await page.keyboard.press('Tab');
    expect((await focused(page, frame)).text).toBe('Skip to the comments');
    // The panel was opened above; closed again, the skip link opens it and still lands in the box.
    await frame.locator('button.comments-toggle[aria-expanded="true"]').click();
    await frame.locator('.skip-links a', { hasText: 'Skip to the comments' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(isOnCommentBox, { timeout: 5_000 }).toBe(true);
    expect(await frame.locator('button.comments-toggle').getAttribute('aria-expanded')).toBe('true');
    // The first skip link goes past the header's controls to the first widget's first stop.
    await page.keyboard.press('Shift+Tab');
    await beforeFrame();
    await page.keyboard.press('Tab');
    expect((await focused(page, frame)).text).toBe('Skip to the widgets');
    await page.keyboard.press('Enter');
    expect((await focused(page, frame)).widget).toBe('intro');
    await page.close();
  }, 120_000);

  it('moves through a table with arrow, Home, End and Page keys (one tab stop, rows scrolled in), and Enter on a figure drills into it', async () => {
    const { page, frame } = await openDemo();
    const grid = frame.locator('[data-widget-id="top-customers"] [role="grid"]');
    expect(await grid.locator('[tabindex="0"]').count()).toBe(1);
    await grid.locator('[tabindex="0"]').focus();
    const cell = async () => (await focused(page, frame)).cell;
    // The focus moves in the render after the key press.
    const expectAt = (expected: string) => expect.poll(cell, { timeout: 5_000 }).toBe(expected);
    await expectAt('1:0');
    await page.keyboard.press('ArrowRight');
    await expectAt('1:1');
    for (let i = 0; i < 3; i += 1) await page.keyboard.press('ArrowDown');
    await expectAt('4:1');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await expectAt('4:0');
    const name = (await focused(page, frame)).text;
    expect(name).toBe(await grid.locator('[role="row"][aria-rowindex="5"] [role="gridcell"]').first().innerText());
    await page.keyboard.press('PageDown');
    await expectAt('14:0');
    await page.keyboard.press('Control+End');
    const rows = Number(await grid.getAttribute('aria-rowcount'));
    const cols = Number(await grid.getAttribute('aria-colcount'));
    // The last row, out of the DOM until the virtualizer scrolled to it.
    await expectAt(`${rows - 1}:${cols - 1}`);
    await page.keyboard.press('Control+Home');
    await expectAt('0:0');
    await page.keyboard.press('ArrowUp');
    await expectAt('0:0');
    // Still one tab stop: Tab leaves the table, Shift+Tab comes back to the cell it left.
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    await expectAt(`1:${cols - 1}`);
    expect(await grid.locator('[tabindex="0"]').count()).toBe(1);
    await page.keyboard.press('Tab');
    expect((await focused(page, frame)).widget).not.toBe('top-customers');
    await page.keyboard.press('Shift+Tab');
    await expectAt(`1:${cols - 1}`);
    // The last column is a measure's: Enter drills into the first customer's figure.
    await page.keyboard.press('Enter');
    await frame.locator('.drill-view [data-testid="drill-count"]').waitFor();
    expect(await frame.locator('#drill-title').innerText()).toContain('Top customers');
    expect((await focused(page, frame)).dialog).toBe(true);
    await page.keyboard.press('Escape');
    await frame.locator('.drill-view').waitFor({ state: 'detached' });
    await expectAt(`1:${cols - 1}`);
    await page.close();
  }, 120_000);

  it('walks the marks of a chart with the arrow keys and drills into one with Enter (a bar chart and the Sankey)', async () => {
    const { page, frame } = await openDemo();
    for (const id of ['by-category', 'flows']) {
      const chart = frame.locator(`[data-widget-id="${id}"] .chart[tabindex="0"]`);
      await chart.focus();
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowRight');
      // The second mark in reading order is outlined and read out.
      expect(await frame.locator(`[data-widget-id="${id}"] [data-key-active]`).count()).toBe(1);
      const said = await frame.locator(`[data-widget-id="${id}"] [aria-live="polite"]`).innerText();
      expect(said).toMatch(/\(2\/\d+\)$/);
      await page.keyboard.press('Enter');
      await frame.locator('.drill-view [data-testid="drill-count"]').waitFor();
      const rows = Number((await frame.locator('.drill-view [data-testid="drill-count"]').innerText()).replace(/\D/g, ''));
      expect(rows).toBeGreaterThan(0);
      await page.keyboard.press('Escape');
      await frame.locator('.drill-view').waitFor({ state: 'detached' });
      expect((await focused(page, frame)).widget).toBe(id);
    }
    // The host heard both drill-downs, each naming its widget.
    await expect.poll(() => page.locator('#log').innerText()).toContain('by-category');
    expect(await page.locator('#log').innerText()).toContain('flows');
    await page.close();
  }, 120_000);

  it('keeps the focus in the drill dialog (Tab and Shift+Tab cycle, the host page is not reached) and returns it where it was on close', async () => {
    const { page, frame } = await openDemo();
    const kpi = frame.locator('[data-widget-id="kpi-orders"] .kpi-value');
    await kpi.focus();
    await page.keyboard.press('Enter');
    await frame.locator('.drill-view [data-testid="drill-count"]').waitFor();
    const seen = new Set<string>();
    for (const key of ['Tab', 'Tab', 'Tab', 'Tab', 'Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab']) {
      await page.keyboard.press(key);
      const where = await focused(page, frame);
      expect(where.inFrame, key).toBe(true);
      expect(where.dialog, key).toBe(true);
      seen.add(where.tag);
    }
    // Every one of its stops was reached: the Back button, the CSV export of its rows (the demo host allows exports)
    // and the scrolling table.
    expect(seen.size).toBe(3);
    // Focus sent outside it (a click on the dashboard behind it) comes back to it.
    await frame.locator('#dashboard-title').evaluate((title) => { title.tabIndex = -1; title.focus(); });
    expect((await focused(page, frame)).dialog).toBe(true);
    await page.keyboard.press('Escape');
    await frame.locator('.drill-view').waitFor({ state: 'detached' });
    expect(await kpi.evaluate((button) => document.activeElement === button)).toBe(true);
    await page.close();
  }, 120_000);

  // Scalar's client-library tabs hold a "more" button that is no tab (aria-required-children): its markup, left as
  // it is (docs/decisions.md); every other serious or critical violation of the reference is repaired.
  const SCALAR_KNOWN = new Set(['aria-required-children']);

  it('axe finds no serious violation on /docs (the API reference, Scalar), and no critical one but the known one', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${svc.origin}/docs`);
    await page.getByRole('heading', { name: 'svc platform and embed API' }).waitFor();
    await page.waitForLoadState('networkidle');
    const violations = await expectNoBlocking('docs', page);
    expect(describeViolations(blocking(violations).filter((v) => !SCALAR_KNOWN.has(v.id)))).toBe('');
    // Before the repair: 43 aria-allowed-attr (critical) and 627 color-contrast (serious).
    expect(violations.find((v) => v.id === 'color-contrast')).toBeUndefined();
    await page.close();
  }, 120_000);
});
