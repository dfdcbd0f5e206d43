import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext } from 'playwright-core';

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
