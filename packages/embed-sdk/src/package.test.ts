import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it, vi } from 'vitest';
import type * as Main from './index.js';
import type * as Tools from './tools.js';

/**
 * Issue 37 item 4: the whole main entry, measured as the issue says (`export * from '@svc/embed-sdk'`, esbuild,
 * minified, browser ESM, ES2022 as bench/sdk does, gzip -9), at most this. What a typical page does not need is in
 * `@svc/embed-sdk/tools`.
 */
const MAIN_ENTRY_BUDGET_GZIP = 3_072;

/** What the issue asks of the published package (the build runs in `npm install`'s prepare step). */
describe('@svc/embed-sdk package', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  const dist = (file: string) => readFileSync(new URL(`../dist/${file}`, import.meta.url), 'utf8');

  it('has no runtime dependencies and no side effects, and ships ESM, CJS and declarations', () => {
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.exports).toEqual({
      '.': { types: './dist/index.d.ts', import: './dist/index.js', require: './dist/index.cjs' },
      './tools': { types: './dist/tools.d.ts', import: './dist/tools.js', require: './dist/tools.cjs' },
      './explore': { types: './dist/explore.d.ts', import: './dist/explore.js', require: './dist/explore.cjs' },
      './react': { types: './dist/react.d.ts', import: './dist/react.js', require: './dist/react.cjs' },
    });
  });

  it('bundles @svc/protocol into its code and its declarations; only react stays external, in the React entry', () => {
    expect(dist('index.js')).not.toMatch(/from ["']/);
    expect(dist('index.cjs')).not.toMatch(/require\(["']/);
    expect(dist('react.js').match(/from ["']([^"']+)["']/g)).toEqual(['from "react"']);
    // The tools entry shares the main entry's SvcEmbedError (one class to test instanceof against), nothing else.
    expect(new Set(dist('tools.js').match(/from ["']([^"']+)["']/g))).toEqual(new Set(['from "./index.js"']));
    expect(new Set(dist('tools.cjs').match(/require\(["']([^"']+)["']\)/g))).toEqual(new Set(['require("./index.cjs")']));
    // The explore entry (issue 35) takes embed() and SvcEmbedError from the main entry too.
    expect(new Set(dist('explore.js').match(/from ["']([^"']+)["']/g))).toEqual(new Set(['from "./index.js"']));
    expect(new Set(dist('explore.cjs').match(/require\(["']([^"']+)["']\)/g))).toEqual(new Set(['require("./index.cjs")']));
    expect(dist('explore.d.ts')).not.toContain('@svc/protocol');
    expect(dist('tools.d.ts')).not.toContain('@svc/protocol');
    expect(dist('index.d.ts')).not.toContain('@svc/protocol');
    expect(dist('react.d.ts')).not.toContain('@svc/protocol');
  });

  it('is publishable: not private, public access, its licence and README shipped', () => {
    expect(pkg.private).toBeUndefined();
    expect(pkg.publishConfig).toEqual({ access: 'public' });
    expect(pkg.license).toBe('Apache-2.0');
    expect(readFileSync(new URL('../LICENSE', import.meta.url), 'utf8')).toBe(readFileSync(new URL('../../../LICENSE', import.meta.url), 'utf8'));
    expect(readFileSync(new URL('../README.md', import.meta.url), 'utf8')).toContain("import { embed } from '@svc/embed-sdk';");
  });

  it('builds the files svc serves: an IIFE that defines the global SvcEmbed, and minified ESM, each naming its version', () => {
    const banner = `/*! @svc/embed-sdk ${String(pkg.version)} | Apache-2.0 */\n`;
    const iife = dist('browser/embed-sdk.iife.js');
    expect(iife.startsWith(banner)).toBe(true);
    const sandbox: Record<string, unknown> = {};
    runInNewContext(iife, sandbox);
    // Both entries: a page without a bundler has one file to load.
    expect(Object.keys(sandbox.SvcEmbed as object).sort()).toEqual(['RENEWAL_BACKOFF_MS', 'SessionRenewal', 'SvcEmbedError', 'debug', 'embed', 'embedUrl']);
    expect(dist('browser/embed-sdk.js').startsWith(banner)).toBe(true);
    expect(dist('browser/embed-sdk.js')).not.toMatch(/from ["']/);
  });

  it('touches no DOM at import (safe during server rendering)', async () => {
    // Node has no window or document: importing the built module must not need them.
    const mod = (await import(new URL('../dist/index.js', import.meta.url).href)) as Record<string, unknown>;
    expect(typeof mod.embed).toBe('function');
  });

  it(`keeps the whole main entry within ${MAIN_ENTRY_BUDGET_GZIP} bytes gzip (export * from '@svc/embed-sdk')`, async () => {
    const result = await build({
      stdin: { contents: "export * from '@svc/embed-sdk';", resolveDir: fileURLToPath(new URL('.', import.meta.url)), loader: 'js' },
      bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'error',
    });
    const code = result.outputFiles[0]!.contents;
    const bytes = gzipSync(code, { level: 9 }).length;
    expect(bytes, `the main entry is ${bytes} bytes gzip (${code.length} minified)`).toBeLessThanOrEqual(MAIN_ENTRY_BUDGET_GZIP);
    // Measured through the package's own exports: what it bundled is dist/index.js, the file a host's bundler takes.
    expect(new TextDecoder().decode(code)).toContain('svc:event:content-size');
    // Exploration's rules (issue 35) are in @svc/embed-sdk/explore, not here: the main entry guards only the core events.
    expect(new TextDecoder().decode(code)).not.toContain('svc:event:chart-saved');
  });

  it('ships exploration as an entry of its own that adds its events and action to embed() (issue 35)', async () => {
    const result = await build({
      stdin: { contents: "export * from '@svc/embed-sdk/explore';", resolveDir: fileURLToPath(new URL('.', import.meta.url)), loader: 'js' },
      bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'error',
    });
    const code = new TextDecoder().decode(result.outputFiles[0]!.contents);
    expect(code).toContain('svc:action:explore');
    expect(code).toContain('svc:event:chart-saved');
    expect(code).toContain('svc:event:view-saved');
    const explore = (await import(new URL('../dist/explore.js', import.meta.url).href)) as Record<string, unknown>;
    expect(typeof explore.embedExplore).toBe('function');
  });

  it('gives the tools entry the main entry\'s SvcEmbedError: a failed renewal of its SessionRenewal is an instance of it', async () => {
    const main = (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof Main;
    const tools = (await import(new URL('../dist/tools.js', import.meta.url).href)) as typeof Tools;
    vi.useFakeTimers();
    try {
      let failed: unknown;
      new tools.SessionRenewal({ getSessionId: () => Promise.reject(new Error('no id')), sendSession: async () => undefined, onFailed: (error) => (failed = error) }).onLapse(Date.now());
      await vi.runAllTimersAsync();
      expect(failed).toBeInstanceOf(main.SvcEmbedError);
      expect((failed as InstanceType<typeof main.SvcEmbedError>).code).toBe('renewal-failed');
    } finally {
      vi.useRealTimers();
    }
  });
});
