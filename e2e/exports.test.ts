import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import Papa from 'papaparse';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import type { Download, Frame, Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { demoRows } from '../apps/server/test/warehouse.js';
import { hasChromium } from './browser.js';
import { demoDashboardItems, e2eAccount, exportItem, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack, waitForHostEvent } from './embed-harness.js';
import type { HostWindow } from './embed-harness.js';

const HOST_PAGE = hostPageHtml({ embedStyle: 'width:1300px;height:2300px' });

const ARTIFACTS = 'e2e/artifacts';

/** A PDF's pages and the text of its content streams (jsPDF writes text as `(...) Tj`, its streams deflated). */
export function readPdf(bytes: Buffer): { pages: number; text: string; images: string[] } {
  const source = bytes.toString('latin1');
  const pages = source.match(/\/Type\s*\/Page(?![a-z])/g)?.length ?? 0;
  const images = [...source.matchAll(/\/Subtype\s*\/Image[^>]*?\/Filter\s*\/(\w+)/g)].map((m) => m[1]!);
  const texts: string[] = [];
  for (const match of source.matchAll(/stream\r?\n/g)) {
    const start = match.index + match[0].length;
    const end = source.indexOf('endstream', start);
    const raw = bytes.subarray(start, end);
    let content: string;
    try {
      content = inflateSync(raw).toString('latin1');
    } catch {
      content = raw.toString('latin1');
    }
    for (const shown of content.matchAll(/\(((?:\\.|[^\\)])*)\)\s*Tj/g)) texts.push(shown[1]!.replace(/\\(.)/g, '$1'));
  }
  return { pages, text: texts.join('\n'), images };
}

/**
 * An image at half its size, softened: each pixel the mean of the 4 x 4 device pixels around it (2 x 2 CSS pixels),
 * so that two rasterisations of the same text compare equal and a shape, a colour or a column does not.
 */
function halve(png: PNG): PNG {
  const out = new PNG({ width: Math.floor(png.width / 2), height: Math.floor(png.height / 2) });
  for (let y = 0; y < out.height; y++) {
    for (let x = 0; x < out.width; x++) {
      for (let k = 0; k < 4; k++) {
        let sum = 0;
        let count = 0;
        for (let dy = -1; dy <= 2; dy++) {
          for (let dx = -1; dx <= 2; dx++) {
            const [sx, sy] = [2 * x + dx, 2 * y + dy];
            if (sx < 0 || sy < 0 || sx >= png.width || sy >= png.height) continue;
            sum += png.data[(sy * png.width + sx) * 4 + k]!;
            count++;
          }
        }
        out.data[(y * out.width + x) * 4 + k] = Math.round(sum / count);
      }
    }
  }
  return out;
}

const suite = hasChromium ? describe : describe.skip;

suite('exports match the screen (Chromium at 2x)', () => {
  const stack = setUpEmbedStack({ page: HOST_PAGE, account: (host) => e2eAccount([host.origin], { items: demoDashboardItems() }), browser: { deviceScaleFactor: 2, timeout: 15_000 } });
  const { customers, orders, products } = demoRows();

  beforeAll(() => {
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  async function mount(extra: Record<string, unknown> = {}): Promise<{ page: Page; frame: Frame }> {
    const page = await openHostPage(stack.browser.context, `${stack.host.origin}/`, { viewport: { width: 1320, height: 900 } });
    const frame = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'dashboard', publicId: 'sales-performance', allowExport: true, ...extra }, { record: ['dashboard-loaded', 'download', 'drilldown', 'error'] });
    await waitForHostEvent(page, 'dashboard-loaded');
    // The map's outlines and the charts' fonts: drawn before anything is compared.
    await frame.locator('[data-widget-id="map"] svg .mark-shape.role-mark path').first().waitFor({ state: 'attached' });
    await frame.evaluate(() => document.fonts.ready.then(() => undefined));
    return { page, frame };
  }

  async function download(page: Page, item: Locator): Promise<{ file: Download; bytes: Buffer }> {
    const [file] = await Promise.all([page.waitForEvent('download'), item.click()]);
    return { file, bytes: readFileSync((await file.path())!) };
  }

  /**
   * The share of pixels of `exported` that differ from the widget's screenshot (anti-aliasing ignored, colours within
   * pixelmatch's threshold equal); the export button is hidden for the screenshot, as it is left out of the file.
   */
  async function mismatch(frame: Frame, widgetId: string, exported: Buffer, selector = `[data-widget-id="${widgetId}"]`): Promise<{ ratio: number; size: [number, number]; screen: [number, number] }> {
    const widget = frame.locator(selector);
    const menus = (visibility: string) => widget.locator('.export-menu').evaluateAll((nodes, visibility) => nodes.forEach((node) => { (node as HTMLElement).style.visibility = visibility; }), visibility);
    await menus('hidden');
    await frame.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    const shot = PNG.sync.read(await widget.screenshot({ animations: 'disabled', caret: 'hide' }));
    await menus('');
    const image = PNG.sync.read(exported);
    // Compared in CSS pixels: headless Chromium draws a cross-origin frame's text softer on screen than in a picture
    // at the same ratio. And the widget may sit at a fraction of a pixel on screen, where its picture starts at 0:
    // the best of the alignments within one pixel is compared.
    const [screen, file] = [halve(shot), halve(image)];
    let best: { count: number; diff: PNG; a: PNG; width: number; height: number } | undefined;
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        const width = Math.min(screen.width - Math.max(0, dx), file.width - Math.max(0, -dx)) - 1;
        const height = Math.min(screen.height - Math.max(0, dy), file.height - Math.max(0, -dy)) - 1;
        const a = new PNG({ width, height });
        const b = new PNG({ width, height });
        PNG.bitblt(screen, a, Math.max(0, dx), Math.max(0, dy), width, height, 0, 0);
        PNG.bitblt(file, b, Math.max(0, -dx), Math.max(0, -dy), width, height, 0, 0);
        const diff = new PNG({ width, height });
        const count = pixelmatch(a.data, b.data, diff.data, width, height, { threshold: 0.2 });
        if (best === undefined || count / (width * height) < best.count / (best.width * best.height)) best = { count, diff, a, width, height };
      }
    }
    const { count, diff, a, width, height } = best!;
    writeFileSync(`${ARTIFACTS}/export-${widgetId}-screen.png`, PNG.sync.write(a));
    writeFileSync(`${ARTIFACTS}/export-${widgetId}-file.png`, exported);
    writeFileSync(`${ARTIFACTS}/export-${widgetId}-diff.png`, PNG.sync.write(diff));
    return { ratio: count / (width * height), size: [image.width, image.height], screen: [shot.width, shot.height] };
  }

  // One per kind of widget the demo draws: table, KPI, HTML, sankey, vega-lite bars, vega-lite line, map.
  const WIDGETS = ['top-customers', 'by-status', 'kpi-revenue', 'average', 'flows', 'by-category', 'trend', 'map'];

  it('a widget\'s PNG is the widget as the viewer sees it: same size, under 1.5% of pixels differing, for every kind', async () => {
    const { page, frame } = await mount();
    const results: Record<string, Awaited<ReturnType<typeof mismatch>>> = {};
    for (const id of WIDGETS) {
      const { bytes } = await download(page, await exportItem(frame, id, 'png'));
      results[id] = await mismatch(frame, id, bytes);
    }
    console.log('png mismatch', JSON.stringify(results));
    for (const [id, result] of Object.entries(results)) {
      // The whole widget, at the screen's pixel ratio: no column cut, nothing added.
      expect(Math.abs(result.size[0] - result.screen[0]), `${id} width ${JSON.stringify(result)}`).toBeLessThanOrEqual(2);
      expect(Math.abs(result.size[1] - result.screen[1]), `${id} height ${JSON.stringify(result)}`).toBeLessThanOrEqual(2);
      expect(result.ratio, `${id}: ${JSON.stringify(result)}`).toBeLessThan(0.015);
    }
    await page.close();
  }, 120_000);

  it('the dashboard\'s PNG is the dashboard as the viewer sees it', async () => {
    const { page, frame } = await mount();
    const { file, bytes } = await download(page, frame.locator('.dashboard-exports button[data-format="png"]'));
    expect(file.suggestedFilename()).toBe('sales-performance.png');
    // Chromium screenshots a frame's element only as far as the window shows it: a window as tall as the frame, and
    // the pointer off the frame (a flow under it would be highlighted).
    await page.setViewportSize({ width: 1320, height: 2320 });
    await page.mouse.move(1315, 5);
    const result = await mismatch(frame, 'dashboard', bytes, 'main.dashboard');
    console.log('dashboard png', bytes.length, 'bytes', JSON.stringify(result));
    expect(Math.abs(result.size[0] - result.screen[0])).toBeLessThanOrEqual(2);
    expect(Math.abs(result.size[1] - result.screen[1])).toBeLessThanOrEqual(2);
    expect(result.ratio).toBeLessThan(0.015);
    await page.close();
  }, 120_000);

  it('the dashboard PDF is paginated A4, under 2 MB, its images compressed and its tables and titles selectable text', async () => {
    const { page, frame } = await mount();
    const { file, bytes } = await download(page, frame.locator('.dashboard-exports button[data-format="pdf"]'));
    writeFileSync(`${ARTIFACTS}/export-dashboard.pdf`, bytes);
    expect(file.suggestedFilename()).toBe('sales-performance.pdf');
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const pdf = readPdf(bytes);
    console.log('dashboard pdf', bytes.length, 'bytes', pdf.pages, 'pages', pdf.images.length, 'images', [...new Set(pdf.images)]);
    expect(bytes.length).toBeLessThan(2 * 1024 * 1024);
    expect(pdf.pages).toBeGreaterThan(1);
    expect(pdf.images.length).toBeGreaterThan(0);
    for (const filter of pdf.images) expect(['DCTDecode', 'FlateDecode']).toContain(filter);
    // Titles, a table's header and cells, a KPI's figure: text, not pixels.
    for (const text of ['Sales performance', 'Top customers', 'Orders by status', 'City', 'returned', 'Revenue 2025']) expect(pdf.text).toContain(text);
    const topCustomer = (await frame.locator('[data-widget-id="top-customers"] [role="row"][aria-rowindex="2"] [role="gridcell"]').first().innerText()).trim();
    expect(customers.some((c) => c.name === topCustomer)).toBe(true);
    expect(pdf.text).toContain(topCustomer);
    expect(pdf.text).toContain(await frame.locator('[data-widget-id="kpi-revenue"] .kpi-value').innerText());
    await page.close();
  });

  it('a table widget\'s PDF holds every one of its rows as text, over as many pages as they need', async () => {
    const { page, frame } = await mount();
    const { bytes } = await download(page, await exportItem(frame, 'top-customers', 'pdf'));
    const pdf = readPdf(bytes);
    expect(pdf.pages).toBeGreaterThan(1);
    // The last of its 500 rows too, which the screen shows only after scrolling.
    const csv = await download(page, await exportItem(frame, 'top-customers', 'csv'));
    const rows = Papa.parse<string[]>(csv.bytes.toString('utf8').replace(/^\ufeff/, ''), { skipEmptyLines: true }).data;
    expect(rows).toHaveLength(501);
    expect(pdf.text).toContain(rows[500]![0]);
    expect(pdf.text).toContain(rows[1]![0]);
    await page.close();
  });

  it('the drill-down says it shows the first 1,000 of all its rows, formats them as their columns declare, and exports them as CSV', async () => {
    const { page, frame } = await mount();
    await frame.locator('[data-widget-id="by-category"] svg .mark-rect.role-mark path').first().click();
    await page.waitForFunction(() => (window as unknown as HostWindow).events.some(([n]) => n === 'drilldown'));
    // The first bar is the category of most revenue in 2025 (the bars are sorted by revenue).
    const categoryOf = new Map(products.map((p) => [p.id, p.category]));
    const revenue = new Map<string, number>();
    for (const o of orders) if (o.created_at.startsWith('2025')) revenue.set(categoryOf.get(o.product_id)!, (revenue.get(categoryOf.get(o.product_id)!) ?? 0) + o.amount);
    const category = [...revenue].sort((a, b) => b[1] - a[1])[0]![0];
    const total = orders.filter((o) => o.created_at.startsWith('2025') && categoryOf.get(o.product_id) === category).length;
    expect(total).toBeGreaterThan(1000);
    const dialog = frame.locator('[role="dialog"]');
    await expect.poll(() => dialog.locator('[data-testid="drill-count"]').innerText()).toBe(`The first 1,000 of ${new Intl.NumberFormat('en-US').format(total)} rows`);
    expect(await dialog.locator('tbody tr').count()).toBe(1000);
    // As the columns declare: the amount is currency (its dimension's format), the order id a plain number.
    const headers = await dialog.locator('thead th').allInnerTexts();
    const last = await dialog.locator('tbody tr').last().locator('td').allInnerTexts();
    expect(last[headers.indexOf('Amount')]).toMatch(/^\$[\d,]+\.\d\d$/);
    expect(last[headers.indexOf('Order')]).toMatch(/^\d{4,}$/);
    const { file, bytes } = await download(page, dialog.locator('button.drill-export'));
    expect(file.suggestedFilename()).toMatch(/\.csv$/);
    const rows = Papa.parse<string[]>(bytes.toString('utf8').replace(/^\ufeff/, ''), { skipEmptyLines: true }).data;
    expect(rows[0]).toEqual(headers);
    expect(rows).toHaveLength(1001);
    expect(rows.at(-1)![headers.indexOf('Order')]).toBe(last[headers.indexOf('Order')]);
    expect(Number(rows.at(-1)![headers.indexOf('Amount')])).toBeCloseTo(Number(last[headers.indexOf('Amount')]!.replace(/[$,]/g, '')), 2);
    await page.close();
  });

  it('CSV numbers carry no float noise: at most 12 significant digits, integers exact', async () => {
    const { page, frame } = await mount();
    for (const id of ['top-customers', 'by-status', 'average']) {
      const { bytes } = await download(page, await exportItem(frame, id, 'csv'));
      const rows = Papa.parse<string[]>(bytes.toString('utf8').replace(/^\ufeff/, ''), { skipEmptyLines: true }).data.slice(1);
      for (const row of rows) {
        for (const cell of row) {
          if (!/^-?\d+(\.\d+)?$/.test(cell)) continue;
          expect(cell.replace(/^-|\./g, '').replace(/^0+/, '').length, `${id}: ${cell}`).toBeLessThanOrEqual(12);
        }
      }
    }
    await page.close();
  });
});
