import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { describeEachDialect } from '../../test/dialects.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { CONSOLE_DIST } from './console.routes.js';

/** Issue 34: the console's initial JavaScript (entry script and its modulepreloads), gzip -9, at most this. */
const INITIAL_JS_BUDGET_GZIP = 120 * 1024;

/** The built page's entry script, module preloads and lazily loaded chunks (npm run build wrote them). */
function builtPage() {
  const html = readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8');
  const attribute = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
  const tags = (name: string) => html.match(new RegExp(`<${name}\\b[^>]*>`, 'g')) ?? [];
  const scripts = tags('script').filter((tag) => attribute(tag, 'type') === 'module').map((tag) => attribute(tag, 'src')!);
  const preloads = tags('link').filter((tag) => attribute(tag, 'rel') === 'modulepreload').map((tag) => attribute(tag, 'href')!);
  return { html, initial: [...new Set([...scripts, ...preloads])] };
}

describeEachDialect('the console page', (t) => {
  let unbuilt: FastifyInstance;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-console-'));
    unbuilt = await buildApp(testConfig(), { db: t().db, consoleDistDir: join(dir, 'missing') });
  });
  afterAll(async () => {
    await unbuilt.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers /console and every path below it with the one page, never frameable', async () => {
    for (const url of ['/console', '/console/', '/console/workspace/12?x=1']) {
      const res = await t().app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('<div id="root">');
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("frame-ancestors 'none'");
      // It frames svc's own pages only: the embed page of an admin's preview session (View as a customer).
      expect(csp).toContain("frame-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('serves its hashed assets with a year of caching, and a missing one as a 404 error body', async () => {
    const { initial } = builtPage();
    expect(initial.length).toBeGreaterThan(0);
    for (const path of initial) {
      expect(path.startsWith('/console/assets/'), path).toBe(true);
      const res = await t().app.inject({ url: path });
      expect(res.statusCode, path).toBe(200);
      expect(res.headers['cache-control']).toContain('immutable');
    }
    const missing = await t().app.inject({ url: '/console/assets/gone-1234.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { status: 404, code: 'not_found' } });
    for (const url of ['/console/assets/..%2f..%2fpackage.json', '/console/assets/%2e%2e/%2e%2e/package.json', '/console/assets/..%2findex.html']) {
      const res = await t().app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).not.toContain('"name"');
    }
  });

  it('answers 503 saying how to build it when it is not built, with the same headers', async () => {
    expect(existsSync(join(dir, 'missing'))).toBe(false);
    const res = await unbuilt.inject({ url: '/console' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build');
    expect(String(res.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
  });
});

describe('the console build', () => {
  it(`keeps the initial JavaScript within ${INITIAL_JS_BUDGET_GZIP / 1024} KB gzip, the workspace and the editor in chunks of their own`, () => {
    const { initial } = builtPage();
    const bytes = initial.map((path) => gzipSync(readFileSync(join(CONSOLE_DIST, path.slice('/console/'.length))), { level: 9 }).length);
    const total = bytes.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(0);
    expect(total, `initial JS ${initial.join(', ')}: ${total} bytes gzip`).toBeLessThanOrEqual(INITIAL_JS_BUDGET_GZIP);
    // Code-split: the workspace page is a chunk the sign-in page does not load.
    const chunks = readdirSync(join(CONSOLE_DIST, 'assets')).filter((name) => name.endsWith('.js'));
    const workspace = chunks.find((name) => name.startsWith('Workspace-'));
    expect(workspace, `chunks: ${chunks.join(', ')}`).toBeDefined();
    expect(initial.some((path) => path.endsWith(workspace!))).toBe(false);
    // The dashboard editor (the chart builder, the draft) loads only when a dashboard is opened.
    const editor = chunks.find((name) => name.startsWith('Editor-'));
    expect(editor, `chunks: ${chunks.join(', ')}`).toBeDefined();
    expect(initial.some((path) => path.endsWith(editor!))).toBe(false);
  });
});
