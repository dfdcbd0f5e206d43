import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`; `.ci/run` installs it). Nothing downloads a browser. */
export const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** A Chromium of launchChromium: its one context, and `close()`. */
export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * A headless Chromium with a fresh profile, closed and removed by the returned `close()`. `deviceScaleFactor` 2 gives
 * a screen like a laptop's, whose screenshots have the pixels of a 2x export (e2e/exports.test.ts compares them);
 * `timeout` is the context's default for every wait and action (Playwright's own is 30 s).
 */
export async function launchChromium(options: { deviceScaleFactor?: number; timeout?: number } = {}): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    ...(options.deviceScaleFactor !== undefined ? { deviceScaleFactor: options.deviceScaleFactor } : {}),
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  if (options.timeout !== undefined) context.setDefaultTimeout(options.timeout);
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The RGBA bytes, row by row, of a box of a PNG (a screenshot), decoded and read by the page's own canvas. They
 * cross as base64: Playwright's per-value serialisation of a large array takes seconds.
 *
 * @example
 * const [r, g, b] = await pngPixels(page, await widget.screenshot(), { x: 10, y: 10, width: 1, height: 1 });
 */
export async function pngPixels(page: Page, png: Buffer, box: { x: number; y: number; width: number; height: number }): Promise<Uint8Array> {
  const base64 = await page.evaluate(async ({ png, box }) => {
    const image = new Image();
    image.src = `data:image/png;base64,${png}`;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext('2d')!;
    context.drawImage(image, 0, 0);
    const { data } = context.getImageData(box.x, box.y, box.width, box.height);
    let binary = '';
    for (let i = 0; i < data.length; i += 0x8000) binary += String.fromCharCode(...data.subarray(i, i + 0x8000));
    return btoa(binary);
  }, { png: png.toString('base64'), box });
  return new Uint8Array(Buffer.from(base64, 'base64'));
}
