import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { hasChromium, launchChromium } from '../../e2e/browser.js';
import { machine } from '../harness.js';

const RESULTS = new URL('../results/sdk.json', import.meta.url).pathname;

/** A typical import of each SDK, bundled the same way (esbuild, minified ESM, browser, ES2022), then gzip -9. */
const TYPICAL_IMPORTS: Record<string, string> = {
  '@svc/embed-sdk': "import { embed } from '@svc/embed-sdk'; window.x = embed;",
  '@superset-ui/embedded-sdk': "import { embedDashboard } from '@superset-ui/embedded-sdk'; window.x = embedDashboard;",
  '@looker/embed-sdk': "import { getEmbedSDK } from '@looker/embed-sdk'; window.x = getEmbedSDK;",
  'powerbi-client': "import * as pbi from 'powerbi-client'; window.x = pbi;",
  '@tableau/embedding-api': "import { TableauViz } from '@tableau/embedding-api'; window.x = TableauViz;",
};

async function measureSizes(): Promise<Record<string, { minifiedBytes: number; gzipBytes: number }>> {
  const sizes: Record<string, { minifiedBytes: number; gzipBytes: number }> = {};
  for (const [name, contents] of Object.entries(TYPICAL_IMPORTS)) {
    const result = await build({ stdin: { contents, resolveDir: process.cwd(), loader: 'js' }, bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'error' });
    const code = result.outputFiles[0]!.contents;
    sizes[name] = { minifiedBytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length };
    process.stderr.write(`[sdk] ${name}: ${sizes[name]!.gzipBytes} B gzip\n`);
  }
  return sizes;
}

const SENDER = `<!doctype html><script>
  // Posts N well-formed svc events to the host as fast as it can, when asked.
  addEventListener('message', (e) => {
    if (e.data?.cmd !== 'burst') return;
    const t0 = performance.now();
    for (let i = 0; i < e.data.n; i++) parent.postMessage({ source: 'svc-embed', direction: 'event', type: 'svc:event:navigate', payload: { path: '/p/' + i }, timestamp: Date.now(), surface: 'dashboard' }, e.origin);
    parent.postMessage({ burstDone: performance.now() - t0 }, e.origin);
  });
  parent.postMessage({ senderReady: true }, '*');
</script>`;

// One page per receive path, so neither listens while the other is measured: `?mode=bare` (a plain message
// listener that counts, on a hand-made iframe) or `?mode=sdk` (embed() with on('navigate')).
const HOST = `<!doctype html><div id="c"></div><script type="module">
  import * as sdk from '/sdk.js';
  const params = new URL(location.href).searchParams;
  const embedOrigin = params.get('embed');
  const mode = params.get('mode');
  let onNavigate = () => undefined;
  if (mode === 'bare') {
    addEventListener('message', (e) => { if (e.data?.type === 'svc:event:navigate') onNavigate(); });
    const f = document.createElement('iframe');
    f.src = embedOrigin + '/embed/dashboard/bench?session=ses_bench';
    document.getElementById('c').appendChild(f);
  } else {
    const handle = sdk.embed({ container: document.getElementById('c'), baseUrl: embedOrigin, surface: 'dashboard', publicId: 'bench', getSessionId: () => 'ses_bench' });
    handle.on('navigate', () => onNavigate());
  }
  const frame = () => document.querySelector('#c iframe');
  // Real cross-origin postMessage: the embed posts a burst of n events; resolves with the ms from first to last.
  window.run = (n) => new Promise((resolve) => {
    let count = 0, first = 0;
    onNavigate = () => { if (count === 0) first = performance.now(); if (++count === n) { onNavigate = () => undefined; resolve(performance.now() - first); } };
    frame().contentWindow.postMessage({ cmd: 'burst', n }, embedOrigin);
  });
  // The receive path alone: the same message dispatched n times from the iframe's window and origin, in one task.
  window.runSynthetic = (n) => {
    const data = { source: 'svc-embed', direction: 'event', type: 'svc:event:navigate', payload: { path: '/p' }, timestamp: Date.now(), surface: 'dashboard' };
    let count = 0;
    onNavigate = () => { count++; };
    const source = frame().contentWindow;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) dispatchEvent(new MessageEvent('message', { data, origin: embedOrigin, source }));
    const ms = performance.now() - t0;
    onNavigate = () => undefined;
    if (count !== n) throw new Error('lost messages: ' + count);
    return ms;
  };
  const wait = () => { const f = frame(); if (f) f.addEventListener('load', () => { window.ready = true; }); else setTimeout(wait, 5); };
  wait();
</script>`;

interface ReceivePath {
  messages: number;
  rounds: number;
  /** Real cross-origin postMessage bursts: the sender's cloning and IPC bound both modes. */
  postMessage: { bareMsPerMessage: number; sdkMsPerMessage: number; ratio: number };
  /** The receive path alone: synthetic MessageEvents dispatched in one task (no cloning, no IPC). */
  dispatch: { bareMsPerMessage: number; sdkMsPerMessage: number; ratio: number };
}

async function measureReceivePath(messages: number, rounds: number): Promise<ReceivePath | undefined> {
  if (!hasChromium) {
    process.stderr.write('[sdk] /usr/bin/chromium not found: the receive-path measurement is SKIPPED\n');
    return undefined;
  }
  const sdkJs = (await build({ entryPoints: ['packages/embed-sdk/src/index.ts'], bundle: true, format: 'esm', minify: true, platform: 'browser', target: 'es2022', write: false })).outputFiles[0]!.text;
  const serve = (routes: Record<string, { type: string; body: string }>) => new Promise<{ close(): void; port: number }>((resolve) => {
    const server = createServer((request, response) => {
      const route = routes[new URL(request.url ?? '/', 'http://x').pathname] ?? routes['*'];
      if (!route) return void response.writeHead(404).end();
      response.writeHead(200, { 'content-type': route.type }).end(route.body);
    });
    server.listen(0, '127.0.0.1', () => resolve({ close: () => server.close(), port: (server.address() as AddressInfo).port }));
  });
  const host = await serve({ '/': { type: 'text/html', body: HOST }, '/sdk.js': { type: 'text/javascript', body: sdkJs } });
  const embed = await serve({ '*': { type: 'text/html', body: SENDER } });
  const browser = await launchChromium();
  try {
    const pages = { bare: await browser.context.newPage(), sdk: await browser.context.newPage() };
    for (const [mode, page] of Object.entries(pages)) {
      await page.goto(`http://localhost:${host.port}/?mode=${mode}&embed=${encodeURIComponent(`http://127.0.0.1:${embed.port}`)}`);
      await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    }
    type Runner = { run(n: number): Promise<number>; runSynthetic(n: number): number };
    const real = (mode: 'bare' | 'sdk') => pages[mode].evaluate((n) => (window as unknown as Runner).run(n), messages);
    const synthetic = (mode: 'bare' | 'sdk') => pages[mode].evaluate((n) => (window as unknown as Runner).runSynthetic(n), messages * 5);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const compare = async (measure: (mode: 'bare' | 'sdk') => Promise<number>, n: number) => {
      await measure('bare');
      await measure('sdk');
      const bare: number[] = [];
      const sdk: number[] = [];
      for (let round = 0; round < rounds; round++) {
        bare.push(await measure('bare'));
        sdk.push(await measure('sdk'));
      }
      const bareMs = median(bare);
      const sdkMs = median(sdk);
      return {
        bareMsPerMessage: Math.round((bareMs / n) * 1e6) / 1e6,
        sdkMsPerMessage: Math.round((sdkMs / n) * 1e6) / 1e6,
        ratio: Math.round((sdkMs / bareMs) * 1000) / 1000,
      };
    };
    return { messages, rounds, postMessage: await compare(real, messages), dispatch: await compare(synthetic, messages * 5) };
  } finally {
    await browser.close();
    host.close();
    embed.close();
  }
}

/**
 * `npm run bench -- sdk [--messages 20000] [--rounds 5]`: the SDK's gzip size for a typical import beside four
 * other embedding SDKs bundled the same way, and in Chromium the per-message cost of the SDK's receive path as a
 * ratio to a bare message listener, same run, median of rounds: over real cross-origin postMessage bursts, and
 * with synthetic MessageEvents that isolate the receive path.
 */
export async function main(args: string[]): Promise<void> {
  const value = (name: string, fallback: number) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] !== undefined ? Number(args[i + 1]) : fallback;
  };
  const sizes = await measureSizes();
  const receivePath = await measureReceivePath(value('messages', 20_000), value('rounds', 5));
  const report = { benchmark: 'sdk', date: new Date().toISOString(), machine: machine(), sizes, receivePath };
  mkdirSync(new URL('../results/', import.meta.url).pathname, { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify({ sizes, receivePath }, null, 2)}\nresults written to ${RESULTS}\n`);
}
