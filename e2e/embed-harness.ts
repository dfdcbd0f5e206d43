import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Frame, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type * as Sdk from '../packages/embed-sdk/src/index.js';
import { buildApp } from '../apps/server/src/app.js';
import { testConfig } from '../apps/server/test/config.js';
import type { DataSettings } from '../apps/server/src/app.js';
import { importFile } from '../apps/server/src/import/import.js';
import type { AiSettings } from '../apps/server/src/data/data.ai.js';
import type { ImportAccount } from '../apps/server/src/import/import.js';
import { openDatabase } from '../apps/server/src/db/db.database.js';
import type { Db } from '../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../apps/server/src/db/db.migrations.js';
import type { EmbedLifetimes } from '../apps/server/src/sessions/sessions.config.js';
import type { CommentStreamSettings } from '../apps/server/src/comments/comments.stream.js';
import { RAISED_RATE_LIMITS } from '../apps/server/test/limits.js';
import { createOwnDatabase } from '../apps/server/test/own-database.js';
import { launchChromium } from './browser.js';
import type { Chromium } from './browser.js';

/**
 * A real svc over HTTP, as the browser reaches it: `http://127.0.0.1:<port>`; on SQLite in a fresh file, or on a
 * fresh PostgreSQL database (startSvc's `postgresUrl`).
 */
export interface RunningSvc {
  origin: string;
  app: FastifyInstance;
  db: Db;
  refs: Record<string, number>;
  adminKey: string;
  /** Generate Session with the admin key (the host backend's call); the session id. */
  mint(body?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export const ADMIN_KEY = 'svc_e2e_admin_key_0001';

/**
 * The e2e account: one deployment with a published dashboard of three widgets (`sales-e2e`), a second one
 * (`ops-e2e`, reached through in-embed navigation), a workbook path, and comments allowed; `allowedOrigins`
 * are the host origins that may frame it.
 */
export interface E2eAccountExtras {
  settings?: Record<string, unknown>;
  /** More published dashboards (no widgets), one workbook each: `publicId` -> title `Dashboard <publicId>`. */
  dashboards?: readonly string[];
  /** More embed users of tenant customer-a. */
  viewers?: Array<{ ref: string; externalId: string; username: string; email?: string; firstName?: string }>;
  /** More items of the deployment (workspace items of the import format, with their dashboards). */
  items?: readonly unknown[];
  /** The deployment's data source and semantic views (default: the demo warehouse and its views). */
  dataSource?: unknown;
  semanticViews?: unknown;
}

export function e2eAccount(allowedOrigins: string[], extras: E2eAccountExtras = {}): ImportAccount {
  const { settings = {}, dashboards = [], viewers = [], items = [], dataSource, semanticViews } = extras;
  return {
    ref: 'acme', name: 'Acme', tenantName: 'acme',
    settings: { allowEmbedComments: true, allowedEmbedOrigins: allowedOrigins, ...settings },
    users: [{ ref: 'alice', email: 'alice@acme.test', firstName: 'Alice', role: 'admin', password: 'alice-password', apiKeys: [ADMIN_KEY] }],
    deployments: [{
      ref: 'prod', name: 'Production',
      ...(dataSource !== undefined ? { dataSource } : {}), ...(semanticViews !== undefined ? { semanticViews } : {}),
      items: [
        { ref: 'wb-sales', type: 'WORKBOOK', name: 'Sales', createdBy: 'alice',
          dashboard: { publicId: 'sales-e2e', status: 'published', allowEmbed: true, title: 'Sales overview',
            config: { kind: 'CLASSIC', layout: { rowHeight: 40, cols: { lg: 12 } }, widgets: [
              { id: 'w-revenue', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 3 }, config: { title: 'Revenue' } },
              { id: 'w-orders', type: 'CHART', position: { x: 6, y: 0, w: 6, h: 3 }, config: { title: 'Orders' } },
              { id: 'w-note', type: 'TEXT', position: { x: 0, y: 3, w: 12, h: 1 }, config: { text: 'Figures in EUR' } },
            ],
            // Translated content (issue 38): Japanese, and a regional Portuguese that falls back to its language.
            translations: {
              ja: { title: '売上概要', 'widgets.w-revenue.title': '売上', 'widgets.w-note.markdown': '金額はユーロ' },
              pt: { title: 'Visão geral de vendas' },
            } } } },
        { ref: 'wb-ops', type: 'WORKBOOK', name: 'Ops', createdBy: 'alice',
          dashboard: { publicId: 'ops-e2e', status: 'published', allowEmbed: true, title: 'Operations', config: { widgets: [] } } },
        ...dashboards.map((publicId) => ({
          ref: `wb-${publicId}`, type: 'WORKBOOK', name: publicId, createdBy: 'alice',
          dashboard: { publicId, status: 'published', allowEmbed: true, title: `Dashboard ${publicId}`, config: { widgets: [] } },
        })),
        ...items,
      ],
    }],
    embedTenants: [{ name: 'customer-a', users: [
      { ref: 'ann', externalId: 'ann-1', username: 'ann', email: 'ann@a.test', firstName: 'Ann' },
      { ref: 'annika', externalId: 'annika-1', username: 'annika', email: 'annika@a.test' },
      { ref: 'bert', externalId: 'bert-1', username: 'bert', email: 'bert@a.test', firstName: 'Bert' },
      ...viewers,
    ] }],
  } as ImportAccount;
}

/** The demo account's admin key (alice, in Analysts): public, it is in demo.json. */
export const DEMO_ADMIN_KEY = 'svc_demo_admin_key_0001';

/** The demo account of apps/server/demo/demo.json, as `npm start` loads it. */
export type DemoAccount = ImportAccount & { settings: { allowedEmbedOrigins: string[] } };

/** A fresh copy of the demo account (apps/server/demo/demo.json), to change before it is imported. */
export function readDemoAccount(): DemoAccount {
  return (JSON.parse(readFileSync(new URL('../apps/server/demo/demo.json', import.meta.url), 'utf8')) as { accounts: DemoAccount[] }).accounts[0]!;
}

/** The demo account with `host`'s origin allowed to frame it, for EmbedStackOptions.account (svc: `{ adminKey: DEMO_ADMIN_KEY }`). */
export function demoAccountFor(host: { origin: string }): DemoAccount {
  const account = readDemoAccount();
  account.settings.allowedEmbedOrigins.push(host.origin);
  return account;
}

/**
 * The demo account's "Sales performance" workbook (every widget type, over the bundled warehouse) and the folder of
 * its reports, as apps/server/demo/demo.json has them: e2e tests and the data benchmark embed the demo itself.
 */
export function demoDashboardItems(): Array<Record<string, unknown>> {
  const items = readDemoAccount().deployments![0]!.items as unknown as Array<Record<string, unknown>>;
  return items.filter((item) => item.ref === 'wb-sales-performance' || item.ref === 'f-sales-reports');
}

/** apps/demo-host in front of a real svc, as `npm start` runs them. */
export interface DemoStack {
  svc: RunningSvc;
  /** The demo host's page, on another origin than svc's: `http://localhost:<port>`. */
  hostOrigin: string;
  /** Closes the demo host, then svc. */
  close(): Promise<void>;
}

/**
 * Starts apps/demo-host on a port reserved first (so that the account can allow its origin) in front of a real svc
 * holding `account(hostOrigin)`: by default the demo account with the host's origin allowed, and the host using the
 * demo's admin key. `publicId` and `webhooks` go to the demo host (its defaults: sales-performance, webhooks on);
 * `postgresUrl` runs svc on a fresh database of that PostgreSQL server instead of SQLite.
 *
 * @example
 * const demo = await startDemoStack({ webhooks: false });
 * await page.goto(`${demo.hostOrigin}/`);
 */
export async function startDemoStack(options: { account?: (hostOrigin: string) => ImportAccount; apiKey?: string; publicId?: string; webhooks?: boolean; postgresUrl?: string } = {}): Promise<DemoStack> {
  const { apiKey = DEMO_ADMIN_KEY, publicId, webhooks } = options;
  const port = await freePort();
  const hostOrigin = `http://localhost:${port}`;
  const account = options.account?.(hostOrigin) ?? (() => {
    const demo = readDemoAccount();
    demo.settings.allowedEmbedOrigins.push(hostOrigin);
    return demo;
  })();
  const svc = await startSvc({ account, adminKey: apiKey, ...(options.postgresUrl !== undefined ? { postgresUrl: options.postgresUrl } : {}) });
  // apps/demo-host is plain JavaScript without type declarations: imported by URL, so no project type-checks it.
  const { startDemoHost } = (await import(new URL('../apps/demo-host/server.js', import.meta.url).href)) as { startDemoHost(options: Record<string, unknown>): Promise<unknown> };
  const demo = (await startDemoHost({
    port, host: '127.0.0.1', svcUrl: svc.origin, apiKey, deploymentId: svc.refs.prod,
    ...(publicId !== undefined ? { publicId } : {}), ...(webhooks !== undefined ? { webhooks } : {}),
  })) as { close(): Promise<void> };
  return {
    svc, hostOrigin,
    async close() {
      await demo.close();
      await svc.close();
    },
  };
}

/**
 * The demo host's page in a new tab (at `viewport`), once its event log shows dashboard-loaded (within `timeout`,
 * default 30 s); and the embed's frame.
 */
export async function openDemoPage(context: BrowserContext, demo: DemoStack, options: { viewport?: { width: number; height: number }; timeout?: number } = {}): Promise<{ page: Page; frame: Frame }> {
  const page = await context.newPage();
  if (options.viewport !== undefined) await page.setViewportSize(options.viewport);
  await page.goto(`${demo.hostOrigin}/`);
  await page.locator('#log').filter({ hasText: 'dashboard-loaded' }).waitFor({ timeout: options.timeout ?? 30_000 });
  return { page, frame: embedFrame(page, demo.svc.origin) };
}

/** The host page's globals that hostPageHtml sets and mountEmbed fills in. */
export interface HostGlobals {
  sdk: typeof Sdk;
  /** The handle's events as mountEmbed records them: [name, payload]. */
  events: Array<[string, unknown]>;
  handle: Sdk.EmbedHandle;
  getSessionId(): Promise<string>;
  /** How many times getSessionId was called. */
  minted: number;
  /** Ids getSessionId hands out, first to last, before it asks the backend again (a bad id, a spent one). */
  nextIds: string[];
  /** While true, the host's backend refuses: getSessionId throws, so the SDK cannot renew a lapsed session. */
  refuseIds: boolean;
  /** The session id the host's backend minted last (what a logout revokes). */
  lastSessionId: string | undefined;
}

/** The host page's window, as page.evaluate bodies see it. */
export type HostWindow = Window & HostGlobals;

/**
 * A host page: `#embed` (styled `embedStyle`), or `body`'s elements instead; the SDK as `window.sdk`, an empty
 * `window.events`, and `window.getSessionId`, which asks the host's backend (POST /session, with the page's query:
 * open the page as `/?who=bert-1` to mint for Bert) for a session id, unless a test queued ids or made it refuse
 * (HostGlobals). `script` adds statements of its own before the page sets `window.ready = true`, which openHostPage
 * waits for.
 *
 * @example
 * const HOST_PAGE = hostPageHtml({ embedStyle: 'width:1300px;height:2300px' });
 */
export function hostPageHtml(options: { embedStyle?: string; body?: string; bodyStyle?: string; script?: string } = {}): string {
  const { embedStyle, bodyStyle = 'margin:0', script = '' } = options;
  const body = options.body ?? `<div id="embed"${embedStyle === undefined ? '' : ` style="${embedStyle}"`}></div>`;
  return `<!doctype html><html><body${bodyStyle === '' ? '' : ` style="${bodyStyle}"`}>
${body}
<script type="module">
  import * as sdk from '/sdk.js';
  window.sdk = sdk;
  window.events = [];
  window.minted = 0;
  window.nextIds = [];
  window.refuseIds = false;
  window.getSessionId = async () => {
    window.minted++;
    if (window.refuseIds) throw new Error('the host backend refuses (test)');
    if (window.nextIds.length > 0) return window.nextIds.shift();
    window.lastSessionId = (await (await fetch('/session' + location.search, { method: 'POST' })).json()).sessionId;
    return window.lastSessionId;
  };
${script}
  window.ready = true;
</script></body></html>`;
}

/** A test file's host: a web server on 127.0.0.1, reached as `origin`, `http://localhost:<port>`: another origin than svc's. */
export interface Host {
  server: Server;
  port: number;
  origin: string;
  close(): void;
}

let sdkBundle: Promise<string> | undefined;

/**
 * The host of a test file: `page` at `/`, the SDK (bundled once per file) at `/sdk.js`, its backend's `session`
 * route at `/session` (see sessionRoute), and `routes` more.
 *
 * @example
 * const host = await serveHost(hostPageHtml(), sessionRoute(() => svc.mint()));
 * svc = await startSvc({ account: e2eAccount([host.origin]) });
 */
export async function serveHost(page: string, session: Route, routes: Record<string, Route> = {}): Promise<Host> {
  // Both entries (main and tools), as svc serves them to a page without a bundler.
  sdkBundle ??= bundle('packages/embed-sdk/src/browser.ts');
  const sdkJs = await sdkBundle;
  const { server, port } = await serve({ '/': { type: 'text/html', body: page }, '/sdk.js': { type: 'text/javascript', body: sdkJs }, '/session': session, ...routes });
  return { server, port, origin: `http://localhost:${port}`, close: () => { server.close(); } };
}

/** The host backend's `/session` route: `{ sessionId }`, minted by `mint` for the request's query. */
export function sessionRoute(mint: (query: URLSearchParams) => Promise<string>): Route {
  return async (request) => ({ type: 'application/json', body: JSON.stringify({ sessionId: await mint(new URL(request.url ?? '/', 'http://x').searchParams) }) });
}

/**
 * A host's React page, for EmbedStackOptions.routes: `/react.html` mounts e2e/fixtures/react-host.ts, bundled at its
 * first request as `/react.js`.
 */
export function reactHostRoutes(): Record<string, Route> {
  let js: Promise<string> | undefined;
  return {
    '/react.html': { type: 'text/html', body: '<!doctype html><div id="react"></div><script type="module" src="/react.js"></script>' },
    '/react.js': async () => ({ type: 'text/javascript', body: await (js ??= bundle('e2e/fixtures/react-host.ts')) }),
  };
}

/** What setUpEmbedStack starts for a test file: the host, svc, and one browser. */
export interface EmbedStack {
  readonly host: Host;
  readonly svc: RunningSvc;
  readonly browser: Chromium;
}

type SvcSettings = Omit<Parameters<typeof startSvc>[0], 'account'>;

export interface EmbedStackOptions {
  /** The host page at `/` (default: hostPageHtml()). */
  page?: string;
  /** More routes of the host (pages, scripts), beside `/`, `/sdk.js` and `/session`. */
  routes?: Record<string, Route>;
  /** The account svc holds, given the host, whose origin it must allow (default: e2eAccount([host.origin])). */
  account?: (host: Host) => ImportAccount;
  /** svc's settings beside its account (startSvc's options); a function is called at set-up, after the file's earlier hooks. */
  svc?: SvcSettings | (() => SvcSettings);
  /** The host backend's `/session`: a session id for the request's query (default: `svc.mint()`). */
  mint?: (svc: RunningSvc, query: URLSearchParams) => Promise<string>;
  /** The browser's options (default: a 15 s timeout for every wait). */
  browser?: Parameters<typeof launchChromium>[0];
  /**
   * What else the file started (another svc, a third-party server, a proxy), closed after the browser, whose open
   * connections (comment streams) would hold them, and before svc and the host.
   */
  alsoClose?: () => Array<{ close(): unknown } | undefined>;
}

/**
 * A test file's stack, started before its tests and closed after them (beforeAll and afterAll of the describe
 * that calls it): the host page and its backend's `/session` route (serveHost), a real svc whose account allows the
 * host's origin (startSvc), and one Chromium. The file keeps only what differs: its page, account, mint and options.
 * Its fields are there once the set-up has run, that is inside the tests and later hooks.
 *
 * @example
 * const stack = setUpEmbedStack({ account: (host) => e2eAccount([host.origin], { items: demoDashboardItems() }) });
 * it('loads', async () => { const page = await openHostPage(stack.browser.context, `${stack.host.origin}/`); ... });
 */
export function setUpEmbedStack(options: EmbedStackOptions = {}): EmbedStack {
  let started: { host: Host; svc?: RunningSvc; browser?: Chromium } | undefined;
  beforeAll(async () => {
    const mint = options.mint ?? ((svc) => svc.mint());
    const host = await serveHost(options.page ?? hostPageHtml(), sessionRoute((query) => mint(running().svc, query)), options.routes);
    started = { host };
    const settings = typeof options.svc === 'function' ? options.svc() : options.svc;
    started.svc = await startSvc({ ...settings, account: (options.account ?? ((h) => e2eAccount([h.origin])))(host) });
    started.browser = await launchChromium(options.browser ?? { timeout: 15_000 });
  }, 60_000);
  afterAll(() => closeAll(started?.browser, ...(options.alsoClose?.() ?? []), started?.svc, started?.host));
  const running = (): Required<NonNullable<typeof started>> => {
    if (started?.svc === undefined || started.browser === undefined) throw new Error('the embed stack is used before its set-up ran (call setUpEmbedStack inside a describe, use it inside tests)');
    return started as Required<typeof started>;
  };
  return {
    get host() { return running().host; },
    get svc() { return running().svc; },
    get browser() { return running().browser; },
  };
}

/** Closes each in turn, the browser first, skipping what never started. */
export async function closeAll(...things: Array<{ close(): unknown } | undefined>): Promise<void> {
  for (const thing of things) await thing?.close();
}

/**
 * A new page on a host page whose inline module script ends with `window.ready = true`, once it is ready; at
 * `viewport`, with `before` run on the page before it loads (listeners of its own).
 */
export async function openHostPage(context: BrowserContext, url: string, options: { viewport?: { width: number; height: number }; before?: (page: Page) => void } = {}): Promise<Page> {
  const page = await context.newPage();
  if (options.viewport !== undefined) await page.setViewportSize(options.viewport);
  options.before?.(page);
  await page.goto(url);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  return page;
}

/** What mountEmbed records. */
export interface Recording {
  /** The handle's events pushed to `window.events` as [name, payload]. */
  record?: readonly string[];
  /** An SvcEmbedError payload recorded as its `{ code }` alone. */
  errorCodes?: boolean;
}

/**
 * Embeds with the SDK into the host page's #embed, as a host does: `options` are the SDK's (`baseUrl`, `surface`,
 * `publicId`...; the container and the page's getSessionId are added). The handle is `window.handle`; resolves, once
 * it is ready, to the embed's frame.
 *
 * @example
 * const frame = await mountEmbed(page, { baseUrl: svc.origin, surface: 'dashboard', publicId: 'sales-e2e' }, { record: ['dashboard-loaded', 'error'] });
 * await waitForHostEvent(page, 'dashboard-loaded');
 */
export async function mountEmbed(page: Page, options: { baseUrl: string } & Record<string, unknown>, recording: Recording = {}): Promise<Frame> {
  const { record = [], errorCodes = false } = recording;
  await page.evaluate(async ({ options, record, errorCodes }) => {
    const w = window as unknown as HostWindow;
    const handle = w.sdk.embed({ container: document.getElementById('embed')!, getSessionId: w.getSessionId, ...options } as unknown as Sdk.EmbedOptions);
    w.handle = handle;
    for (const name of record) {
      handle.on(name as 'error', (payload: unknown) => w.events.push([name, errorCodes && payload instanceof w.sdk.SvcEmbedError ? { code: payload.code } : payload]));
    }
    await handle.ready;
  }, { options, record, errorCodes });
  return embedFrame(page, options.baseUrl);
}

/** The embed's frame in the host page: the page's own iframe on `origin`'s /embed/ (not an app frame inside it). */
export function embedFrame(page: Page, origin: string): Frame {
  return page.frames().find((frame) => frame.parentFrame() === page.mainFrame() && frame.url().startsWith(`${origin}/embed/`))!;
}

/** What mountEmbed recorded: every [name, payload]. */
export const hostEvents = (page: Page) => page.evaluate(() => (window as unknown as HostWindow).events);

/** What mountEmbed recorded of one event: its payloads. */
export const hostEventsNamed = (page: Page, name: string) =>
  page.evaluate((name) => (window as unknown as HostWindow).events.filter(([n]) => n === name).map(([, payload]) => payload), name);

/** The payloads of the error events mountEmbed recorded: `[]` when the host heard no error. */
export const hostErrors = (page: Page) => hostEventsNamed(page, 'error');

/** Waits until `name` was recorded `count` times (within `timeout`, default 20 s); the count-th payload. */
export async function waitForHostEvent(page: Page, name: string, options: { count?: number; timeout?: number } = {}): Promise<unknown> {
  const { count = 1, timeout = 20_000 } = options;
  await page.waitForFunction(({ name, count }) => (window as unknown as HostWindow).events.filter(([n]) => n === name).length >= count, { name, count }, { timeout });
  return (await hostEventsNamed(page, name))[count - 1];
}

/** An embed's comment panel (a region named "Comments"), once it is on screen. */
export async function commentPanel(frame: Frame): Promise<Locator> {
  const panel = frame.getByRole('region', { name: 'Comments' });
  await panel.waitFor();
  return panel;
}

/** The panel's thread whose text has `text`. */
export const threadWith = (panel: Locator, text: string) => panel.locator('article[data-thread-id]').filter({ hasText: text });

/** The texts of the panel's thread roots, in its order. */
export const threadTexts = (panel: Locator) => panel.locator('article[data-thread-id] > .comment .comment-body').allInnerTexts();

/**
 * A real svc on a database of its own (createOwnDatabase: an SQLite file, or a new database on the PostgreSQL server
 * of `postgresUrl`, the test run's `inject('postgresUrl')`), so that the e2e account's fixed names (tenant,
 * publicIds, API key) never meet another test's rows; `close()` removes it.
 */
export async function startSvc(options: {
  account: ImportAccount; lifetimes?: EmbedLifetimes; ai?: Partial<AiSettings>; data?: Partial<DataSettings>;
  commentStreams?: Partial<CommentStreamSettings>;
  /** Run on a fresh database on this PostgreSQL server instead of SQLite. */
  postgresUrl?: string;
  /** The admin key `mint` uses (default: the e2e account's, ADMIN_KEY). */
  adminKey?: string;
}): Promise<RunningSvc> {
  const adminKey = options.adminKey ?? ADMIN_KEY;
  const database = await createOwnDatabase(options.postgresUrl, 'svc_e2e');
  const db = openDatabase(database.url);
  await migrateToLatest(db);
  const { refs } = await importFile(db.kysely, { accounts: [options.account] });
  const app = await buildApp(testConfig({
    ai: options.ai ?? { baseUrl: undefined }, ...(options.lifetimes ? { embedLifetimes: options.lifetimes } : {}), ...(options.data ? { data: options.data } : {}),
    ...(options.commentStreams ? { commentStreams: options.commentStreams } : {}), rateLimits: RAISED_RATE_LIMITS,
  }), { db });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    origin, app, db, refs, adminKey,
    async mint(body = {}) {
      const response = await fetch(`${origin}/api/v1/embed/generate-session`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ deploymentId: refs.prod, externalId: 'ann-1', embedTenantName: 'customer-a', ...body }),
      });
      if (!response.ok) throw new Error(`generate-session answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { sessionId: string }).sessionId;
    },
    async close() {
      await app.close();
      await db.close();
      await database.drop();
    },
  };
}

export async function bundle(entry: string): Promise<string> {
  const result = await build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'browser', write: false, target: 'es2020' });
  return result.outputFiles[0]!.text;
}

interface Answer { type: string; body: string; status?: number }
export type Route = Answer | ((request: IncomingMessage, body: string) => Promise<Answer>);

/**
 * A tiny host (or third-party) web server on 127.0.0.1; reach it as `http://localhost:<port>` for another origin.
 * A path that is not one of `routes` is `fallback`'s (a whole folder), else a 404.
 */
export function serve(routes: Record<string, Route>, fallback: (path: string) => Route | undefined = () => undefined): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      const route = routes[path] ?? fallback(path);
      if (route === undefined) {
        response.writeHead(404).end();
        return;
      }
      let body = '';
      request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      request.on('end', () => {
        void (async () => {
          try {
            const answer: Answer = typeof route === 'function' ? await route(request, body) : route;
            response.writeHead(answer.status ?? 200, { 'content-type': answer.type, 'cache-control': 'no-store' }).end(answer.body);
          } catch (error) {
            response.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
          }
        })();
      });
    });
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

/** Reserves a free port (so an origin can be allowed before its server starts). */
export async function freePort(): Promise<number> {
  const { server, port } = await serve({});
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A frame or a frame locator: what the embed's widgets are found in. */
interface Finds {
  locator(selector: string): Locator;
}

/**
 * A widget's export menu (issue 22: one menu per widget). It sits in the embed's <body>, since a widget clips what
 * overflows it, and names its widget in `data-export-for`; its items are there, hidden, while it is closed.
 */
export const exportMenu = (frame: Finds, widgetId: string): Locator => frame.locator(`[role="menu"][data-export-for="${widgetId}"]`);

/** Opens a widget's export menu by its button, as a viewer does, and answers the menu's item for `format`. */
export async function exportItem(frame: Finds, widgetId: string, format: string): Promise<Locator> {
  await frame.locator(`[data-widget-id="${widgetId}"] button.export-trigger`).click();
  const item = exportMenu(frame, widgetId).locator(`button[data-format="${format}"]`);
  await item.waitFor({ state: 'visible' });
  return item;
}

/**
 * A viewer's calls to the embed API from Node (another person at another desk): a session minted with `body`
 * (Generate Session fields) and exchanged, then `call(method, path under /api/v1/embed, body?)`, which throws on an
 * answer that is not 2xx.
 *
 * @example
 * const call = await embedCaller(svc, { externalId: 'bert-1' });
 * await call('POST', '/dashboard/q1/comments', { body: 'hello' });
 */
export async function embedCaller(svc: RunningSvc, body: Record<string, unknown>): Promise<<T>(method: string, path: string, body?: unknown) => Promise<T>> {
  const sessionId = await svc.mint(body);
  const exchanged = await fetch(`${svc.origin}/api/v1/embed/session/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId }),
  });
  if (!exchanged.ok) throw new Error(`exchange answered ${exchanged.status}`);
  const { token } = (await exchanged.json()) as { token: string };
  return async <T>(method: string, path: string, payload?: unknown): Promise<T> => {
    const response = await fetch(`${svc.origin}/api/v1/embed${path}`, {
      method,
      headers: { authorization: `Embed-Token ${token}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      body: payload === undefined ? null : JSON.stringify(payload),
    });
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
    return (response.status === 204 ? undefined : await response.json()) as T;
  };
}
