import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { describeEachDialect } from '../../../test/dialects.js';
import { bearer, seedAccount, uniqueSuffix } from '../../../test/factory.js';
import type { SeededAccount } from '../../../test/factory.js';
import { WAREHOUSE_SCHEMA } from '../../../test/global-setup.js';
import { RAISED_RATE_LIMITS } from '../../../test/limits.js';
import { finished, spawnSvc, startSvcServe } from '../../../test/svc-process.js';
import { buildApp } from '../../app.js';
import { DEMO_FILE } from '../../cli.js';
import { Sealer, UnsealError } from '../../core/core.sealed.js';
import { openDatabase } from '../../db/db.database.js';
import { migrateToLatest } from '../../db/db.migrations.js';
import { importFile } from '../../import/import.js';
import { DEMO_SEMANTIC_VIEWS } from './warehouse.demo.js';
import type { DataSourceConfig } from '../semantic/semantic.model.js';
import { buildDue, rollupStatus } from '../preagg/preagg.scheduler.js';
import { RollupStore, deploymentsWithRollups } from '../preagg/preagg.store.js';
import { resealDataSources } from './warehouse.sources.js';
import { WarehouseRegistry } from './warehouse.registry.js';
import { testConfig } from '../../../test/config.js';

const KEY = randomBytes(32).toString('base64');
const NEW_KEY = randomBytes(32).toString('base64');
/** The data source's password: no answer, log line or stored value may carry it. */
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;
const SEALED_PREFIX = 'svc-sealed:v1:';

/**
 * A PostgreSQL data source whose URL carries PASSWORD: the test database's demo warehouse (trust authentication
 * takes any password), or, without PostgreSQL, an address nothing answers at (its requests fail, which is an
 * answer to check too).
 */
function warehouseSource(): Extract<DataSourceConfig, { type: 'postgres' }> {
  const postgresUrl = inject('postgresUrl');
  if (postgresUrl === null) return { type: 'postgres', url: `postgres://svc:${PASSWORD}@127.0.0.1:1/warehouse` };
  const url = new URL(postgresUrl);
  url.password = PASSWORD;
  return { type: 'postgres', url: url.toString(), schema: WAREHOUSE_SCHEMA };
}

/** A dashboard whose CHART reads the demo model's orders, so that its data comes from the deployment's source. */
function revenueDashboard(publicId: string) {
  return {
    publicId, status: 'published' as const, allowEmbed: true, title: 'Revenue',
    config: { widgets: [{ id: 'by-status', type: 'CHART', position: { x: 0, y: 0, w: 6, h: 4 }, config: { reportRef: 'r-status' } }] },
    reportSnapshots: [{ report: 'r-status', name: 'By status', kind: 'table' as const, meta: { query: { measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.status'] } } }],
  };
}

const DAILY_ROLLUP = { name: 'daily', measures: ['orders.count'], timeDimension: 'orders.created_at', granularity: 'day' as const };

/**
 * Issue 31 item 18 (docs/operations.md "Secrets at rest"), on both databases: a deployment's data source, whose
 * PostgreSQL URL may carry a password, is sealed at rest under SVC_ENCRYPTION_KEY (stored as before without one),
 * opened only to connect, resealed under a new first key, and refused visibly (503, no other source) without its key.
 */
describeEachDialect('data sources at rest', (t) => {
  const source = warehouseSource();
  let withKey: FastifyInstance;
  let withoutKey: FastifyInstance;
  let sealed: SeededAccount;
  let plain: SeededAccount;
  const sfx = uniqueSuffix();
  const publicIds = { sealed: `sealed-src-${sfx}`, plain: `plain-src-${sfx}` };

  const seed = (publicId: string, sealer?: Sealer, semanticViews?: unknown[]) => seedAccount(t().db.kysely, {
    ref: 'account', users: [{ ref: 'admin', role: 'admin' }],
    deployments: [{ ref: 'prod', name: 'P', dataSource: source, ...(semanticViews === undefined ? {} : { semanticViews: semanticViews as never }), items: [{ ref: 'r-status', type: 'REPORT', name: 'By status', createdBy: 'admin' }, { ref: 'wb', type: 'WORKBOOK', name: 'W', createdBy: 'admin', dashboard: revenueDashboard(publicId) }] }],
  }, sealer);
  const stored = async (account: SeededAccount) => (await t().db.kysely.selectFrom('deployments').select('data_source').where('id', '=', account.refs.prod!).executeTakeFirstOrThrow()).data_source!;
  const widgetData = (app: FastifyInstance, account: SeededAccount, publicId: string) =>
    app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/by-status/data`, headers: bearer(account.keys.admin!), payload: {} });

  beforeAll(async () => {
    const settings = { rateLimits: RAISED_RATE_LIMITS, data: { resultCacheBytes: 0 } };
    withKey = await buildApp(testConfig({ ...settings, encryptionKeys: [KEY] }), { db: t().db });
    withoutKey = await buildApp(testConfig({ ...settings, encryptionKeys: [] }), { db: t().db });
    sealed = await seed(publicIds.sealed, new Sealer([KEY]));
    plain = await seed(publicIds.plain);
  });

  afterAll(async () => {
    await withKey?.close();
    await withoutKey?.close();
  });

  it('stores the data source sealed when SVC_ENCRYPTION_KEY is set, and as before without', async () => {
    const text = await stored(sealed);
    expect(text.startsWith(SEALED_PREFIX)).toBe(true);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('postgres');
    expect(JSON.parse(new Sealer([KEY]).open(text))).toEqual(source);
    expect(JSON.parse(await stored(plain))).toEqual(source);
  });

  it('opens it to connect: a sealed source answers exactly as the same source stored plain', async () => {
    const [fromSealed, fromPlain] = [await widgetData(withKey, sealed, publicIds.sealed), await widgetData(withKey, plain, publicIds.plain)];
    expect(fromSealed.statusCode, fromSealed.body).toBe(fromPlain.statusCode);
    if (inject('postgresUrl') !== null) {
      expect(fromSealed.statusCode, fromSealed.body).toBe(200);
      expect(fromSealed.json().rows.length).toBeGreaterThan(0);
    }
    expect(fromSealed.json().rows).toEqual(fromPlain.json().rows);
  });

  it('refuses a sealed source without its key with a 503 naming SVC_ENCRYPTION_KEY, and reads no other source', async () => {
    const res = await widgetData(withoutKey, sealed, publicIds.sealed);
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json().error).toMatchObject({ status: 503, code: 'service_unavailable', message: expect.stringContaining('SVC_ENCRYPTION_KEY is not set') });
    expect(res.body).not.toContain(PASSWORD);
    // A source stored plain needs no key.
    expect((await widgetData(withoutKey, plain, publicIds.plain)).statusCode).toBe((await widgetData(withKey, plain, publicIds.plain)).statusCode);
  });

  it('reseals: plain sources under the first key, then every source under a new first key, leaving what no key opens', async () => {
    const later = await seed(`later-src-${uniqueSuffix()}`);
    const accountIds = [later.refs.account!];
    expect(await resealDataSources(t().db.kysely, new Sealer([]), accountIds)).toBe(0);
    expect(await resealDataSources(t().db.kysely, new Sealer([KEY]), accountIds)).toBe(1);
    const first = await stored(later);
    expect(first.startsWith(SEALED_PREFIX)).toBe(true);
    expect(await resealDataSources(t().db.kysely, new Sealer([KEY]), accountIds)).toBe(0);
    // A key change: the new key first, the old one still listed to open.
    expect(await resealDataSources(t().db.kysely, new Sealer([NEW_KEY, KEY]), accountIds)).toBe(1);
    const second = await stored(later);
    expect(second).not.toBe(first);
    expect(() => new Sealer([KEY]).open(second)).toThrow(UnsealError);
    expect(JSON.parse(new Sealer([NEW_KEY]).open(second))).toEqual(source);
    // Sealed under a key the sealer does not list: left as it is.
    expect(await resealDataSources(t().db.kysely, new Sealer([randomBytes(32).toString('base64')]), accountIds)).toBe(0);
    expect(await stored(later)).toBe(second);
    // Another account's sources are not touched by a scoped reseal.
    expect(JSON.parse(await stored(plain))).toEqual(source);
  });

  it('pre-aggregations read the sealed source with the key, and report why they cannot without it', async () => {
    const views = structuredClone(DEMO_SEMANTIC_VIEWS).map((view) => (view.name === 'orders' ? { ...view, preAggregations: [DAILY_ROLLUP] } : view));
    const withRollups = await seed(`rollup-src-${uniqueSuffix()}`, new Sealer([KEY]), views);
    const deploymentId = withRollups.refs.prod!;
    const listed = async (sealer: Sealer) => (await deploymentsWithRollups(t().db.kysely, sealer)).find((d) => d.deploymentId === deploymentId)!;
    expect((await listed(new Sealer([KEY]))).source).toEqual(source);
    const unopened = await listed(new Sealer([]));
    expect(unopened.source).toBeUndefined();
    expect(unopened.sourceError).toContain('SVC_ENCRYPTION_KEY is not set');

    const dir = mkdtempSync(join(tmpdir(), 'svc-sealed-rollups-'));
    const warehouses = new WarehouseRegistry({ timeoutMs: 30_000, demoPath: () => join(dir, 'not-the-source.db') });
    const store = new RollupStore(join(dir, 'rollups'));
    try {
      const builder = { db: t().db, warehouses, store, timeoutMs: 60_000, now: () => new Date() };
      const reports = await buildDue(builder, { deploymentId });
      expect(reports).toEqual([expect.objectContaining({ rollup: 'orders.daily', status: 'failed', error: expect.stringContaining('SVC_ENCRYPTION_KEY is not set') })]);
      expect((await rollupStatus(builder, deploymentId))[0]?.due).toMatch(/^its data source cannot be read/);
      if (inject('postgresUrl') !== null) {
        const built = await buildDue({ ...builder, sealer: new Sealer([KEY]) }, { deploymentId });
        expect(built.map((report) => report.status), JSON.stringify(built)).toEqual(['built']);
      }
    } finally {
      store.close();
      await warehouses.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('no API answer of the demo carries the data source', () => {
    /** The demo's import file, made unique for this run, its deployment reading `source`. */
    function demoWithSource(): { file: unknown; adminEmail: string; password: string } {
      const demo = JSON.parse(readFileSync(DEMO_FILE, 'utf8')) as { accounts: Array<Record<string, unknown> & { users: Array<{ email: string; role: string; password?: string; apiKeys?: string[] }>; deployments: Array<Record<string, unknown>> }> };
      const account = demo.accounts[0]!;
      const suffix = uniqueSuffix();
      account.tenantName = `demo-${suffix}`;
      for (const user of account.users) {
        user.email = user.email.replace('@', `-${suffix}@`);
        user.apiKeys = (user.apiKeys ?? []).map((key) => `${key}_${suffix}`);
      }
      account.deployments[0]!.dataSource = source;
      // publicIds are unique across accounts: every one, wherever the file names it, gets the suffix.
      const text = JSON.stringify(demo).replace(/"publicId":"([^"]+)"/g, `"publicId":"$1-${suffix}"`);
      const admin = account.users.find((user) => user.role === 'admin')!;
      return { file: JSON.parse(text), adminEmail: admin.email, password: admin.password ?? '' };
    }

    it.each([
      ['sealed, and svc has the key', [KEY]],
      ['sealed, and svc lacks the key', []],
    ] as const)('%s: every route, every credential, answers and headers searched', async (_label, keys) => {
      const { file, adminEmail, password } = demoWithSource();
      const { refs } = await importFile(t().db.kysely, file, new Date(), new Sealer([KEY]));
      const app = await buildApp(testConfig({
        rateLimits: RAISED_RATE_LIMITS,
        encryptionKeys: keys,
        data: { resultCacheBytes: 0 },
      }), { db: t().db, resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] });
      try {
        const answers = await walkEveryRoute(app, file as DemoFile, refs, adminEmail, password);
        const secrets = [PASSWORD, source.url, SEALED_PREFIX, KEY];
        const leaks = answers.filter((answer) => secrets.some((secret) => answer.text.includes(secret))).map((answer) => `${answer.what}: ${answer.text.slice(0, 300)}`);
        expect(leaks).toEqual([]);
        // The walk reached the data: every widget of the demo was asked for, and answered from the source (with
        // the key) or refused for want of it (without).
        const widgetAnswers = answers.filter((answer) => answer.what.includes('/widgets/') && answer.what.startsWith('admin '));
        expect(widgetAnswers.length).toBeGreaterThan(10);
        if (keys.length === 0) expect(widgetAnswers.filter((answer) => answer.status === 503).length).toBeGreaterThan(10);
        else if (inject('postgresUrl') !== null) expect(widgetAnswers.filter((answer) => answer.status === 200).length).toBeGreaterThan(10);
      } finally {
        await app.close();
      }
    }, 120_000);
  });
});

interface DemoFile {
  accounts: Array<{ users: Array<{ email: string; role: string; apiKeys?: string[] }>; embedTenants?: Array<{ name: string; users: Array<{ externalId: string }> }>; deployments: Array<{ items?: DemoItem[] }> }>;
}
interface DemoItem { ref?: string; type: string; dashboard?: { publicId: string }; children?: DemoItem[] }

interface Answer { what: string; status: number; text: string }

/**
 * Calls every operation of the OpenAPI document, and the pages outside it, with every kind of credential of the
 * demo account (none, the admin's and the member's API keys, an embed viewer, an internal viewer, a console
 * session), on real ids: each dashboard, each of its widgets, the deployment, a workbook, a comment, a webhook
 * endpoint and its delivery. Writes come after reads, and deletions last. A path parameter the walk does not
 * know fails the test: a new route must be walked too.
 */
async function walkEveryRoute(app: FastifyInstance, file: DemoFile, refs: Record<string, number>, adminEmail: string, password: string): Promise<Answer[]> {
  const account = file.accounts[0]!;
  const adminKey = account.users.find((user) => user.role === 'admin')!.apiKeys![0]!;
  const memberKey = account.users.find((user) => user.role === 'member')!.apiKeys![0]!;
  const deploymentId = refs.prod!;
  const items: DemoItem[] = [];
  const collect = (list: DemoItem[] | undefined) => list?.forEach((item) => { items.push(item); collect(item.children); });
  collect(account.deployments[0]!.items);
  const dashboards = items.filter((item) => item.dashboard !== undefined);
  const publicIds = dashboards.map((item) => item.dashboard!.publicId);
  const workbookId = refs[dashboards[0]!.ref!]!;

  const mint = async (body: Record<string, unknown>) => {
    const minted = await app.inject({ method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(adminKey), payload: { deploymentId, ...body } });
    expect(minted.statusCode, minted.body).toBe(200);
    return minted.json().sessionId as string;
  };
  const tokenOf = async (body: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId: await mint(body) } });
    return { authorization: `Embed-Token ${res.json().token as string}` };
  };
  const tenant = account.embedTenants![0]!;
  const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: adminEmail, password } });
  const cookie = String(login.headers['set-cookie'] ?? '').split(';')[0]!;
  const credentials: Record<string, Record<string, string>> = {
    none: {},
    admin: bearer(adminKey),
    member: bearer(memberKey),
    viewer: await tokenOf({ externalId: tenant.users[0]!.externalId, embedTenantName: tenant.name }),
    internal: await tokenOf({ internalId: adminEmail }),
    console: { cookie, 'x-requested-with': 'svc' },
  };

  // Real rows for the ids: widgets of each dashboard, a comment, an embed user to delete, a webhook endpoint with a delivery.
  const widgets = new Map<string, string[]>();
  for (const publicId of publicIds) {
    const dashboard = await app.inject({ url: `/api/v1/embed/dashboard/${publicId}`, headers: credentials.admin });
    widgets.set(publicId, ((dashboard.json().config?.widgets ?? []) as Array<{ id: string }>).map((widget) => widget.id));
  }
  const endpoint = await app.inject({ method: 'POST', url: '/api/v1/webhooks/endpoints', headers: credentials.admin, payload: { url: 'https://hooks.example.com/svc', eventTypes: ['comment.created'] } });
  expect(endpoint.statusCode, endpoint.body).toBe(201);
  const comment = await app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicIds[0]}/comments`, headers: credentials.viewer, payload: { body: 'a comment for the walk' } });
  expect(comment.statusCode, comment.body).toBe(201);
  const deliveries = await app.inject({ url: `/api/v1/webhooks/endpoints/${endpoint.json().id}/deliveries`, headers: credentials.admin });
  await mint({ externalId: `to-delete-${uniqueSuffix()}`, embedTenantName: tenant.name });
  const embedUsers = (await app.inject({ url: `/api/v1/embed/users?embedTenantName=${tenant.name}`, headers: credentials.admin })).json().users as Array<{ id: number; externalId: string }>;

  // Issue 33 part 4: a user of its own (with a key), a group and an embed tenant for the walk to read, change and delete.
  const made = async (url: string, payload: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url, headers: credentials.admin, payload });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  };
  const walkUser = await made('/api/v1/users', { email: `walker-${uniqueSuffix()}@example.test`, role: 'member' });
  const walkKey = await made(`/api/v1/users/${walkUser}/api-keys`, { name: 'walk' });
  const walkGroup = await made('/api/v1/groups', { name: `walk-${uniqueSuffix()}`, memberIds: [walkUser] });
  const walkTenant = await made('/api/v1/embed/tenants', { name: `walk-${uniqueSuffix()}` });

  const values: Record<string, Array<string | number>> = {
    deploymentId: [deploymentId], workbookId: [workbookId], itemId: [workbookId],
    commentId: [comment.json().id], endpointId: [endpoint.json().id], deliveryId: [deliveries.json().items[0]?.id ?? 1],
    id: [embedUsers.find((user) => user.externalId.startsWith('to-delete-'))!.id],
    // The authoring API: the demo's dashboards were imported published, as version 1.
    versionNumber: [1],
    userId: [walkUser], keyId: [walkKey], groupId: [walkGroup], tenantId: [walkTenant],
    // Issue 35, viewers' saved charts and views: ids of the right form that name none (404s that must not leak either).
    chartId: ['chart_0000000000000000000000'], viewId: ['view_0000000000000000000000'],
  };
  const bodies: Record<string, () => Promise<unknown> | unknown> = {
    login: () => ({ email: adminEmail, password }),
    generateEmbedSession: () => ({ deploymentId, externalId: `walker-${uniqueSuffix()}` }),
    exchangeEmbedSession: async () => ({ sessionId: await mint({ externalId: `walker-${uniqueSuffix()}` }), include: { session: true, dashboard: publicIds[0] } }),
    revokeEmbedSession: () => ({ sessionId: 'ses_unknown' }),
    postDashboardComment: () => ({ body: 'walking' }),
    editDashboardComment: () => ({ body: 'walked' }),
    resolveDashboardThread: () => ({ resolved: true }),
    createWebhookEndpoint: () => ({ url: 'https://hooks.example.com/walk', eventTypes: ['comment.created'] }),
    updateWebhookEndpoint: () => ({ description: 'walked' }),
    getWidgetData: () => ({}),
    runAppQuery: () => ({ query: { measures: ['orders.count'], dimensions: ['orders.status'] } }),
    askQuestion: () => ({ question: 'What was the revenue?', publicId: publicIds[0] }),
    // Issue 33, editor grants: the workbook's grants put back as none.
    replaceItemGrants: () => ({ grants: [] }),
    // Issue 34, folders: a folder made at the root, the workbook renamed.
    createWorkspaceFolder: () => ({ name: 'Walked folder' }),
    updateWorkspaceItem: () => ({ name: 'Walked workbook' }),
  };

  const document = (await app.inject({ url: '/api/v1/openapi.json' })).json() as { paths: Record<string, Record<string, { operationId: string }>> };
  const requests: Array<{ operationId: string; method: string; url: string; rank: number }> = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!);
      let urls = [path];
      for (const name of names) {
        if (name === 'publicId' || name === 'widgetId') continue;
        const known = values[name];
        if (known === undefined) throw new Error(`the walk knows no value for {${name}} of ${method.toUpperCase()} ${path}: add one`);
        urls = urls.flatMap((url) => known.map((value) => url.replace(`{${name}}`, encodeURIComponent(String(value)))));
      }
      if (names.includes('publicId')) {
        urls = urls.flatMap((url) => publicIds.flatMap((publicId) => {
          const withId = url.replace('{publicId}', encodeURIComponent(publicId));
          return names.includes('widgetId') ? (widgets.get(publicId) ?? []).map((widgetId) => withId.replace('{widgetId}', encodeURIComponent(widgetId))) : [withId];
        }));
      }
      const rank = method === 'delete' ? 2 : method === 'get' ? 0 : 1;
      for (const url of urls) requests.push({ operationId: operation.operationId, method: method.toUpperCase(), url, rank });
    }
  }
  requests.sort((a, b) => a.rank - b.rank);
  const pages = ['/', '/api/v1/openapi.json', '/docs', '/docs/openapi.json', '/docs/openapi.yaml', '/healthz', '/readyz', '/metrics', '/embed/chat', '/embed/app', ...publicIds.map((publicId) => `/embed/dashboard/${publicId}`)];

  const answers: Answer[] = [];
  const record = (what: string, status: number, headers: unknown, body: string) => answers.push({ what, status, text: `${status} ${JSON.stringify(headers)} ${body}` });
  for (const [label, headers] of Object.entries(credentials)) {
    for (const url of pages) {
      const res = await app.inject({ url, headers });
      record(`${label} GET ${url}`, res.statusCode, res.headers, res.body);
    }
  }
  for (const request of requests) {
    for (const [label, headers] of Object.entries(credentials)) {
      const what = `${label} ${request.method} ${request.url}`;
      if (request.operationId === 'streamDashboardComments') {
        // An event stream does not end by itself: its answer is what it sends in its first 300 ms (or its error).
        const res = await app.inject({ url: request.url, headers, payloadAsStream: true });
        let text = '';
        const stream = res.stream();
        stream.on('data', (chunk: Buffer) => { text += chunk.toString(); });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 300);
          stream.on('end', () => { clearTimeout(timer); resolve(); });
        });
        (res.raw.res as { destroy(): void }).destroy();
        record(what, res.statusCode, res.headers, text);
        continue;
      }
      const body = bodies[request.operationId];
      const options: InjectOptions = { method: request.method as InjectOptions['method'], url: request.url, headers };
      if (body !== undefined) options.payload = (await body()) as InjectOptions['payload'];
      const res = await app.inject(options);
      record(what, res.statusCode, res.headers, res.body);
    }
  }
  return answers;
}

/**
 * The CLI's ways in, over a real database file: `svc import` seals with SVC_ENCRYPTION_KEY, and `svc serve` reseals
 * what was stored before the key was set, as it starts.
 */
describe('data sources at rest through the svc command', () => {
  let dir: string;
  let url: string;
  const source = warehouseSource();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-sealed-cli-'));
    url = `sqlite:${join(dir, 'svc.db')}`;
    const db = openDatabase(url);
    await migrateToLatest(db);
    await db.close();
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const storedSources = async () => {
    const db = openDatabase(url);
    try {
      return (await db.kysely.selectFrom('deployments').select('data_source').where('data_source', 'is not', null).orderBy('id').execute()).map((row) => row.data_source!);
    } finally {
      await db.close();
    }
  };

  it('svc import seals with SVC_ENCRYPTION_KEY, stores as before without, and svc serve seals what was stored before', async () => {
    const fileOf = (tenantName: string) => {
      const path = join(dir, `${tenantName}.json`);
      writeFileSync(path, JSON.stringify({ accounts: [{ name: tenantName, tenantName, deployments: [{ ref: 'prod', name: 'P', dataSource: source }] }] }));
      return path;
    };
    const plainRun = await finished(spawnSvc(['import', fileOf(`plain-${uniqueSuffix()}`), '--db', url]));
    expect(plainRun.code, plainRun.stderr).toBe(0);
    const sealedRun = await finished(spawnSvc(['import', fileOf(`sealed-${uniqueSuffix()}`), '--db', url], { SVC_ENCRYPTION_KEY: KEY }));
    expect(sealedRun.code, sealedRun.stderr).toBe(0);
    const [plainText, sealedText] = await storedSources();
    expect(JSON.parse(plainText!)).toEqual(source);
    expect(sealedText!.startsWith(SEALED_PREFIX)).toBe(true);

    const svc = await startSvcServe(url, { SVC_ENCRYPTION_KEY: KEY });
    try {
      const after = await storedSources();
      expect(after.every((text) => text.startsWith(SEALED_PREFIX)), after.join('\n')).toBe(true);
      expect(after[1]).toBe(sealedText);
      expect(after.map((text) => JSON.parse(new Sealer([KEY]).open(text)))).toEqual([source, source]);
    } finally {
      await svc.stop();
    }
  }, 60_000);
});
