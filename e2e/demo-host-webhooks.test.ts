import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: apps/demo-host is plain JavaScript without type declarations.
import { startDemoHost, verifyWebhook } from '../apps/demo-host/server.js';
import { buildApp } from '../apps/server/src/app.js';
import { testConfig } from '../apps/server/test/config.js';
import { openDatabase } from '../apps/server/src/db/db.database.js';
import type { Db } from '../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../apps/server/src/db/db.migrations.js';
import { importFile } from '../apps/server/src/import/import.js';
import { RAISED_RATE_LIMITS } from '../apps/server/test/limits.js';
import { hasChromium, launchChromium } from './browser.js';
import { ADMIN_KEY, e2eAccount } from './embed-harness.js';

type FastifyApp = Awaited<ReturnType<typeof buildApp>>;

/** Reads Server-Sent Events from a fetch answer until `until` holds (or `ms` pass); the events read. */
async function readEvents(url: string, until: (events: Array<{ type: string; data: string }>) => boolean, ms: number, started: () => void) {
  const controller = new AbortController();
  const events: Array<{ type: string; data: string }> = [];
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    const res = await fetch(url, { signal: controller.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const type = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (type !== undefined && data !== undefined) {
          events.push({ type, data });
          if (type === 'ready') started();
        }
      }
      if (until(events)) break;
    }
  } catch {
    // aborted at the time limit
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return events;
}

/**
 * Issue 23 part 4, at the server level: the demo host registers its own webhook endpoint in svc on start, verifies
 * svc's signature on each delivery, and pushes a notification to the page of the viewer a comment mentions (the page
 * shows it as a toast); a forged delivery is refused.
 */
describe('the demo host\'s mention toasts (svc webhook -> demo host backend -> page)', () => {
  let dir: string;
  let db: Db;
  let app: FastifyApp;
  let svcUrl: string;
  let demo: { url: string; webhookEndpointId: number | undefined; close(): Promise<void> };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-demo-hooks-'));
    db = openDatabase(`sqlite:${join(dir, 'svc.db')}`);
    await migrateToLatest(db);
    // The demo host's port is known before the account exists, so that the account lets the host's page embed.
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const hostPort = (free.address() as AddressInfo).port;
    await new Promise<void>((resolve) => free.close(() => resolve()));
    // As in the demo account: the demo host receives on loopback, which this account is allowed.
    const { refs } = await importFile(db.kysely, { accounts: [e2eAccount([`http://127.0.0.1:${hostPort}`], { settings: { allowPrivateWebhookUrls: true } })] });
    app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS, webhooks: { deliver: true, pollMs: 50 } }), { db });
    await app.listen({ port: 0, host: '127.0.0.1' });
    svcUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    demo = await startDemoHost({ port: hostPort, svcUrl, apiKey: ADMIN_KEY, deploymentId: refs.prod, publicId: 'sales-e2e' });
  }, 60_000);

  afterAll(async () => {
    await demo?.close();
    await app?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const json = (headers: Record<string, string>, body: unknown) => ({ headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  async function tokenOf(externalId: string, embedTenantName: string, username: string, firstName?: string): Promise<Record<string, string>> {
    const minted = await fetch(`${svcUrl}/api/v1/embed/generate-session`, { method: 'POST', ...json({ authorization: `Bearer ${ADMIN_KEY}` }, { deploymentId: 1, externalId, embedTenantName, username, firstName }) });
    const { sessionId } = (await minted.json()) as { sessionId: string };
    const exchanged = await fetch(`${svcUrl}/api/v1/embed/session/token`, { method: 'POST', ...json({}, { sessionId }) });
    return { authorization: `Embed-Token ${((await exchanged.json()) as { token: string }).token}` };
  }
  const postComment = async (headers: Record<string, string>, body: string) => {
    const res = await fetch(`${svcUrl}/api/v1/embed/dashboard/sales-e2e/comments`, { method: 'POST', ...json(headers, { body }) });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: number; mentions: Array<{ externalId: string }> };
  };

  it('registers its endpoint in svc on start, for comment.created', async () => {
    expect(demo.webhookEndpointId).toBeGreaterThan(0);
    const res = await fetch(`${svcUrl}/api/v1/webhooks/endpoints/${demo.webhookEndpointId}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(await res.json()).toMatchObject({ url: `${demo.url}/api/svc-webhook`, eventTypes: ['comment.created'], enabled: true });
  });

  it('shows a toast to the signed-in viewer a comment mentions, and to nobody for a comment that mentions no viewer of its', async () => {
    // Ann (customer-a) signs in through the demo host, which makes her an embed user of customer-a named "ann".
    expect((await fetch(`${demo.url}/api/svc-session`, { method: 'POST', ...json({}, { customer: 'customer-a' }) })).status).toBe(200);
    const carl = await tokenOf('carl-1', 'customer-a', 'carl', 'Carl');
    let posted: Promise<unknown> | undefined;
    const events = await readEvents(`${demo.url}/api/notifications?customer=customer-a`, (all) => all.some((e) => e.type === 'mention'), 15_000, () => {
      posted = (async () => {
        await postComment(carl, 'nobody here is mentioned');
        const comment = await postComment(carl, 'Ann, see this: @ann');
        expect(comment.mentions).toEqual([expect.objectContaining({ externalId: 'ann-1' })]);
      })();
    });
    await posted;
    const mentions = events.filter((e) => e.type === 'mention').map((e) => JSON.parse(e.data) as Record<string, unknown>);
    // Carl is no customer of the host's: his name comes from svc's embed users; the dashboard by its title.
    expect(mentions).toEqual([expect.objectContaining({ externalId: 'ann-1', by: 'Carl', byExternalId: 'carl-1', dashboardId: 'sales-e2e', dashboardTitle: 'Sales overview' })]);
    expect(JSON.parse(events[0]!.data)).toEqual({ webhooks: true });
  }, 30_000);

  (hasChromium ? it : it.skip)('the signed-in viewer\'s page shows the toast (Chromium)', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${demo.url}/?customer=customer-a`);
      const carl = await tokenOf('carl-1', 'customer-a', 'carl', 'Carl');
      const toast = page.locator('#toasts .toast');
      // The page's notification stream may open after a post: post again until a toast shows (each mentions Ann).
      for (let i = 0; i < 20 && (await toast.count()) === 0; i++) {
        await postComment(carl, `@ann, have a look (${i})`);
        await toast.first().waitFor({ timeout: 1000 }).catch(() => undefined);
      }
      // Before: "carl-1 mentioned you in a comment on sales-e2e", ids where a person reads names.
      expect(await toast.first().textContent()).toBe('Carl mentioned you in a comment on Sales overview');
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('names the external ids of an event for the page: its own customers, then the embed users svc keeps, else the id', async () => {
    await tokenOf('dora-1', 'customer-a', 'dora');
    const people = await fetch(`${demo.url}/api/people?customer=customer-a&externalId=ann-1&externalId=dora-1&externalId=nobody-1`);
    expect(await people.json()).toEqual({ people: [
      { externalId: 'ann-1', name: 'Ann' }, { externalId: 'dora-1', name: 'dora' }, { externalId: 'nobody-1', name: 'nobody-1' },
    ] });
    expect((await fetch(`${demo.url}/api/people?customer=customer-z&externalId=ann-1`)).status).toBe(400);
  });

  (hasChromium ? it : it.skip)('tells the writer whom their comment mentioned, by name, from svc:event:comment (Chromium)', async () => {
    await tokenOf('carl-1', 'customer-a', 'carl', 'Carl');
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.goto(`${demo.url}/?customer=customer-a`);
      await page.waitForFunction(() => document.getElementById('status')?.textContent === 'dashboard loaded', undefined, { timeout: 30_000 });
      const frame = page.frames().find((f) => f.url().startsWith(`${svcUrl}/embed/`))!;
      const show = frame.locator('button.comments-toggle[aria-expanded="false"]');
      if (await show.count() > 0) await show.click();
      const panel = frame.getByRole('region', { name: 'Comments' });
      await panel.getByLabel('New comment').fill('@carl and @dora, see the March dip');
      await panel.getByRole('button', { name: 'Post' }).click();
      // The event carries ["carl-1", "dora-1"]; the host's backend names them.
      const toast = page.locator('#toasts .toast', { hasText: 'You mentioned' });
      await toast.waitFor({ timeout: 15_000 });
      expect(await toast.textContent()).toBe('You mentioned Carl and dora: they are told by webhook');
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('refuses a delivery that is not signed with its secret', async () => {
    const body = JSON.stringify({ type: 'comment.created', timestamp: new Date().toISOString(), data: { embedTenant: 'customer-a', mentions: [{ externalId: 'ann-1' }] } });
    const forged = new Webhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`);
    const id = 'msg_forged';
    const now = new Date();
    const res = await fetch(`${demo.url}/api/svc-webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': forged.sign(id, now, body) },
      body,
    });
    expect(res.status).toBe(401);
    expect((await fetch(`${demo.url}/api/svc-webhook`, { method: 'POST', body })).status).toBe(401);
  });

  it('verifies signatures exactly as the standardwebhooks package makes them, stale ones refused', () => {
    const secret = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;
    const hook = new Webhook(secret);
    const at = new Date('2026-06-01T12:00:00Z');
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(at.getTime() / 1000), 'webhook-signature': hook.sign('msg_1', at, '{"a":1}') };
    expect(verifyWebhook(secret, headers, '{"a":1}', at.getTime() / 1000)).toBe(true);
    expect(verifyWebhook(secret, headers, '{"a":2}', at.getTime() / 1000)).toBe(false);
    expect(verifyWebhook(secret, headers, '{"a":1}', at.getTime() / 1000 + 301)).toBe(false);
  });
});
