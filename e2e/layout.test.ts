import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium, pngPixels } from './browser.js';
import { DEMO_ADMIN_KEY, demoAccountFor, hostEventsNamed, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack, readDemoAccount, waitForHostEvent } from './embed-harness.js';
import type { HostWindow } from './embed-harness.js';

interface DemoWidget { id: string; position: { x: number; y: number; w: number; h: number }; config?: { parentId?: string }; responsiveLayouts?: Record<string, unknown> }
/** The demo account as far as its layout goes: the dashboards' grids and widgets. */
interface DemoLayout { deployments: Array<{ items: Array<{ ref: string; dashboard?: { config: { layout: { rowHeight: number; margin: [number, number] }; widgets: DemoWidget[] } } }> }> }

/** A host page whose embed container is as wide as the page; the iframe takes the content's height (autoResize). */
const HOST_PAGE = hostPageHtml();

const ARTIFACTS = 'e2e/artifacts';
const suite = hasChromium ? describe : describe.skip;

interface Box { id: string; left: number; top: number; right: number; bottom: number }

suite('the demo dashboard at any width, the iframe fitted to its content, the HTML widget in both schemes (Chromium)', () => {
  const stack = setUpEmbedStack({
    page: HOST_PAGE,
    account: demoAccountFor,
    svc: { adminKey: DEMO_ADMIN_KEY },
    mint: (svc) => svc.mint({ securityContext: { tenant: 'customer-a' } }),
    browser: { timeout: 20_000 },
  });
  const demo = readDemoAccount() as unknown as DemoLayout;
  const dashboard = demo.deployments[0]!.items.find((item) => item.ref === 'wb-sales-performance')!.dashboard!.config;
  const { rowHeight, margin } = dashboard.layout;
  const top = dashboard.widgets.filter((w) => w.config?.parentId === undefined);
  const readingOrder = [...top].sort((a, b) => a.position.y - b.position.y || a.position.x - b.position.x).map((w) => w.id);

  /** The demo dashboard in a page `width` px wide, with autoResize; resolves once every widget drew its data. */
  async function mount(width: number, extra: Record<string, unknown> = {}): Promise<{ page: Page; frame: Frame }> {
    const page = await openHostPage(stack.browser.context, `${stack.host.origin}/`, { viewport: { width, height: 900 } });
    const frame = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'dashboard', publicId: 'sales-performance', autoResize: true, ...extra }, { record: ['content-size', 'dashboard-loaded'] });
    await waitForHostEvent(page, 'dashboard-loaded', { timeout: 30_000 });
    return { page, frame };
  }

  /** How many content-size events the host heard. */
  const sizeCount = async (page: Page) => (await hostEventsNamed(page, 'content-size')).length;

  /** The boxes of the dashboard's top-level widgets (react-grid-layout's items), relative to the grid. */
  const boxesOf = (frame: Frame): Promise<{ width: number; boxes: Box[] }> => frame.evaluate(() => {
    const grid = document.querySelector('.widget-grid')!.getBoundingClientRect();
    const boxes = [...document.querySelectorAll('.widget-grid .react-grid-item')].map((item) => {
      const box = item.getBoundingClientRect();
      return { id: (item.querySelector('[data-widget-id]') as HTMLElement).dataset.widgetId!, left: box.left - grid.left, top: box.top - grid.top, right: box.right - grid.left, bottom: box.bottom - grid.top };
    });
    return { width: grid.width, boxes };
  });

  /** The iframe's height, and the height of the content inside it. */
  const heights = (page: Page, frame: Frame) => Promise.all([
    page.evaluate(() => document.querySelector('#embed iframe')!.getBoundingClientRect().height),
    frame.evaluate(() => Math.ceil(document.querySelector('.embed > *')!.getBoundingClientRect().bottom)),
  ]);

  it.each([420, 768, 1046, 1280, 1920])('lays the demo out at %i px: no overlap, no hole taller than a row, the reading order of the large layout', async (width) => {
    const { page, frame } = await mount(width);
    // The grid's items are placed after a first measure of its width.
    await expect.poll(async () => (await boxesOf(frame)).boxes.length).toBe(top.length);
    const { width: gridWidth, boxes } = await boxesOf(frame);
    for (const box of boxes) expect(box.right, `${box.id} stays inside the grid`).toBeLessThanOrEqual(gridWidth + 1);
    for (const a of boxes) {
      for (const b of boxes) {
        if (a === b) continue;
        const overlapX = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const overlapY = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        expect(overlapX > 1 && overlapY > 1, `${a.id} overlaps ${b.id}`).toBe(false);
      }
    }
    // Above every widget, the nearest widget it shares columns with (or the grid's top) is at most one empty row away.
    const maxGap = rowHeight + 2 * margin[1] + 1;
    for (const box of boxes) {
      const above = boxes.filter((a) => a.bottom <= box.top + 1 && Math.min(a.right, box.right) - Math.max(a.left, box.left) > 1);
      const gap = box.top - Math.max(0, ...above.map((a) => a.bottom));
      expect(gap, `a hole above ${box.id}`).toBeLessThanOrEqual(maxGap);
    }
    // Reading order: top to bottom, then left to right, as on the large layout. The revenue KPI has a place of its
    // own on the sm breakpoint (its responsiveLayouts), which wins: it is left out of the comparison.
    const own = new Set(top.filter((w) => w.responsiveLayouts !== undefined).map((w) => w.id));
    const shown = [...boxes].sort((a, b) => Math.round(a.top - b.top) || a.left - b.left).map((b) => b.id).filter((id) => !own.has(id));
    expect(shown).toEqual(readingOrder.filter((id) => !own.has(id)));
    // Small: every widget takes the grid's full width.
    if (width === 420) {
      for (const box of boxes) expect(box.right - box.left, `${box.id} is full width`).toBeGreaterThan(gridWidth - 2);
      // The container's children go one under the other, and the intro's wrapped text fits its widget.
      const childBoxes = await frame.evaluate(() => ['by-status', 'returns'].map((id) => document.querySelector(`[data-widget-id="${id}"]`)!.getBoundingClientRect()).map((r) => ({ top: r.top, bottom: r.bottom, width: r.width })));
      expect(childBoxes[1]!.top).toBeGreaterThan(childBoxes[0]!.bottom);
      expect(childBoxes[0]!.width).toBeCloseTo(childBoxes[1]!.width, 0);
      expect(await frame.locator('[data-widget-id="intro"]').evaluate((n) => n.scrollHeight <= n.clientHeight + 1)).toBe(true);
      expect(await frame.locator('[data-widget-id="status"]').evaluate((n) => n.scrollHeight <= n.clientHeight + 1)).toBe(true);
    }
    // The frame is as tall as the dashboard: nothing scrolls inside it.
    await expect.poll(async () => {
      const [frameHeight, contentHeight] = await heights(page, frame);
      return Math.abs(frameHeight - contentHeight);
    }).toBeLessThanOrEqual(1);
    await page.screenshot({ path: `${ARTIFACTS}/layout-${width}.png`, fullPage: true });
    await page.close();
  });

  it('fits the iframe to its content with autoResize: it grows and shrinks with the filter chips and the comment panel, and settles', async () => {
    // The panel open from the start (`auto` starts it as its button at this width), to see the frame follow it.
    const { page, frame } = await mount(700, { comments: 'open' });
    /**
     * Waits until no content-size event came for 500 ms (react-grid-layout animates its height for 200 ms) and the
     * iframe's height is the content's, or 10 s passed: under load a relayout's events come more than 500 ms apart.
     */
    const quiet = async () => {
      let count = await sizeCount(page);
      for (const end = Date.now() + 10_000; Date.now() < end;) {
        await page.waitForTimeout(500);
        const now = await sizeCount(page);
        const [frameHeight, contentHeight] = await heights(page, frame);
        if (now === count && Math.abs(frameHeight - contentHeight) <= 1) return;
        count = now;
      }
    };
    const settled = async () => {
      await quiet();
      // Settled: the iframe's height is the content's, and nothing more comes (no loop).
      const [frameHeight, contentHeight] = await heights(page, frame);
      expect(Math.abs(frameHeight - contentHeight)).toBeLessThanOrEqual(1);
      const before = await sizeCount(page);
      await page.waitForTimeout(500);
      expect(await sizeCount(page)).toBe(before);
      return frameHeight;
    };
    const first = await settled();
    expect(first).toBeGreaterThan(1500);
    // Nothing scrolls inside the frame.
    expect(await frame.evaluate(() => document.scrollingElement!.scrollHeight <= window.innerHeight + 1)).toBe(true);

    // A filter that no order matches empties the widgets and adds its chip: the frame grows by the chip's row...
    await page.evaluate(() => (window as unknown as HostWindow).handle.setFilter('products', 'category', ['No such category']));
    await frame.locator('.filter-chip').waitFor();
    const filtered = await settled();
    expect(filtered).toBeGreaterThan(first);
    // ...and shrinks back when the chip is removed.
    await frame.locator('.filter-chip button').click();
    await frame.locator('.filter-chip').waitFor({ state: 'detached' });
    expect(await settled()).toBe(first);

    // The comment panel (open at first) is above the dashboard at this width: the frame shrinks when it closes,
    // and grows back when it opens again.
    await frame.locator('.comments-toggle[aria-expanded="true"]').click();
    await frame.locator('#comment-panel').waitFor({ state: 'hidden' });
    const closed = await settled();
    expect(closed).toBeLessThan(first - 100);
    await frame.locator('.comments-toggle').click();
    await frame.locator('#comment-panel').waitFor();
    expect(await settled()).toBe(first);

    // A wider page: the larger layout is shorter, and the frame follows.
    await page.setViewportSize({ width: 1920, height: 900 });
    expect(await settled()).toBeLessThan(first);
    await page.close();
  });

  it('keeps the iframe at its container height without autoResize', async () => {
    const { page } = await mount(1280, { autoResize: false });
    await page.evaluate(() => { document.getElementById('embed')!.style.height = '500px'; });
    expect(await page.evaluate(() => document.querySelector('#embed iframe')!.getBoundingClientRect().height)).toBe(500);
    expect(await sizeCount(page)).toBeGreaterThan(0);
    await page.close();
  });

  it.each(['light', 'dark'] as const)('draws the HTML widget in the %s scheme: readable text on the widget, both lines shown', async (scheme) => {
    const { page, frame } = await mount(1920, { colorScheme: scheme });
    const widget = frame.locator('[data-widget-id="average"]');
    const html = frame.childFrames().find((f) => f.parentFrame() === frame && f.url() === 'about:srcdoc')!;
    expect(html).toBeDefined();
    const inside = await html.evaluate(() => {
      const body = getComputedStyle(document.body);
      const strong = document.querySelector('strong')!;
      const last = document.querySelector('p:last-child')!.getBoundingClientRect();
      return { scheme: getComputedStyle(document.documentElement).colorScheme, background: body.backgroundColor, text: body.color, strong: getComputedStyle(strong).color, lastBottom: last.bottom, height: window.innerHeight, content: document.body.innerText };
    });
    const outside = await frame.evaluate(() => ({ text: getComputedStyle(document.body).color, surface: getComputedStyle(document.querySelector('.widget')!).backgroundColor }));
    expect(inside.scheme).toBe(scheme);
    expect(inside.background).toBe('rgba(0, 0, 0, 0)');
    // The figure is in the embed's text colour, whatever the scheme.
    expect(inside.strong).toBe(outside.text);
    expect(inside.content).toMatch(/An average order is worth \$[\d,]+\.\d\d\.\s+The largest was \$[\d,]+/);
    // The second line is inside the frame, not clipped.
    expect(inside.lastBottom).toBeLessThanOrEqual(inside.height);
    // What shows is the widget's surface, not a white box: a pixel of the frame where it has no text, from a
    // screenshot of the widget.
    const frameBox = await widget.locator('iframe').evaluate((n) => {
      const own = n.getBoundingClientRect();
      const outer = n.closest('[data-widget-id]')!.getBoundingClientRect();
      return { x: Math.floor(own.right - outer.left - 4), y: Math.floor(own.bottom - outer.top - 4) };
    });
    const shot = await widget.screenshot({ path: `${ARTIFACTS}/html-widget-${scheme}.png` });
    const [r, g, b] = await pngPixels(page, shot, { ...frameBox, width: 1, height: 1 });
    const pixel = `rgb(${r}, ${g}, ${b})`;
    expect(pixel).toBe(outside.surface);
    const luminance = (rgb: string) => {
      const [r, g, b] = rgb.match(/\d+/g)!.map(Number);
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    expect(luminance(outside.surface) < 128).toBe(scheme === 'dark');
    expect(Math.abs(luminance(inside.strong) - luminance(outside.surface))).toBeGreaterThan(100);
    await page.close();
  });
});
