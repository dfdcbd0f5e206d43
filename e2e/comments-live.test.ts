import type { Frame, Locator, Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { hasChromium } from './browser.js';
import { commentPanel, e2eAccount, embedCaller, hostErrors, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack, threadTexts, threadWith } from './embed-harness.js';

const HOST_PAGE = hostPageHtml({ embedStyle: 'height:700px' });

/** One dashboard per test: each starts with no threads. */
const DASHBOARDS = ['live-main', 'live-count'] as const;
type DashboardId = (typeof DASHBOARDS)[number];

/** What "live" means here (issue 23): another viewer's change shows within a second, without a reload. */
const LIVE_MS = 1000;

interface ApiComment { id: number; body: string }

/**
 * Issue 23 in Chromium, on both databases (PostgreSQL: NOTIFY; SQLite: commits noticed by polling): viewers of one
 * embed tenant on one dashboard see each other's changes through the comment stream within a second, without a
 * reload, keeping their drafts and their place on the page; a viewer of another tenant sees none of it; a closed
 * panel counts new threads on its button.
 */
const postgresUrl = inject('postgresUrl');
for (const dialect of ['sqlite', 'postgres'] as const) {
  const skipped = !hasChromium ? 'no Chromium' : dialect === 'postgres' && postgresUrl === null ? 'no SVC_TEST_POSTGRES_URL' : undefined;
  const title = `the live comment panel in Chromium [${dialect}${skipped === undefined ? '' : `: SKIPPED, ${skipped}`}]`;
  (skipped === undefined ? describe : describe.skip)(title, () => {
    // The viewer (Generate Session `externalId`) and the embed tenant of a session: the host page's `?who=&tenant=`.
    const stack = setUpEmbedStack({
      page: HOST_PAGE,
      account: (host) => e2eAccount([host.origin], { dashboards: DASHBOARDS }),
      svc: dialect === 'postgres' ? { postgresUrl: postgresUrl! } : {},
      mint: (svc, query) => svc.mint({ externalId: query.get('who'), embedTenantName: query.get('tenant') }),
      browser: {},
    });

    /** A viewer's calls to the comments API from Node (another person at another desk). */
    async function apiAs(externalId: string, tenant = 'customer-a') {
      const call = await embedCaller(stack.svc, { externalId, embedTenantName: tenant });
      return {
        post: (publicId: DashboardId, body: string, parentId?: number) =>
          call<ApiComment>('POST', `/dashboard/${publicId}/comments`, parentId === undefined ? { body } : { body, parentId }),
        remove: (publicId: DashboardId, commentId: number) => call<undefined>('DELETE', `/dashboard/${publicId}/comments/${commentId}`),
      };
    }

    /**
     * Embeds `publicId` for a viewer in a page of its own; resolves once its comment stream is open (its answer's
     * headers arrived) and its panel is on screen.
     */
    async function viewer(publicId: DashboardId, who: string, tenant = 'customer-a'): Promise<{ page: Page; frame: Frame; panel: Locator }> {
      const viewerQuery = new URLSearchParams({ who, tenant });
      const page = await openHostPage(stack.browser.context, `${stack.host.origin}/?${viewerQuery}`, { viewport: { width: 1100, height: 720 } });
      const streamOpened = page.waitForResponse((response) => response.url().endsWith(`/dashboard/${publicId}/comments/stream`) && response.status() === 200);
      const frame = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'dashboard', publicId, comments: 'open' }, { record: ['error'] });
      const panel = await commentPanel(frame);
      await streamOpened;
      return { page, frame, panel };
    }

    /** Polls `check` until it holds, at most `ms`; resolves to how long that took, or fails naming `what`. */
    async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
      const started = Date.now();
      for (;;) {
        if (await check()) return Date.now() - started;
        if (Date.now() - started > ms) throw new Error(`${what}: not seen within ${ms} ms`);
        await new Promise((resolve) => setTimeout(resolve, 15));
      }
    }

    it("shows another viewer's thread, reply, edit, resolve and re-open within a second, keeping a half-typed reply and the page's scroll; another tenant sees nothing", async () => {
      // Enough threads for the embed's page to scroll.
      const annika = await apiAs('annika-1');
      for (let index = 1; index <= 8; index++) {
        const root = await annika.post('live-main', `Seed thread ${index}`);
        await annika.post('live-main', `Seed reply ${index}: ${'a longer line of text to take up room. '.repeat(3)}`, root.id);
      }
      const ann = await viewer('live-main', 'ann-1');
      const bert = await viewer('live-main', 'bert-1');
      const cora = await viewer('live-main', 'cora-1', 'customer-b');
      await expect.poll(() => bert.panel.locator('article[data-thread-id]').count()).toBe(8);
      await cora.panel.getByText('No open threads.').waitFor();

      // Bert starts a reply low on the page and scrolls it to the middle of his view.
      const target = threadWith(bert.panel, 'Seed thread 3');
      await target.getByRole('button', { name: 'Reply' }).click();
      const draft = target.getByLabel('Reply to this thread');
      await draft.fill('Half-typed reply');
      await draft.evaluate((element) => element.scrollIntoView({ block: 'center' }));
      const place = () => bert.frame.evaluate(() => {
        const box = document.activeElement as HTMLTextAreaElement;
        return { label: box.id !== '' ? document.querySelector(`label[for="${CSS.escape(box.id)}"]`)?.textContent : null, value: box.value, top: Math.round(box.getBoundingClientRect().top), scrollY: Math.round(scrollY) };
      });
      const before = await place();
      expect(before).toMatchObject({ label: 'Reply to this thread', value: 'Half-typed reply' });
      expect(before.scrollY).toBeGreaterThan(0);
      /** Bert's draft is as he left it: same text, still focused, same place on screen (the page scrolled under it). */
      const expectPlaceKept = async () => {
        const now = await place();
        expect(now).toMatchObject({ label: 'Reply to this thread', value: 'Half-typed reply' });
        expect(Math.abs(now.top - before.top)).toBeLessThanOrEqual(1);
      };

      // Ann posts a thread: it shows at the top of Bert's list, once in hers.
      await ann.panel.getByLabel('New comment').fill('Live: why did March drop?');
      await ann.panel.getByRole('button', { name: 'Post' }).click();
      await threadWith(ann.panel, 'Live: why did March drop?').waitFor();
      await within(LIVE_MS, "Bert sees Ann's thread", async () => (await threadTexts(bert.panel))[0] === 'Live: why did March drop?');
      expect((await threadTexts(ann.panel)).filter((text) => text === 'Live: why did March drop?')).toHaveLength(1);
      await expectPlaceKept();
      expect((await place()).scrollY).toBeGreaterThan(before.scrollY);

      // Ann replies.
      const annsThread = threadWith(ann.panel, 'Live: why did March drop?');
      const bertsView = threadWith(bert.panel, 'Live: why did March drop?');
      await annsThread.getByRole('button', { name: 'Reply' }).click();
      await annsThread.getByLabel('Reply to this thread').fill('Easter moved to April');
      await annsThread.locator('form').getByRole('button', { name: 'Reply' }).click();
      await annsThread.locator('.thread-replies').getByText('Easter moved to April').waitFor();
      await within(LIVE_MS, "Bert sees Ann's reply", async () => (await bertsView.locator('.thread-replies .comment-body').allInnerTexts()).includes('Easter moved to April'));
      expect(await annsThread.locator('.thread-replies [data-comment-id]').count()).toBe(1);
      await expectPlaceKept();

      // Ann edits her reply.
      await annsThread.locator('.thread-replies').getByRole('button', { name: 'Edit' }).click();
      await annsThread.getByLabel('Edit comment').fill('Easter moved to April this year');
      await annsThread.getByRole('button', { name: 'Save' }).click();
      await annsThread.locator('.thread-replies .comment-edited').waitFor();
      await within(LIVE_MS, "Bert sees Ann's edit", async () =>
        (await bertsView.locator('.thread-replies .comment-body').allInnerTexts()).join() === 'Easter moved to April this year' && (await bertsView.locator('.thread-replies .comment-edited').count()) === 1);
      await expectPlaceKept();

      // Ann resolves her thread: under Open, it leaves Bert's list.
      await annsThread.getByRole('button', { name: 'Resolve' }).click();
      await expect.poll(() => threadWith(ann.panel, 'Live: why did March drop?').count()).toBe(0);
      await within(LIVE_MS, "Bert sees Ann's thread resolved", async () => (await bertsView.count()) === 0);
      await expectPlaceKept();

      // Ann re-opens it from Resolved: it comes back into Bert's Open list (the panel reads the list for its text).
      await ann.panel.getByRole('group', { name: 'Which threads' }).getByRole('button', { name: 'Resolved' }).click();
      await threadWith(ann.panel, 'Live: why did March drop?').getByRole('button', { name: 'Re-open' }).click();
      await expect.poll(() => threadWith(ann.panel, 'Live: why did March drop?').count()).toBe(0);
      await within(LIVE_MS, "Bert sees Ann's thread re-opened", async () => (await threadTexts(bert.panel))[0] === 'Live: why did March drop?');
      expect(await bertsView.locator('.thread-replies .comment-body').allInnerTexts()).toEqual(['Easter moved to April this year']);
      expect((await place()).value).toBe('Half-typed reply');
      expect(await target.getByLabel('Reply to this thread').inputValue()).toBe('Half-typed reply');

      // Cora, of another embed tenant on the same dashboard, saw none of it; her stream is live: her tenant's thread shows.
      await (await apiAs('dora-1', 'customer-b')).post('live-main', 'Tenant B only');
      await within(LIVE_MS, "Cora sees her own tenant's thread", async () => (await threadTexts(cora.panel)).includes('Tenant B only'));
      expect(await threadTexts(cora.panel)).toEqual(['Tenant B only']);
      expect(await cora.panel.locator('[data-comment-id]').count()).toBe(1);
      expect(await threadWith(bert.panel, 'Tenant B only').count()).toBe(0);

      for (const { page } of [ann, bert, cora]) {
        expect(await hostErrors(page)).toEqual([]);
        await page.close();
      }
    }, 90_000);

    it('counts new threads by others on the comments button while the panel is closed, and clears the count when it opens', async () => {
      const bert = await viewer('live-count', 'bert-1');
      await bert.panel.getByText('No open threads.').waitFor();
      const toggle = bert.frame.locator('button.comments-toggle');
      const badge = bert.frame.getByTestId('comments-badge');
      await toggle.click();
      expect(await bert.panel.isVisible()).toBe(false);
      expect(await badge.count()).toBe(0);

      // Bert's own thread (posted elsewhere, as Bert) is not news to him; Annika's are. The stream is ordered, so a
      // count of 1 after Annika's first thread shows that Bert's was not counted.
      const himself = await apiAs('bert-1');
      const annika = await apiAs('annika-1');
      await himself.post('live-count', 'Bert, from his phone');
      const first = await annika.post('live-count', 'Closed-panel news 1');
      await within(LIVE_MS, 'the count shows 1', async () => (await badge.count()) === 1 && (await badge.innerText()) === '1 new');
      expect(await toggle.getAttribute('aria-expanded')).toBe('false');
      // Its name says it to a screen reader (with the count of open threads the closed panel's button shows).
      expect(await bert.frame.getByRole('button', { name: /^Comments\s*, open threads: \d+\s*, new threads: 1$/ }).count()).toBe(1);
      await annika.post('live-count', 'Closed-panel news 2');
      await within(LIVE_MS, 'the count shows 2', async () => (await badge.innerText()) === '2 new');
      // A reply is not a new thread; a thread deleted meanwhile is no longer counted.
      await annika.post('live-count', 'Just a reply', first.id);
      await annika.remove('live-count', first.id);
      await within(LIVE_MS, 'the count drops to 1', async () => (await badge.innerText()) === '1 new');

      // Opening shows the threads (the list followed the stream while closed) and clears the count.
      await toggle.click();
      await bert.panel.waitFor();
      expect(await badge.count()).toBe(0);
      expect(await threadTexts(bert.panel)).toEqual(['Closed-panel news 2', 'Bert, from his phone']);
      await toggle.click();
      expect(await badge.count()).toBe(0);
      await annika.post('live-count', 'Closed-panel news 3');
      await within(LIVE_MS, 'the count starts again at 1', async () => (await badge.count()) === 1 && (await badge.innerText()) === '1 new');
      expect(await hostErrors(bert.page)).toEqual([]);
      await bert.page.close();
    }, 60_000);
  });
}
