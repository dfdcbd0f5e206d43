import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Locator, Page } from 'playwright-core';
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
            ] } } },
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

/**
 * The demo account's "Sales performance" workbook (every widget type, over the bundled warehouse) and the folder of
 * its reports, as apps/server/demo/demo.json has them: e2e tests and the data benchmark embed the demo itself.
 */
export function demoDashboardItems(): Array<Record<string, unknown>> {
  const demo = JSON.parse(readFileSync(new URL('../apps/server/demo/demo.json', import.meta.url), 'utf8')) as { accounts: Array<{ deployments: Array<{ items: Array<Record<string, unknown>> }> }> };
  return demo.accounts[0]!.deployments[0]!.items.filter((item) => item.ref === 'wb-sales-performance' || item.ref === 'f-sales-reports');
}

/** A new page on a host page whose inline module script ends with `window.ready = true`, once it is ready. */
export async function openHostPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  return page;
}

/**
 * A database of its own for one e2e svc: an SQLite file in a temporary directory, or, given the URL of a PostgreSQL
 * server (the test run's `inject('postgresUrl')`), a new database there (`svc_e2e_<random>`), so that the e2e
 * account's fixed names (tenant, publicIds, API key) never meet another test's rows. `drop()` removes it.
 */
async function e2eDatabase(postgresUrl: string | undefined): Promise<{ url: string; drop(): Promise<void> }> {
  if (postgresUrl === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-'));
    return { url: `sqlite:${join(dir, 'svc.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `svc_e2e_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

export async function startSvc(options: {
  account: ImportAccount; lifetimes?: EmbedLifetimes; ai?: Partial<AiSettings>; data?: Partial<DataSettings>;
  commentStreams?: Partial<CommentStreamSettings>;
  /** Run on a fresh database on this PostgreSQL server instead of SQLite. */
  postgresUrl?: string;
}): Promise<RunningSvc> {
  const database = await e2eDatabase(options.postgresUrl);
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
    origin, app, db, refs, adminKey: ADMIN_KEY,
    async mint(body = {}) {
      const response = await fetch(`${origin}/api/v1/embed/generate-session`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
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

/** A tiny host (or third-party) web server on 127.0.0.1; reach it as `http://localhost:<port>` for another origin. */
export function serve(routes: Record<string, Route>): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((request, response) => {
      const route = routes[new URL(request.url ?? '/', 'http://x').pathname];
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
