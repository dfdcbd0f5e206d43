import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';

/** What the issue asks of the published package (the build runs in `npm install`'s prepare step). */
describe('@svc/embed-sdk package', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  const dist = (file: string) => readFileSync(new URL(`../dist/${file}`, import.meta.url), 'utf8');

  it('has no runtime dependencies and no side effects, and ships ESM, CJS and declarations', () => {
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.exports).toEqual({
      '.': { types: './dist/index.d.ts', import: './dist/index.js', require: './dist/index.cjs' },
      './react': { types: './dist/react.d.ts', import: './dist/react.js', require: './dist/react.cjs' },
    });
  });

  it('bundles @svc/protocol into its code and its declarations; only react stays external, in the React entry', () => {
    expect(dist('index.js')).not.toMatch(/from ["']/);
    expect(dist('index.cjs')).not.toMatch(/require\(["']/);
    expect(dist('react.js').match(/from ["']([^"']+)["']/g)).toEqual(['from "react"']);
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
    expect(Object.keys(sandbox.SvcEmbed as object).sort()).toEqual(['RENEWAL_BACKOFF_MS', 'SessionRenewal', 'SvcEmbedError', 'embed', 'embedUrl']);
    expect(dist('browser/embed-sdk.js').startsWith(banner)).toBe(true);
    expect(dist('browser/embed-sdk.js')).not.toMatch(/from ["']/);
  });

  it('touches no DOM at import (safe during server rendering)', async () => {
    // Node has no window or document: importing the built module must not need them.
    const mod = (await import(new URL('../dist/index.js', import.meta.url).href)) as Record<string, unknown>;
    expect(typeof mod.embed).toBe('function');
  });
});
