import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: apps/demo-host is plain JavaScript without type declarations.
import { startDemoHost } from '../apps/demo-host/server.js';
import { hasChromium, launchChromium } from './browser.js';
import { ADMIN_KEY, e2eAccount, freePort, startSvc } from './embed-harness.js';
import type { RunningSvc } from './embed-harness.js';

const suite = hasChromium ? describe : describe.skip;

/** apps/demo-host (issue 6 scope 5) in Chromium, against a real svc: its own origin, its backend minting sessions. */
suite('the demo host in Chromium', () => {
  let svc: RunningSvc;
  let demo: { url: string; close(): Promise<void> };
  let hostOrigin: string;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    const port = await freePort();
    hostOrigin = `http://localhost:${port}`;
    svc = await startSvc({ account: e2eAccount([hostOrigin]) });
    demo = await startDemoHost({ port, host: '127.0.0.1', svcUrl: svc.origin, apiKey: ADMIN_KEY, deploymentId: svc.refs.prod, publicId: 'sales-e2e' });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await demo?.close();
    await svc?.close();
  });

  it('never hands the API key to the browser', async () => {
    for (const path of ['/', '/app.js', '/sdk.js']) expect(await (await fetch(`${hostOrigin}${path}`)).text()).not.toContain(ADMIN_KEY);
  });

  it('embeds the dashboard with the SDK, logs its events live, and its buttons send actions the embed applies', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${hostOrigin}/`);
    const log = page.locator('#log');
    await expect.poll(() => log.innerText(), { timeout: 10_000 }).toContain('dashboard-loaded');
    expect(await log.innerText()).toContain('ready');
    const frame = page.frames().find((f) => f.url().startsWith(`${svc.origin}/embed/dashboard/sales-e2e`))!;
    expect(await frame.locator('h1').innerText()).toBe('Sales overview');
    await page.getByRole('button', { name: 'Dark' }).click();
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('dark');
    await page.getByRole('button', { name: 'Renew session now' }).click();
    await expect.poll(() => log.innerText()).toContain('session #2 minted');
    await page.close();
  });
});
