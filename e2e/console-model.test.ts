import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectNoBlocking } from './axe.js';
import { hasChromium, launchChromium } from './browser.js';
import type { Chromium } from './browser.js';
import { callApi, demoUsers, demoWithMemberPassword } from './console-harness.js';
import { DEMO_ADMIN_KEY, startSvc } from './embed-harness.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../apps/server/src/core/core.config.js';
import { buildDue } from '../apps/server/src/data/preagg/preagg.scheduler.js';
import { RollupStore } from '../apps/server/src/data/preagg/preagg.store.js';
import { ensureDemoWarehouseSqlite } from '../apps/server/src/data/warehouse/warehouse.demo.js';
import { WarehouseRegistry } from '../apps/server/src/data/warehouse/warehouse.registry.js';
import type { RunningSvc } from './embed-harness.js';

// Issue 34, part 6: the console's model page, in Chromium on the demo account, on both databases. Every platform
// user reads the views (members, joins, pre-aggregations); an admin also reads their access policies and edits the
// views' JSON, checked as it is typed by svc's own checks (POST .../model/check), with what a save changes and the
// published widgets it would break, saved over the revision read; a save by someone else in between is a conflict,
// shown, with the text kept. axe finds nothing serious.

const MEMBER_PASSWORD = 'member-password-2';
const { admin, member } = demoUsers();

type View = { name: string; measures: Array<Record<string, unknown>>; [key: string]: unknown };

/** The demo with its member's password, its pre-aggregations in UTC only: three builds instead of nine, for the build test. */
function demoInUtc() {
  const account = demoWithMemberPassword(MEMBER_PASSWORD);
  const views = (account as unknown as { deployments: Array<{ semanticViews: Array<{ preAggregations?: Array<{ timezones?: string[] }> }> }> }).deployments[0]!.semanticViews;
  for (const view of views) for (const rollup of view.preAggregations ?? []) rollup.timezones = ['UTC'];
  return account;
}

const postgresUrl = inject('postgresUrl');
let browser: Chromium | undefined;

beforeAll(async () => {
  if (hasChromium) browser = await launchChromium({ timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  const skipped = !hasChromium ? 'no Chromium' : dialect === 'postgres' && postgresUrl === null ? 'no SVC_TEST_POSTGRES_URL' : undefined;
  const title = `the console's model page in Chromium [${dialect}${skipped === undefined ? '' : `: SKIPPED, ${skipped}`}]`;
  (skipped === undefined ? describe : describe.skip)(title, () => {
    let svc: RunningSvc;
    let page: Page;
    let rollupDir: string | undefined;

    const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const { status, body: answer } = await callApi(svc.origin, DEMO_ADMIN_KEY, method, path, body, headers);
      return { status, body: answer! };
    };
    const model = async () => (await api('GET', `/api/v1/deployments/${svc.refs.prod}`)).body as { modelRevision: number; semanticViews: View[] };
    const editor = () => page.getByLabel('Semantic views (JSON)');
    const checkResult = () => page.locator('#model-check');
    /** The editor's views, changed by `change`, typed back in. */
    const edit = async (change: (views: View[]) => void) => {
      const views = JSON.parse(await editor().inputValue()) as View[];
      change(views);
      await editor().fill(JSON.stringify(views, null, 2));
    };

    beforeAll(async () => {
      rollupDir = mkdtempSync(join(tmpdir(), 'svc-console-rollups-'));
      svc = await startSvc({ account: demoInUtc(), adminKey: DEMO_ADMIN_KEY, data: { preAggregationDir: rollupDir }, ...(dialect === 'postgres' ? { postgresUrl: postgresUrl! } : {}) });
      page = await browser!.context.newPage();
      await page.setViewportSize({ width: 1280, height: 900 });
    }, 60_000);

    afterAll(async () => {
      await page?.close();
      await svc?.close();
      if (rollupDir !== undefined) rmSync(rollupDir, { recursive: true, force: true });
    }, 120_000);

    it('lists the views with their members, joins, pre-aggregations and (for an admin) access policies; axe finds nothing serious', async () => {
      await page.goto(`${svc.origin}/console`);
      await page.getByLabel('Email').fill(admin.email);
      await page.getByLabel('Password').fill(admin.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Model' }).click();
      await page.getByRole('heading', { name: 'Model', level: 1 }).waitFor();
      const views = await model();
      await expect.poll(() => page.locator('details.view-card').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-view'))))
        .toEqual(views.semanticViews.map((v) => v.name));
      const orders = page.locator('details.view-card[data-view="orders"]');
      await orders.locator('summary').click();
      await expect.poll(() => orders.locator('table').textContent()).toContain('orders.revenue');
      // The demo's orders carry a tenant policy: the admin sees it.
      expect(views.semanticViews.find((v) => v.name === 'orders')!.accessPolicy).toBeDefined();
      expect(await orders.textContent()).toContain('securityContext.tenant');
      await expectNoBlocking(page, 'model page');
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoBlocking(page, 'model page, dark');
      await page.emulateMedia({ colorScheme: 'light' });
    });

    it('shows each pre-aggregation\'s build status: not built and why, then built with its time once `svc preagg build` ran', async () => {
      const orders = page.locator('details.view-card[data-view="orders"]');
      const build = (rollup: string, timezone: string) => orders.locator(`li:has(> code:text-is("${rollup}")) li.build[data-timezone="${timezone}"]`);
      await expect.poll(() => build('monthly', 'UTC').textContent()).toContain('Not built');
      expect(await build('monthly', 'UTC').textContent()).toContain('due: never built');
      // The builder, as `svc preagg build` runs it, on svc's database and pre-aggregation directory.
      const warehouses = new WarehouseRegistry({ timeoutMs: 60_000, demoPath: () => ensureDemoWarehouseSqlite(loadConfig().data.demoWarehousePath) });
      const store = new RollupStore(rollupDir!);
      try {
        const reports = await buildDue({ db: svc.db, warehouses, store, timeoutMs: 60_000, now: () => new Date() }, { deploymentId: svc.refs.prod! });
        expect(reports.filter((r) => r.status !== 'built')).toEqual([]);
      } finally {
        store.close();
        await warehouses.close();
      }
      const { body } = await api('GET', `/api/v1/deployments/${svc.refs.prod}/pre-aggregations`);
      const daily = (body as unknown as { items: Array<{ name: string; timezone: string; builtAt: string; partitions: unknown[] }> }).items.find((b) => b.name === 'daily' && b.timezone === 'UTC')!;
      await page.reload();
      await page.getByRole('heading', { name: 'Model', level: 1 }).waitFor();
      await orders.locator('summary').click();
      await expect.poll(() => build('daily', 'UTC').getAttribute('data-built')).toBe('true');
      const shown = build('daily', 'UTC');
      expect(await shown.textContent()).toContain('Built');
      expect(await shown.textContent()).toContain(`${daily.partitions.length} partitions`);
      expect(await shown.textContent()).toContain('next due');
      expect(await shown.locator('time').getAttribute('datetime')).toBe(daily.builtAt);
      expect(await orders.locator('li.build[data-built="false"]').count()).toBe(0);
      await expectNoBlocking(page, 'model page with builds');
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoBlocking(page, 'model page with builds, dark');
      await page.emulateMedia({ colorScheme: 'light' });
    }, 120_000);

    it('checks as the admin types: a syntax error by line and column, svc\'s refusal at its JSON path, and saves nothing', async () => {
      const before = await editor().inputValue();
      await editor().fill(before.replace('"name": "orders"', '"name": "orders",,'));
      await expect.poll(() => checkResult().textContent()).toMatch(/^Not JSON yet: line \d+ column \d+: /);
      expect(await editor().getAttribute('aria-invalid')).toBe('true');
      expect(await page.getByRole('button', { name: 'Save the model' }).isDisabled()).toBe(true);

      await editor().fill(before.replace('"name": "orders"', '"name": "or ders"'));
      await expect.poll(() => checkResult().textContent(), { timeout: 10_000 }).toMatch(/^semanticViews\[0\]\.name: /);
      await page.getByRole('button', { name: 'Discard changes' }).click();
      expect(await editor().inputValue()).toBe(before);
      expect((await model()).modelRevision).toBe(1);
    });

    it('shows what a save changes and the widgets it would break, and saves a change over the revision read', async () => {
      // Removing revenue would break the demo's published charts on it: listed, and the save asks again.
      await edit((views) => {
        const orders = views.find((v) => v.name === 'orders')!;
        orders.measures = orders.measures.filter((m) => m.name !== 'revenue');
        orders.preAggregations = [];
      });
      await expect.poll(() => checkResult().textContent(), { timeout: 10_000 }).toMatch(/It would break \d+ published widgets/);
      expect(await checkResult().textContent()).toContain('removed: revenue');
      await page.getByRole('button', { name: 'Save the model' }).click();
      await page.getByRole('button', { name: /^Save anyway, breaking \d+ widgets$/ }).waitFor();
      await page.getByRole('button', { name: 'Discard changes' }).click();

      await edit((views) => {
        views.find((v) => v.name === 'orders')!.measures.push({ name: 'discounted', type: 'sum', column: 'amount', title: 'Discounted' });
      });
      await expect.poll(() => checkResult().textContent(), { timeout: 10_000 }).toContain('added: discounted');
      expect(await checkResult().textContent()).toContain('No published widget breaks.');
      await page.getByRole('button', { name: 'Save the model' }).click();
      await expect.poll(async () => (await model()).modelRevision, { timeout: 10_000 }).toBe(2);
      expect((await model()).semanticViews.find((v) => v.name === 'orders')!.measures.map((m) => m.name)).toContain('discounted');
      // The page reads the new model: its revision, the member in the views.
      await expect.poll(() => page.locator('.model .hint').first().textContent()).toContain('Revision 2');
      await expect.poll(() => page.locator('details.view-card[data-view="orders"] table').textContent()).toContain('orders.discounted');
      const audit = (await api('GET', '/api/v1/audit?first=1')).body.items as Array<{ action: string; toVersion: number }>;
      expect(audit[0]).toMatchObject({ action: 'model.replace', toVersion: 2 });
    });

    it('shows a conflict when someone else saved in between, keeps the text, and reloads theirs on request', async () => {
      await edit((views) => {
        views.find((v) => v.name === 'orders')!.measures.push({ name: 'mine', type: 'sum', column: 'amount' });
      });
      await expect.poll(() => checkResult().textContent(), { timeout: 10_000 }).toContain('added: mine');
      const typed = await editor().inputValue();
      // Another admin's save, through the API.
      const theirs = await model();
      theirs.semanticViews.find((v) => v.name === 'orders')!.measures.push({ name: 'theirs', type: 'sum', column: 'amount' });
      expect((await api('PUT', `/api/v1/deployments/${svc.refs.prod}/model`, { semanticViews: theirs.semanticViews }, { 'if-match': '"model-2"' })).status).toBe(200);

      await page.getByRole('button', { name: 'Save the model' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('Someone else saved the model');
      expect(await editor().inputValue()).toBe(typed);
      expect((await model()).modelRevision).toBe(3);
      await page.getByRole('button', { name: 'Reload their model' }).click();
      await expect.poll(async () => editor().inputValue()).toContain('"theirs"');
      expect(await editor().inputValue()).not.toContain('"mine"');
    });

    it('shows a member the views without their policies, and no editor', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Email').fill(member.email);
      await page.getByLabel('Password').fill(MEMBER_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Model', level: 1 }).waitFor();
      await page.locator('details.view-card[data-view="orders"]').waitFor();
      expect(await page.locator('.model').textContent()).not.toContain('Access policies');
      expect(await page.getByLabel('Semantic views (JSON)').count()).toBe(0);
      await expectNoBlocking(page, 'model page, member');
    });
  });
}

