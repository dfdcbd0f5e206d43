import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Sdk from '../packages/embed-sdk/src/index.js';
import { hasChromium, launchChromium } from './browser.js';

/** The host page's globals (HOST_PAGE below), as the page.evaluate bodies see them. */
type HostWindow = Window & {
  sdk: typeof Sdk;
  events: Array<[string, string, unknown]>;
  minted: number;
  nextIds: string[];
  getSessionId(): Promise<string>;
  handles: Record<string, Sdk.EmbedHandle>;
};

/**
 * @svc/embed-sdk in real Chromium: the host page and the embed on two origins (localhost and 127.0.0.1, two ports).
 * The embed is a protocol fixture page (e2e/fixtures/embed-fixture.html) until the real embed exists (issue 6).
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

async function bundle(entry: string): Promise<string> {
  const result = await build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'browser', write: false, target: 'es2020' });
  return result.outputFiles[0]!.text;
}

function serve(routes: (path: string) => { type: string; body: string } | undefined): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((request, response) => {
      const route = routes(new URL(request.url ?? '/', 'http://x').pathname);
      if (route === undefined) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': route.type }).end(route.body);
    });
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

const HOST_PAGE = `<!doctype html><html><body>
<div id="a" style="height:200px"></div><div id="b" style="height:200px"></div><iframe id="other"></iframe>
<script type="module">
  import * as sdk from '/sdk.js';
  window.sdk = sdk;
  window.events = [];
  window.minted = 0;
  window.nextIds = [];
  window.handles = {};
  window.getSessionId = async () => { window.minted++; return window.nextIds.shift() ?? 'ses_plain_' + window.minted; };
  window.ready = true;
</script></body></html>`;

suite('@svc/embed-sdk in Chromium', () => {
  let hostServer: Server;
  let embedServer: Server;
  let thirdServer: Server;
  let hostOrigin: string;
  let embedOrigin: string;
  let thirdOrigin: string;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    const [sdkJs, protocolJs, reactJs] = await Promise.all([
      bundle('packages/embed-sdk/src/index.ts'), bundle('packages/protocol/src/index.ts'), bundle('e2e/fixtures/react-host.ts'),
    ]);
    const fixture = readFileSync('e2e/fixtures/embed-fixture.html', 'utf8');
    const hostRoutes: Record<string, { type: string; body: string }> = {
      '/': { type: 'text/html', body: HOST_PAGE },
      '/sdk.js': { type: 'text/javascript', body: sdkJs },
      '/react.html': { type: 'text/html', body: '<!doctype html><div id="react"></div><script type="module" src="/react.js"></script>' },
      '/react.js': { type: 'text/javascript', body: reactJs },
    };
    const host = await serve((path) => hostRoutes[path]);
    const embed = await serve((path) => (path.startsWith('/embed/') ? { type: 'text/html', body: fixture } : path === '/protocol.js' ? { type: 'text/javascript', body: protocolJs } : undefined));
    // A page on a third origin that posts a well-formed svc event to its parent.
    const third = await serve((path) => (path === '/evil.html'
      ? { type: 'text/html', body: `<script>parent.postMessage({source:'svc-embed',direction:'event',type:'svc:event:navigate',payload:{path:'/evil'},timestamp:Date.now(),surface:'dashboard'}, '*')</script>` }
      : undefined));
    hostServer = host.server;
    embedServer = embed.server;
    thirdServer = third.server;
    hostOrigin = `http://localhost:${host.port}`;
    embedOrigin = `http://127.0.0.1:${embed.port}`;
    thirdOrigin = `http://localhost:${third.port}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const server of [hostServer, embedServer, thirdServer]) server?.close();
  });

  async function hostPage(): Promise<{ page: Page; logs: string[] }> {
    const page = await browser.context.newPage();
    const logs: string[] = [];
    page.on('console', (message) => logs.push(message.text()));
    await page.goto(`${hostOrigin}/`);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    return { page, logs };
  }

  /** Creates an embed in #id; its events are recorded in window.events as [id, name, payload]. */
  const mount = (page: Page, id: string, extra: Record<string, unknown> = {}) =>
    page.evaluate(async ({ id, baseUrl, extra }) => {
      const w = window as unknown as HostWindow;
      const handle = w.sdk.embed({ container: document.getElementById(id)!, baseUrl, surface: 'dashboard', publicId: `dash-${id}`, getSessionId: w.getSessionId, debug: true, ...extra });
      w.handles[id] = handle;
      const names = ['ready', 'dashboard-loaded', 'navigate', 'error', 'session-expiring', 'session-expired', 'action-result', 'renewal-failed'] as const;
      for (const name of names) {
        handle.on(name, (payload: unknown) => w.events.push([id, name, payload instanceof w.sdk.SvcEmbedError ? { code: payload.code } : payload]));
      }
      await handle.ready;
    }, { id, baseUrl: embedOrigin, extra });

  const events = (page: Page) => page.evaluate(() => (window as unknown as { events: Array<[string, string, unknown]> }).events);
  const embedFrame = (page: Page, id: string) => page.frames().find((f) => f.url().includes(`/embed/dashboard/dash-${id}`))!;

  it('loads the embed URL of SPEC with a fresh session id, hears its events and sends actions to the tenant origin', async () => {
    const { page } = await hostPage();
    await mount(page, 'a', { allowExport: true, locale: 'pt-BR' });
    const src = await page.evaluate(() => (document.querySelector('#a iframe') as HTMLIFrameElement).src);
    expect(src).toBe(`${embedOrigin}/embed/dashboard/dash-a?session=ses_plain_1&allowExport=true&locale=pt-BR`);
    await expect.poll(() => events(page)).toContainEqual(['a', 'dashboard-loaded', { publicId: 'dash-a', widgetCount: 3 }]);
    await page.evaluate(() => {
      const h = (window as unknown as HostWindow).handles.a!;
      h.setFilter('orders', 'status', ['paid']);
      h.setColorScheme('dark');
      h.refresh();
    });
    const frame = embedFrame(page, 'a');
    await expect.poll(() => frame.evaluate(() => (window as unknown as { __received: Array<{ type: string; payload: unknown }> }).__received.map((m) => [m.type, m.payload])))
      .toEqual([
        ['svc:action:set-filter', { filterUrlParameter: 'f_orders.status=["paid"]' }],
        ['svc:action:set-color-scheme', { scheme: 'dark' }],
        ['svc:action:refresh', {}],
      ]);
    await page.close();
  });

  it('ignores spoofed messages from another window and from another origin, and says why in debug mode', async () => {
    const { page, logs } = await hostPage();
    await mount(page, 'a');
    // The host window itself, and another iframe of the tenant origin, post well-formed svc events.
    await page.evaluate((origin) => {
      window.postMessage({ source: 'svc-embed', direction: 'event', type: 'svc:event:navigate', payload: { path: '/spoof-self' }, timestamp: Date.now(), surface: 'dashboard' }, '*');
      (document.getElementById('other') as HTMLIFrameElement).src = `${origin}/embed/dashboard/intruder`;
    }, embedOrigin);
    // The embed's own iframe navigated to a third origin posts one too.
    await embedFrame(page, 'a').evaluate((url) => { location.href = url; }, `${thirdOrigin}/evil.html`);
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
    await mount(page, 'a');
    await mount(page, 'b');
    await embedFrame(page, 'b').evaluate(() => (window as unknown as { __send(t: string, p: unknown): void }).__send('svc:event:navigate', { path: '/only-b' }));
    await expect.poll(() => events(page)).toContainEqual(['b', 'navigate', { path: '/only-b' }]);
    expect((await events(page)).filter(([id, name]) => id === 'a' && name === 'navigate')).toEqual([]);
    expect((await events(page)).filter(([, name]) => name === 'ready').map(([id]) => id).sort()).toEqual(['a', 'b']);
    await page.close();
  });

  it('renews a session end to end: expiring -> one fresh id -> set-session confirmed', async () => {
    const { page } = await hostPage();
    await page.evaluate(() => { (window as unknown as { nextIds: string[] }).nextIds = ['ses_expiring_200', 'ses_renewed']; });
    await mount(page, 'a');
    const frame = embedFrame(page, 'a');
    await expect.poll(() => frame.evaluate(() => (window as unknown as { __sessions: string[] }).__sessions)).toEqual(['ses_expiring_200', 'ses_renewed']);
    expect(await page.evaluate(() => (window as unknown as { minted: number }).minted)).toBe(2);
    await page.close();
  });

  it('retries a refused renewal with a fresh id after backoff; setSession() rejects on a refused id', async () => {
    const { page } = await hostPage();
    await page.evaluate(() => { (window as unknown as { nextIds: string[] }).nextIds = ['ses_expired_100', 'bad_1', 'ses_good']; });
    await mount(page, 'a');
    const frame = embedFrame(page, 'a');
    await expect.poll(() => frame.evaluate(() => (window as unknown as { __sessions: string[] }).__sessions), { timeout: 5000 }).toEqual(['ses_expired_100', 'ses_good']);
    expect(await events(page)).toContainEqual(['a', 'error', { message: 'session id refused', name: 'EmbedSessionExchangeError', context: 'session-renewal' }]);
    const rejected = await page.evaluate(() => (window as unknown as HostWindow).handles.a!.setSession('bad_manual').then(() => 'resolved', (e: { code: string }) => e.code));
    expect(rejected).toBe('action-rejected');
    expect(await page.evaluate(() => (window as unknown as HostWindow).handles.a!.setSession('ses_manual').then(() => 'resolved'))).toBe('resolved');
    await page.close();
  });

  it('<SvcEmbed> delivers events as props, sends prop changes as actions and cleans up on unmount', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${hostOrigin}/react.html`);
    await page.waitForFunction(() => (window as unknown as { reactReady?: boolean }).reactReady === true);
    const messageListeners = await messageListenerCounter(page);
    const before = await messageListeners();
    const render = (colorScheme: 'light' | 'dark') => page.evaluate(({ baseUrl, colorScheme }) => {
      (window as unknown as { render(p: { baseUrl: string; colorScheme: 'light' | 'dark' }): void }).render({ baseUrl, colorScheme });
    }, { baseUrl: embedOrigin, colorScheme });
    const reactEvents = () => page.evaluate(() => (window as unknown as { reactEvents: Array<[string, unknown]> }).reactEvents);
    await render('light');
    await expect.poll(reactEvents).toContainEqual(['onDashboardLoaded', { publicId: 'dash-react', widgetCount: 3 }]);
    const events = await reactEvents();
    expect(events).toContainEqual(['onReady', expect.objectContaining({ publicId: 'dash-react', mode: 'signed' })]);
    expect(events).toContainEqual(['onEvent', 'dashboard-loaded']);
    await render('dark');
    const frame = page.frames().find((f) => f.url().includes('/embed/dashboard/dash-react'))!;
    await expect.poll(() => frame.evaluate(() => (window as unknown as { __received: Array<{ type: string; payload: unknown }> }).__received.map((m) => [m.type, m.payload])))
      .toEqual([['svc:action:set-color-scheme', { scheme: 'dark' }]]);
    expect(await page.evaluate(() => document.querySelectorAll('#react iframe').length)).toBe(1);
    await page.evaluate(() => (window as unknown as { unmount(): void }).unmount());
    expect(await page.evaluate(() => document.querySelectorAll('#react iframe').length)).toBe(0);
    expect(await messageListeners()).toBe(before);
    await page.close();
  });

  it('destroy() removes the iframe and leaves no message listener behind', async () => {
    const { page } = await hostPage();
    const messageListeners = await messageListenerCounter(page);
    const before = await messageListeners();
    await mount(page, 'a');
    expect(await messageListeners()).toBe(before + 1);
    await page.evaluate(() => (window as unknown as HostWindow).handles.a!.destroy());
    expect(await messageListeners()).toBe(before);
    expect(await page.evaluate(() => document.querySelectorAll('#a iframe').length)).toBe(0);
    await page.close();
  });
});
