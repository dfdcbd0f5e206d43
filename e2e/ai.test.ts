import type { Frame, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { startFakeAi } from '../apps/server/test/fake-ai.js';
import type { FakeAi } from '../apps/server/test/fake-ai.js';
import { demoRows } from '../apps/server/test/warehouse.js';
import { hasChromium } from './browser.js';
import { demoDashboardItems, e2eAccount, hostEventsNamed, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack, startSvc } from './embed-harness.js';
import type { HostGlobals, RunningSvc } from './embed-harness.js';

type HostWindow = Window & HostGlobals & { surfaces: string[] };

const HOST_PAGE = hostPageHtml({
  embedStyle: 'width:1300px;height:1600px',
  script: `
  window.surfaces = [];
  // The envelope's surface of every ai-query event, as it crosses postMessage.
  window.addEventListener('message', (e) => { if (e.data && e.data.type === 'svc:event:ai-query') window.surfaces.push(e.data.surface); });`,
});

/** An APP dashboard: its code asks the bridge for a query and a question, and tries what its sandbox forbids. */
const APP_JS = `
const out = (id, text) => { document.getElementById(id).textContent = text; };
svc.query({ measures: ['orders.count'] }).then((r) => out('count', String(r.rows[0][0])), (e) => out('count', 'failed: ' + e.message));
svc.query({ measures: ['orders.profit'] }).then(() => out('refused', 'ran'), (e) => out('refused', e.message));
fetch('/api/v1/embed/session').then(() => out('network', 'reached svc'), () => out('network', 'blocked'));
try { out('parent', parent.document.title); } catch { out('parent', 'isolated'); }
document.getElementById('ask').addEventListener('click', () => svc.ask('Revenue by category').then((a) => out('answer', a.rows.length + ' rows')));
`;
const appItem = {
  ref: 'wb-app', type: 'WORKBOOK', name: 'Sales app', createdBy: 'alice',
  dashboard: {
    publicId: 'sales-app', status: 'published', allowEmbed: true, title: 'Sales app',
    config: { kind: 'APP', app: { entry: 'index.html', files: {
      'index.html': '<link rel="stylesheet" href="app.css"><h1>Sales app</h1><p id="count">…</p><p id="refused">…</p><p id="network">…</p><p id="parent">…</p><button id="ask">Ask</button><p id="answer">…</p><script src="app.js"></script>',
      'app.js': APP_JS, 'app.css': 'h1 { color: rgb(1, 2, 3); }',
    } } },
  },
};

const suite = hasChromium ? describe : describe.skip;

/** The chat surface and the dashboard agent against a TEST DOUBLE of an OpenAI-compatible endpoint (apps/server/test/fake-ai.ts). */
suite('questions in plain language in Chromium', () => {
  let fake: FakeAi;
  let bare: RunningSvc;
  const { orders } = demoRows();

  beforeAll(async () => {
    fake = await startFakeAi();
  });

  // ?bare=1 mints on the svc without an AI endpoint.
  const stack = setUpEmbedStack({
    page: HOST_PAGE,
    account: (host) => e2eAccount([host.origin], { items: [...demoDashboardItems(), appItem] }),
    svc: () => ({ ai: { baseUrl: fake.baseUrl, model: 'fake', apiKey: 'sk-e2e' } }),
    mint: (svc, query) => (query.get('bare') === '1' ? bare : svc).mint(),
    browser: { timeout: 10_000 },
    alsoClose: () => [bare, fake],
  });

  beforeAll(async () => {
    bare = await startSvc({ account: e2eAccount([stack.host.origin]) });
  });

  async function mount(surface: 'chat' | 'dashboard' | 'app', target: RunningSvc, query = '', publicId = 'sales-performance', extra: Record<string, unknown> = {}): Promise<{ page: Page; frame: Frame }> {
    const page = await openHostPage(stack.browser.context, `${stack.host.origin}/${query}`);
    const where = surface === 'dashboard' ? { publicId } : surface === 'app' ? { path: `/embed/app/${publicId}` } : {};
    const frame = await mountEmbed(page, { baseUrl: target.origin, surface, ...where, ...extra }, { record: ['ready', 'view', 'ai-query', 'error', 'dashboard-loaded'] });
    return { page, frame };
  }

  it('answers on the chat surface: ai-query submitted then completed with the chat id, surface chat, and a chart of the rows', async () => {
    const { page, frame } = await mount('chat', stack.svc);
    await frame.getByRole('textbox').fill('Revenue by category');
    await frame.getByRole('button', { name: 'Ask' }).click();
    await frame.locator('.chat-answer .mark-rect.role-mark path').first().waitFor();
    expect(await frame.locator('.chat-answer .mark-rect.role-mark path').count()).toBe(6);
    await expect.poll(() => hostEventsNamed(page, 'ai-query'), { timeout: 10_000 }).toHaveLength(2);
    const [submitted, completed] = await hostEventsNamed(page, 'ai-query') as Array<{ query: string; status: string; chatId: string }>;
    expect(submitted).toMatchObject({ query: 'Revenue by category', status: 'submitted' });
    expect(completed).toEqual({ ...submitted, status: 'completed' });
    expect(submitted!.chatId).toMatch(/.{8,}/);
    expect(await page.evaluate(() => (window as unknown as HostWindow).surfaces)).toEqual(['chat', 'chat']);
    // A second question stays in the same conversation.
    await frame.getByRole('textbox').fill('How many orders?');
    await frame.getByRole('button', { name: 'Ask' }).click();
    await expect.poll(() => hostEventsNamed(page, 'ai-query'), { timeout: 10_000 }).toHaveLength(4);
    expect(((await hostEventsNamed(page, 'ai-query'))[3] as { chatId: string }).chatId).toBe(submitted!.chatId);
    await expect.poll(() => frame.locator('.kpi-value').innerText(), { timeout: 10_000 }).toBe(new Intl.NumberFormat('en-US').format(orders.length));
    await page.screenshot({ path: 'e2e/artifacts/chat.png' });
    await page.close();
  });

  it('the dashboard agent (AI widget) answers inside the dashboard: surface dashboard, agentId the widget', async () => {
    const { page, frame } = await mount('dashboard', stack.svc);
    await expect.poll(() => hostEventsNamed(page, 'dashboard-loaded'), { timeout: 15_000 }).toHaveLength(1);
    const widget = frame.locator('[data-widget-id="ask"]');
    await widget.getByRole('textbox').fill('how many orders');
    await widget.getByRole('button', { name: 'Ask' }).click();
    await expect.poll(() => widget.locator('.kpi-value').innerText(), { timeout: 10_000 }).toBe(new Intl.NumberFormat('en-US').format(orders.length));
    await expect.poll(() => hostEventsNamed(page, 'ai-query'), { timeout: 10_000 }).toHaveLength(2);
    expect((await hostEventsNamed(page, 'ai-query'))[1]).toMatchObject({ query: 'how many orders', status: 'completed', agentId: 'ask' });
    expect(await page.evaluate(() => (window as unknown as HostWindow).surfaces)).toEqual(['dashboard', 'dashboard']);
    expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer sk-e2e');
    await page.close();
  });

  it('without SVC_AI_BASE_URL the surface says so and ai-query reports error', async () => {
    const { page, frame } = await mount('chat', bare, '?bare=1');
    await frame.getByRole('textbox').fill('Revenue by category');
    await frame.getByRole('button', { name: 'Ask' }).click();
    await expect.poll(() => frame.locator('.chat-error').innerText(), { timeout: 10_000 }).toBe('Questions in plain language are not set up on this svc server. (error code: service_unavailable)');
    await expect.poll(() => hostEventsNamed(page, 'ai-query'), { timeout: 10_000 }).toHaveLength(2);
    expect(((await hostEventsNamed(page, 'ai-query'))[1] as { status: string }).status).toBe('error');
    expect((await hostEventsNamed(page, 'error')).length).toBe(1);
    await page.close();
  });

  it('speaks the viewer\'s language in de-DE, failures too: a German sentence and svc\'s code, not svc\'s English message', async () => {
    fake.respond = () => ({ status: 500, body: { error: 'the model is down' } });
    try {
      const { page, frame } = await mount('chat', stack.svc, '', 'sales-performance', { locale: 'de-DE' });
      const box = frame.getByRole('textbox', { name: 'Eine Frage stellen' });
      expect(await box.getAttribute('placeholder')).toBe('Fragen Sie nach Ihren Daten, z. B. Umsatz nach Kategorie');
      await box.fill('Umsatz nach Kategorie');
      await frame.getByRole('button', { name: 'Fragen' }).click();
      // Before: "the AI endpoint answered 500" beside German words.
      await expect.poll(() => frame.locator('.chat-error').innerText(), { timeout: 10_000 })
        .toBe('Der KI-Dienst hat nicht richtig geantwortet. Versuchen Sie es später erneut. (Fehlercode: bad_gateway)');
      // The host still gets svc's own message, for its logs.
      await expect.poll(() => hostEventsNamed(page, 'error'), { timeout: 10_000 }).toEqual([expect.objectContaining({ message: expect.stringMatching(/AI endpoint answered 500/) })]);
      await page.close();
    } finally {
      fake.respond = undefined;
    }
  });

  it('runs an APP dashboard in a sandboxed frame: data through the bridge only, no network, no parent; its questions report surface app', async () => {
    const { page, frame } = await mount('dashboard', stack.svc, '', 'sales-app');
    await expect.poll(() => hostEventsNamed(page, 'dashboard-loaded'), { timeout: 15_000 }).toHaveLength(1);
    const app = page.frames().find((f) => f.url().endsWith('/embed/app-frame'))!;
    expect(await frame.locator('iframe.app-frame').getAttribute('sandbox')).toBe('allow-scripts');
    await expect.poll(() => app.locator('#count').innerText(), { timeout: 10_000 }).toBe(String(orders.length));
    await expect.poll(() => app.locator('#refused').innerText(), { timeout: 10_000 }).toMatch(/orders\.profit/);
    await expect.poll(() => app.locator('#network').innerText(), { timeout: 10_000 }).toBe('blocked');
    expect(await app.locator('#parent').innerText()).toBe('isolated');
    expect(await app.locator('h1').evaluate((h) => getComputedStyle(h).color)).toBe('rgb(1, 2, 3)');
    await app.locator('#ask').click();
    await expect.poll(() => app.locator('#answer').innerText(), { timeout: 10_000 }).toBe('6 rows');
    await expect.poll(() => hostEventsNamed(page, 'ai-query'), { timeout: 10_000 }).toHaveLength(2);
    expect(((await hostEventsNamed(page, 'ai-query'))[1] as { status: string }).status).toBe('completed');
    expect(await page.evaluate(() => (window as unknown as HostWindow).surfaces)).toEqual(['app', 'app']);
    await page.screenshot({ path: 'e2e/artifacts/app-dashboard.png' });
    await page.close();
  });

  it('serves an APP dashboard on the app surface at /embed/app/<publicId>: view with surface app, no dashboard-loaded', async () => {
    const { page } = await mount('app', stack.svc, '', 'sales-app');
    await expect.poll(() => hostEventsNamed(page, 'view'), { timeout: 10_000 }).toHaveLength(1);
    expect((await hostEventsNamed(page, 'view'))[0]).toMatchObject({ surface: 'app', path: '/embed/app/sales-app', publicId: 'sales-app' });
    const app = () => page.frames().find((f) => f.url().endsWith('/embed/app-frame'));
    await expect.poll(() => app()?.locator('#count').innerText(), { timeout: 10_000 }).toBe(String(orders.length));
    expect(await hostEventsNamed(page, 'dashboard-loaded')).toEqual([]);
    await page.close();
  });
});
