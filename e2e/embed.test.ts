import { mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Frame, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import type * as Sdk from '../packages/embed-sdk/src/index.js';
import { hasChromium } from './browser.js';
import { e2eAccount, hostEvents, hostPageHtml, mountEmbed, openHostPage, reactHostRoutes, setUpEmbedStack, serve, startSvc } from './embed-harness.js';
import type { HostGlobals, RunningSvc } from './embed-harness.js';
import type { EmbedLifetimes } from '../apps/server/src/sessions/sessions.config.js';

/** The host page's globals, as the page.evaluate bodies see them. */
type HostWindow = Window & HostGlobals & { second: Sdk.EmbedHandle; secondEvents: Array<[string, unknown]> };

const HOST_PAGE = hostPageHtml({
  bodyStyle: '',
  body: '<div id="embed" style="height:600px"></div><div id="embed2" style="height:300px"></div><iframe id="third" style="display:none"></iframe>',
  script: '  window.secondEvents = [];',
});

export const ARTIFACTS = 'e2e/artifacts';

/**
 * The real embed (apps/embed, served by a real svc over HTTP) inside a host page of another origin, in Chromium:
 * svc at http://127.0.0.1:<port>, the host at http://localhost:<port>.
 */
const suite = hasChromium ? describe : describe.skip;

suite('the embed runtime in Chromium', () => {
  // A second svc with a token lifetime of 9.6 s: effective end at 9.2 s, session-expiring at 9.0 s (24 h, 23 h and
  // 22 h 30 min, scaled by 1/9000), so that a whole expiry runs in seconds.
  const SHORT: EmbedLifetimes = { sessionTtlMs: 60_000, tokenTtlMs: 9_600 };
  let shortSvc: RunningSvc;
  let third: Server;
  let thirdOrigin: string;

  beforeAll(() => {
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  const stack = setUpEmbedStack({
    page: HOST_PAGE,
    routes: reactHostRoutes(),
    account: (host) => e2eAccount([host.origin, `http://127.0.0.1:${host.port}`]),
    mint: (svc, query) => {
      const theme = query.get('theme') === '1' ? { embedTheme: { primaryColor: '#ff0000', borderRadius: '2px' } }
        : query.get('settings') === '1' ? { settings: { timezone: 'Asia/Tokyo', locale: 'de-DE' } } : {};
      return (query.get('short') === '1' ? shortSvc : svc).mint(theme);
    },
    browser: {},
    alsoClose: () => [shortSvc, third],
  });

  beforeAll(async () => {
    const other = await serve({ '/evil.html': { type: 'text/html', body: '<p>third party</p>' } });
    third = other.server;
    thirdOrigin = `http://localhost:${other.port}`;
    shortSvc = await startSvc({ account: e2eAccount([stack.host.origin]), lifetimes: SHORT });
  });

  const hostPage = () => openHostPage(stack.browser.context, `${stack.host.origin}/`);

  /** Embeds `publicId` with the SDK; every event is recorded in window.events as [name, payload]. */
  const mount = (page: Page, extra: Record<string, unknown> = {}, publicId = 'sales-e2e', target: RunningSvc = stack.svc): Promise<Frame> =>
    mountEmbed(page, { baseUrl: target.origin, surface: 'dashboard', publicId, ...extra }, {
      record: ['ready', 'view', 'navigate', 'dashboard-loaded', 'error', 'session-expiring', 'session-expired', 'action-result', 'renewal-failed'], errorCodes: true,
    });

  const names = async (page: Page) => (await hostEvents(page)).map(([name]) => name);


  /** Sends an action through the SDK handle (window.handle). */
  const act = (page: Page, body: string) => page.evaluate(`window.handle.${body}`);
  const frameText = (frame: Frame, selector: string) => frame.locator(selector).first().innerText();
  const rootVar = (frame: Frame, name: string) => frame.evaluate((n) => getComputedStyle(document.documentElement).getPropertyValue(n).trim(), name);

  it('applies the colour scheme: light, dark, and auto following prefers-color-scheme live', async () => {
    const page = await hostPage();
    const frame = await mount(page, { colorScheme: 'light' });
    await expect.poll(() => names(page)).toContain('dashboard-loaded');
    const background = () => frame.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await background();
    expect(await frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('light');
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-light.png`, fullPage: true });
    await act(page, "setColorScheme('dark')");
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('dark');
    expect(await background()).not.toBe(light);
    await page.screenshot({ path: `${ARTIFACTS}/dashboard-dark.png`, fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    await act(page, "setColorScheme('auto')");
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('light');
    await page.close();
  });

  it('applies the actions a host sent before ready: the SDK sends them as ready arrives, and the embed is listening by then', async () => {
    const page = await hostPage();
    await page.evaluate(async (baseUrl) => {
      const w = window as unknown as HostWindow;
      w.handle = w.sdk.embed({ container: document.getElementById('embed')!, baseUrl, surface: 'dashboard', publicId: 'sales-e2e', colorScheme: 'light', getSessionId: w.getSessionId });
      w.handle.on('error', (payload: unknown) => w.events.push(['error', payload]));
      // Sent before the frame exists: the SDK holds them until ready, then posts them at once.
      w.handle.setColorScheme('dark');
      w.handle.setLocale('de-DE');
      await w.handle.ready;
    }, stack.svc.origin);
    const frame = page.frames().find((f) => f.url().startsWith(`${stack.svc.origin}/embed/`))!;
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('dark');
    await expect.poll(() => frame.evaluate(() => document.documentElement.lang)).toBe('de-DE');
    expect(await hostEvents(page)).toEqual([]);
    await page.close();
  });

  it("applies the session's embedTheme first, then set-theme over it as CSS variables; unusable values are not applied", async () => {
    const page = await hostPage();
    await page.evaluate(() => { (window as unknown as HostWindow).getSessionId = async () => (await (await fetch('/session?theme=1', { method: 'POST' })).json()).sessionId; });
    const frame = await mount(page);
    await expect.poll(() => rootVar(frame, '--svc-primary')).toBe('#ff0000');
    expect(await rootVar(frame, '--svc-radius')).toBe('2px');
    await act(page, "setTheme({ primaryColor: 'rgb(0, 128, 0)', borderRadius: 14, font: 'Georgia, serif' })");
    await expect.poll(() => rootVar(frame, '--svc-primary')).toBe('rgb(0, 128, 0)');
    // Each read polls: the theme is applied in one commit, but under load a style may be read a frame before it.
    await expect.poll(() => rootVar(frame, '--svc-radius')).toBe('14px');
    await expect.poll(() => frame.evaluate(() => getComputedStyle(document.body).fontFamily)).toBe('Georgia, serif');
    await expect.poll(() => frame.evaluate(() => getComputedStyle(document.querySelector('.widget')!).borderTopColor)).toBe('rgb(0, 128, 0)');
    await act(page, "setTheme({ primaryColor: 'not a colour; background: url(x)' })");
    await act(page, 'refresh()');
    await expect.poll(async () => (await names(page)).filter((n) => n === 'dashboard-loaded').length).toBe(2);
    await expect.poll(() => rootVar(frame, '--svc-primary')).toBe('#2563eb');
    await page.close();
  });

  it('switches the UI language and Intl formats with full, short and regional locale codes', async () => {
    const page = await hostPage();
    const frame = await mount(page, { locale: 'en-US', timezone: 'UTC' });
    await expect.poll(() => frameText(frame, '[data-testid=widget-count]')).toBe('3 widgets');
    await act(page, "setLocale('de-DE')");
    await expect.poll(() => frameText(frame, '[data-testid=widget-count]')).toBe('3 Elemente');
    expect(await frameText(frame, '[data-testid=updated]')).toMatch(/^Aktualisiert \d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}$/);
    await act(page, "setLocale('fr')");
    await expect.poll(() => frameText(frame, '[data-testid=widget-count]')).toBe('3 éléments');
    await act(page, "setLocale('pt-BR')");
    await expect.poll(() => frameText(frame, '[data-testid=updated]')).toMatch(/^Atualizado /);
    expect(await frame.evaluate(() => document.documentElement.lang)).toBe('pt-BR');
    await act(page, "setLocale('en-GB')");
    await expect.poll(() => frameText(frame, '[data-testid=updated]')).toMatch(/^Updated \d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2}$/);
    await act(page, "setLocale('???')");
    await expect.poll(() => hostEvents(page)).toContainEqual(['error', expect.objectContaining({ name: 'InvalidActionError', context: 'set-locale', fatal: false })]);
    expect(await frame.evaluate(() => document.documentElement.lang)).toBe('en-GB');
    await page.close();
  });

  it("shows the dashboard's translated content in the viewer's locale, its language's next, else its own words (issue 38)", async () => {
    const page = await hostPage();
    const frame = await mount(page, { locale: 'ja-JP', timezone: 'UTC' });
    await expect.poll(() => frameText(frame, 'h1')).toBe('売上概要');
    await expect.poll(() => frameText(frame, '[data-widget-id=w-revenue] .widget-title')).toBe('売上');
    expect(await frameText(frame, '[data-widget-id=w-orders] .widget-title')).toBe('Orders');
    await expect.poll(() => frameText(frame, '[data-widget-id=w-note] .markdown')).toBe('金額はユーロ');
    await act(page, "setLocale('pt-BR')");
    await expect.poll(() => frameText(frame, 'h1')).toBe('Visão geral de vendas');
    expect(await frameText(frame, '[data-widget-id=w-revenue] .widget-title')).toBe('Revenue');
    await act(page, "setLocale('sv-SE')");
    await expect.poll(() => frameText(frame, 'h1')).toBe('Sales overview');
    expect(await frameText(frame, '[data-widget-id=w-note] .markdown')).toBe('Figures in EUR');
    await page.close();
  });

  it('runs in the IANA time zone of set-timezone over the URL timezone; bare offsets are ignored', async () => {
    const page = await hostPage();
    const frame = await mount(page, { locale: 'en-US', timezone: 'America/New_York' });
    const updated = () => frameText(frame, '[data-testid=updated]');
    await expect.poll(updated).toMatch(/^Updated /);
    const shownIn = (zone: string) => frame.evaluate((z) => {
      const text = document.querySelector('[data-testid=updated]')!.textContent!;
      const hour = new Intl.DateTimeFormat('en-US', { timeZone: z, hour: 'numeric', hour12: true }).format(new Date()).split(' ')[0];
      return text.includes(`, ${hour}:`);
    }, zone);
    expect(await shownIn('America/New_York')).toBe(true);
    await act(page, "setTimezone('Asia/Tokyo')");
    await expect.poll(() => shownIn('Asia/Tokyo')).toBe(true);
    await act(page, "setTimezone('+02:00')");
    await expect.poll(() => hostEvents(page)).toContainEqual(['error', expect.objectContaining({ context: 'set-timezone', fatal: false })]);
    expect(await shownIn('Asia/Tokyo')).toBe(true);
    // Chromium checks the name with Temporal (preferences.ts, issue 22), which would also read a zone out of a
    // date-time: refused too. A name in other letter case is taken in its own.
    const refusals = async () => (await hostEvents(page)).filter(([name, payload]) => name === 'error' && (payload as { context?: string }).context === 'set-timezone').length;
    await act(page, "setTimezone('2025-01-01T00:00[Europe/Berlin]')");
    await expect.poll(refusals).toBe(2);
    expect(await shownIn('Asia/Tokyo')).toBe(true);
    await act(page, "setTimezone('europe/berlin')");
    await expect.poll(() => frameText(frame, '[data-testid=timezone]')).toBe('Europe/Berlin');
    expect(await shownIn('Europe/Berlin')).toBe(true);
    await page.close();
  });

  it('shows filters pushed with set-filter (value, list, range; null clears) and reports a malformed one', async () => {
    const page = await hostPage();
    const frame = await mount(page, { locale: 'en-US' });
    await act(page, "setFilter('orders', 'status', ['completed', 'shipped'])");
    await act(page, "setFilter('orders', 'amount', { gte: 1000, lte: 5000 })");
    // Issue 31: a chip shows the dimension's title from the model, not its member name.
    await expect.poll(() => frame.locator('.filter-chip').allInnerTexts()).toEqual(['Status: completed, shipped\n×', 'Amount: 1,000 – 5,000\n×']);
    await act(page, "setFilter('orders', 'status', null)");
    await expect.poll(() => frame.locator('.filter-chip').count()).toBe(1);
    await page.evaluate(() => { (window as unknown as HostWindow).handle.setFilter('orders', 'status; drop', 1); });
    await expect.poll(() => hostEvents(page)).toContainEqual(['error', expect.objectContaining({ name: 'InvalidActionError', context: 'set-filter' })]);
    await page.close();
  });

  it('navigates in the embed: navigate with previousPath, then view and dashboard-loaded of the new place (publicId and workbook paths)', async () => {
    const page = await hostPage();
    const frame = await mount(page);
    await expect.poll(() => names(page)).toContain('dashboard-loaded');
    await act(page, "navigate('/embed/dashboard/ops-e2e')");
    await expect.poll(() => frameText(frame, 'h1')).toBe('Operations');
    await expect.poll(async () => (await hostEvents(page)).slice(3)).toEqual([
      ['navigate', { path: '/embed/dashboard/ops-e2e', previousPath: '/embed/dashboard/sales-e2e' }],
      ['view', { surface: 'dashboard', path: '/embed/dashboard/ops-e2e', publicId: 'ops-e2e', title: 'Operations' }],
      ['dashboard-loaded', { publicId: 'ops-e2e', widgetCount: 0, loadDurationMs: expect.any(Number) }],
    ]);
    const workbookPath = `/embed/d/${stack.svc.refs.prod}/app/workbook/${stack.svc.refs['wb-sales']}`;
    await page.evaluate((path) => (window as unknown as HostWindow).handle.navigate(path), workbookPath);
    await expect.poll(() => frameText(frame, 'h1')).toBe('Sales overview');
    expect(await hostEvents(page)).toContainEqual(['navigate', { path: workbookPath, previousPath: '/embed/dashboard/ops-e2e' }]);
    expect(await frame.evaluate(() => location.pathname)).toBe(workbookPath);
    await page.close();
  });

  it('refresh re-runs the load: a second dashboard-loaded, and the page says when', async () => {
    const page = await hostPage();
    await mount(page);
    await expect.poll(() => names(page)).toContain('dashboard-loaded');
    await act(page, 'refresh()');
    await expect.poll(async () => (await names(page)).filter((n) => n === 'dashboard-loaded').length).toBe(2);
    await page.close();
  });

  it('keeps the token in memory only and strips the spent session id from its URL', async () => {
    const page = await hostPage();
    const frame = await mount(page);
    await expect.poll(() => names(page)).toContain('dashboard-loaded');
    expect(await frame.evaluate(() => location.search)).not.toContain('session=');
    // A cross-site frame may be denied storage altogether; then nothing can be in it.
    const stored = await frame.evaluate(() => {
      const read = (get: () => unknown) => {
        try {
          return get();
        } catch {
          return 'denied';
        }
      };
      return JSON.stringify({ local: read(() => ({ ...localStorage })), session: read(() => ({ ...sessionStorage })), cookie: read(() => document.cookie), history: history.state });
    });
    expect(stored).not.toMatch(/eyJ|ses_/);
    await page.close();
  });

  it('set-session before the lapse swaps the token invisibly: filters and an unsaved comment draft stay; a refused id keeps the embed working', async () => {
    const page = await hostPage();
    const frame = await mount(page, { comments: 'open' });
    await act(page, "setFilter('orders', 'status', 'completed')");
    const draft = frame.getByLabel('New comment');
    await draft.fill('half-written thought');
    expect(await page.evaluate(() => (window as unknown as HostWindow).handle.setSession().then(() => 'confirmed'))).toBe('confirmed');
    expect(await draft.inputValue()).toBe('half-written thought');
    expect(await frame.locator('.filter-chip').count()).toBe(1);
    const refused = await page.evaluate(() => (window as unknown as HostWindow).handle.setSession('ses_unknown_id').then(() => 'confirmed', (e: { code: string }) => e.code));
    expect(refused).toBe('action-rejected');
    expect(await hostEvents(page)).toContainEqual(['error', expect.objectContaining({ name: 'EmbedSessionExchangeError', context: 'session-renewal', fatal: false })]);
    // Still working, on the renewed token: the API answers and the view is intact.
    await act(page, 'refresh()');
    await expect.poll(async () => (await names(page)).filter((n) => n === 'dashboard-loaded').length).toBe(2);
    expect(await draft.inputValue()).toBe('half-written thought');
    expect(await names(page)).not.toContain('session-expired');
    await page.close();
  });

  it('ignores actions from another window or origin, and reports a malformed one from the host', async () => {
    const page = await hostPage();
    const frame = await mount(page, { colorScheme: 'light' });
    await expect.poll(() => names(page)).toContain('dashboard-loaded');
    const dark = { source: 'svc-embed', direction: 'action', type: 'svc:action:set-color-scheme', payload: { scheme: 'dark' }, timestamp: Date.now() };
    // A frame of a third origin, beside the embed in the host page, posts a valid action to it.
    await page.evaluate(({ url }) => new Promise<void>((resolve) => {
      const third = document.getElementById('third') as HTMLIFrameElement;
      third.onload = () => resolve();
      third.src = url;
    }), { url: `${thirdOrigin}/evil.html` });
    await page.frames().find((f) => f.url().startsWith(thirdOrigin))!.evaluate((message) => {
      for (let i = 0; i < parent.frames.length; i++) parent.frames[i]!.postMessage(message, '*');
    }, dark);
    // The host window posts one with the wrong source, and one with a bad payload.
    await page.evaluate((message) => {
      const target = document.querySelector('#embed iframe') as HTMLIFrameElement;
      target.contentWindow!.postMessage({ ...message, source: 'not-svc' }, '*');
      target.contentWindow!.postMessage({ ...message, payload: { scheme: 'purple' } }, '*');
    }, dark);
    await expect.poll(() => hostEvents(page)).toContainEqual(['error', expect.objectContaining({ name: 'InvalidActionError', context: 'action' })]);
    expect(await frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('light');
    await page.close();
  });

  it('refuses to render in a frame of an origin the account does not allow (CSP frame-ancestors)', async () => {
    const page = await stack.browser.context.newPage();
    await page.goto(`${thirdOrigin}/evil.html`);
    const sessionId = await stack.svc.mint();
    const received: unknown[] = [];
    await page.exposeFunction('record', (data: unknown) => received.push(data));
    await page.evaluate((src) => new Promise<void>((resolve) => {
      window.addEventListener('message', (event) => void (window as unknown as { record(d: unknown): void }).record(event.data));
      const iframe = document.createElement('iframe');
      iframe.onload = () => resolve();
      iframe.src = src;
      document.body.append(iframe);
    }), `${stack.svc.origin}/embed/dashboard/sales-e2e?session=${sessionId}`);
    // The frame loaded Chromium's error page in the embed's place: the embed never ran, so it could post nothing.
    const frame = page.frames().find((f) => f !== page.mainFrame())!;
    await expect.poll(() => frame.url()).toMatch(/^chrome-error:/);
    expect(received).toEqual([]);
    // The page itself answered with the policy that blocked it.
    const response = await fetch(`${stack.svc.origin}/embed/dashboard/sales-e2e`);
    expect(response.headers.get('content-security-policy')).toContain(`frame-ancestors ${stack.host.origin}`);
    await page.close();
  });


  it('keeps two embeds on one page apart: each its own ready and its own actions (the SDK against the real embed)', async () => {
    const page = await hostPage();
    const first = await mount(page);
    await page.evaluate(async (baseUrl) => {
      const w = window as unknown as HostWindow;
      w.second = w.sdk.embed({ container: document.getElementById('embed2')!, baseUrl, surface: 'dashboard', publicId: 'ops-e2e', getSessionId: w.getSessionId, colorScheme: 'light' });
      w.second.on('ready', (payload) => w.secondEvents.push(['ready', payload]));
      await w.second.ready;
    }, stack.svc.origin);
    const second = page.frames().find((f) => f.url().includes('/embed/dashboard/ops-e2e'))!;
    await act(page, "setColorScheme('dark')");
    await expect.poll(() => first.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('dark');
    expect(await second.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('light');
    expect((await hostEvents(page)).filter(([name]) => name === 'ready')).toEqual([['ready', expect.objectContaining({ publicId: 'sales-e2e' })]]);
    expect(await page.evaluate(() => (window as unknown as HostWindow).secondEvents)).toEqual([['ready', expect.objectContaining({ publicId: 'ops-e2e' })]]);
    await page.evaluate(() => (window as unknown as HostWindow).second.destroy());
    expect(await page.evaluate(() => document.querySelectorAll('#embed2 iframe').length)).toBe(0);
    await page.close();
  });

  it('reports session-expired when an API call answers 401 (the viewer was logged out), and recovers on set-session', async () => {
    const page = await hostPage();
    const frame = await mount(page);
    await expect.poll(() => names(page)).toContain('dashboard-loaded');
    // The host's backend logs the viewer out: every session of theirs is revoked (SPEC set-session rule 5).
    const revoked = await fetch(`${stack.svc.origin}/api/v1/embed/session/revoke`, {
      method: 'POST', headers: { authorization: `Bearer ${stack.svc.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ externalId: 'ann-1', embedTenantName: 'customer-a' }),
    });
    expect(revoked.status).toBe(204);
    // The running iframe stays (rule 5); its next call is refused, and it says so.
    expect(await frame.locator('h1').innerText()).toBe('Sales overview');
    await page.evaluate(() => { (window as unknown as HostWindow).nextIds = ['ses_refused_1', 'ses_refused_2', 'ses_refused_3', 'ses_refused_4']; });
    await act(page, 'refresh()');
    await expect.poll(() => names(page)).toContain('session-expired');
    await expect.poll(() => frame.getByRole('alertdialog').isVisible()).toBe(true);
    await page.evaluate(() => { (window as unknown as HostWindow).nextIds = []; });
    expect(await page.evaluate(() => (window as unknown as HostWindow).handle.setSession().then(() => 'confirmed'))).toBe('confirmed');
    await expect.poll(() => frame.getByRole('alertdialog').count()).toBe(0);
    await expect.poll(async () => (await names(page)).filter((n) => n === 'dashboard-loaded').length).toBe(2);
    await page.close();
  });

  it('runs a private embed on the console cookie: mode private, no tenant, no comment panel, no expiry events', async () => {
    const sameSiteHost = `http://127.0.0.1:${stack.host.port}`;
    const page = await stack.browser.context.newPage();
    const login = await page.request.post(`${stack.svc.origin}/api/v1/auth/login`, { data: { email: 'alice@acme.test', password: 'alice-password' } });
    expect(login.status()).toBe(200);
    await page.goto(`${sameSiteHost}/`);
    const received: Array<{ type: string; payload: unknown }> = [];
    await page.exposeFunction('record', (data: { type: string; payload: unknown }) => received.push(data));
    await page.evaluate((src) => {
      window.addEventListener('message', (event) => void (window as unknown as { record(d: unknown): void }).record(event.data));
      const iframe = document.createElement('iframe');
      iframe.src = src;
      iframe.style.cssText = 'width:900px;height:500px';
      document.body.append(iframe);
    }, `${stack.svc.origin}/embed/dashboard/sales-e2e`);
    // svc's extension svc:event:content-size comes too (its own test: e2e/layout.test.ts).
    await expect.poll(() => received.map((m) => m.type).filter((type) => type !== 'svc:event:content-size'), { timeout: 5000 }).toEqual(['svc:event:ready', 'svc:event:view', 'svc:event:dashboard-loaded']);
    expect(received[0]!.payload).toEqual({ embedTenant: null, deploymentId: null, mode: 'private', surface: 'dashboard', publicId: 'sales-e2e' });
    const frame = page.frames().find((f) => f.url().startsWith(`${stack.svc.origin}/embed/`))!;
    expect(await frame.locator('.comments-aside').count()).toBe(0);
    await page.close();
  });


  /** A host page whose sessions come from the short-lived svc. */
  async function shortHostPage(): Promise<Page> {
    const page = await hostPage();
    await page.evaluate(() => {
      const w = window as unknown as HostWindow;
      w.getSessionId = async () => {
        w.minted++;
        if (w.nextIds.length > 0) return w.nextIds.shift()!;
        return (await (await fetch('/session?short=1', { method: 'POST' })).json()).sessionId;
      };
    });
    return page;
  }
  const arrivalOf = async (page: Page, name: string) => page.evaluate((n) => {
    const w = window as unknown as HostWindow;
    const index = w.events.findIndex(([event]) => event === n);
    return { payload: w.events[index]![1] as { expiresAt: number; expiresInMs: number; expiredAt: number } };
  }, name);

  it('warns 1/48 of the token lifetime before the effective end (30 min of 23 h, scaled), lapses at the end, and recovers on set-session without a reload', async () => {
    const page = await shortHostPage();
    const frame = await mount(page, {}, 'sales-e2e', shortSvc);
    // Every renewal the SDK tries is refused, so the session really lapses.
    await page.evaluate(() => { (window as unknown as HostWindow).nextIds = ['ses_refused_1', 'ses_refused_2', 'ses_refused_3', 'ses_refused_4']; });
    await frame.evaluate(() => { (window as unknown as { notReloaded: boolean }).notReloaded = true; });
    await act(page, "setFilter('orders', 'status', 'completed')");
    await expect.poll(() => names(page), { timeout: 15_000 }).toContain('session-expiring');
    const expiring = await arrivalOf(page, 'session-expiring');
    const lead = SHORT.tokenTtlMs / 48;
    // What the embed says in the event, by its own clock: the warning comes with 1/48 of the lifetime left.
    expect(expiring.payload.expiresInMs).toBeGreaterThan(lead - 150);
    expect(expiring.payload.expiresInMs).toBeLessThanOrEqual(lead);
    await expect.poll(() => names(page), { timeout: 5000 }).toContain('session-expired');
    const expired = await arrivalOf(page, 'session-expired');
    expect(Math.abs(expired.payload.expiredAt - expiring.payload.expiresAt)).toBeLessThan(250);
    await expect.poll(() => frame.getByRole('alertdialog').isVisible()).toBe(true);
    expect(await hostEvents(page)).toContainEqual(['error', expect.objectContaining({ name: 'EmbedSessionExchangeError', context: 'session-renewal' })]);
    // After the lapse: a fresh id brings the embed back, without a reload, with its transient state gone.
    await page.evaluate(() => { (window as unknown as HostWindow).nextIds = []; });
    expect(await page.evaluate(() => (window as unknown as HostWindow).handle.setSession().then(() => 'confirmed'))).toBe('confirmed');
    await expect.poll(() => frame.getByRole('alertdialog').count()).toBe(0);
    await expect.poll(async () => (await names(page)).filter((n) => n === 'dashboard-loaded').length).toBe(2);
    expect(await frame.locator('.filter-chip').count()).toBe(0);
    expect(await frame.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect((await names(page)).filter((n) => n === 'ready')).toHaveLength(1);
    await page.close();
  }, 40_000);

  it('is renewed by the SDK on session-expiring with one fresh id: the swap is invisible and no session-expired follows', async () => {
    const page = await shortHostPage();
    const frame = await mount(page, {}, 'sales-e2e', shortSvc);
    await act(page, "setFilter('orders', 'status', 'completed')");
    await expect.poll(() => names(page), { timeout: 15_000 }).toContain('session-expiring');
    const expiring = await arrivalOf(page, 'session-expiring');
    await expect.poll(() => page.evaluate(() => (window as unknown as HostWindow).minted)).toBe(2);
    // Past the old session's end (by the page's own clock), the embed still works on the new token: a refresh
    // loads every widget with it, and no session-expired came before or with it.
    await page.waitForFunction((end) => Date.now() > end, expiring.payload.expiresAt + 800, { timeout: 15_000 });
    await act(page, 'refresh()');
    await expect.poll(async () => (await names(page)).filter((n) => n === 'dashboard-loaded').length).toBe(2);
    expect(await names(page)).not.toContain('session-expired');
    expect(await frame.locator('.filter-chip').count()).toBe(1);
    await page.close();
  }, 40_000);


  it('serves the chat surface at its URL: ready then view with surface chat, and says plainly what is not set up', async () => {
    const page = await hostPage();
    const frame = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'chat' }, { record: ['ready', 'view'] });
    await expect.poll(() => hostEvents(page)).toEqual([
      ['ready', { embedTenant: 'customer-a', deploymentId: stack.svc.refs.prod, mode: 'signed', surface: 'chat' }],
      ['view', { surface: 'chat', path: '/embed/chat' }],
    ]);
    expect(await frame.locator('h1').innerText()).toBe('Ask a question');
    await page.close();
  });


  it("starts in the session's settings (locale, time zone), which the URL's parameters override", async () => {
    const page = await hostPage();
    await page.evaluate(() => { (window as unknown as HostWindow).getSessionId = async () => (await (await fetch('/session?settings=1', { method: 'POST' })).json()).sessionId; });
    const hourIn = (zone: string) => new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', hourCycle: 'h23' }).formatToParts(new Date()).find((p) => p.type === 'hour')!.value;
    let frame = await mount(page);
    await expect.poll(() => frameText(frame, '[data-testid=widget-count]')).toBe('3 Elemente');
    expect(await frameText(frame, '[data-testid=updated]')).toContain(`, ${hourIn('Asia/Tokyo')}:`);
    await page.evaluate(() => (window as unknown as HostWindow).handle.destroy());
    frame = await mount(page, { timezone: 'America/New_York', locale: 'fr' });
    await expect.poll(() => frameText(frame, '[data-testid=widget-count]')).toBe('3 éléments');
    expect(await frameText(frame, '[data-testid=updated]')).toContain(` ${hourIn('America/New_York')}:`);
    await page.close();
  });


  it('tells the host with a fatal error, and no ready, when its session id is refused at load', async () => {
    const page = await hostPage();
    await page.evaluate(async (baseUrl) => {
      const w = window as unknown as HostWindow;
      w.handle = w.sdk.embed({ container: document.getElementById('embed')!, baseUrl, surface: 'dashboard', publicId: 'sales-e2e', getSessionId: async () => 'ses_never_minted' });
      for (const name of ['ready', 'error'] as const) w.handle.on(name, (payload: unknown) => w.events.push([name, payload]));
    }, stack.svc.origin);
    await expect.poll(() => hostEvents(page), { timeout: 5000 }).toEqual([
      ['error', { message: expect.stringContaining('session id'), name: 'EmbedSessionExchangeError', context: 'embed-auth', fatal: true }],
    ]);
    const frame = page.frames().find((f) => f.url().startsWith(`${stack.svc.origin}/embed/`))!;
    expect(await frame.getByRole('alert').innerText()).toContain('session id');
    await page.close();
  });


  it('<SvcEmbed> (the SDK for React) runs the real embed: events as props, a prop change applied as an action, nothing left on unmount', async () => {
    const page = await stack.browser.context.newPage();
    await page.goto(`${stack.host.origin}/react.html`);
    await page.waitForFunction(() => (window as unknown as { reactReady?: boolean }).reactReady === true);
    const render = (colorScheme: 'light' | 'dark') => page.evaluate(({ baseUrl, colorScheme }) => {
      (window as unknown as { render(p: Record<string, string>): void }).render({ baseUrl, colorScheme, publicId: 'sales-e2e', sessionUrl: '/session' });
    }, { baseUrl: stack.svc.origin, colorScheme });
    const reactEvents = () => page.evaluate(() => (window as unknown as { reactEvents: Array<[string, unknown]> }).reactEvents);
    await render('light');
    await expect.poll(reactEvents, { timeout: 5000 }).toContainEqual(['onDashboardLoaded', { publicId: 'sales-e2e', widgetCount: 3, loadDurationMs: expect.any(Number) }]);
    expect(await reactEvents()).toContainEqual(['onReady', expect.objectContaining({ publicId: 'sales-e2e', mode: 'signed', embedTenant: 'customer-a' })]);
    const frame = page.frames().find((f) => f.url().startsWith(`${stack.svc.origin}/embed/dashboard/sales-e2e`))!;
    expect(await frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('light');
    await render('dark');
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('dark');
    await page.evaluate(() => (window as unknown as { unmount(): void }).unmount());
    expect(await page.evaluate(() => document.querySelectorAll('#react iframe').length)).toBe(0);
    await page.close();
  });


  it('the SDK hears only its own embed: a well-formed svc event from the host window or a third-origin frame is dropped', async () => {
    const page = await hostPage();
    await mount(page);
    await expect.poll(() => names(page)).toContain('dashboard-loaded');
    const spoof = { source: 'svc-embed', direction: 'event', type: 'svc:event:navigate', payload: { path: '/spoofed' }, timestamp: Date.now(), surface: 'dashboard' };
    await page.evaluate((message) => window.postMessage(message, '*'), spoof);
    await page.evaluate(({ url }) => new Promise<void>((resolve) => {
      const third = document.getElementById('third') as HTMLIFrameElement;
      third.onload = () => resolve();
      third.src = url;
    }), { url: `${thirdOrigin}/evil.html` });
    await page.frames().find((f) => f.url().startsWith(thirdOrigin))!.evaluate((message) => parent.postMessage(message, '*'), spoof);
    // The embed's own navigate still gets through, after both spoofs.
    await act(page, "navigate('/embed/dashboard/ops-e2e')");
    await expect.poll(() => names(page)).toContain('navigate');
    expect((await hostEvents(page)).filter(([name]) => name === 'navigate')).toEqual([['navigate', { path: '/embed/dashboard/ops-e2e', previousPath: '/embed/dashboard/sales-e2e' }]]);
    await page.close();
  });

  it('on load: ready first (authenticated, signed), then view, then dashboard-loaded with the widget count', async () => {
    const page = await hostPage();
    await mount(page);
    // The embed URL of SPEC: {base_url}/embed/dashboard/<public_id>?session=<session_id>.
    expect(await page.evaluate(() => (document.querySelector('#embed iframe') as HTMLIFrameElement).src)).toMatch(new RegExp(`^${stack.svc.origin}/embed/dashboard/sales-e2e\\?session=ses_[A-Za-z0-9]+$`));
    await expect.poll(() => names(page)).toContain('dashboard-loaded');
    const all = await hostEvents(page);
    expect(all.map(([name]) => name)).toEqual(['ready', 'view', 'dashboard-loaded']);
    expect(all[0]![1]).toEqual({ embedTenant: 'customer-a', deploymentId: stack.svc.refs.prod, mode: 'signed', surface: 'dashboard', publicId: 'sales-e2e' });
    expect(all[1]![1]).toEqual({ surface: 'dashboard', path: '/embed/dashboard/sales-e2e', publicId: 'sales-e2e', title: 'Sales overview' });
    expect(all[2]![1]).toEqual({ publicId: 'sales-e2e', widgetCount: 3, loadDurationMs: expect.any(Number) });
    await page.close();
  });

  it('starts after one round trip: the exchange brings the session and dashboard reads along, and no GET of either follows', async () => {
    const page = await hostPage();
    const frame = await mount(page);
    await expect.poll(() => names(page)).toContain('dashboard-loaded');
    const requests = await frame.evaluate(() => (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
      .map((r) => new URL(r.name).pathname).filter((path) => path.startsWith('/api/v1/embed/session') || /^\/api\/v1\/embed\/dashboard\/[^/]+$/.test(path)));
    expect(requests).toEqual(['/api/v1/embed/session/token']);
    await page.close();
  });
});
