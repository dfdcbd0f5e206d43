import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Sdk from '../packages/embed-sdk/src/index.js';
import { hasChromium, launchChromium } from './browser.js';
import { bundle, e2eAccount, serve, startSvc } from './embed-harness.js';
import type { RunningSvc } from './embed-harness.js';

/** The host page's globals, as the page.evaluate bodies see them. */
type HostWindow = Window & {
  sdk: typeof Sdk;
  events: Array<[string, unknown]>;
  handle: Sdk.EmbedHandle;
  minted: number;
  /** Ids handed out instead of minting (a bad id, a spent one). */
  nextIds: string[];
  getSessionId(): Promise<string>;
};

const HOST_PAGE = `<!doctype html><html><body>
<div id="embed" style="height:600px"></div><iframe id="third" style="display:none"></iframe>
<script type="module">
  import * as sdk from '/sdk.js';
  window.sdk = sdk;
  window.events = [];
  window.minted = 0;
  window.nextIds = [];
  window.getSessionId = async () => {
    window.minted++;
    if (window.nextIds.length > 0) return window.nextIds.shift();
    const r = await fetch('/session', { method: 'POST' });
    return (await r.json()).sessionId;
  };
  window.ready = true;
</script></body></html>`;

export const ARTIFACTS = 'e2e/artifacts';

/**
 * The real embed (apps/embed, served by a real svc over HTTP) inside a host page of another origin, in Chromium:
 * svc at http://127.0.0.1:<port>, the host at http://localhost:<port>.
 */
const suite = hasChromium ? describe : describe.skip;

suite('the embed runtime in Chromium', () => {
  let host: Server;
  let third: Server;
  let hostOrigin: string;
  let thirdOrigin: string;
  let svc: RunningSvc;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const sdkJs = await bundle('packages/embed-sdk/src/index.ts');
    const started = await serve({
      '/': { type: 'text/html', body: HOST_PAGE },
      '/sdk.js': { type: 'text/javascript', body: sdkJs },
      '/session': async () => ({ type: 'application/json', body: JSON.stringify({ sessionId: await svc.mint() }) }),
    });
    host = started.server;
    hostOrigin = `http://localhost:${started.port}`;
    const other = await serve({ '/evil.html': { type: 'text/html', body: '<p>third party</p>' } });
    third = other.server;
    thirdOrigin = `http://localhost:${other.port}`;
    svc = await startSvc({ account: e2eAccount([hostOrigin]) });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
    host?.close();
    third?.close();
  });

  async function hostPage(): Promise<Page> {
    const page = await browser.context.newPage();
    await page.goto(`${hostOrigin}/`);
    await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    return page;
  }

  /** Embeds `publicId` with the SDK; every event is recorded in window.events as [name, payload]. */
  async function mount(page: Page, extra: Record<string, unknown> = {}, publicId = 'sales-e2e'): Promise<Frame> {
    await page.evaluate(async ({ baseUrl, publicId, extra }) => {
      const w = window as unknown as HostWindow;
      const handle = w.sdk.embed({ container: document.getElementById('embed')!, baseUrl, surface: 'dashboard', publicId, getSessionId: w.getSessionId, ...extra });
      w.handle = handle;
      const names = ['ready', 'view', 'navigate', 'dashboard-loaded', 'error', 'session-expiring', 'session-expired', 'action-result', 'renewal-failed'] as const;
      for (const name of names) handle.on(name, (payload: unknown) => w.events.push([name, payload instanceof w.sdk.SvcEmbedError ? { code: payload.code } : payload]));
      await handle.ready;
    }, { baseUrl: svc.origin, publicId, extra });
    return page.frames().find((f) => f.url().startsWith(`${svc.origin}/embed/`))!;
  }

  const events = (page: Page) => page.evaluate(() => (window as unknown as HostWindow).events);
  const names = async (page: Page) => (await events(page)).map(([name]) => name);

  it('on load: ready first (authenticated, signed), then view, then dashboard-loaded with the widget count', async () => {
    const page = await hostPage();
    await mount(page);
    await expect.poll(() => names(page)).toContain('dashboard-loaded');
    const all = await events(page);
    expect(all.map(([name]) => name)).toEqual(['ready', 'view', 'dashboard-loaded']);
    expect(all[0]![1]).toEqual({ embedTenant: 'customer-a', deploymentId: svc.refs.prod, mode: 'signed', surface: 'dashboard', publicId: 'sales-e2e' });
    expect(all[1]![1]).toEqual({ surface: 'dashboard', path: '/embed/dashboard/sales-e2e', publicId: 'sales-e2e', title: 'Sales overview' });
    expect(all[2]![1]).toEqual({ publicId: 'sales-e2e', widgetCount: 3, loadDurationMs: expect.any(Number) });
    await page.close();
  });
});
