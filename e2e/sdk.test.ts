import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type * as Sdk from '../packages/embed-sdk/src/browser.js';
import type { EmbedLifetimes } from '../apps/server/src/sessions/sessions.config.js';
import { hasChromium } from './browser.js';
import { bundle, e2eAccount, hostPageHtml, openHostPage, reactHostRoutes, setUpEmbedStack, serve, startSvc } from './embed-harness.js';
import type { RunningSvc } from './embed-harness.js';

/** The host page's globals (HOST_PAGE below), as the page.evaluate bodies see them. */
type HostWindow = Window & {
  sdk: typeof Sdk;
  events: Array<[string, string, unknown]>;
  minted: number;
  /** Ids handed out before any real one (a refused id for the renewal tests). */
  nextIds: string[];
  getSessionId(): Promise<string>;
  handles: Record<string, Sdk.EmbedHandle>;
};

/**
 * @svc/embed-sdk in real Chromium: the host page and the embed on two origins (localhost and 127.0.0.1, two ports).
 * The embed is svc's real one, served by a real svc with real sessions; the protocol fixture page
 * (e2e/fixtures/embed-fixture.html) stands in only where an embed must misbehave: the spoofed-messages test.
 */
const suite = hasChromium ? describe : describe.skip;

/** Counts the page window's `message` listeners through the DevTools protocol (what no page script can see). */
async function messageListenerCounter(page: Page): Promise<() => Promise<number>> {
  const cdp = await page.context().newCDPSession(page);
  return async () => {
    const { result } = await cdp.send('Runtime.evaluate', { expression: 'window' });
    const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId! });
    return listeners.filter((l) => l.type === 'message').length;
  };
}
if (!hasChromium) console.warn('[e2e] /usr/bin/chromium not found: the browser tests are SKIPPED (apt-get install -y chromium)');

const HOST_PAGE = hostPageHtml({
  bodyStyle: '',
  body: '<div id="a" style="height:200px"></div><div id="b" style="height:200px"></div><iframe id="other"></iframe>',
  script: '  window.handles = {};',
});

suite('@svc/embed-sdk in Chromium', () => {
  let fixtureServer: Server;
  let thirdServer: Server;
  /** The same host page on an origin the account does not allow (127.0.0.1 instead of localhost). */
  let refusedHostOrigin: string;
  let fixtureOrigin: string;
  let thirdOrigin: string;
  let shortSvc: RunningSvc;
  /** Token lifetimes short enough that the renewal flow runs within a test: the warning comes after ~9 s. */
  const SHORT: EmbedLifetimes = { sessionTtlMs: 60_000, tokenTtlMs: 9_600 };

  // The host backend: /session mints a real session id (on the short-lived svc with ?short=1).
  const stack = setUpEmbedStack({
    page: HOST_PAGE,
    routes: reactHostRoutes(),
    mint: (svc, query) => (query.get('short') === '1' ? shortSvc : svc).mint(),
    browser: {},
    alsoClose: () => [shortSvc, fixtureServer, thirdServer],
  });

  beforeAll(async () => {
    const protocolJs = await bundle('packages/protocol/src/index.ts');
    const fixture = readFileSync('e2e/fixtures/embed-fixture.html', 'utf8');
    const fixtureHost = await serve({ '/protocol.js': { type: 'text/javascript', body: protocolJs } }, (path) => (path.startsWith('/embed/') ? { type: 'text/html', body: fixture } : undefined));
    // A page on a third origin that posts a well-formed svc event to its parent.
    const third = await serve({
      '/evil.html': { type: 'text/html', body: `<script>parent.postMessage({source:'svc-embed',direction:'event',type:'svc:event:navigate',payload:{path:'/evil'},timestamp:Date.now(),surface:'dashboard'}, '*')</script>` },
    });
    fixtureServer = fixtureHost.server;
    thirdServer = third.server;
    refusedHostOrigin = `http://127.0.0.1:${stack.host.port}`;
    fixtureOrigin = `http://127.0.0.1:${fixtureHost.port}`;
    thirdOrigin = `http://localhost:${third.port}`;
    shortSvc = await startSvc({ account: e2eAccount([stack.host.origin]), lifetimes: SHORT });
  });

  async function hostPage(query = '', origin = stack.host.origin): Promise<{ page: Page; logs: string[] }> {
    const logs: string[] = [];
    const page = await openHostPage(stack.browser.context, `${origin}/${query}`, { before: (page) => page.on('console', (message) => logs.push(message.text())) });
    return { page, logs };
  }

  /** Creates an embed of `publicId` in #id; its events are recorded in window.events as [id, name, payload]. */
  const mount = (page: Page, id: string, publicId: string, baseUrl: string, extra: Record<string, unknown> = {}) =>
    page.evaluate(async ({ id, publicId, baseUrl, extra }) => {
      const w = window as unknown as HostWindow;
      const handle = w.sdk.embed({ container: document.getElementById(id)!, baseUrl, surface: 'dashboard', publicId, getSessionId: w.getSessionId, debug: w.sdk.debug, ...extra });
      w.handles[id] = handle;
      const names = ['ready', 'dashboard-loaded', 'navigate', 'error', 'session-expiring', 'session-expired', 'action-result', 'renewal-failed'] as const;
      for (const name of names) {
        handle.on(name, (payload: unknown) => w.events.push([id, name, payload instanceof w.sdk.SvcEmbedError ? { code: payload.code } : payload]));
      }
      await handle.ready;
    }, { id, publicId, baseUrl, extra });

  interface Settled { resolved?: string; isSvcEmbedError?: boolean; code?: string; message?: string; afterMs: number }
  /** Like mount, but answers how `ready` settled: its payload's publicId, or the SvcEmbedError's code and message. */
  const mountSettled = (page: Page, id: string, publicId: string, baseUrl: string, extra: Record<string, unknown> = {}) =>
    page.evaluate(async ({ id, publicId, baseUrl, extra }): Promise<Settled> => {
      const w = window as unknown as HostWindow;
      const handle = w.sdk.embed({ container: document.getElementById(id)!, baseUrl, surface: 'dashboard', publicId, getSessionId: w.getSessionId, ...extra });
      w.handles[id] = handle;
      handle.on('error', (payload) => w.events.push([id, 'error', payload]));
      handle.on('ready', (payload) => w.events.push([id, 'ready', payload]));
      const started = performance.now();
      return handle.ready.then(
        (payload) => ({ resolved: payload.publicId, afterMs: performance.now() - started }),
        (error: unknown) => ({
          isSvcEmbedError: error instanceof w.sdk.SvcEmbedError, code: (error as Sdk.SvcEmbedError).code, message: (error as Error).message,
          afterMs: performance.now() - started,
        }),
      );
    }, { id, publicId, baseUrl, extra });

  const events = (page: Page) => page.evaluate(() => (window as unknown as { events: Array<[string, string, unknown]> }).events);
  const named = async (page: Page, id: string, name: string) => (await events(page)).filter(([i, n]) => i === id && n === name).map(([, , p]) => p);
  const embedFrame = (page: Page, origin: string, publicId: string) => page.frames().find((f) => f.url().startsWith(`${origin}/embed/dashboard/${publicId}`))!;

  it('loads the embed URL of SPEC with a fresh session id, hears its events and sends actions the embed applies', async () => {
    const { page } = await hostPage();
    await mount(page, 'a', 'sales-e2e', stack.svc.origin, { allowExport: true, locale: 'pt-BR' });
    const src = await page.evaluate(() => (document.querySelector('#a iframe') as HTMLIFrameElement).src);
    expect(src).toMatch(new RegExp(`^${stack.svc.origin}/embed/dashboard/sales-e2e\\?session=ses_[A-Za-z0-9]+&allowExport=true&locale=pt-BR$`));
    expect(await page.evaluate(() => (window as unknown as HostWindow).minted)).toBe(1);
    await expect.poll(() => named(page, 'a', 'dashboard-loaded'), { timeout: 15_000 }).toEqual([{ publicId: 'sales-e2e', widgetCount: 3, loadDurationMs: expect.any(Number) }]);
    expect(await named(page, 'a', 'ready')).toEqual([expect.objectContaining({ publicId: 'sales-e2e', mode: 'signed', embedTenant: 'customer-a' })]);
    await page.evaluate(() => {
      const h = (window as unknown as HostWindow).handles.a!;
      h.setFilter('orders', 'status', ['completed']);
      h.setColorScheme('dark');
      h.refresh();
    });
    const frame = embedFrame(page, stack.svc.origin, 'sales-e2e');
    // The embed applied each action it was sent: a filter chip, the dark scheme, and a second load.
    await expect.poll(() => frame.locator('.filter-chip').allInnerTexts(), { timeout: 15_000 }).toEqual(['Status: completed\n×']);
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme), { timeout: 15_000 }).toBe('dark');
    await expect.poll(async () => (await named(page, 'a', 'dashboard-loaded')).length, { timeout: 15_000 }).toBe(2);
    await page.close();
  });

  it('ignores spoofed messages from another window and from another origin, and says why in debug mode (fixture: a frame must misbehave)', async () => {
    const { page, logs } = await hostPage();
    await mount(page, 'a', 'dash-a', fixtureOrigin);
    // The host window itself, and another iframe of the tenant origin, post well-formed svc events.
    await page.evaluate((origin) => {
      window.postMessage({ source: 'svc-embed', direction: 'event', type: 'svc:event:navigate', payload: { path: '/spoof-self' }, timestamp: Date.now(), surface: 'dashboard' }, '*');
      (document.getElementById('other') as HTMLIFrameElement).src = `${origin}/embed/dashboard/intruder`;
    }, fixtureOrigin);
    // The embed's own iframe navigated to a third origin posts one too (the real embed cannot be made to navigate
    // its own frame away, so the fixture plays the compromised embed).
    await embedFrame(page, fixtureOrigin, 'dash-a').evaluate((url) => { location.href = url; }, `${thirdOrigin}/evil.html`);
    // Wait for every refusal, by name: the host's own post and the other iframe's are both "from another window",
    // and they, and the third origin's, arrive in no fixed order. A bare count of three could be reached by the
    // intruder's several posts before the third origin's arrived, and a wait by name alone could end before the
    // intruder had posted at all.
    const refusals = (text: string) => logs.filter((l) => l.includes(text)).length;
    await expect.poll(() => ({
      fromAnotherWindow: refusals('dropped a message from another window') >= 2,
      fromThirdOrigin: refusals(`dropped a message from origin ${thirdOrigin}`) >= 1,
    }), { timeout: 15_000 }).toEqual({ fromAnotherWindow: true, fromThirdOrigin: true });
    const names = (await events(page)).map(([, name, payload]) => [name, payload]);
    expect(names).not.toContainEqual(['navigate', { path: '/spoof-self' }]);
    expect(names).not.toContainEqual(['navigate', { path: '/evil' }]);
    expect(names.filter(([name]) => name === 'ready')).toHaveLength(1);
    await page.close();
  });

  it('keeps two embeds on one page apart', async () => {
    const { page } = await hostPage();
    await mount(page, 'a', 'sales-e2e', stack.svc.origin);
    await mount(page, 'b', 'ops-e2e', stack.svc.origin);
    await expect.poll(() => named(page, 'b', 'dashboard-loaded'), { timeout: 15_000 }).toHaveLength(1);
    await expect.poll(() => named(page, 'a', 'dashboard-loaded'), { timeout: 15_000 }).toHaveLength(1);
    // An action to b reaches b only, and b's events reach b's handle only.
    await page.evaluate(() => { const h = (window as unknown as HostWindow).handles; h.b!.setColorScheme('dark'); h.b!.refresh(); });
    await expect.poll(() => named(page, 'b', 'dashboard-loaded'), { timeout: 15_000 }).toEqual([
      { publicId: 'ops-e2e', widgetCount: 0, loadDurationMs: expect.any(Number) }, { publicId: 'ops-e2e', widgetCount: 0, loadDurationMs: expect.any(Number) },
    ]);
    await expect.poll(() => embedFrame(page, stack.svc.origin, 'ops-e2e').evaluate(() => document.documentElement.dataset.colorScheme), { timeout: 15_000 }).toBe('dark');
    expect(await embedFrame(page, stack.svc.origin, 'sales-e2e').evaluate(() => document.documentElement.dataset.colorScheme)).not.toBe('dark');
    expect(await named(page, 'a', 'dashboard-loaded')).toEqual([{ publicId: 'sales-e2e', widgetCount: 3, loadDurationMs: expect.any(Number) }]);
    expect((await events(page)).filter(([, name]) => name === 'ready').map(([id]) => id).sort()).toEqual(['a', 'b']);
    await page.close();
  });

  it('renews a session end to end: expiring -> one fresh id -> set-session confirmed, no expiry', async () => {
    const { page } = await hostPage('?short=1');
    await mount(page, 'a', 'sales-e2e', shortSvc.origin);
    await expect.poll(() => named(page, 'a', 'session-expiring'), { timeout: 15_000 }).toHaveLength(1);
    await expect.poll(() => page.evaluate(() => (window as unknown as HostWindow).minted), { timeout: 15_000 }).toBe(2);
    const results = () => named(page, 'a', 'action-result');
    await expect.poll(results, { timeout: 10_000 }).toContainEqual(expect.objectContaining({ action: 'svc:action:set-session', ok: true }));
    // The embed works on the renewed session: a refresh loads again. (With these short lifetimes the renewal has
    // 200 ms before the old token's effective end; e2e/embed.test.ts checks that no session-expired follows.)
    const loads = (await named(page, 'a', 'dashboard-loaded')).length;
    await page.evaluate(() => (window as unknown as HostWindow).handles.a!.refresh());
    await expect.poll(async () => (await named(page, 'a', 'dashboard-loaded')).length, { timeout: 10_000 }).toBe(loads + 1);
    expect(await page.evaluate(() => (window as unknown as HostWindow).minted)).toBe(2);
    await page.close();
  }, 40_000);

  it('retries a refused renewal with a fresh id after backoff; setSession() rejects a refused id and takes a good one', async () => {
    const { page } = await hostPage('?short=1');
    await mount(page, 'a', 'sales-e2e', shortSvc.origin);
    // The renewal's first id is refused by svc's exchange (unknown); the SDK asks again and gets a real one.
    await page.evaluate(() => { (window as unknown as HostWindow).nextIds = ['ses_refusedBySvc0000000000000000000000000000']; });
    await expect.poll(() => named(page, 'a', 'error'), { timeout: 20_000 }).toContainEqual(expect.objectContaining({ name: 'EmbedSessionExchangeError', context: 'session-renewal' }));
    await expect.poll(() => page.evaluate(() => (window as unknown as HostWindow).minted), { timeout: 15_000 }).toBe(3);
    await expect.poll(() => named(page, 'a', 'action-result'), { timeout: 10_000 }).toContainEqual(expect.objectContaining({ action: 'svc:action:set-session', ok: true }));
    // The embed works on the fresh session: a refresh loads the dashboard again. (Had the old session lapsed just
    // before, the embed reloads once more on its own, so the count may rise by two; a CI run saw that race.)
    const loads = (await named(page, 'a', 'dashboard-loaded')).length;
    await page.evaluate(() => (window as unknown as HostWindow).handles.a!.refresh());
    await expect.poll(async () => (await named(page, 'a', 'dashboard-loaded')).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(loads + 1);
    const rejected = await page.evaluate(() => (window as unknown as HostWindow).handles.a!.setSession('ses_refusedManually000000000000000000000000').then(() => 'resolved', (e: { code: string }) => e.code));
    expect(rejected).toBe('action-rejected');
    const fresh = await page.evaluate(async () => (await (await fetch('/session?short=1', { method: 'POST' })).json()).sessionId as string);
    expect(await page.evaluate((id) => (window as unknown as HostWindow).handles.a!.setSession(id).then(() => 'resolved'), fresh)).toBe('resolved');
    await page.close();
  }, 60_000);

  it('<SvcEmbed> delivers events as props, sends prop changes as actions and cleans up on unmount', async () => {
    const page = await stack.browser.context.newPage();
    await page.goto(`${stack.host.origin}/react.html`);
    await page.waitForFunction(() => (window as unknown as { reactReady?: boolean }).reactReady === true);
    const messageListeners = await messageListenerCounter(page);
    const before = await messageListeners();
    const render = (colorScheme: 'light' | 'dark') => page.evaluate(({ baseUrl, colorScheme }) => {
      (window as unknown as { render(p: Record<string, string>): void }).render({ baseUrl, colorScheme, publicId: 'sales-e2e', sessionUrl: '/session' });
    }, { baseUrl: stack.svc.origin, colorScheme });
    const reactEvents = () => page.evaluate(() => (window as unknown as { reactEvents: Array<[string, unknown]> }).reactEvents);
    await render('light');
    await expect.poll(reactEvents, { timeout: 15_000 }).toContainEqual(['onDashboardLoaded', { publicId: 'sales-e2e', widgetCount: 3, loadDurationMs: expect.any(Number) }]);
    const events = await reactEvents();
    expect(events).toContainEqual(['onReady', expect.objectContaining({ publicId: 'sales-e2e', mode: 'signed' })]);
    expect(events).toContainEqual(['onEvent', 'dashboard-loaded']);
    const frame = embedFrame(page, stack.svc.origin, 'sales-e2e');
    expect(await frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('light');
    await render('dark');
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme), { timeout: 15_000 }).toBe('dark');
    expect(await page.evaluate(() => document.querySelectorAll('#react iframe').length)).toBe(1);
    await page.evaluate(() => (window as unknown as { unmount(): void }).unmount());
    expect(await page.evaluate(() => document.querySelectorAll('#react iframe').length)).toBe(0);
    expect(await messageListeners()).toBe(before);
    await page.close();
  });

  it('rejects ready with frame-timeout naming allowedEmbedOrigins, and emits an error event, when the host origin may not frame the embed', async () => {
    const { page } = await hostPage('', refusedHostOrigin);
    const settled = await mountSettled(page, 'a', 'sales-e2e', stack.svc.origin, { readyTimeoutMs: 3_000 });
    expect(settled).toMatchObject({ isSvcEmbedError: true, code: 'frame-timeout' });
    // It waited the time it was given, no less (Chromium refuses the frame at once, so this is the timer's doing).
    expect(settled.afterMs).toBeGreaterThanOrEqual(2_900);
    expect(settled.message).toBe(`svc embed: no ready within 3000 ms. Is ${refusedHostOrigin} in allowedEmbedOrigins? Is ${stack.svc.origin}/embed/dashboard/sales-e2e right?`);
    const errors = await named(page, 'a', 'error');
    expect(errors).toEqual([{ name: 'EmbedFrameTimeoutError', context: 'embed-load', fatal: true, message: settled.message }]);
    // The frame was there, refused by the browser (it never ran svc's page), not missing.
    expect(await page.evaluate(() => document.querySelectorAll('#a iframe').length)).toBe(1);
    await page.close();
  });

  it('still delivers a ready that comes after the timeout to on("ready"), and the embed then takes actions', async () => {
    const { page } = await hostPage();
    // 1 ms: the timer fires long before the real embed's ready can arrive.
    const settled = await mountSettled(page, 'a', 'sales-e2e', stack.svc.origin, { readyTimeoutMs: 1 });
    expect(settled).toMatchObject({ code: 'frame-timeout' });
    await expect.poll(() => named(page, 'a', 'ready'), { timeout: 15_000 }).toEqual([expect.objectContaining({ publicId: 'sales-e2e' })]);
    await page.evaluate(() => (window as unknown as HostWindow).handles.a!.setColorScheme('dark'));
    await expect.poll(() => embedFrame(page, stack.svc.origin, 'sales-e2e').evaluate(() => document.documentElement.dataset.colorScheme), { timeout: 15_000 }).toBe('dark');
    await page.close();
  });

  it('rejects ready with load-failed at once when the embed refuses the first session, and resolves it on an allowed origin', async () => {
    const { page } = await hostPage();
    await page.evaluate(() => { (window as unknown as HostWindow).nextIds = ['ses_refusedBySvc0000000000000000000000000000']; });
    const refused = await mountSettled(page, 'a', 'sales-e2e', stack.svc.origin);
    expect(refused).toMatchObject({ isSvcEmbedError: true, code: 'load-failed' });
    expect(refused.afterMs).toBeLessThan(10_000);
    expect(await named(page, 'a', 'error')).toEqual([expect.objectContaining({ context: 'embed-auth', fatal: true })]);
    expect(await mountSettled(page, 'b', 'sales-e2e', stack.svc.origin)).toMatchObject({ resolved: 'sales-e2e' });
    await page.close();
  });

  it('destroy() before ready rejects ready with destroyed', async () => {
    const { page } = await hostPage();
    const code = await page.evaluate(() => {
      const w = window as unknown as HostWindow;
      const handle = w.sdk.embed({ container: document.getElementById('a')!, baseUrl: location.origin, surface: 'dashboard', publicId: 'sales-e2e', getSessionId: () => 'ses_x' });
      handle.destroy();
      return handle.ready.then(() => 'resolved', (error: Sdk.SvcEmbedError) => error.code);
    });
    expect(code).toBe('destroyed');
    await page.close();
  });

  it('destroy() removes the iframe and leaves no message listener behind', async () => {
    const { page } = await hostPage();
    const messageListeners = await messageListenerCounter(page);
    const before = await messageListeners();
    await mount(page, 'a', 'sales-e2e', stack.svc.origin);
    expect(await messageListeners()).toBe(before + 1);
    await page.evaluate(() => (window as unknown as HostWindow).handles.a!.destroy());
    expect(await messageListeners()).toBe(before);
    expect(await page.evaluate(() => document.querySelectorAll('#a iframe').length)).toBe(0);
    await page.close();
  });
});
