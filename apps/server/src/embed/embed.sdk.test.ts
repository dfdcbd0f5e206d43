import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { describeEachDialect } from '../../test/dialects.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { SDK_DIST, sdkVersion } from './embed.sdk.js';

/**
 * Issue 31 item 12: svc serves @svc/embed-sdk itself, for host pages without a bundler, at an immutable versioned
 * path and a stable alias, loadable from any origin. The built SDK (npm run build) is what is served.
 */
describeEachDialect('the SDK served by svc', (t) => {
  const version = sdkVersion();
  const built = (file: string) => readFileSync(join(SDK_DIST, file), 'utf8');
  let unbuilt: FastifyInstance;
  let emptyDir: string;

  beforeAll(async () => {
    emptyDir = mkdtempSync(join(tmpdir(), 'svc-sdk-unbuilt-'));
    unbuilt = await buildApp(testConfig(), { db: t().db, sdkDistDir: emptyDir });
  });

  afterAll(async () => {
    await unbuilt.close();
    rmSync(emptyDir, { recursive: true, force: true });
  });

  it.each([
    // An ES module ends by exporting embed; the IIFE assigns the global SvcEmbed.
    ['embed-sdk.js', /^\/\*! @svc\/embed-sdk [^ ]+ \| Apache-2\.0 \*\/\n.*export\{[^}]*as embed[,}][^}]*\};\n$/s],
    ['embed-sdk.iife.js', /^\/\*! @svc\/embed-sdk [^ ]+ \| Apache-2\.0 \*\/\n"use strict";var SvcEmbed=\(\(\)=>\{.*\}\)\(\);\n$/s],
  ])('serves %s at /sdk/v<version>/ for a year, immutable, as JavaScript any origin may load', async (file, shape) => {
    const res = await t().app.inject({ url: `/sdk/v${version}/${file}`, headers: { origin: 'https://host.example' } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(built(file));
    expect(res.body).toMatch(shape);
    expect(res.body).toContain(`@svc/embed-sdk ${version}`);
    expect(res.headers).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
      'access-control-allow-origin': '*',
      'cross-origin-resource-policy': 'cross-origin',
      'x-content-type-options': 'nosniff',
    });
  });

  it('serves the same bytes at the stable alias /sdk/<file>, cached five minutes, and answers 304 to its ETag', async () => {
    for (const file of ['embed-sdk.js', 'embed-sdk.iife.js']) {
      const res = await t().app.inject({ url: `/sdk/${file}` });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(built(file));
      expect(res.headers).toMatchObject({ 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*', 'cross-origin-resource-policy': 'cross-origin' });
      const etag = res.headers.etag as string;
      expect(etag).toMatch(/^"[\w-]{27}"$/);
      const again = await t().app.inject({ url: `/sdk/${file}`, headers: { 'if-none-match': `W/"other", ${etag}` } });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
    }
    const js = await t().app.inject({ url: '/sdk/embed-sdk.js' });
    const iife = await t().app.inject({ url: '/sdk/embed-sdk.iife.js' });
    expect(js.headers.etag).not.toBe(iife.headers.etag);
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await t().app.inject({ method: 'HEAD', url: '/sdk/embed-sdk.iife.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.body).toBe('');
  });

  it('answers 404 in the error body for another version, naming the one served, and for an unknown file', async () => {
    const other = await t().app.inject({ url: '/sdk/v0.0.1/embed-sdk.js' });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ error: { status: 404, code: 'not_found', message: `svc serves @svc/embed-sdk ${version} only: /sdk/v${version}/embed-sdk.js, or the alias /sdk/embed-sdk.js` } });
    for (const url of ['/sdk/index.js', `/sdk/v${version}/react.js`, '/sdk/..%2Fpackage.json', `/sdk/v${version}/..%2F..%2Fpackage.json`]) {
      const res = await t().app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), url).toMatchObject({ error: { status: 404, code: 'not_found' } });
    }
  });

  it('answers 503 in the error body, saying to build, when the SDK is not built', async () => {
    const res = await unbuilt.inject({ url: '/sdk/embed-sdk.js' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: { status: 503, code: 'service_unavailable', message: 'the SDK is not built: run npm run build' } });
  });
});
