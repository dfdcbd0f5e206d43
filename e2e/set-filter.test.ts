import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DEMO_SEMANTIC_VIEWS } from '../apps/server/src/data/warehouse/warehouse.demo.js';
import { hasChromium } from './browser.js';
import { demoDashboardItems, e2eAccount, embedFrame, hostEvents, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack, waitForHostEvent } from './embed-harness.js';
import type { HostWindow } from './embed-harness.js';

// Issue 31 item 6: a host's `setFilter` is checked by svc before it applies. A member the model does not declare, a
// value not of its type, or a member an access policy hides from the viewer is refused as an invalid action (the
// promise rejects, an error event names the member) and nothing is applied, here or on the next dashboard.
// Item 13 (part): filter chips show the dimension's title from the model, not its member name.

const HOST_PAGE = hostPageHtml({ embedStyle: 'width:1300px;height:2300px' });

/** The demo's views, the orders view hiding its tenant column from every viewer. */
function guardedViews(): unknown[] {
  const views = structuredClone(DEMO_SEMANTIC_VIEWS);
  views.find((view) => view.name === 'orders')!.accessPolicy = [{ group: '*', memberLevel: { excludes: ['tenant'] } }];
  return views;
}

const suite = hasChromium ? describe : describe.skip;

suite('set-filter is checked before it applies (Chromium, through the SDK)', () => {
  const stack = setUpEmbedStack({ page: HOST_PAGE, account: (host) => e2eAccount([host.origin], { items: demoDashboardItems(), semanticViews: guardedViews() }) });

  /** The filters of every widget data request of the page (`data`), and every such answer of 400 or more (`failures`). */
  function watchData(page: Page): { data: Array<Record<string, unknown>>; failures: string[] } {
    const data: Array<Record<string, unknown>> = [];
    const failures: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/data') && request.method() === 'POST') data.push((JSON.parse(request.postData() ?? '{}') as { filters?: Record<string, unknown> }).filters ?? {});
    });
    page.on('response', (response) => {
      if (response.url().endsWith('/data') && response.status() >= 400) failures.push(`${response.status()} ${response.url()}`);
    });
    return { data, failures };
  }

  /** The demo's Sales performance embedded, every event kept, its data requests watched. Resolves at dashboard-loaded. */
  async function mount(): Promise<{ page: Page; frame: Frame; data: Array<Record<string, unknown>>; failures: string[] }> {
    const page = await openHostPage(stack.browser.context, `${stack.host.origin}/`);
    const watched = watchData(page);
    const frame = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'dashboard', publicId: 'sales-performance' }, { record: ['ready', 'navigate', 'view', 'dashboard-loaded', 'error'] });
    await waitForHostEvent(page, 'dashboard-loaded', { timeout: 30_000 });
    return { page, frame, ...watched };
  }

  const errors = async (page: Page) => (await hostEvents(page)).filter(([name]) => name === 'error').map(([, payload]) => payload as { name: string; message: string; context: string; fatal: boolean });
  /** The outcome of `handle.setFilter(...)`: `applied`, or the rejection's code and message. */
  const setFilter = (page: Page, view: string, dimension: string, value: unknown) => page.evaluate(({ view, dimension, value }) =>
    (window as unknown as HostWindow).handle.setFilter(view, dimension, value).then(() => ({ applied: true, code: '', message: '' }), (error: { code: string; message: string }) => ({ applied: false, code: error.code, message: error.message })),
  { view, dimension, value });
  const chips = (frame: Frame) => frame.locator('.filter-chip span').allInnerTexts();

  it('refuses a member no view declares: the promise rejects and an error event names it, nothing is applied, and the next dashboard never sees it', async () => {
    const { page, frame, data, failures } = await mount();
    const asked = data.length;
    const refused = await setFilter(page, 'orders', 'nope', 'x');
    expect(refused).toMatchObject({ applied: false, code: 'action-rejected' });
    expect(refused.message).toContain('orders.nope');
    await expect.poll(() => errors(page)).toEqual([expect.objectContaining({ name: 'InvalidActionError', context: 'set-filter', fatal: false, message: expect.stringContaining('orders.nope') })]);
    // Nothing applied: no chip, no widget asked again with it, none failed.
    await page.waitForTimeout(300);
    expect(await chips(frame)).toEqual([]);
    expect(data.slice(asked).some((filters) => 'orders.nope' in filters)).toBe(false);
    expect(failures).toEqual([]);
    // Another dashboard after navigate: no chip, no request with it, no failure.
    await page.evaluate(() => (window as unknown as HostWindow).handle.navigate('/embed/dashboard/sales-e2e'));
    await expect.poll(() => frame.locator('h1').first().innerText()).toBe('Sales overview');
    // Loaded before leaving it: a navigate while its widgets load cancels them, and its dashboard-loaded never comes.
    const loaded = async () => (await hostEvents(page)).filter(([name]) => name === 'dashboard-loaded').length;
    await expect.poll(loaded, { timeout: 20_000 }).toBe(2);
    await page.evaluate(() => (window as unknown as HostWindow).handle.navigate('/embed/dashboard/sales-performance'));
    await expect.poll(loaded, { timeout: 20_000 }).toBe(3);
    expect(await chips(frame)).toEqual([]);
    expect(data.some((filters) => 'orders.nope' in filters)).toBe(false);
    expect(failures).toEqual([]);
    expect((await errors(page)).length).toBe(1);
    await page.close();
  });

  it('refuses a value not of its dimension\'s type, and a member an access policy hides from the viewer, saying so', async () => {
    const { page, frame, data, failures } = await mount();
    const wrongType = await setFilter(page, 'orders', 'amount', 'lots');
    expect(wrongType).toMatchObject({ applied: false, code: 'action-rejected' });
    expect(wrongType.message).toContain('orders.amount');
    const hidden = await setFilter(page, 'orders', 'tenant', 'customer-b');
    expect(hidden).toMatchObject({ applied: false, code: 'action-rejected' });
    expect(hidden.message).toMatch(/orders\.tenant is hidden from this viewer by an access policy/);
    await expect.poll(async () => (await errors(page)).map((e) => [e.name, e.context, e.message.includes('orders.amount') || e.message.includes('orders.tenant')])).toEqual([
      ['InvalidActionError', 'set-filter', true], ['InvalidActionError', 'set-filter', true],
    ]);
    await page.waitForTimeout(300);
    expect(await chips(frame)).toEqual([]);
    expect(data.some((filters) => 'orders.tenant' in filters || 'orders.amount' in filters)).toBe(false);
    expect(failures).toEqual([]);
    await page.close();
  });

  it('applies a filter svc accepts: the promise resolves, the widgets ask with it, and its chip shows the model\'s title', async () => {
    const { page, frame, data } = await mount();
    expect(await setFilter(page, 'orders', 'status', ['completed', 'shipped'])).toMatchObject({ applied: true });
    expect(await setFilter(page, 'orders', 'amount', { gte: 10, lte: 500 })).toMatchObject({ applied: true });
    await expect.poll(() => chips(frame)).toEqual(['Status: completed, shipped', 'Amount: 10 – 500']);
    expect(await frame.locator('.filter-chip').first().getAttribute('title')).toBe('orders.status');
    await expect.poll(() => data.some((filters) => JSON.stringify(filters['orders.status']) === '["completed","shipped"]')).toBe(true);
    // A FILTER control's choice is a chip by its dimension's title too.
    await frame.locator('[data-widget-id="f-category"] select').selectOption('"Books"');
    await expect.poll(() => chips(frame)).toEqual(['Status: completed, shipped', 'Amount: 10 – 500', 'Category: Books']);
    // null clears, and is never refused.
    expect(await setFilter(page, 'orders', 'status', null)).toMatchObject({ applied: true });
    await expect.poll(() => chips(frame)).toEqual(['Amount: 10 – 500', 'Category: Books']);
    expect(await errors(page)).toEqual([]);
    await page.close();
  });

  it('checks the embed URL\'s f_* filters before any widget asks: titles on the accepted, the refused dropped and reported', async () => {
    const page = await openHostPage(stack.browser.context, `${stack.host.origin}/`);
    const { data, failures } = watchData(page);
    // A frame made by hand, as a host without the SDK does: the filters are parameters of its URL; its events are kept.
    await page.evaluate(async (baseUrl) => {
      const w = window as unknown as HostWindow;
      window.addEventListener('message', (event) => {
        const message = event.data as { source?: string; type?: string; payload?: unknown };
        if (message?.source === 'svc-embed') w.events.push([String(message.type).slice(10), message.payload]);
      });
      const sessionId = await w.getSessionId();
      const frame = document.createElement('iframe');
      const f = (member: string, value: unknown) => `&f_${member}=${encodeURIComponent(JSON.stringify(value))}`;
      frame.src = `${baseUrl}/embed/dashboard/sales-performance?session=${sessionId}${f('orders.status', 'completed')}${f('orders.nope', 'x')}${f('orders.tenant', 'customer-b')}`;
      frame.style.cssText = 'width:1300px;height:1200px;border:0';
      document.body.appendChild(frame);
    }, stack.svc.origin);
    await waitForHostEvent(page, 'dashboard-loaded', { timeout: 30_000 });
    const frame = embedFrame(page, stack.svc.origin);
    await expect.poll(() => chips(frame)).toEqual(['Status: completed']);
    expect(data.length).toBeGreaterThan(0);
    expect(data.every((filters) => !('orders.nope' in filters) && !('orders.tenant' in filters) && filters['orders.status'] === 'completed')).toBe(true);
    expect(failures).toEqual([]);
    const refusals = (await errors(page)).map((e) => [e.name, e.context, e.message.match(/orders\.(nope|tenant)/)?.[0]]);
    expect(refusals.sort()).toEqual([['InvalidActionError', 'set-filter', 'orders.nope'], ['InvalidActionError', 'set-filter', 'orders.tenant']]);
    await page.close();
  });
});
