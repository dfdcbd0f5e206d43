import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from './browser.js';
import type { Chromium } from './browser.js';
import { ADMIN_KEY, closeAll, e2eAccount, startDemoStack } from './embed-harness.js';
import type { DemoStack } from './embed-harness.js';

const suite = hasChromium ? describe : describe.skip;

/** apps/demo-host (issue 6 scope 5) in Chromium, against a real svc: its own origin, its backend minting sessions. */
suite('the demo host in Chromium', () => {
  let demo: DemoStack;
  let browser: Chromium;

  beforeAll(async () => {
    demo = await startDemoStack({ account: (hostOrigin) => e2eAccount([hostOrigin]), apiKey: ADMIN_KEY, publicId: 'sales-e2e' });
    browser = await launchChromium();
  }, 60_000);

  afterAll(() => closeAll(browser, demo));

  it('never hands the API key to the browser', async () => {
    for (const path of ['/', '/app.js', '/sdk.js']) expect(await (await fetch(`${demo.hostOrigin}${path}`)).text()).not.toContain(ADMIN_KEY);
  });

  it('embeds the dashboard with the SDK, logs its events live, and its buttons send actions the embed applies', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${demo.hostOrigin}/`);
    const log = page.locator('#log');
    await expect.poll(() => log.innerText(), { timeout: 10_000 }).toContain('dashboard-loaded');
    expect(await log.innerText()).toContain('ready');
    const frame = page.frames().find((f) => f.url().startsWith(`${demo.svc.origin}/embed/dashboard/sales-e2e`))!;
    expect(await frame.locator('h1').innerText()).toBe('Sales overview');
    await page.getByRole('button', { name: 'Dark' }).click();
    await expect.poll(() => frame.evaluate(() => document.documentElement.dataset.colorScheme)).toBe('dark');
    await page.getByRole('button', { name: 'Renew session now' }).click();
    await expect.poll(() => log.innerText()).toContain('session #2 minted');
    await page.close();
  });
});
