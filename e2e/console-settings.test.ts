import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { expectNoBlocking } from './axe.js';
import { hasChromium, launchChromium } from './browser.js';
import type { Chromium } from './browser.js';
import { callApi, demoUsers, demoWithMemberPassword } from './console-harness.js';
import { DEMO_ADMIN_KEY, startSvc } from './embed-harness.js';
import type { RunningSvc } from './embed-harness.js';

// Issue 34, part 5: the console's embedding settings, in Chromium on the demo account (as `npm start` loads it), on
// both databases. The admin changes the allowed origins, copies a Generate Session snippet that runs as written in
// curl, Node and Python, manages the embed tenants and their viewers, webhook endpoints, and their own API keys
// (each shown once); every refusal is shown in words with what was typed kept; axe finds nothing serious. A member
// is not offered the page.

/** svc runs in this process: a snippet must run beside it, never blocking its event loop (execFileSync would). */
const run = async (file: string, args: string[], env: NodeJS.ProcessEnv) => (await promisify(execFile)(file, args, { env, encoding: 'utf8', timeout: 30_000 })).stdout;

const MEMBER_PASSWORD = 'member-password-1';

const { admin, member } = demoUsers();

const hasPython = (() => {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!hasPython && process.env.CI === 'true') throw new Error('CI=true: the Python snippet must be run, but python3 is missing');

const postgresUrl = inject('postgresUrl');
let browser: Chromium | undefined;
let scratch: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'svc-snippets-'));
  if (hasChromium) browser = await launchChromium({ timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  rmSync(scratch, { recursive: true, force: true });
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  const skipped = !hasChromium ? 'no Chromium' : dialect === 'postgres' && postgresUrl === null ? 'no SVC_TEST_POSTGRES_URL' : undefined;
  const title = `the console's embedding settings in Chromium [${dialect}${skipped === undefined ? '' : `: SKIPPED, ${skipped}`}]`;
  (skipped === undefined ? describe : describe.skip)(title, () => {
    let svc: RunningSvc;
    let page: Page;

    /** An API call with `key` (the admin's unless told), as a host's backend makes it. */
    const api = (method: string, path: string, body?: unknown, key = DEMO_ADMIN_KEY) => callApi(svc.origin, key, method, path, body);

    /** The session id works: it is exchanged once for a token that opens `publicId` (and no other dashboard). */
    const expectSessionOpens = async (sessionId: string, publicId: string, other: string) => {
      const exchanged = await fetch(`${svc.origin}/api/v1/embed/session/token`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId }),
      });
      expect(exchanged.status).toBe(200);
      const { token } = await exchanged.json() as { token: string };
      const open = async (id: string) => (await fetch(`${svc.origin}/api/v1/embed/dashboard/${id}`, { headers: { authorization: `Embed-Token ${token}` } })).status;
      expect(await open(publicId)).toBe(200);
      expect(await open(other)).toBe(403);
    };

    beforeAll(async () => {
      svc = await startSvc({ account: demoWithMemberPassword(MEMBER_PASSWORD), adminKey: DEMO_ADMIN_KEY, ...(dialect === 'postgres' ? { postgresUrl: postgresUrl! } : {}) });
      page = await browser!.context.newPage();
      await page.setViewportSize({ width: 1280, height: 900 });
    }, 60_000);

    afterAll(async () => {
      await page?.close();
      await svc?.close();
    }, 120_000);

    it('opens from the top bar for the admin, and axe finds nothing serious on it, light or dark', async () => {
      await page.goto(`${svc.origin}/console`);
      await page.getByLabel('Email').fill(admin.email);
      await page.getByLabel('Password').fill(admin.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Production', level: 1 }).waitFor();
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Embedding' }).click();
      await page.getByRole('heading', { name: 'Embedding', level: 1 }).waitFor();
      expect(new URL(page.url()).searchParams.get('page')).toBe('embedding');
      for (const section of ['Allowed origins', 'Embed a dashboard', 'Customers (embed tenants)', 'Webhooks', 'Your API keys']) {
        await page.getByRole('heading', { name: section, level: 2 }).waitFor();
      }
      await page.locator('pre.snippet').waitFor();
      await expectNoBlocking(page, 'embedding settings');
      await page.emulateMedia({ colorScheme: 'dark' });
      await expectNoBlocking(page, 'embedding settings, dark');
      await page.emulateMedia({ colorScheme: 'light' });
      // A reload stays on the page; Back returns to the workspace.
      await page.reload();
      await page.getByRole('heading', { name: 'Embedding', level: 1 }).waitFor();
    });

    it('saves the allowed origins; a bad line is named in words and the text stays', async () => {
      const before = (await api('GET', '/api/v1/account/settings')).body!.allowedEmbedOrigins as string[];
      const origins = page.getByLabel('Origins, one a line');
      await expect.poll(() => origins.inputValue()).toBe(before.join('\n'));
      const typed = [...before, 'https://app.customer.test', 'not an origin'].join('\n');
      await origins.fill(typed);
      await page.getByRole('region', { name: 'Allowed origins' }).getByRole('button', { name: 'Save' }).click();
      const error = page.locator('#origins-error');
      await expect.poll(() => error.textContent()).toMatch(new RegExp(`^Line ${before.length + 2}: `));
      expect(await origins.inputValue()).toBe(typed);
      expect(await origins.getAttribute('aria-invalid')).toBe('true');
      expect((await api('GET', '/api/v1/account/settings')).body!.allowedEmbedOrigins).toEqual(before);

      await origins.fill([...before, 'https://app.customer.test'].join('\n'));
      await page.getByRole('region', { name: 'Allowed origins' }).getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.getByRole('region', { name: 'Allowed origins' }).getByRole('status').textContent()).toBe('Saved.');
      expect((await api('GET', '/api/v1/account/settings')).body!.allowedEmbedOrigins).toEqual([...before, 'https://app.customer.test']);
    });

    it('writes a Generate Session snippet that runs as written in curl, Node and Python, for the dashboard and customer picked', async () => {
      const region = page.getByRole('region', { name: 'Embed a dashboard' });
      await region.getByLabel('Find a dashboard').fill('sales performance');
      await expect.poll(() => region.getByLabel('Dashboard', { exact: true }).locator('option').allTextContents()).toContain('Sales performance (sales-performance)');
      await region.getByLabel('Dashboard', { exact: true }).selectOption('sales-performance');
      await region.getByLabel('Customer (embed tenant)').selectOption('customer-b');
      await region.getByLabel('Viewer id (externalId)').fill("b-o'neil-1");
      expect(JSON.parse(await region.getByLabel('Security context (JSON)').inputValue())).toEqual({ tenant: 'customer-b' });

      const env = { ...process.env, SVC_API_KEY: DEMO_ADMIN_KEY };
      const snippetOf = async (language: string) => {
        await region.getByRole('button', { name: language, exact: true }).click();
        await expect.poll(() => region.locator('pre.snippet').getAttribute('data-language')).toBe(language.toLowerCase());
        const text = await region.locator('pre.snippet').textContent();
        expect(text).not.toContain(DEMO_ADMIN_KEY);
        return text!;
      };

      const curl = JSON.parse(await run('bash', ['-c', await snippetOf('curl')], env)) as { sessionId: string };
      await expectSessionOpens(curl.sessionId, 'sales-performance', 'company-overview');

      const nodeFile = join(scratch, `session-${dialect}.mjs`);
      writeFileSync(nodeFile, await snippetOf('Node'));
      const nodeUrl = new URL((await run(process.execPath, [nodeFile], env)).trim());
      expect(nodeUrl.origin + nodeUrl.pathname).toBe(`${svc.origin}/embed/dashboard/sales-performance`);
      await expectSessionOpens(nodeUrl.searchParams.get('session')!, 'sales-performance', 'company-overview');

      if (hasPython) {
        const pythonFile = join(scratch, `session-${dialect}.py`);
        writeFileSync(pythonFile, await snippetOf('Python'));
        const pythonUrl = new URL((await run('python3', [pythonFile], env)).trim());
        expect(pythonUrl.origin + pythonUrl.pathname).toBe(`${svc.origin}/embed/dashboard/sales-performance`);
        await expectSessionOpens(pythonUrl.searchParams.get('session')!, 'sales-performance', 'company-overview');
      } else {
        console.log('console settings e2e: python3 is missing, the Python snippet was NOT run (SKIPPED)');
      }
      // The viewer the snippets minted is customer-b's, under the id typed.
      const users = (await api('GET', '/api/v1/embed/users?embedTenantName=customer-b')).body!.users as Array<{ externalId: string }>;
      expect(users.map((u) => u.externalId)).toContain("b-o'neil-1");

      // A security context that is not a JSON object is named, and no snippet is shown for it.
      await region.getByLabel('Security context (JSON)').fill('["customer-b"]');
      await expect.poll(() => region.getByRole('alert').textContent()).toContain('must be a JSON object');
      expect(await region.locator('pre.snippet').count()).toBe(0);
      await region.getByLabel('Security context (JSON)').fill('{"tenant": "customer-b"}');
      await region.locator('pre.snippet').waitFor();
    });

    it('adds, renames and deletes a customer, lists its viewers, and names a refused name in words', async () => {
      const region = page.getByRole('region', { name: 'Customers (embed tenants)' });
      const rowOf = (name: string) => region.locator(`li[data-tenant="${name}"]`);
      await rowOf('customer-b').getByRole('button', { name: 'Viewers' }).click();
      await expect.poll(() => rowOf('customer-b').locator('table').textContent()).toContain("b-o'neil-1");

      await region.getByLabel('New customer').fill('Bad Name');
      await region.getByRole('button', { name: 'Add customer' }).click();
      await expect.poll(() => region.getByRole('alert').textContent()).toMatch(/name/i);
      expect(await region.getByLabel('New customer').inputValue()).toBe('Bad Name');

      await region.getByLabel('New customer').fill('customer-c');
      await region.getByRole('button', { name: 'Add customer' }).click();
      await rowOf('customer-c').waitFor();
      expect(await region.getByLabel('New customer').inputValue()).toBe('');
      // The snippet's customers are read again.
      await expect.poll(() => page.getByLabel('Customer (embed tenant)').locator('option').allTextContents()).toContain('customer-c');

      await rowOf('customer-c').getByRole('button', { name: 'Rename' }).click();
      await rowOf('customer-c').getByLabel('New name of customer-c').fill('customer-d');
      await rowOf('customer-c').getByRole('button', { name: 'Save' }).click();
      await rowOf('customer-d').waitFor();
      const tenants = (await api('GET', '/api/v1/embed/tenants')).body!.items as Array<{ name: string }>;
      expect(tenants.map((x) => x.name)).toContain('customer-d');
      expect(tenants.map((x) => x.name)).not.toContain('customer-c');

      await rowOf('customer-d').getByRole('button', { name: 'Delete' }).click();
      await rowOf('customer-d').getByRole('button', { name: 'Delete customer-d, its viewers and threads' }).click();
      // The delete answers once every process has seen the viewers' sessions revoked (on PostgreSQL, its change feed).
      await expect.poll(() => rowOf('customer-d').count(), { timeout: 15_000 }).toBe(0);
      expect(((await api('GET', '/api/v1/embed/tenants')).body!.items as Array<{ name: string }>).map((x) => x.name)).not.toContain('customer-d');
    });

    // A literal public address: a host name would be looked up in DNS, which this machine may not answer.
    it('adds a webhook endpoint whose secret is shown once, shows its deliveries, deletes it; a refused URL is named and kept', async () => {
      const region = page.getByRole('region', { name: 'Webhooks' });
      // (The harness's account may send to private addresses, for its own receivers: a scheme svc never sends to.)
      await region.getByLabel('Endpoint URL').fill('ftp://files.example.com/hooks');
      await region.getByRole('button', { name: 'Add endpoint' }).click();
      await expect.poll(() => region.locator('#webhook-error').textContent()).toMatch(/url|http/i);
      expect(await region.getByLabel('Endpoint URL').getAttribute('aria-invalid')).toBe('true');
      expect(await region.getByLabel('Endpoint URL').inputValue()).toBe('ftp://files.example.com/hooks');
      expect((await api('GET', '/api/v1/webhooks/endpoints')).body!.items).toEqual([]);

      await region.getByLabel('Endpoint URL').fill('https://93.184.215.14/svc-hooks');
      await region.getByRole('checkbox', { name: 'thread.resolved' }).check();
      await region.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = region.locator('.shown-once code.secret');
      await expect.poll(() => secret.textContent()).toMatch(/^whsec_/);
      const endpoints = (await api('GET', '/api/v1/webhooks/endpoints')).body!.items as Array<{ id: number; url: string; eventTypes: string[] }>;
      const created = endpoints.find((e) => e.url === 'https://93.184.215.14/svc-hooks')!;
      expect(created.eventTypes.sort()).toEqual(['comment.created', 'thread.resolved']);
      await region.getByRole('button', { name: 'Done' }).click();
      expect(await region.locator('.shown-once').count()).toBe(0);

      const row = region.locator('li[data-endpoint="https://93.184.215.14/svc-hooks"]');
      await row.getByRole('button', { name: 'Deliveries' }).click();
      await expect.poll(() => row.textContent()).toContain('Nothing delivered yet.');
      await row.getByRole('button', { name: 'Delete' }).click();
      await row.getByRole('button', { name: 'Delete this endpoint' }).click();
      await expect.poll(() => row.count()).toBe(0);
      expect((await api('GET', `/api/v1/webhooks/endpoints/${created.id}`)).status).toBe(404);
    });

    it('creates an API key shown once that works at once, and deletes it, after which it is refused', async () => {
      const region = page.getByRole('region', { name: 'Your API keys' });
      await region.getByLabel('Name of the new key').fill('ci key');
      await region.getByRole('button', { name: 'Create key' }).click();
      const shown = region.locator('.shown-once code.secret');
      await expect.poll(() => shown.textContent()).toMatch(/^svc_/);
      const key = (await shown.textContent())!;
      expect((await api('GET', '/api/v1/deployments', undefined, key)).status).toBe(200);
      const row = region.locator('li[data-key="ci key"]');
      await expect.poll(() => row.textContent()).toContain(`ends with ${key.slice(-4)}`);
      await region.getByRole('button', { name: 'Done' }).click();
      await expectNoBlocking(page, 'embedding settings after every change');

      await row.getByRole('button', { name: 'Delete' }).click();
      await row.getByRole('button', { name: 'Delete ci key' }).click();
      await expect.poll(() => row.count()).toBe(0);
      expect((await api('GET', '/api/v1/deployments', undefined, key)).status).toBe(401);
    });

    it('offers a member no embedding page: its link is not shown', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Email').fill(member.email);
      await page.getByLabel('Password').fill(MEMBER_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Workspace' }).waitFor();
      expect(await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Embedding' }).count()).toBe(0);
    });
  });
}
