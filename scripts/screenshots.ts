// `npm run screenshots`: writes docs/images/ from the real demo in Debian's Chromium (SVC_CHROMIUM elsewhere):
// the demo host at its default size (1280 x 800) in light and dark, and the embedded dashboard alone at 420, 1046
// and 1920 px, and each page of the console (consoleShots: sign-in, workspace, the editor with a chart being built, the
// model, the embedding settings). It starts svc with the demo account (SQLite in a temporary file), the demo host, and a bare host page
// with the SDK, on free ports; it needs a build (`npm run build`, which the npm script runs first).
import { mkdirSync, readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import type { ImportAccount } from '../apps/server/src/import/import.js';
import { launchChromium } from '../e2e/browser.js';
import { bundle, freePort, serve, startSvc } from '../e2e/embed-harness.js';

const OUT = 'docs/images';
/** The demo account's admin key: public, it is in apps/server/demo/demo.json. */
const DEMO_ADMIN_KEY = 'svc_demo_admin_key_0001';
const DEMO_VIEWER = { externalId: 'ann-1', embedTenantName: 'customer-a', securityContext: { tenant: 'customer-a' } };
const EMBED_WIDTHS = [420, 1046, 1920];

interface DemoHostOptions { port: number; host: string; svcUrl: string; apiKey: string; deploymentId: number }
// apps/demo-host is plain JavaScript without type declarations (and outside this program's type check).
const { startDemoHost } = await import(new URL('../apps/demo-host/server.js', import.meta.url).href) as { startDemoHost(options: DemoHostOptions): Promise<{ close(): Promise<void> }> };

type Account = ImportAccount & { settings: { allowedEmbedOrigins: string[] } };

const BARE_HOST = `<!doctype html><html><head><meta name="viewport" content="width=device-width"></head><body style="margin:0">
<div id="embed"></div>
<script type="module">
  import { embed } from '/sdk.js';
  const scheme = new URLSearchParams(location.search).get('scheme') ?? 'light';
  const handle = embed({
    container: document.getElementById('embed'), baseUrl: window.SVC, surface: 'dashboard', publicId: 'sales-performance', autoResize: true, colorScheme: scheme,
    getSessionId: async () => (await (await fetch('/session', { method: 'POST' })).json()).sessionId,
  });
  handle.on('content-size', () => { window.lastSize = Date.now(); });
  handle.once('dashboard-loaded').then(() => { window.loaded = true; });
</script></body></html>`;

/** Waits until the embed has not changed its size for a while, then captures the whole page. */
async function capture(page: Page, path: string, isSettled: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await isSettled())) {
    if (Date.now() > deadline) throw new Error(`${path}: the page did not settle in 30 s`);
    await page.waitForTimeout(200);
  }
  // Chromium paints an iframe only where the viewport is: the viewport grows to the whole page first.
  const { width } = page.viewportSize()!;
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.setViewportSize({ width, height });
  await page.waitForTimeout(500);
  await page.screenshot({ path, fullPage: true });
  console.log(`wrote ${path} (${width} x ${height})`);
}

const quietFor = (page: Page, ms: number) => async () => page.evaluate((ms) => {
  const w = window as unknown as { loaded?: boolean; lastSize?: number };
  return w.loaded === true && Date.now() - (w.lastSize ?? 0) > ms;
}, ms);

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const demoPort = await freePort();
  const demoOrigin = `http://localhost:${demoPort}`;
  const sdkJs = await bundle('packages/embed-sdk/src/index.ts');
  let svcOrigin = '';
  let prod = 0;
  const bare = await serve({
    '/': async () => ({ type: 'text/html', body: BARE_HOST.replace('window.SVC', JSON.stringify(svcOrigin)) }),
    '/sdk.js': { type: 'text/javascript', body: sdkJs },
    '/session': async () => {
      const response = await fetch(`${svcOrigin}/api/v1/embed/generate-session`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ deploymentId: prod, ...DEMO_VIEWER }),
      });
      return { type: 'application/json', body: await response.text() };
    },
  });
  const bareOrigin = `http://localhost:${bare.port}`;
  const demo = JSON.parse(readFileSync(new URL('../apps/server/demo/demo.json', import.meta.url), 'utf8')) as { accounts: Account[] };
  const account = demo.accounts[0]!;
  account.settings.allowedEmbedOrigins.push(demoOrigin, bareOrigin);
  const svc = await startSvc({ account });
  svcOrigin = svc.origin;
  prod = svc.refs.prod!;
  const host = await startDemoHost({ port: demoPort, host: '127.0.0.1', svcUrl: svc.origin, apiKey: DEMO_ADMIN_KEY, deploymentId: prod });
  const browser = await launchChromium();
  try {
    for (const scheme of ['light', 'dark'] as const) {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(`${demoOrigin}/`);
      await page.locator('#log', { hasText: 'dashboard-loaded' }).waitFor({ timeout: 30_000 });
      if (scheme === 'dark') await page.getByRole('button', { name: 'Dark', exact: true }).click();
      const frame = page.frames().find((f) => f.url().startsWith(`${svc.origin}/embed/`))!;
      await frame.waitForFunction((scheme) => document.documentElement.dataset.colorScheme === scheme, scheme);
      let last = -1;
      let since = Date.now();
      await capture(page, `${OUT}/demo-host-${scheme}.png`, async () => {
        const height = await page.evaluate(() => document.querySelector('#embed iframe')?.getBoundingClientRect().height ?? 0);
        if (height !== last) {
          last = height;
          since = Date.now();
        }
        return Date.now() - since > 1500;
      });
      await page.close();
    }
    await consoleShots(browser.context, svc.origin);
    for (const width of EMBED_WIDTHS) {
      const page = await browser.context.newPage();
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${bareOrigin}/`);
      await capture(page, `${OUT}/embed-${width}.png`, quietFor(page, 1500));
      await page.close();
    }
  } finally {
    await browser.close();
    await host.close();
    await svc.close();
    bare.server.close();
  }
}

/** Takes the page as it is (the console's pages draw no iframe, so no settling but their own content). */
async function shoot(page: Page, name: string): Promise<void> {
  await page.waitForTimeout(400);
  await page.screenshot({ path: `${OUT}/${name}.png`, fullPage: true });
  console.log(`wrote ${OUT}/${name}.png`);
}

/**
 * The console's pages as the demo's admin sees them at 1280 x 800 (docs/console.md, docs/quickstart.md "Your first
 * dashboard in five minutes"): the steps of that section, clicked and typed as a person would.
 */
async function consoleShots(context: BrowserContext, origin: string): Promise<void> {
  const page = await context.newPage();
  await page.setViewportSize({ width: 1280, height: 800 });
  try {
    await page.goto(`${origin}/console`);
    await page.getByLabel('Email').fill('alice@demo.test');
    await shoot(page, 'console-sign-in');
    await page.getByLabel('Password').fill('demo-password');
    await page.getByLabel('Password').press('Enter');
    await page.getByRole('heading', { name: 'Production', level: 1 }).waitFor();
    await shoot(page, 'console-workspace');
    await page.getByRole('button', { name: 'New dashboard' }).click();
    await page.getByLabel('Title of the new dashboard').fill('Revenue, completed orders');
    await page.getByLabel('Title of the new dashboard').press('Enter');
    await page.getByRole('heading', { name: 'Revenue, completed orders', level: 1 }).waitFor();
    await page.getByLabel('View').selectOption('orders');
    await page.getByRole('group', { name: 'Measures' }).getByRole('checkbox', { name: 'Revenue', exact: true }).check();
    await page.getByLabel('Time dimension').selectOption('orders.created_at');
    await page.getByLabel('Grain').selectOption('month');
    await page.getByRole('button', { name: 'Add a filter' }).click();
    await page.getByLabel('Filter 1: member').selectOption('orders.status');
    await page.getByLabel('Filter 1: operator').selectOption('equals');
    await page.getByLabel('Filter 1: values').fill('completed');
    await page.locator('p.source[data-source]').waitFor({ timeout: 30_000 });
    await page.getByLabel('Chart title').fill('Revenue by month');
    await page.getByRole('button', { name: 'Add to dashboard' }).click();
    await page.getByRole('status').filter({ hasText: 'Draft saved' }).waitFor();
    await shoot(page, 'console-editor');
    // View as a customer: the draft through the embed itself, as customer-b's viewer sees it.
    await page.getByRole('button', { name: 'View as a customer' }).click();
    await page.getByRole('heading', { name: 'View as a customer', level: 1 }).waitFor();
    await page.getByLabel('Embed tenant').selectOption('customer-b');
    await page.getByRole('button', { name: 'Draft', exact: true }).click();
    await page.getByRole('button', { name: 'Show the dashboard' }).click();
    const frame = page.locator('iframe.preview-frame');
    await frame.waitFor();
    await page.frameLocator('iframe.preview-frame').locator('[data-widget-id][data-state="ready"]').first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(1500);
    await shoot(page, 'console-preview');
    const address = new URL(page.url());
    for (const [name, query] of [['console-model', 'page=model'], ['console-embedding', 'page=embedding']] as const) {
      await page.goto(`${origin}/console?deployment=${address.searchParams.get('deployment')}&${query}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      await page.waitForLoadState('networkidle');
      await shoot(page, name);
    }
  } finally {
    await page.close();
  }
}

await main();
