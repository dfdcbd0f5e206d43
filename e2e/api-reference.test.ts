import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from './browser.js';
import { e2eAccount, startSvc } from './embed-harness.js';
import type { RunningSvc } from './embed-harness.js';

// Issue 22 item 7: /docs (Scalar's API reference) works offline. Every request the page makes goes to svc itself,
// nothing is logged as an error or warning (Scalar logs "document validation errors" for a document it cannot read),
// and the security schemes are shown as the document states them.

const suite = hasChromium ? describe : describe.skip;

interface Watched {
  page: Page;
  /** Every URL the page asked for (document, scripts, fonts, fetches, the favicon). */
  requests: string[];
  /** Console errors and warnings, failed requests and uncaught exceptions, as text. */
  problems: string[];
}

suite('the API reference at /docs in Chromium', () => {
  let svc: RunningSvc;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    svc = await startSvc({ account: e2eAccount([]) });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  async function openDocs(): Promise<Watched> {
    const page = await browser.context.newPage();
    const watched: Watched = { page, requests: [], problems: [] };
    page.on('request', (request) => watched.requests.push(request.url()));
    page.on('requestfailed', (request) => watched.problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`));
    page.on('response', (response) => { if (response.status() >= 400) watched.problems.push(`${response.status()} ${response.url()}`); });
    page.on('console', (message) => { if (['error', 'warning'].includes(message.type())) watched.problems.push(`console ${message.type()}: ${message.text()}`); });
    page.on('pageerror', (error) => watched.problems.push(`page error: ${error.message}`));
    await page.goto(`${svc.origin}/docs`);
    await page.getByRole('heading', { name: 'svc platform and embed API' }).waitFor();
    return watched;
  }

  /** What is not on svc's own origin (data: and blob: URLs are the page's own bytes). */
  const remote = (watched: Watched) => watched.requests.filter((url) => !url.startsWith(`${svc.origin}/`) && !/^(data|blob):/.test(url));

  it('loads its script, document and fonts from svc only, and logs no error or validation warning', async () => {
    const watched = await openDocs();
    const { page } = watched;
    // Scroll the whole reference so that every lazily drawn section (and its fonts) is there.
    for (const tag of ['Console', 'Embed sessions', 'Embed users', 'Embed', 'Embed comments', 'Operations']) {
      await page.getByRole('heading', { name: tag, exact: true }).first().scrollIntoViewIfNeeded();
    }
    await page.evaluate(() => document.fonts.ready.then(() => undefined));
    await page.waitForLoadState('networkidle');

    expect(remote(watched)).toEqual([]);
    expect(watched.requests).toEqual(expect.arrayContaining([
      `${svc.origin}/docs/js/scalar.js`, `${svc.origin}/api/v1/openapi.json`,
      `${svc.origin}/docs/fonts/inter-latin-wght-normal.woff2`, `${svc.origin}/docs/fonts/jetbrains-mono-latin-400-normal.woff2`,
    ]));
    expect(watched.problems).toEqual([]);
    // The faces are loaded, not substituted.
    const faces = await page.evaluate(() => [...document.fonts].filter((face) => face.status === 'loaded').map((face) => face.family.replace(/"/g, '')));
    expect(faces).toEqual(expect.arrayContaining(['Inter', 'JetBrains Mono']));
    await page.close();
  });

  it('renders the operations of every tag, described responses, and a required credential (not "Optional")', async () => {
    const watched = await openDocs();
    const { page } = watched;
    const main = page.locator('main, body').first();
    await expect.poll(() => main.innerText()).toContain('List the folders, workbooks and reports of a deployment the caller can access');
    const text = await main.innerText();
    expect(text).toMatch(/Authentication\s*Required/);
    expect(text).not.toMatch(/Authentication\s*Optional/);
    expect(text).toContain('bearerAuth');

    // An embed endpoint: drawn with its responses in words, and its example sends the selected credential.
    await page.getByRole('heading', { name: 'Embed comments', exact: true }).first().scrollIntoViewIfNeeded();
    await expect.poll(() => main.innerText()).toContain('/api/v1/embed/dashboard/{publicId}/comments/{commentId}/resolve');
    await page.getByRole('heading', { name: /^Resolve \(resolved: true\) or re-open/ }).first().scrollIntoViewIfNeeded();
    await expect.poll(() => main.innerText()).toContain('The thread with its new state');
    const drawn = await main.innerText();
    expect(drawn).toContain("Authorization: Bearer");
    expect(drawn).not.toContain('Default Response');
    await page.getByRole('heading', { name: 'Operations', exact: true }).first().scrollIntoViewIfNeeded();
    await expect.poll(() => main.innerText()).toContain('/readyz');
    await page.waitForLoadState('networkidle');
    expect(remote(watched)).toEqual([]);
    expect(watched.problems).toEqual([]);
    await page.close();
  });
});
