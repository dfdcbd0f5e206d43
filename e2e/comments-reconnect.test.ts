import type { Frame, Locator, Page } from 'playwright-core';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { hasChromium } from './browser.js';
import { cutProxy } from '../apps/server/test/cut-proxy.js';
import type { CutProxy } from '../apps/server/test/cut-proxy.js';
import { commentPanel, e2eAccount, embedCaller, hostErrors, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack, threadTexts, threadWith } from './embed-harness.js';
import type { HostWindow } from './embed-harness.js';

const HOST_PAGE = hostPageHtml({ embedStyle: 'height:700px' });

/** One dashboard per test: each starts with no threads. */
const DASHBOARDS = ['re-resume', 're-reset', 're-revoke', 're-swap'] as const;
type DashboardId = (typeof DASHBOARDS)[number];

/** Most missed events a reconnecting stream replays; more is a `stream.reset` (SVC_COMMENT_REPLAY_MAX, kept small). */
const REPLAY_MAX = 4;

/** Longer than the panel's first wait before it reconnects (the server's `retry` of 3 s, jittered down to half). */
const LONGER_THAN_A_RETRY_MS = 4000;

interface ApiComment { id: number; body: string }

/** A request of the embed page, as Chromium sent it. */
interface Sent { url: string; method: string; lastEventId: string | undefined; authorization: string | undefined }

/**
 * Issue 23, the comment panel's own side of the live stream (apps/embed/src/comments/commentStream.ts), in Chromium,
 * on both databases. The embed reaches svc through a TCP proxy that the test can cut, as a lost network does:
 * - a dropped connection resumes from the last event (`Last-Event-ID`) with nothing missed and no reload;
 * - too much missed is a `stream.reset`, and the panel reads its list again;
 * - `stream.end` for a revoked session stops the panel's stream for good (no reconnection), and a new session from
 *   the host (set-session) picks up from the last event;
 * - a set-session swap reconnects at once with the new token, from the last event.
 */
const postgresUrl = inject('postgresUrl');
for (const dialect of ['sqlite', 'postgres'] as const) {
  const skipped = !hasChromium ? 'no Chromium' : dialect === 'postgres' && postgresUrl === null ? 'no SVC_TEST_POSTGRES_URL' : undefined;
  const title = `the comment panel's reconnections in Chromium [${dialect}${skipped === undefined ? '' : `: SKIPPED, ${skipped}`}]`;
  (skipped === undefined ? describe : describe.skip)(title, () => {
    // The viewer (Generate Session `externalId`) of a session: the host page's `?who=`.
    const stack = setUpEmbedStack({
      page: HOST_PAGE,
      account: (host) => e2eAccount([host.origin], { dashboards: DASHBOARDS }),
      svc: { commentStreams: { replayMax: REPLAY_MAX }, ...(dialect === 'postgres' ? { postgresUrl: postgresUrl! } : {}) },
      mint: (svc, query) => svc.mint({ externalId: query.get('who'), embedTenantName: 'customer-a' }),
      browser: {},
      alsoClose: () => [proxy],
    });
    let proxy: CutProxy;

    beforeAll(async () => {
      proxy = await cutProxy(Number(new URL(stack.svc.origin).port));
    });

    // A test that failed while the network was down must not leave it down for the next.
    afterEach(() => proxy?.release());

    /** Another viewer of the tenant, calling the comments API from Node straight to svc (not through the proxy). */
    async function colleague(publicId: DashboardId) {
      const call = await embedCaller(stack.svc, { externalId: 'annika-1', embedTenantName: 'customer-a' });
      const comments = `/dashboard/${publicId}/comments`;
      return {
        post: (body: string, parentId?: number) => call<ApiComment>('POST', comments, parentId === undefined ? { body } : { body, parentId }),
        edit: (commentId: number, body: string) => call<ApiComment>('PATCH', `${comments}/${commentId}`, { body }),
      };
    }

    /**
     * Bert's page embedding `publicId` through the proxy, once his stream is open and his list read; its requests record
     * the stream's requests (`streams`), how many of their answers ended (`streamsEnded`) and the thread list's reads
     * (`listReads`) as Chromium sees them.
     */
    async function viewer(publicId: DashboardId): Promise<{ page: Page; frame: Frame; panel: Locator; streams: () => Sent[]; streamsEnded: () => number; listReads: () => number }> {
      const page = await openHostPage(stack.browser.context, `${stack.host.origin}/?who=bert-1`, { viewport: { width: 1100, height: 720 } });
      const sent: Sent[] = [];
      const path = `/api/v1/embed/dashboard/${publicId}/comments`;
      let ended = 0;
      const end = (request: { url(): string }) => {
        if (request.url().endsWith(`${path}/stream`)) ended++;
      };
      page.on('requestfinished', end);
      page.on('requestfailed', end);
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.origin !== proxy.origin || !url.pathname.startsWith(path)) return;
        const headers = request.headers();
        sent.push({ url: url.pathname, method: request.method(), lastEventId: headers['last-event-id'], authorization: headers.authorization });
      });
      const streamOpened = page.waitForResponse((response) => response.url().endsWith(`${path}/stream`) && response.status() === 200);
      const frame = await mountEmbed(page, { baseUrl: proxy.origin, surface: 'dashboard', publicId, comments: 'open' }, { record: ['error'] });
      const panel = await commentPanel(frame);
      await streamOpened;
      await expect.poll(() => sent.filter((request) => request.method === 'GET' && request.url === path).length).toBe(1);
      return {
        page, frame, panel,
        streams: () => sent.filter((request) => request.url === `${path}/stream`),
        streamsEnded: () => ended,
        listReads: () => sent.filter((request) => request.method === 'GET' && request.url === path).length,
      };
    }

    it('resumes after a dropped connection from its last event: what happened meanwhile shows, nothing twice, and the list is not read again', async () => {
      const annika = await colleague('re-resume');
      const bert = await viewer('re-resume');
      const first = await annika.post('The first thread');
      await threadWith(bert.panel, 'The first thread').waitFor();
      expect(bert.streams()).toHaveLength(1);
      expect(bert.streams()[0]!.lastEventId).toBeUndefined();

      // The network goes down under the open stream, and stays down while Annika carries on.
      proxy.hold();
      proxy.cut();
      const second = await annika.post('A thread while away');
      await annika.post('A reply while away', first.id);
      await annika.edit(first.id, 'The first thread, edited while away');
      // The panel tries again on its own (its request waits in the proxy), with the id of the last event it had.
      await expect.poll(() => bert.streams().length, { timeout: 2 * LONGER_THAN_A_RETRY_MS }).toBe(2);
      const resumedFrom = bert.streams()[1]!.lastEventId;
      expect(resumedFrom).toMatch(/^[1-9][0-9]*$/);
      expect(await threadWith(bert.panel, 'A thread while away').count()).toBe(0);
      proxy.release();

      await threadWith(bert.panel, 'A thread while away').waitFor();
      const firstThread = threadWith(bert.panel, 'The first thread, edited while away');
      await firstThread.waitFor();
      await expect.poll(() => firstThread.locator('.thread-replies .comment-body').allInnerTexts()).toEqual(['A reply while away']);
      expect(await threadTexts(bert.panel)).toEqual(['A thread while away', 'The first thread, edited while away']);
      expect(bert.listReads()).toBe(1);

      // And it is live again, on the resumed stream.
      await annika.post('A reply once back', second.id);
      await expect.poll(() => threadWith(bert.panel, 'A thread while away').locator('.thread-replies .comment-body').allInnerTexts()).toEqual(['A reply once back']);
      expect(bert.streams()).toHaveLength(2);
      expect(bert.listReads()).toBe(1);
      expect(await hostErrors(bert.page)).toEqual([]);
      await bert.page.close();
    }, 60_000);

    it(`reads its list again when more than ${REPLAY_MAX} events were missed (stream.reset), and goes on live`, async () => {
      const annika = await colleague('re-reset');
      const bert = await viewer('re-reset');
      await annika.post('Reset: before');
      await threadWith(bert.panel, 'Reset: before').waitFor();

      proxy.hold();
      proxy.cut();
      for (let index = 1; index <= REPLAY_MAX + 2; index++) await annika.post(`Reset: missed ${index}`);
      await expect.poll(() => bert.streams().length, { timeout: 2 * LONGER_THAN_A_RETRY_MS }).toBe(2);
      expect(bert.streams()[1]!.lastEventId).toMatch(/^[1-9][0-9]*$/);
      proxy.release();

      await expect.poll(() => bert.listReads()).toBe(2);
      await expect.poll(() => threadTexts(bert.panel)).toEqual([
        ...Array.from({ length: REPLAY_MAX + 2 }, (_, index) => `Reset: missed ${REPLAY_MAX + 2 - index}`), 'Reset: before',
      ]);
      await annika.post('Reset: after');
      await expect.poll(() => threadTexts(bert.panel).then((texts) => texts[0])).toBe('Reset: after');
      expect(bert.streams()).toHaveLength(2);
      expect(bert.listReads()).toBe(2);
      expect(await hostErrors(bert.page)).toEqual([]);
      await bert.page.close();
    }, 60_000);

    it('stops for good when its session is revoked (no reconnection); a new session from the host picks up from the last event', async () => {
      const annika = await colleague('re-revoke');
      const bert = await viewer('re-revoke');
      await annika.post('Revoke: before');
      await threadWith(bert.panel, 'Revoke: before').waitFor();

      const sessionId = await bert.page.evaluate(() => (window as unknown as HostWindow).lastSessionId);
      const revoked = await fetch(`${stack.svc.origin}/api/v1/embed/session/revoke`, {
        method: 'POST', headers: { authorization: `Bearer ${stack.svc.adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ sessionId }),
      });
      expect(revoked.status).toBe(204);
      // svc ends the stream (`stream.end` revoked) within about a second; after that the panel asks for nothing.
      await expect.poll(() => bert.streamsEnded(), { timeout: 5000 }).toBe(1);
      await annika.post('Revoke: missed while stopped');
      await new Promise((resolve) => setTimeout(resolve, LONGER_THAN_A_RETRY_MS));
      expect(bert.streams()).toHaveLength(1);
      expect(await threadWith(bert.panel, 'Revoke: missed while stopped').count()).toBe(0);

      // The host swaps a new session in: the stream reconnects with its token, from where the old one stopped.
      await bert.page.evaluate(() => (window as unknown as HostWindow).handle.setSession());
      await expect.poll(() => bert.streams().length).toBe(2);
      const [before, after] = bert.streams();
      expect(after!.authorization).toMatch(/^Embed-Token /);
      expect(after!.authorization).not.toBe(before!.authorization);
      expect(after!.lastEventId).toMatch(/^[1-9][0-9]*$/);
      await threadWith(bert.panel, 'Revoke: missed while stopped').waitFor();
      expect(await threadTexts(bert.panel)).toEqual(['Revoke: missed while stopped', 'Revoke: before']);
      expect(bert.listReads()).toBe(1);
      expect(await hostErrors(bert.page)).toEqual([]);
      await bert.page.close();
    }, 60_000);

    it('reconnects at once with the new token when the host swaps the session (set-session), from the last event', async () => {
      const annika = await colleague('re-swap');
      const bert = await viewer('re-swap');
      await annika.post('Swap: before');
      await threadWith(bert.panel, 'Swap: before').waitFor();

      const swappedAt = Date.now();
      await bert.page.evaluate(() => (window as unknown as HostWindow).handle.setSession());
      await expect.poll(() => bert.streams().length).toBe(2);
      // At once: no waiting out a retry.
      expect(Date.now() - swappedAt).toBeLessThan(LONGER_THAN_A_RETRY_MS / 2);
      const [before, after] = bert.streams();
      expect(after!.authorization).not.toBe(before!.authorization);
      expect(after!.lastEventId).toMatch(/^[1-9][0-9]*$/);

      await annika.post('Swap: after');
      await expect.poll(() => threadTexts(bert.panel)).toEqual(['Swap: after', 'Swap: before']);
      expect(bert.streams()).toHaveLength(2);
      expect(bert.listReads()).toBe(1);
      expect(await hostErrors(bert.page)).toEqual([]);
      await bert.page.close();
    }, 60_000);
  });
}
