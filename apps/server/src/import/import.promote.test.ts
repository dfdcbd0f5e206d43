import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testConfig } from '../../test/config.js';
import { mintViewer } from '../../test/embed.js';
import { createOwnDatabase } from '../../test/own-database.js';
import type { OwnDatabase } from '../../test/own-database.js';
import { runSvc } from '../../test/svc-process.js';
import { buildApp } from '../app.js';
import { Sealer } from '../core/core.sealed.js';
import { openDataSource } from '../data/warehouse/warehouse.sources.js';
import { openDatabase } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import { migrateToLatest } from '../db/db.migrations.js';
import { exportAccounts } from './import.export.js';
import { importFile } from './import.js';
import type { ImportFile, ImportItem } from './import.js';
import { promote, PromoteError } from './import.promote.js';
import type { PromoteResult } from './import.promote.js';

/**
 * Issue 33 part 7 (promotion): a staging svc and a production svc, each with its own database and the demo account;
 * changes made on staging through the authoring API, exported, and promoted into production over real HTTP with
 * `promote` (and `svc promote` as a process). Production then serves the change to viewers, records it in its audit
 * log and its versions, and a second promotion changes nothing.
 */
const DEMO = JSON.parse(readFileSync(new URL('../../demo/demo.json', import.meta.url), 'utf8')) as ImportFile;
const KEY = 'svc_demo_admin_key_0001';
const admin = { authorization: `Bearer ${KEY}` };
const postgresUrl = inject('postgresUrl');

interface Server { database: OwnDatabase; db: Db; app: FastifyInstance; url: string }

type Json = Record<string, unknown>;

for (const dialect of ['sqlite', 'postgres'] as const) {
  const skip = dialect === 'postgres' && postgresUrl === null;
  (skip ? describe.skip : describe)(`svc promote [${dialect}${skip ? ': SKIPPED, no SVC_TEST_POSTGRES_URL' : ''}]`, () => {
    let staging: Server;
    let production: Server;
    let deploymentId: number;
    const dir = mkdtempSync(join(tmpdir(), 'svc-promote-'));

    const start = async (name: string): Promise<Server> => {
      const database = await createOwnDatabase(dialect === 'sqlite' ? null : postgresUrl, `svc_promote_${name}`);
      const db = openDatabase(database.url);
      await migrateToLatest(db);
      await importFile(db.kysely, DEMO, new Date('2026-11-28T00:00:00Z'));
      const app = await buildApp(testConfig(), { db });
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { database, db, app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
    };
    const call = async (server: Server, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await server.app.inject({
        method, url, headers: { ...admin, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      if (res.statusCode >= 300) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`);
      return { body: res.statusCode === 204 ? undefined : res.json<Json>(), etag: res.headers.etag as string | undefined };
    };
    const exported = async (): Promise<ImportFile> => exportAccounts(staging.db.kysely, new Sealer(testConfig().encryptionKeys), 'demo');
    const auditCount = async (server: Server) => ((await call(server, 'GET', '/api/v1/audit?first=200')).body!.items as unknown[]).length;
    const versions = async (server: Server, publicId: string) => ((await call(server, 'GET', `/api/v1/dashboards/${publicId}/versions`)).body!.items as unknown[]).length;
    const reportCount = async (server: Server) => {
      let count = 0;
      const walk = async (folderId?: number): Promise<void> => {
        const items = (await call(server, 'GET', `/api/v1/deployments/${deploymentId}/workspace?first=200${folderId === undefined ? '' : `&folderId=${folderId}`}`)).body!.items as Array<{ id: number; type: string }>;
        for (const item of items) {
          if (item.type === 'REPORT') count++;
          if (item.type === 'FOLDER') await walk(item.id);
        }
      };
      await walk();
      return count;
    };
    /** Changes a published dashboard the way an author does: read, replace the draft over its ETag, publish. */
    const edit = async (server: Server, publicId: string, change: (draft: Json) => Json) => {
      const read = await call(server, 'GET', `/api/v1/dashboards/${publicId}`);
      const published = read.body!.published as Json;
      const draft = {
        title: published.title, description: published.description, allowEmbed: published.allowEmbed, config: published.config,
        reportSnapshots: (published.reportSnapshots as Json[]).map(({ id: _i, versionNumber: _v, ...s }) => Object.fromEntries(Object.entries(s).filter(([, v]) => v !== null))),
      };
      await call(server, 'PUT', `/api/v1/dashboards/${publicId}/draft`, change(draft), { 'if-match': read.etag! });
      return call(server, 'POST', `/api/v1/dashboards/${publicId}/publish`);
    };
    const editModel = async (server: Server, change: (views: Json[]) => Json[]) => {
      const read = await call(server, 'GET', `/api/v1/deployments/${deploymentId}`);
      return call(server, 'PUT', `/api/v1/deployments/${deploymentId}/model`, { semanticViews: change(read.body!.semanticViews as Json[]) }, { 'if-match': read.etag! });
    };
    const run = (file: ImportFile, more: { dryRun?: boolean; force?: boolean; fetch?: typeof fetch } = {}) =>
      promote({ file, url: production.url, apiKey: KEY, ...more });
    const stepOf = (result: PromoteResult, publicId: string) => result.dashboards.find((d) => d.publicId === publicId);
    const withMeasure = (name: string) => (views: Json[]) => views.map((v) => (v.name === 'orders' ? { ...v, measures: [...(v.measures as Json[]), { name, type: 'sum', column: 'amount', title: name }] } : v));
    const withoutMeasure = (name: string) => (views: Json[]) => views.map((v) => (v.name === 'orders' ? { ...v, measures: (v.measures as Json[]).filter((m) => m.name !== name) } : v));
    const chart = (id: string, x: number, snapshotConfig: Json = {}) => ({ id, type: 'CHART', position: { x, y: 0, w: 6, h: 4 }, config: snapshotConfig });

    beforeAll(async () => {
      staging = await start('staging');
      production = await start('production');
      deploymentId = ((await call(production, 'GET', '/api/v1/deployments')).body!.items as Array<{ id: number }>)[0]!.id;

      // On staging, through the API: two new measures, q1-review retitled with a widget on one of them, and a new
      // dashboard (in the folder Sales / Regions) whose two widgets name their snapshots by REPORT id, crosswise.
      await editModel(staging, (views) => withMeasure('net')(withMeasure('discounted')(views)));
      await edit(staging, 'q1-review', (draft) => ({
        ...draft, title: 'Q1 review, promoted',
        config: { ...(draft.config as Json), widgets: [...((draft.config as Json).widgets as Json[]), chart('q1-discounted', 0)] },
        reportSnapshots: [...(draft.reportSnapshots as Json[]), { title: 'Discounted', kind: 'kpi', meta: { query: { measures: ['orders.discounted'] } } }],
      }));
      const regions = ((await call(staging, 'GET', `/api/v1/deployments/${deploymentId}/workspace?search=Regions&types=FOLDER`)).body!.items as Array<{ id: number }>)[0]!.id;
      const snapshots = [
        { title: 'Order count', kind: 'kpi', meta: { query: { measures: ['orders.count'] } } },
        { title: 'Revenue', kind: 'kpi', meta: { query: { measures: ['orders.revenue'] } } },
      ];
      await call(staging, 'POST', `/api/v1/deployments/${deploymentId}/dashboards`, {
        publicId: 'regional', title: 'Regional', folderId: regions, allowEmbed: true,
        config: { widgets: [chart('count', 0), chart('revenue', 6)] }, reportSnapshots: snapshots,
      });
      const first = await call(staging, 'POST', '/api/v1/dashboards/regional/publish');
      const [countReport, revenueReport] = ((first.body!.published as Json).reportSnapshots as Array<{ reportId: number }>).map((s) => s.reportId);
      // The widget "count" shows the snapshot of report countReport, listed second; "revenue" the first.
      await edit(staging, 'regional', (draft) => ({
        ...draft,
        config: { widgets: [chart('count', 0, { reportId: countReport }), chart('revenue', 6, { reportId: revenueReport }), chart('discounted', 12, { snapshotIndex: 2 })] },
        reportSnapshots: [
          { ...snapshots[1], reportId: revenueReport }, { ...snapshots[0], reportId: countReport },
          { title: 'Discounted', kind: 'kpi', meta: { query: { measures: ['orders.discounted'] } } },
        ],
      }));
    });

    afterAll(async () => {
      for (const server of [staging, production]) {
        if (server === undefined) continue;
        await server.app.close();
        await server.db.close();
        await server.database.drop();
      }
      rmSync(dir, { recursive: true, force: true });
    });

    it('writes a widget\'s REPORT id as the position of its snapshot, which means the same in every database', async () => {
      const file = await exported();
      const regional = findDashboard(file, 'regional')!;
      expect((regional.config!.widgets as Json[]).map((w) => w.config)).toEqual([{ snapshotIndex: 1 }, { snapshotIndex: 0 }, { snapshotIndex: 2 }]);
    });

    it('--dry-run prints the plan and changes nothing', async () => {
      const before = { audit: await auditCount(production), q1: await versions(production, 'q1-review'), reports: await reportCount(production) };
      const result = await run(await exported(), { dryRun: true });
      expect(result.dryRun).toBe(true);
      expect(result.deployments).toEqual([expect.objectContaining({ deployment: 'Production', action: 'replace', fromRevision: 1 })]);
      expect(result.deployments[0]!.toRevision).toBeUndefined();
      expect(stepOf(result, 'q1-review')).toMatchObject({ action: 'change', fromVersion: 1 });
      expect(stepOf(result, 'q1-review')!.why).toContain('title');
      expect(stepOf(result, 'regional')).toMatchObject({ action: 'create', folder: 'Sales / Regions' });
      expect(stepOf(result, 'sales-performance')).toMatchObject({ action: 'none' });
      expect(result.counts).toEqual({ modelsReplaced: 1, created: 1, changed: 1, archived: 0, unchanged: 3 });
      expect(await auditCount(production)).toBe(before.audit);
      expect(await versions(production, 'q1-review')).toBe(before.q1);
      expect(await reportCount(production)).toBe(before.reports);
      expect((await call(production, 'GET', '/api/v1/dashboards/regional').catch((e: Error) => e)).toString()).toContain('404');
    });

    it('promotes the model and the changed dashboards: viewers see them, the audit log and the versions record them', async () => {
      const before = { audit: await auditCount(production), q1: await versions(production, 'q1-review'), sales: await versions(production, 'sales-performance'), reports: await reportCount(production) };
      const result = await run(await exported());
      expect(result.dryRun).toBe(false);
      expect(result.deployments[0]).toMatchObject({ action: 'replace', fromRevision: 1, toRevision: 2 });
      expect(stepOf(result, 'q1-review')).toMatchObject({ action: 'change', fromVersion: 1, toVersion: 2 });
      expect(stepOf(result, 'regional')).toMatchObject({ action: 'create', folder: 'Sales / Regions', toVersion: 1 });

      // Viewers: the new title, and the new widget runs on the promoted model.
      const viewer = (await mintViewer(production.app, KEY, { deploymentId, securityContext: { tenant: 'customer-a' } })).headers;
      const q1 = await production.app.inject({ url: '/api/v1/embed/dashboard/q1-review', headers: viewer });
      expect(q1.statusCode, q1.body).toBe(200);
      expect(q1.json()).toMatchObject({ title: 'Q1 review, promoted', versionNumber: 2 });
      const widget = async (publicId: string, widgetId: string) => {
        const res = await production.app.inject({ method: 'POST', url: `/api/v1/embed/dashboard/${publicId}/widgets/${widgetId}/data`, headers: { ...viewer, 'content-type': 'application/json' }, payload: '{}' });
        expect(res.statusCode, res.body).toBe(200);
        return res.json<{ columns: Array<{ member: string }> }>().columns.map((c) => c.member);
      };
      expect(await widget('q1-review', 'q1-discounted')).toEqual(['orders.discounted']);
      // Each widget of the new dashboard shows the snapshot it showed on staging, though REPORT ids differ.
      expect(await widget('regional', 'count')).toEqual(['orders.count']);
      expect(await widget('regional', 'revenue')).toEqual(['orders.revenue']);
      expect(await widget('regional', 'discounted')).toEqual(['orders.discounted']);
      const regional = (await call(production, 'GET', '/api/v1/dashboards/regional')).body!;
      const folder = ((await call(production, 'GET', `/api/v1/deployments/${deploymentId}/workspace?search=Regional&types=WORKBOOK`)).body!.items as Array<{ folderPath: Array<{ name: string }> }>)[0]!;
      expect(folder.folderPath.map((f) => f.name)).toEqual(['Sales', 'Regions']);
      expect(regional).toMatchObject({ status: 'published', draft: null });

      // The audit log: each change, by the key's admin. Versions: one more for the changed dashboard, none for the others.
      const audit = ((await call(production, 'GET', '/api/v1/audit?first=200')).body!.items as Array<{ action: string; target: { id: string }; actor: { email: string } }>).slice(0, (await auditCount(production)) - before.audit);
      expect(audit.map((e) => `${e.action} ${e.target.id}`).reverse()).toEqual([
        `model.replace ${deploymentId}`, 'dashboard.draft q1-review', 'dashboard.publish q1-review', 'dashboard.create regional', 'dashboard.publish regional',
      ]);
      expect(new Set(audit.map((e) => e.actor.email))).toEqual(new Set(['alice@demo.test']));
      expect(await versions(production, 'q1-review')).toBe(before.q1 + 1);
      expect(await versions(production, 'sales-performance')).toBe(before.sales);
      // q1-review kept its five REPORT items and got one for its new chart; regional got one for each of its three.
      expect(await reportCount(production)).toBe(before.reports + 1 + 3);
    });

    it('changes nothing when run again', async () => {
      const before = { audit: await auditCount(production), reports: await reportCount(production) };
      const result = await run(await exported());
      expect(result.deployments[0]).toMatchObject({ action: 'none' });
      expect(result.dashboards.filter((d) => d.action !== 'none')).toEqual([]);
      expect(result.counts).toEqual({ modelsReplaced: 0, created: 0, changed: 0, archived: 0, unchanged: 5 });
      expect(await auditCount(production)).toBe(before.audit);
      expect(await reportCount(production)).toBe(before.reports);
    });

    it('creates a dashboard at the root when production has no folder of its path, and says so', async () => {
      const file = await exported();
      const moved = structuredClone(file);
      // The file's folder "Regions" renamed: production has no "Sales / Elsewhere".
      renameFolder(moved, 'Regions', 'Elsewhere');
      const dashboard = findDashboard(moved, 'regional')!;
      dashboard.publicId = 'regional-copy';
      const result = await run(moved);
      expect(stepOf(result, 'regional-copy')).toMatchObject({ action: 'create', folder: '(root)' });
      expect(stepOf(result, 'regional-copy')!.why).toContain('Sales / Elsewhere');
      const listed = ((await call(production, 'GET', `/api/v1/deployments/${deploymentId}/workspace?types=WORKBOOK`)).body!.items as Array<{ name: string }>).map((i) => i.name);
      expect(listed).toContain('Regional');
    });

    it('surfaces the 412 of a production changed between the read and the write, naming the dashboard, and writes nothing of it', async () => {
      await edit(staging, 'company-overview', (draft) => ({ ...draft, title: 'Company overview, staged' }));
      const file = await exported();
      // Someone saves company-overview's draft in production after the promotion read it and before it writes.
      const racing: typeof fetch = async (input, init) => {
        if (init?.method === 'PUT' && String(input).endsWith('/api/v1/dashboards/company-overview/draft')) {
          await edit(production, 'company-overview', (draft) => ({ ...draft, description: 'edited in production meanwhile' }));
        }
        return fetch(input, init);
      };
      const versionsBefore = await versions(production, 'company-overview');
      const failed = await run(file, { fetch: racing }).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(PromoteError);
      expect((failed as PromoteError).message).toContain('dashboard company-overview');
      expect((failed as PromoteError).message).toContain('412');
      expect((failed as PromoteError).answer).toMatchObject({ error: { status: 412, code: 'precondition_failed' } });
      // Production kept its own edit (one version more: the racing publish), not the promoted title.
      expect(await versions(production, 'company-overview')).toBe(versionsBefore + 1);
      expect(((await call(production, 'GET', '/api/v1/dashboards/company-overview')).body!.published as Json).title).toBe('Company overview');
    });

    it('refuses a model change that breaks a production dashboard, naming it, until --force', async () => {
      // A dashboard only production has, on the measure "net"; staging then drops "net".
      await call(production, 'POST', `/api/v1/deployments/${deploymentId}/dashboards`, {
        publicId: 'production-only', title: 'Production only', config: { widgets: [chart('net', 0)] },
        reportSnapshots: [{ title: 'Net', kind: 'kpi', meta: { query: { measures: ['orders.net'] } } }],
      });
      await call(production, 'POST', '/api/v1/dashboards/production-only/publish');
      await editModel(staging, withoutMeasure('net'));
      const file = await exported();
      const revision = ((await call(production, 'GET', `/api/v1/deployments/${deploymentId}`)).body!).modelRevision;
      const refused = await run(file).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(PromoteError);
      expect((refused as PromoteError).message).toContain('deployment "Production"');
      expect((refused as PromoteError).message).toContain('production-only/net');
      expect((refused as PromoteError).answer).toMatchObject({ error: { status: 409, details: [expect.objectContaining({ publicId: 'production-only', widgetId: 'net' })] } });
      expect(((await call(production, 'GET', `/api/v1/deployments/${deploymentId}`)).body!).modelRevision).toBe(revision);

      const forced = await run(file, { force: true });
      expect(forced.deployments[0]).toMatchObject({ action: 'replace', toRevision: (revision as number) + 1 });
      const entry = ((await call(production, 'GET', '/api/v1/audit?first=200')).body!.items as Array<{ action: string; detail: Json }>).find((e) => e.action === 'model.replace')!;
      expect(entry.detail).toMatchObject({ forced: true });
      expect(stepOf(forced, 'company-overview')).toMatchObject({ action: 'change' });
    });

    it('names a deployment production does not have, and changes nothing', async () => {
      const file = await exported();
      file.accounts[0]!.deployments![0]!.name = 'Staging only';
      const before = await auditCount(production);
      const failed = await run(file).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(PromoteError);
      expect((failed as PromoteError).message).toContain('deployment "Staging only"');
      expect(await auditCount(production)).toBe(before);
    });

    it('runs as svc promote: the plan as JSON on stdout, and an error on stderr with exit 1 naming the dashboard and the API\'s answer', async () => {
      await edit(staging, 'sales-performance', (draft) => ({ ...draft, description: 'promoted by the CLI' }));
      const path = join(dir, 'staging.json');
      writeFileSync(path, JSON.stringify(await exported()));
      const before = await auditCount(production);
      const planned = await runSvc(['promote', path, '--url', production.url, '--dry-run'], { SVC_API_KEY: KEY });
      expect(planned.code, planned.stderr).toBe(0);
      const plan = JSON.parse(planned.stdout) as PromoteResult;
      expect(plan).toMatchObject({ dryRun: true, account: 'demo' });
      expect(plan.dashboards.find((d) => d.publicId === 'sales-performance')).toMatchObject({ action: 'change' });
      expect(await auditCount(production)).toBe(before);

      const done = await runSvc(['promote', path, '--url', production.url], { SVC_API_KEY: KEY });
      expect(done.code, done.stderr).toBe(0);
      expect((JSON.parse(done.stdout) as PromoteResult).dashboards.find((d) => d.publicId === 'sales-performance')).toMatchObject({ action: 'change', toVersion: 2 });

      // A member's key: production refuses the model read (admins only), and the error says which and what svc answered.
      const member = await runSvc(['promote', path, '--url', production.url], { SVC_API_KEY: 'svc_demo_member_key_0001' });
      expect(member.code).toBe(1);
      expect(member.stdout).toBe('');
      expect(member.stderr).toContain('svc promote: deployment "Production"');
      expect(member.stderr).toContain('svc answered: {"error":{"status":403');

      const noKey = await runSvc(['promote', path, '--url', production.url], { SVC_API_KEY: '' });
      expect(noKey.code).toBe(1);
      expect(noKey.stderr).toContain('SVC_API_KEY is not set');
    }, 60_000);

    it('forces a model change whose broken widgets are all on dashboards the same promotion replaces, and says so', async () => {
      // Production's own dashboards on "discounted" or "net" are archived; staging drops "discounted" from its
      // dashboards and then from the model.
      for (const publicId of ['production-only', 'regional-copy']) await call(production, 'DELETE', `/api/v1/dashboards/${publicId}`);
      await edit(staging, 'q1-review', (draft) => ({
        ...draft, config: { ...(draft.config as Json), widgets: ((draft.config as Json).widgets as Json[]).filter((w) => w.id !== 'q1-discounted') },
        reportSnapshots: (draft.reportSnapshots as Json[]).filter((r) => r.title !== 'Discounted'),
      }));
      await edit(staging, 'regional', (draft) => ({
        ...draft, config: { widgets: ((draft.config as Json).widgets as Json[]).filter((w) => w.id !== 'discounted') },
        reportSnapshots: (draft.reportSnapshots as Json[]).filter((r) => r.title !== 'Discounted'),
      }));
      await editModel(staging, withoutMeasure('discounted'));
      const result = await run(await exported());
      expect(result.deployments[0]).toMatchObject({ action: 'replace' });
      expect(new Set(result.deployments[0]!.forced!.map((w) => w.publicId))).toEqual(new Set(['q1-review', 'regional']));
      expect(stepOf(result, 'q1-review')).toMatchObject({ action: 'change' });
      expect(stepOf(result, 'regional')).toMatchObject({ action: 'change' });
      const viewer = (await mintViewer(production.app, KEY, { deploymentId, securityContext: { tenant: 'customer-a' } })).headers;
      const res = await production.app.inject({ method: 'POST', url: '/api/v1/embed/dashboard/regional/widgets/revenue/data', headers: { ...viewer, 'content-type': 'application/json' }, payload: '{}' });
      expect(res.statusCode, res.body).toBe(200);
      expect((await run(await exported())).counts).toMatchObject({ modelsReplaced: 0, created: 0, changed: 0 });
    });

    it('keeps production\'s password for a data source exported with ****, and refuses one for another URL', async () => {
      const setSource = async (server: Server, dataSource: Json) => {
        const read = await call(server, 'GET', `/api/v1/deployments/${deploymentId}`);
        await call(server, 'PUT', `/api/v1/deployments/${deploymentId}/model?force=true`, { semanticViews: read.body!.semanticViews, dataSource }, { 'if-match': read.etag! });
      };
      const storedSource = async () => {
        const row = await production.db.kysely.selectFrom('deployments').select('data_source').where('id', '=', deploymentId).executeTakeFirstOrThrow();
        return openDataSource(row.data_source, new Sealer(testConfig().encryptionKeys)) as unknown as Json;
      };
      await setSource(production, { type: 'postgres', url: 'postgres://svc:production-pw@db.internal/wh' });
      await setSource(staging, { type: 'postgres', url: 'postgres://svc:staging-pw@db.internal/wh' });
      // The same source but for the password: nothing to change, and production keeps its password.
      const file = await exported();
      expect(JSON.stringify(file)).not.toContain('staging-pw');
      expect((await run(file)).deployments[0]).toMatchObject({ action: 'none' });
      // Another schema: sent with ****, which keeps production's password.
      await setSource(staging, { type: 'postgres', url: 'postgres://svc:staging-pw@db.internal/wh', schema: 'analytics' });
      expect((await run(await exported())).deployments[0]).toMatchObject({ action: 'replace', dataSource: true });
      expect(await storedSource()).toEqual({ type: 'postgres', url: 'postgres://svc:production-pw@db.internal/wh', schema: 'analytics' });
      // Another host: a **** password cannot be production's, and svc refuses it, naming the field.
      await setSource(staging, { type: 'postgres', url: 'postgres://svc:staging-pw@staging-db.internal/wh', schema: 'analytics' });
      const refused = await run(await exported()).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(PromoteError);
      expect((refused as PromoteError).message).toContain('deployment "Production"');
      expect((refused as PromoteError).answer).toMatchObject({ error: { status: 400, field: 'dataSource.url' } });
      expect(await storedSource()).toEqual({ type: 'postgres', url: 'postgres://svc:production-pw@db.internal/wh', schema: 'analytics' });
    });
  });
}

function findDashboard(file: ImportFile, publicId: string) {
  let found: ImportItem['dashboard'];
  const walk = (items: ImportItem[]) => items.forEach((item) => {
    if (item.dashboard?.publicId === publicId) found = item.dashboard;
    walk(item.children ?? []);
  });
  for (const deployment of file.accounts[0]!.deployments ?? []) walk(deployment.items ?? []);
  return found;
}

function renameFolder(file: ImportFile, from: string, to: string) {
  const walk = (items: ImportItem[]) => items.forEach((item) => {
    if (item.type === 'FOLDER' && item.name === from) item.name = to;
    walk(item.children ?? []);
  });
  for (const deployment of file.accounts[0]!.deployments ?? []) walk(deployment.items ?? []);
}
