import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectNoBlocking } from './axe.js';
import { hasChromium, launchChromium } from './browser.js';
import type { Chromium } from './browser.js';
import { callApi, demoUsers, demoWithMemberPassword } from './console-harness.js';
import { DEMO_ADMIN_KEY, startSvc } from './embed-harness.js';
import type { RunningSvc } from './embed-harness.js';

// Issue 34, the workspace's authoring actions, in Chromium on the demo account, on both databases: a never-published
// draft opened from the list by its editor; Copy then open the copy; Move into another folder and find it there; a
// member without an editor grant (the demo's bob: a viewer of Sales through his group) is offered View, not Edit,
// Rename, Move nor New in that folder, and the editor's address shows him the dashboard read-only, saying why.
// axe finds nothing serious, light and dark.

const MEMBER_PASSWORD = 'member-password-3';
const { admin, member } = demoUsers();

const postgresUrl = inject('postgresUrl');
let browser: Chromium | undefined;

beforeAll(async () => {
  if (hasChromium) browser = await launchChromium({ timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

const itemNames = (page: Page) => page.locator('ul.items > li .name').allTextContents();

for (const dialect of ['sqlite', 'postgres'] as const) {
  const skipped = !hasChromium ? 'no Chromium' : dialect === 'postgres' && postgresUrl === null ? 'no SVC_TEST_POSTGRES_URL' : undefined;
  const title = `the console's workspace actions in Chromium [${dialect}${skipped === undefined ? '' : `: SKIPPED, ${skipped}`}]`;
  (skipped === undefined ? describe : describe.skip)(title, () => {
    let svc: RunningSvc;
    let page: Page;
    const api = async (method: string, path: string, body?: unknown) => {
      const { status, body: answer } = await callApi(svc.origin, DEMO_ADMIN_KEY, method, path, body);
      return { status, body: answer! };
    };
    const folderNamed = async (name: string, folderId?: number) => {
      const { body } = await api('GET', `/api/v1/deployments/${svc.refs.prod}/workspace?first=200${folderId === undefined ? '' : `&folderId=${folderId}`}`);
      return (body as unknown as { items: Array<{ id: number; name: string; type: string; folderId: number | null }> }).items.find((i) => i.name === name);
    };
    const signIn = async (email: string, password: string) => {
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Production', level: 1 }).waitFor();
    };
    const toRoot = async () => {
      await page.getByRole('navigation', { name: 'Folders' }).getByRole('link', { name: 'Production' }).click();
      await page.getByRole('heading', { name: 'Production', level: 1 }).waitFor();
    };
    const axeBoth = async (what: string) => {
      await expectNoBlocking(page, what);
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoBlocking(page, `${what}, dark`);
      await page.emulateMedia({ colorScheme: 'light' });
    };

    beforeAll(async () => {
      svc = await startSvc({ account: demoWithMemberPassword(MEMBER_PASSWORD), adminKey: DEMO_ADMIN_KEY, ...(dialect === 'postgres' ? { postgresUrl: postgresUrl! } : {}) });
      page = await browser!.context.newPage();
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(`${svc.origin}/console`);
      await signIn(admin.email, admin.password);
    }, 60_000);

    afterAll(async () => {
      await page?.close();
      await svc?.close();
    }, 120_000);

    it('opens a never-published draft made through the API from the list, by its editor', async () => {
      const sales = await folderNamed('Sales');
      const made = await api('POST', `/api/v1/deployments/${svc.refs.prod}/dashboards`, { title: 'Pipeline draft', folderId: sales!.id, config: { widgets: [] } });
      expect(made.status).toBe(201);
      await page.getByRole('button', { name: 'Sales', exact: true }).click();
      await page.getByRole('heading', { name: 'Sales', level: 1 }).waitFor();
      const row = page.locator('ul.items > li', { hasText: 'Pipeline draft' });
      await expect.poll(() => row.locator('.badge').first().textContent()).toBe('Draft');
      await page.getByRole('button', { name: 'Edit Pipeline draft' }).click();
      await page.getByRole('heading', { name: 'Pipeline draft', level: 1 }).waitFor();
      expect(new URL(page.url()).searchParams.get('dashboard')).toBe(made.body.publicId);
      expect(await page.getByRole('button', { name: 'Publish' }).count()).toBe(1);
      // Back to the folder it was opened from.
      await page.getByRole('button', { name: 'Back to the workspace' }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get('folder')).toBe(String(sales!.id));
      await expect.poll(() => itemNames(page)).toContain('Pipeline draft');
      await page.goto(`${svc.origin}/console`);
      await page.getByRole('heading', { name: 'Production', level: 1 }).waitFor();
    });

    it('copies a dashboard from its row and opens the copy in the editor', async () => {
      await page.getByRole('button', { name: 'Copy Company overview' }).click();
      const name = page.getByLabel('Name of the copy of Company overview');
      expect(await name.inputValue()).toBe('Copy of Company overview');
      await name.fill('Overview for the board');
      await page.getByRole('form', { name: 'Copy Company overview' }).getByRole('button', { name: 'Copy' }).click();
      await page.getByRole('heading', { name: 'Overview for the board', level: 1 }).waitFor();
      const publicId = new URL(page.url()).searchParams.get('dashboard')!;
      const copy = await api('GET', `/api/v1/dashboards/${publicId}`);
      expect(copy.body).toMatchObject({ status: 'draft', published: null, canEdit: true });
      const source = await api('GET', '/api/v1/dashboards/company-overview');
      expect((copy.body.draft as { config: { widgets: unknown[] } }).config.widgets.length)
        .toBe((source.body.published as { config: { widgets: unknown[] } }).config.widgets.length);
      await page.getByRole('button', { name: 'Back to the workspace' }).click();
      await page.getByRole('heading', { name: 'Production', level: 1 }).waitFor();
      await expect.poll(() => itemNames(page)).toContain('Overview for the board');
    });

    it('moves a dashboard into another folder, where it is found; axe finds nothing serious with the form open', async () => {
      await page.getByRole('button', { name: 'Move Overview for the board' }).click();
      await page.getByLabel('Move Overview for the board to').selectOption({ label: 'Finance' });
      await axeBoth('workspace with a move form');
      await page.getByRole('form', { name: 'Move Overview for the board' }).getByRole('button', { name: 'Move' }).click();
      await expect.poll(() => itemNames(page)).not.toContain('Overview for the board');
      expect(await page.getByRole('status').filter({ hasText: 'Moved' }).textContent()).toBe('Moved Overview for the board to Finance.');
      const finance = await folderNamed('Finance');
      expect((await folderNamed('Overview for the board', finance!.id))?.folderId).toBe(finance!.id);
      await page.getByRole('button', { name: 'Finance', exact: true }).click();
      await page.getByRole('heading', { name: 'Finance', level: 1 }).waitFor();
      await expect.poll(() => itemNames(page)).toContain('Overview for the board');
      await toRoot();
    });

    it('offers a member without an editor grant View, not Edit, Rename, Move nor New, and shows the editor\'s address read-only', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signIn(member.email, MEMBER_PASSWORD);
      // The root is every member's: New dashboard and New folder are there.
      await page.getByRole('button', { name: 'New dashboard' }).waitFor();
      await page.getByRole('button', { name: 'Sales', exact: true }).click();
      await page.getByRole('heading', { name: 'Sales', level: 1 }).waitFor();
      const view = page.getByRole('button', { name: 'View Q1 review' });
      await view.waitFor();
      expect(await page.getByRole('button', { name: 'Edit Q1 review' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: /^(Rename|Move) Q1 review/ }).count()).toBe(0);
      // His own report there is his to rename and move; a move into a folder he only reads is refused, in words.
      await page.getByRole('button', { name: 'Move Pipeline' }).click();
      await page.getByLabel('Move Pipeline to').selectOption({ label: 'Regions' });
      await page.getByRole('form', { name: 'Move Pipeline' }).getByRole('button', { name: 'Move' }).click();
      const pipeline = (await folderNamed('Pipeline', (await folderNamed('Sales'))!.id))!;
      await expect.poll(() => page.locator(`#ws-move-${pipeline.id}-error`).textContent()).toMatch(/^It could not be moved: .*not one you may change/);
      expect(await page.getByLabel('Move Pipeline to').inputValue()).not.toBe('0');
      await page.getByRole('form', { name: 'Move Pipeline' }).getByRole('button', { name: 'Cancel' }).click();
      expect(await page.getByRole('button', { name: 'New dashboard' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'New folder' }).count()).toBe(0);
      // The draft made by the admin in Sales is not his to open: no address of it reaches his page.
      await expect.poll(() => itemNames(page)).toContain('Pipeline draft');
      expect(await page.getByRole('button', { name: /^(View|Edit|Copy) Pipeline draft/ }).count()).toBe(0);
      await axeBoth('workspace, a member without an editor grant');

      await view.click();
      await page.getByRole('heading', { name: 'Q1 review', level: 1 }).waitFor();
      expect(await page.getByRole('note').textContent()).toContain('You can read this dashboard but not change it');
      expect(await page.getByRole('button', { name: 'Publish' }).count()).toBe(0);
      expect(await page.getByLabel('Dashboard title').count()).toBe(0);
      await axeBoth('editor, read-only');
      // Typed in directly, the editor's address shows the same.
      await page.goto(`${svc.origin}/console?deployment=${svc.refs.prod}&dashboard=q1-review`);
      await page.getByRole('heading', { name: 'Q1 review', level: 1 }).waitFor();
      expect(await page.getByRole('note').textContent()).toContain('not change it');
      expect(await page.getByRole('button', { name: 'Publish' }).count()).toBe(0);
    });
  });
}
