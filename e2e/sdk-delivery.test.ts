import { execFile } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from './browser.js';
import { ADMIN_KEY, e2eAccount, serve, startSvc } from './embed-harness.js';
import type { RunningSvc } from './embed-harness.js';

/**
 * Issue 31 item 12, "the SDK, delivered", as a newcomer meets it: the packages as npm packs them, installed into an
 * empty project without the registry; the package README's example run from that install in a plain page; and
 * the two recipes of docs/sdk.md that load the SDK from svc itself, run as written. Everything against a real svc
 * in Chromium, the host page on another origin.
 */
const run = promisify(execFile);
const ROOT = new URL('../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');
const SDK_VERSION = (JSON.parse(read('packages/embed-sdk/package.json')) as { version: string }).version;
/** The address the docs give svc (npm start's). */
const DOCUMENTED_SVC = 'http://127.0.0.1:3000';

/** The fenced block right after `<!-- tested: e2e/sdk-delivery.test.ts "<name>" -->` in a document. */
function testedBlock(document: string, name: string): string {
  const match = new RegExp(`<!-- tested: e2e/sdk-delivery\\.test\\.ts "${name}" -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(read(document));
  if (match === null) throw new Error(`${document} has no block marked "${name}"`);
  return match[1]!;
}

/** The first ```js block of a document. */
function firstJsBlock(document: string): string {
  const match = /```js\n([\s\S]*?)\n```\n/.exec(read(document));
  if (match === null) throw new Error(`${document} has no js block`);
  return match[1]!;
}

/** The documents a newcomer reads, and their fenced blocks with the line each starts on. */
function exampleBlocks(): Array<{ where: string; lang: string; text: string }> {
  const documents = ['README.md', ...readdirSync(new URL('docs/', ROOT)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
    ...['apps/demo-host', 'packages/embed-sdk', 'packages/protocol', 'packages/client'].map((dir) => `${dir}/README.md`)];
  return documents.flatMap((document) => {
    const blocks: Array<{ where: string; lang: string; text: string }> = [];
    const lines = read(document).split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\S*)\s*$/.exec(lines[i]!);
      if (open === null) continue;
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
      blocks.push({ where: `${document}:${start + 1}`, lang: open[1]!, text: body.join('\n') });
    }
    return blocks;
  });
}

describe('the SDK docs', () => {
  it('give every example that creates an embed autoResize or a height (without them the frame is 150 px)', () => {
    const creating = exampleBlocks().filter((b) => !['sh', 'json', ''].includes(b.lang) && /\bembed\(\{|<SvcEmbed\b|<iframe\b/.test(b.text));
    // The check would pass vacuously if it found none: sdk.md, embedding.md and the SDK's README have several.
    expect(creating.length).toBeGreaterThanOrEqual(6);
    expect(creating.filter((b) => !/autoResize|height/.test(b.text)).map((b) => b.where)).toEqual([]);
  });

  it('name the version svc serves in the pinned paths', () => {
    const pinned = [...read('docs/sdk.md').matchAll(/\/sdk\/v([^/]+)\//g)].map((m) => m[1]);
    expect(pinned.length).toBeGreaterThan(0);
    expect(new Set(pinned)).toEqual(new Set([SDK_VERSION]));
  });
});

const suite = hasChromium ? describe : describe.skip;

suite('the SDK, delivered, in Chromium', () => {
  let svc: RunningSvc;
  let host: Server;
  let hostOrigin: string;
  let work: string;
  let project: string;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  /** The pages the host serves, by path, filled in by the tests. */
  const pages: Record<string, { type: string; body: string }> = { '/favicon.ico': { type: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg"/>' } };

  beforeAll(async () => {
    // The host: its pages, and its backend's session route (the docs' /api/analytics-session), which mints on the
    // svc started next (its allowedEmbedOrigins need the host's origin first).
    const routes = new Proxy({}, {
      get: (_target, path: string) => (path === '/api/analytics-session'
        ? async () => ({ type: 'text/plain', body: await svc.mint() })
        : pages[path]),
    });
    const started = await serve(routes as Parameters<typeof serve>[0]);
    host = started.server;
    hostOrigin = `http://localhost:${started.port}`;
    svc = await startSvc({ account: e2eAccount([hostOrigin], { dashboards: ['q1-review', 'sales-performance'] }) });

    // npm pack as a publisher would run it (the build is npm run build's, as for every e2e test), then an empty
    // project that installs the tarballs with the registry out of reach.
    work = mkdtempSync(join(tmpdir(), 'svc-sdk-pack-'));
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work, '-w', '@svc/embed-sdk', '-w', '@svc/protocol', '-w', '@svc/client'], { cwd: ROOT });
    const tarballs = (JSON.parse(packed.stdout) as Array<{ filename: string }>).map((p) => p.filename);
    expect(tarballs).toEqual([`svc-embed-sdk-${SDK_VERSION}.tgz`, 'svc-protocol-0.1.0.tgz', 'svc-client-0.1.0.tgz']);
    project = join(work, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'host-app', private: true, type: 'module' }));
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs.map((t) => `../${t}`)], { cwd: project });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    host?.close();
    await svc?.close();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  /** Opens a host page, keeping its console lines and failed requests. */
  async function open(path: string): Promise<{ page: Page; logs: string[] }> {
    const page = await browser.context.newPage();
    const logs: string[] = [];
    page.on('console', (message) => logs.push(`${message.type()}: ${message.text()}`));
    page.on('pageerror', (error) => logs.push(`pageerror: ${error.message}`));
    await page.goto(`${hostOrigin}${path}`);
    return { page, logs };
  }

  /** The embed's iframe height once its dashboard is shown (the frame is 150 px without autoResize or a height). */
  const frameHeight = (page: Page) => page.evaluate(() => document.querySelector('#analytics iframe')!.getBoundingClientRect().height);

  it('packs only built code, declarations, self-contained source maps, README and LICENSE, and installs them as plain folders, offline', () => {
    for (const name of ['embed-sdk', 'protocol', 'client']) {
      const dir = join(project, 'node_modules', '@svc', name);
      // Installed from the tarball, not linked to this repository's workspace.
      expect(lstatSync(dir).isSymbolicLink()).toBe(false);
      const files = readdirSync(dir, { recursive: true }).map(String).sort();
      expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts']));
      expect(files.filter((f) => /(^|\/)(src|test)\/|\.test\.|tsbuildinfo|build-stamp/.test(f))).toEqual([]);
      // A source map a file names is shipped, with the sources inside it (src/ is not packed).
      for (const file of files.filter((f) => /\.(c?js)$/.test(f))) {
        const map = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(dir, file), 'utf8'))?.[1];
        if (map === undefined) continue;
        const content = JSON.parse(readFileSync(join(dir, file, '..', map), 'utf8')) as { sources: string[]; sourcesContent?: string[] };
        expect(content.sourcesContent?.length, `${name}/${file}`).toBe(content.sources.length);
      }
    }
    // The SDK needs nothing else at run time: no dependency was installed besides the three tarballs.
    expect(readdirSync(join(project, 'node_modules')).filter((d) => !d.startsWith('.'))).toEqual(['@svc']);
  });

  it('installed packages import in Node (ESM, and CJS for the SDK) and type-check a host file under bundler and NodeNext resolution', async () => {
    const imports = await run('node', ['--input-type=module', '-e', `
      const sdk = await import('@svc/embed-sdk');
      const protocol = await import('@svc/protocol');
      const client = await import('@svc/client');
      const { createRequire } = await import('node:module');
      const cjs = createRequire(process.cwd() + '/x.js')('@svc/embed-sdk');
      console.log(JSON.stringify([typeof sdk.embed, typeof cjs.embed, typeof protocol.parseEvent, typeof client.SvcClient]));
    `], { cwd: project });
    expect(JSON.parse(imports.stdout)).toEqual(['function', 'function', 'function', 'function']);

    writeFileSync(join(project, 'host.ts'), `
      import { embed, SvcEmbedError } from '@svc/embed-sdk';
      import type { EmbedHandle, SvcEmbedErrorCode } from '@svc/embed-sdk';
      import { parseEvent } from '@svc/protocol';
      import { SvcClient } from '@svc/client';
      const handle: EmbedHandle = embed({ container: document.body, baseUrl: 'https://a.example', surface: 'dashboard', publicId: 'q1', getSessionId: () => 'ses', autoResize: true, readyTimeoutMs: 5000 });
      handle.on('dashboard-loaded', ({ widgetCount }) => widgetCount?.toFixed());
      const code: SvcEmbedErrorCode = 'frame-timeout';
      export const checks = [handle, code, SvcEmbedError, parseEvent({}), new SvcClient({ baseUrl: 'https://a.example', apiKey: 'k' })];
      // @ts-expect-error the declarations are there and strict: a surface outside the catalogue is refused
      embed({ container: document.body, baseUrl: 'https://a.example', surface: 'report', getSessionId: () => 'ses' });
    `);
    const tsc = new URL('node_modules/typescript/bin/tsc', ROOT).pathname;
    for (const [module, moduleResolution] of [['esnext', 'bundler'], ['nodenext', 'nodenext']]) {
      writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, types: [], lib: ['es2022', 'dom'], target: 'es2022', module, moduleResolution },
        files: ['host.ts'],
      }));
      const result = await run('node', [tsc, '-p', 'tsconfig.json'], { cwd: project }).catch((error: { stdout: string }) => ({ stdout: `FAILED\n${error.stdout}` }));
      expect(result.stdout, `${module}/${moduleResolution}`).toBe('');
    }
  }, 120_000);

  it("runs the README's example from the installed package in a plain page: ready resolves and the frame fits the dashboard", async () => {
    const example = firstJsBlock('packages/embed-sdk/README.md');
    expect(example).toContain("import { embed } from '@svc/embed-sdk';");
    // The README's own svc becomes the test's; what follows its code says the page got that far.
    const code = `${example.replace("'https://analytics.example.com'", JSON.stringify(svc.origin))}\nwindow.readmeReady = (await handle.ready).publicId;\n`;
    const bundled = await build({
      stdin: { contents: code, resolveDir: project, loader: 'js', sourcefile: 'readme-example.js' },
      absWorkingDir: project, bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, metafile: true, logLevel: 'silent',
    });
    // Bundled from the installed package's files, nothing from this repository.
    const inputs = Object.keys(bundled.metafile.inputs);
    expect(inputs.filter((i) => i !== 'readme-example.js')).toEqual(['node_modules/@svc/embed-sdk/dist/index.js']);
    pages['/readme.html'] = { type: 'text/html', body: '<!doctype html><html><body><div id="analytics"></div><script type="module" src="/readme.js"></script></body></html>' };
    pages['/readme.js'] = { type: 'text/javascript', body: bundled.outputFiles[0]!.text };
    const { page, logs } = await open('/readme.html');
    await expect.poll(() => page.evaluate(() => (window as unknown as { readmeReady?: string }).readmeReady), { timeout: 20_000 }).toBe('q1-review');
    await expect.poll(() => frameHeight(page), { timeout: 15_000 }).toBeGreaterThan(150);
    expect(logs.filter((l) => l.startsWith('pageerror'))).toEqual([]);
    await page.close();
  });

  it('runs the client README example against svc from the installed package', async () => {
    const example = firstJsBlock('packages/client/README.md');
    const script = example.replace(`'${DOCUMENTED_SVC}'`, JSON.stringify(svc.origin)).replaceAll('(1,', `(${svc.refs.prod},`);
    const result = await run('node', ['--input-type=module', '-e', script], { cwd: project, env: { ...process.env, SVC_API_KEY: ADMIN_KEY } });
    expect(result.stdout).toContain('Sales');
    expect(result.stderr.trim()).toBe('400 invalid_parameter first');
  });

  it('runs the script-tag recipe of docs/sdk.md as written: the IIFE from svc defines SvcEmbed, ready resolves, the frame fits', async () => {
    const recipe = testedBlock('docs/sdk.md', 'script-tag');
    expect(recipe).toContain(`<script src="${DOCUMENTED_SVC}/sdk/embed-sdk.iife.js"></script>`);
    pages['/script-tag.html'] = { type: 'text/html', body: `<!doctype html><html><body>\n${recipe.replaceAll(DOCUMENTED_SVC, svc.origin)}\n</body></html>` };
    const { page, logs } = await open('/script-tag.html');
    await expect.poll(() => logs, { timeout: 20_000 }).toContain('log: svc shows sales-performance');
    expect(await page.evaluate(() => typeof (window as unknown as { SvcEmbed?: { embed?: unknown } }).SvcEmbed?.embed)).toBe('function');
    // The frame fits what it shows (autoResize): off the 150 px a bare iframe has, to within a pixel or two of the
    // embed's content (this fixture's sales-performance has no widgets, and its comment panel starts as a button).
    const frame = page.frames().find((f) => f.url().startsWith(`${svc.origin}/embed/`))!;
    const contentHeight = () => frame.evaluate(() => Math.ceil(Math.max(...[...document.body.children].map((e) => e.getBoundingClientRect().bottom))));
    await expect.poll(async () => Math.abs(await frameHeight(page) - await contentHeight()), { timeout: 15_000 }).toBeLessThanOrEqual(2);
    expect(await frameHeight(page)).not.toBe(150);
    expect(logs.filter((l) => l.startsWith('error') || l.startsWith('pageerror'))).toEqual([]);
    await page.close();
  });

  it('runs the module recipe of docs/sdk.md as written: the ES module from svc imports across origins, the frame fills its container', async () => {
    const recipe = testedBlock('docs/sdk.md', 'module');
    expect(recipe).toContain(`from '${DOCUMENTED_SVC}/sdk/embed-sdk.js'`);
    pages['/module.html'] = { type: 'text/html', body: `<!doctype html><html><body>\n${recipe.replaceAll(DOCUMENTED_SVC, svc.origin)}\n</body></html>` };
    const { page, logs } = await open('/module.html');
    await expect.poll(() => logs, { timeout: 20_000 }).toContain('log: svc shows sales-performance');
    expect(await frameHeight(page)).toBe(720);
    expect(logs.filter((l) => l.startsWith('error') || l.startsWith('pageerror'))).toEqual([]);
    await page.close();
  });

  it('loads the pinned version from svc too', async () => {
    pages['/pinned.html'] = { type: 'text/html', body: `<!doctype html><script src="${svc.origin}/sdk/v${SDK_VERSION}/embed-sdk.iife.js"></script><script>window.loaded = typeof SvcEmbed.embed;</script>` };
    const { page } = await open('/pinned.html');
    expect(await page.evaluate(() => (window as unknown as { loaded?: string }).loaded)).toBe('function');
    await page.close();
  });
});
