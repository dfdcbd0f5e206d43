import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { hasChromium } from './browser.js';
import { DEMO_ADMIN_KEY, hostEvents, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack, readDemoAccount, waitForHostEvent } from './embed-harness.js';

// Issue 31 item 2: every choice the demo's own controls offer must leave every widget working. The demo account is
// imported whole (apps/server/demo/demo.json), and each of its embeddable dashboards is walked: every option of
// every FIELD, TIME_GRAIN and FILTER control, one control at a time, then a few together.

const HOST_PAGE = hostPageHtml({ embedStyle: 'width:1300px;height:2400px' });

interface DemoDashboard { publicId: string; status: string; allowEmbed: boolean }
interface DemoItem { dashboard?: DemoDashboard; children?: DemoItem[] }

const account = readDemoAccount();

/** The publicIds of the demo's published, embeddable dashboards (at any depth of folders). */
function embeddableDashboards(): string[] {
  const found: string[] = [];
  const walk = (items: readonly DemoItem[]) => {
    for (const item of items) {
      if (item.dashboard?.status === 'published' && item.dashboard.allowEmbed) found.push(item.dashboard.publicId);
      walk(item.children ?? []);
    }
  };
  walk((account.deployments ?? []).flatMap((deployment) => (deployment as { items?: DemoItem[] }).items ?? []));
  return found;
}

const suite = hasChromium ? describe : describe.skip;

suite('the demo dashboards\' controls in Chromium: every option leaves every widget working', () => {
  // As the demo host mints: a customer-a viewer, whose tenant the orders view's row policy reads.
  const stack = setUpEmbedStack({
    page: HOST_PAGE,
    account: (host) => {
      const imported = readDemoAccount();
      imported.settings.allowedEmbedOrigins = [host.origin];
      return imported;
    },
    svc: { adminKey: DEMO_ADMIN_KEY },
    mint: (svc, query) => svc.mint({ securityContext: { tenant: 'customer-a' }, dashboards: [query.get('publicId')] }),
  });

  /** The host page with the dashboard embedded; every widget data answer of 400 or more is kept in `failures`. */
  async function mount(publicId: string): Promise<{ page: Page; frame: Frame; failures: string[]; inFlight: () => number }> {
    const page = await openHostPage(stack.browser.context, `${stack.host.origin}/?publicId=${publicId}`);
    const failures: string[] = [];
    let inFlight = 0;
    const isData = (url: string) => url.includes('/widgets/') && url.endsWith('/data');
    page.on('request', (request) => { if (isData(request.url())) inFlight++; });
    page.on('requestfinished', (request) => { if (isData(request.url())) inFlight--; });
    page.on('requestfailed', (request) => { if (isData(request.url())) inFlight--; });
    page.on('response', (response) => {
      if (isData(response.url()) && response.status() >= 400) failures.push(`${response.status()} ${response.url().split('/widgets/')[1]}`);
    });
    const frame = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'dashboard', publicId }, { record: ['dashboard-loaded', 'error'] });
    await waitForHostEvent(page, 'dashboard-loaded', { timeout: 30_000 });
    return { page, frame, failures, inFlight: () => inFlight };
  }

  /**
   * What the viewer sees once the widgets' queries are answered and drawn: charts that failed or show an error, vega
   * charts that drew no mark (the empty "$0.0" chart), widget titles, and the charts' axis titles.
   */
  const view = (frame: Frame) => frame.evaluate(() => {
    const widgets = [...document.querySelectorAll<HTMLElement>('[data-widget-type="CHART"]')];
    return {
      failed: widgets.filter((w) => w.dataset.state === 'failed' || w.querySelector('.widget-error') !== null).map((w) => w.dataset.widgetId),
      unmarked: widgets.filter((w) => w.querySelector('.vega-chart') !== null && w.querySelectorAll('svg .role-mark path, svg .role-mark line, svg .role-mark text').length === 0).map((w) => w.dataset.widgetId),
      loading: widgets.filter((w) => w.dataset.state === 'loading' || w.querySelector('.widget-loading') !== null).map((w) => w.dataset.widgetId),
      titles: Object.fromEntries(widgets.map((w) => [w.dataset.widgetId!, w.querySelector('.widget-title')?.textContent ?? ''])) as Record<string, string>,
      axisLabels: Object.fromEntries(widgets.map((w) => [w.dataset.widgetId!, [...w.querySelectorAll('svg .role-axis-label text')].map((t) => t.textContent ?? '')])) as Record<string, string[]>,
      axisTitles: Object.fromEntries(widgets.map((w) => [w.dataset.widgetId!, [...w.querySelectorAll('svg .role-axis-title text')].map((t) => t.textContent ?? '')])) as Record<string, string[]>,
    };
  });

  /** Waits until no widget query is in flight and every chart has drawn, then answers the view. */
  async function settled(page: Page, frame: Frame, inFlight: () => number): Promise<Awaited<ReturnType<typeof view>>> {
    await page.waitForTimeout(150);
    await expect.poll(inFlight, { timeout: 20_000 }).toBe(0);
    // Until every chart drew or one failed; past 10 s the view is answered as it is, and the test's own check says what is wrong.
    for (const end = Date.now() + 10_000; Date.now() < end; await page.waitForTimeout(100)) {
      const seen = await view(frame);
      if (seen.loading.length + seen.unmarked.length === 0 || seen.failed.length > 0) break;
    }
    // vega draws a frame after its data: a short pause lets a late redraw land before the view is read.
    await page.waitForTimeout(150);
    return view(frame);
  }

  /** The options of a control's select, as values. */
  const optionsOf = (frame: Frame, widgetId: string) => frame.locator(`[data-widget-id="${widgetId}"] select option`).evaluateAll((nodes) => nodes.map((n) => ({ value: (n as HTMLOptionElement).value, label: n.textContent ?? '' })));

  for (const publicId of embeddableDashboards()) {
    it(`${publicId}: every option of every FIELD, TIME_GRAIN and FILTER control leaves every widget drawn, and titles follow the member`, async () => {
      const { page, frame, failures, inFlight } = await mount(publicId);
      const errors = async () => (await hostEvents(page)).filter(([name]) => name === 'error');
      const first = await settled(page, frame, inFlight);
      expect({ failed: first.failed, unmarked: first.unmarked, failures, errors: await errors() }).toEqual({ failed: [], unmarked: [], failures: [], errors: [] });

      const controls = await frame.locator('[data-widget-type="FIELD"], [data-widget-type="TIME_GRAIN"], [data-widget-type="FILTER"]').evaluateAll((nodes) =>
        nodes.map((n) => ({ id: (n as HTMLElement).dataset.widgetId!, type: (n as HTMLElement).dataset.widgetType! })));
      let states = 0;
      for (const control of controls) {
        const select = frame.locator(`[data-widget-id="${control.id}"] select`);
        const initial = await select.inputValue();
        const options = await optionsOf(frame, control.id);
        const initialLabel = options.find((o) => o.value === initial)?.label ?? '';
        for (const option of options) {
          await select.selectOption(option.value);
          const seen = await settled(page, frame, inFlight);
          states++;
          const context = `${publicId}: ${control.id} = ${option.label}`;
          expect({ failed: seen.failed, unmarked: seen.unmarked, failures, errors: await errors() }, context).toEqual({ failed: [], unmarked: [], failures: [], errors: [] });
          if (control.type === 'FIELD' && option.value !== initial) {
            // A title or axis that named the replaced member now names the one shown, and never the replaced one.
            for (const [widgetId, title] of Object.entries(first.titles)) {
              if (!new RegExp(`\\b${initialLabel}\\b`).test(title)) continue;
              expect(seen.titles[widgetId], `${context}: title of ${widgetId}`).toBe(title.replace(new RegExp(`\\b${initialLabel}\\b`), option.label));
            }
            for (const [widgetId, titles] of Object.entries(seen.axisTitles)) expect(titles, `${context}: axes of ${widgetId}`).not.toContain(initialLabel);
            // The demo's other measures are counts: an axis the swap touched shows no dollars.
            if (publicId === 'sales-performance') expect(seen.axisLabels['by-category']!.filter((label) => label.includes('$')), `${context}: by-category's axis`).toEqual([]);
          }
          if (control.type === 'FIELD' && option.value === initial) expect(seen.titles, context).toEqual(first.titles);
        }
        await select.selectOption(initial);
        await settled(page, frame, inFlight);
      }

      // The controls together: the last option of each at once.
      for (const control of controls) {
        const options = await optionsOf(frame, control.id);
        await frame.locator(`[data-widget-id="${control.id}"] select`).selectOption(options.at(-1)!.value);
      }
      const together = await settled(page, frame, inFlight);
      expect({ failed: together.failed, unmarked: together.unmarked, failures, errors: await errors() }, `${publicId}: every control at its last option`).toEqual({ failed: [], unmarked: [], failures: [], errors: [] });
      // The demo's Sales performance has each kind of control; the others have none.
      if (publicId === 'sales-performance') {
        expect(controls.map((c) => c.type).sort()).toEqual(['FIELD', 'FILTER', 'FILTER', 'TIME_GRAIN']);
        expect(states).toBeGreaterThan(15);
      }
      await page.close();
    }, 240_000);
  }
});
