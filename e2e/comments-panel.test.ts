import { mkdirSync } from 'node:fs';
import type { Frame, Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { hasChromium } from './browser.js';
import { commentPanel, e2eAccount, embedCaller, hostErrors, hostEvents, hostPageHtml, mountEmbed, openHostPage, setUpEmbedStack, threadTexts, threadWith } from './embed-harness.js';
import type { HostWindow } from './embed-harness.js';

const HOST_PAGE = hostPageHtml({ embedStyle: 'height:900px' });

const ARTIFACTS = 'e2e/artifacts';

/** One dashboard per test, so each starts with no threads and tests need no clean-up. */
const DASHBOARDS = ['cmt-crud', 'cmt-others', 'cmt-filter', 'cmt-more', 'cmt-mention', 'cmt-keys', 'cmt-limits', 'cmt-drafts', 'cmt-lapse', 'cmt-shots'] as const;
type DashboardId = (typeof DASHBOARDS)[number];

/** The e2e account with one dashboard per test, and Carl, who is deleted during a test: his comments outlive him. */
const commentsAccount = (hostOrigin: string) => e2eAccount([hostOrigin], {
  dashboards: DASHBOARDS,
  viewers: [{ ref: 'carl', externalId: 'carl-1', username: 'carl', email: 'carl@a.test', firstName: 'Carl' }],
});

interface ApiComment { id: number; body: string; editedAt?: string | null; userId?: number | null }
interface ApiThread { root: ApiComment; replies: ApiComment[]; resolvedAt?: string | null }
interface ThreadList { items: ApiThread[]; pageInfo: { hasNextPage: boolean; endCursor?: string | null } }

const suite = hasChromium ? describe : describe.skip;

suite('the comment panel in Chromium (real svc API)', () => {
  // The viewer (Generate Session `externalId`) of a session: the host page's `?who=`, else Ann.
  const stack = setUpEmbedStack({ page: HOST_PAGE, account: (host) => commentsAccount(host.origin), mint: (svc, query) => svc.mint({ externalId: query.get('who') ?? 'ann-1' }), browser: {} });

  beforeAll(() => {
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  /** A viewer's calls to the comments API from Node, with an embed token from a freshly minted session id. */
  async function apiAs(externalId: string) {
    const call = await embedCaller(stack.svc, { externalId });
    return {
      post: (publicId: DashboardId, body: string, parentId?: number) =>
        call<ApiComment>('POST', `/dashboard/${publicId}/comments`, parentId === undefined ? { body } : { body, parentId }),
      resolve: (publicId: DashboardId, commentId: number, resolved: boolean) =>
        call<ApiThread>('POST', `/dashboard/${publicId}/comments/${commentId}/resolve`, { resolved }),
      list: (publicId: DashboardId, query = 'includeResolved=true&first=200') => call<ThreadList>('GET', `/dashboard/${publicId}/comments?${query}`),
    };
  }

  /** The host page, minting for `who`. */
  function hostPage(who = 'ann-1'): Promise<Page> {
    return openHostPage(stack.browser.context, `${stack.host.origin}/?who=${who}`, {
      viewport: { width: 1100, height: 950 },
      // The panel confirms in place: a native dialog would fail the test.
      before: (page) => page.on('dialog', (dialog) => {
        throw new Error(`unexpected ${dialog.type()} dialog: ${dialog.message()}`);
      }),
    });
  }

  /** Embeds `publicId` with the SDK; resolves to the comment panel (a region named "Comments"). */
  async function mount(page: Page, publicId: DashboardId): Promise<{ frame: Frame; panel: Locator }> {
    // The panel open from the start (at 1100 px `auto` would start it as its button): these tests are about the panel.
    const frame = await mountEmbed(page, { baseUrl: stack.svc.origin, surface: 'dashboard', publicId, comments: 'open' }, { record: ['ready', 'error', 'session-expired', 'action-result', 'comment'], errorCodes: true });
    return { frame, panel: await commentPanel(frame) };
  }

  const commentWith = (scope: Locator, text: string) => scope.locator('[data-comment-id]').filter({ hasText: text }).last();
  const focusedLabel = (frame: Frame) => frame.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    return element?.id ? document.querySelector(`label[for="${CSS.escape(element.id)}"]`)?.textContent ?? element.textContent : element?.textContent ?? null;
  });

  it('posts a thread, replies, edits its own reply, deletes it and then its own thread, confirming in place', async () => {
    const page = await hostPage();
    const { panel } = await mount(page, 'cmt-crud');
    const ann = await apiAs('ann-1');
    await expect.poll(() => panel.getByText('No open threads.').isVisible()).toBe(true);

    // A thread: the text area has a visible label; Post stays off until there is something to send.
    const newComment = panel.getByLabel('New comment');
    const post = panel.getByRole('button', { name: 'Post' });
    expect(await post.isDisabled()).toBe(true);
    await newComment.fill('   ');
    expect(await post.isDisabled()).toBe(true);
    await newComment.fill('Revenue dipped in March');
    await post.click();
    const thread = threadWith(panel, 'Revenue dipped in March');
    await thread.waitFor();
    expect(await thread.getAttribute('aria-label')).toMatch(/^Thread by Ann, /);
    expect(await thread.locator('.comment-author').first().innerText()).toBe('Ann');
    expect(await thread.locator('.comment-you').first().innerText()).toBe('(you)');
    expect(await newComment.inputValue()).toBe('');
    await expect.poll(() => panel.getByRole('status').innerText()).toBe('Comment posted.');
    const rootId = Number(await thread.getAttribute('data-thread-id'));
    expect((await ann.list('cmt-crud')).items.map((t) => t.root)).toEqual([expect.objectContaining({ id: rootId, body: 'Revenue dipped in March' })]);

    // A reply: the form opens with focus in it, and the reply lands under the root.
    await thread.getByRole('button', { name: 'Reply' }).click();
    const replyBox = thread.getByLabel('Reply to this thread');
    await expect.poll(() => replyBox.evaluate((element) => element === document.activeElement)).toBe(true);
    await replyBox.fill('Easter moved to April');
    await thread.locator('form').getByRole('button', { name: 'Reply' }).click();
    const reply = commentWith(thread.locator('.thread-replies'), 'Easter moved to April');
    await reply.waitFor();
    expect(await thread.getByLabel('Reply to this thread').count()).toBe(0);

    // Edit own reply inline: Save sends it, the list shows the server's answer, marked edited.
    await reply.getByRole('button', { name: 'Edit' }).click();
    const editBox = thread.getByLabel('Edit comment');
    expect(await editBox.inputValue()).toBe('Easter moved to April');
    await editBox.fill('Easter moved to April this year');
    await thread.getByRole('button', { name: 'Save' }).click();
    const edited = commentWith(thread.locator('.thread-replies'), 'Easter moved to April this year');
    await edited.locator('.comment-edited').waitFor();
    expect(await edited.locator('.comment-edited').innerText()).toBe('edited');
    expect((await ann.list('cmt-crud')).items[0]!.replies).toEqual([expect.objectContaining({ body: 'Easter moved to April this year', editedAt: expect.any(String) })]);

    // Delete asks in place; Cancel keeps the reply and gives focus back to Delete.
    await edited.getByRole('button', { name: 'Delete' }).click();
    const confirm = edited.getByRole('group', { name: 'Delete this comment?' });
    await confirm.waitFor();
    await expect.poll(() => confirm.getByRole('button', { name: 'Cancel' }).evaluate((element) => element === document.activeElement)).toBe(true);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    expect(await confirm.count()).toBe(0);
    await expect.poll(() => edited.getByRole('button', { name: 'Delete' }).evaluate((element) => element === document.activeElement)).toBe(true);
    await edited.getByRole('button', { name: 'Delete' }).click();
    await edited.getByRole('group', { name: 'Delete this comment?' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => thread.locator('.thread-replies [data-comment-id]').count()).toBe(0);
    expect(await thread.count()).toBe(1);
    expect((await ann.list('cmt-crud')).items[0]!.replies).toEqual([]);

    // Deleting the root takes the whole thread (SPEC "Comment deletion").
    const root = thread.locator(`[data-comment-id="${rootId}"]`);
    await root.getByRole('button', { name: 'Delete' }).click();
    await root.getByRole('group', { name: 'Delete this comment?' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => panel.locator('article[data-thread-id]').count()).toBe(0);
    await panel.getByText('No open threads.').waitFor();
    expect((await ann.list('cmt-crud')).items).toEqual([]);
    expect(await hostErrors(page)).toEqual([]);
    await page.close();
  });

  it("shows another viewer's thread without edit, delete or resolve, and names authors by first name, else username", async () => {
    const bert = await apiAs('bert-1');
    const annika = await apiAs('annika-1');
    const carl = await apiAs('carl-1');
    const carlsThread = await carl.post('cmt-others', 'Carl was here');
    await annika.post('cmt-others', 'I agree with Carl', carlsThread.id);
    const bertsThread = await bert.post('cmt-others', 'Margins look thin');
    await annika.post('cmt-others', 'Annika on margins', bertsThread.id);
    // Carl leaves: his comments stay, without an author.
    const removed = await fetch(`${stack.svc.origin}/api/v1/embed/users/${stack.svc.refs.carl}`, { method: 'DELETE', headers: { authorization: `Bearer ${stack.svc.adminKey}` } });
    expect(removed.status).toBe(204);

    const page = await hostPage();
    const { panel } = await mount(page, 'cmt-others');
    const bertsView = threadWith(panel, 'Margins look thin');
    await bertsView.waitFor();
    expect(await bertsView.getAttribute('aria-label')).toMatch(/^Thread by Bert, /);
    expect(await bertsView.locator('.comment-author').allInnerTexts()).toEqual(['Bert', 'annika']);
    expect(await bertsView.locator('.comment-you').count()).toBe(0);
    for (const name of ['Edit', 'Delete', 'Resolve', 'Re-open']) expect(await bertsView.getByRole('button', { name }).count()).toBe(0);
    expect(await bertsView.getByRole('button', { name: 'Reply' }).count()).toBe(1);

    const carlsView = threadWith(panel, 'Carl was here');
    expect(await carlsView.getAttribute('aria-label')).toMatch(/^Thread by Deleted user, /);
    expect(await carlsView.locator('.comment-author').allInnerTexts()).toEqual(['Deleted user', 'annika']);
    // Newest first by thread start (SPEC B rule 2).
    expect(await threadTexts(panel)).toEqual(['Margins look thin', 'Carl was here']);

    // Ann may reply to Bert's thread: her reply is hers to edit and delete, the thread still not hers to resolve.
    await bertsView.getByRole('button', { name: 'Reply' }).click();
    await bertsView.getByLabel('Reply to this thread').fill('Ann chiming in');
    await bertsView.locator('form').getByRole('button', { name: 'Reply' }).click();
    const annsReply = commentWith(bertsView, 'Ann chiming in');
    await annsReply.waitFor();
    expect(await annsReply.getByRole('button', { name: 'Edit' }).count()).toBe(1);
    expect(await annsReply.getByRole('button', { name: 'Delete' }).count()).toBe(1);
    expect(await bertsView.getByRole('button', { name: 'Resolve' }).count()).toBe(0);
    expect(await bertsView.locator('.comment-author').allInnerTexts()).toEqual(['Bert', 'annika', 'Ann']);
    // Replying does not move the thread.
    expect(await threadTexts(panel)).toEqual(['Margins look thin', 'Carl was here']);
    await page.close();
  });

  it('resolves and re-opens its own thread, and the Open / Resolved / All filter asks the server', async () => {
    const ann = await apiAs('ann-1');
    const bert = await apiAs('bert-1');
    const bertsResolved = await bert.post('cmt-filter', 'Bert closed this');
    await bert.resolve('cmt-filter', bertsResolved.id, true);
    await ann.post('cmt-filter', 'Keep this open');
    await ann.post('cmt-filter', 'Resolve me');

    const page = await hostPage();
    const requests: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/comments?')) requests.push(new URL(request.url()).search);
    });
    const { panel } = await mount(page, 'cmt-filter');
    const filters = panel.getByRole('group', { name: 'Which threads' });
    const pressed = () => filters.locator('button[aria-pressed="true"]').allInnerTexts();
    await threadWith(panel, 'Resolve me').waitFor();
    expect(await pressed()).toEqual(['Open']);
    expect(await threadTexts(panel)).toEqual(['Resolve me', 'Keep this open']);

    // Resolving under Open: the thread leaves the list, as the server would list it now.
    await threadWith(panel, 'Resolve me').getByRole('button', { name: 'Resolve' }).click();
    await expect.poll(() => threadTexts(panel)).toEqual(['Keep this open']);
    await expect.poll(() => panel.getByRole('status').innerText()).toBe('Thread resolved.');
    expect((await ann.list('cmt-filter')).items.find((t) => t.root.body === 'Resolve me')!.resolvedAt).toEqual(expect.any(String));

    await filters.getByRole('button', { name: 'Resolved' }).click();
    await expect.poll(() => threadTexts(panel)).toEqual(['Resolve me', 'Bert closed this']);
    expect(await pressed()).toEqual(['Resolved']);
    expect(await threadWith(panel, 'Resolve me').locator('.thread-badge').innerText()).toBe('Resolved');
    expect(await threadWith(panel, 'Resolve me').getByRole('button', { name: 'Re-open' }).count()).toBe(1);
    expect(await threadWith(panel, 'Bert closed this').getByRole('button', { name: 'Re-open' }).count()).toBe(0);

    await filters.getByRole('button', { name: 'All' }).click();
    await expect.poll(() => threadTexts(panel)).toEqual(['Resolve me', 'Keep this open', 'Bert closed this']);

    // Re-opening under All keeps the thread in place, now open.
    await threadWith(panel, 'Resolve me').getByRole('button', { name: 'Re-open' }).click();
    await threadWith(panel, 'Resolve me').getByRole('button', { name: 'Resolve' }).waitFor();
    expect(await threadWith(panel, 'Resolve me').locator('.thread-badge').count()).toBe(0);
    expect(await threadTexts(panel)).toEqual(['Resolve me', 'Keep this open', 'Bert closed this']);
    expect((await ann.list('cmt-filter')).items.find((t) => t.root.body === 'Resolve me')!.resolvedAt ?? null).toBeNull();

    await filters.getByRole('button', { name: 'Resolved' }).click();
    await expect.poll(() => threadTexts(panel)).toEqual(['Bert closed this']);
    await filters.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => threadTexts(panel)).toEqual(['Resolve me', 'Keep this open']);

    // The server filters (SPEC B rule 3): each switch loads a first page with the filter's parameters.
    const firstPages = requests.filter((search) => !search.includes('after='));
    expect(firstPages.map((search) => (search.includes('resolvedOnly') ? 'resolved' : search.includes('includeResolved') ? 'all' : 'open')))
      .toEqual(['open', 'resolved', 'all', 'resolved', 'open']);
    await page.close();
  });

  it('loads more threads by cursor, in order, until hasNextPage is false', async () => {
    const bert = await apiAs('bert-1');
    for (let index = 1; index <= 23; index++) await bert.post('cmt-more', `Seed ${index}`);

    const page = await hostPage();
    const requests: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/comments?')) requests.push(new URL(request.url()).search);
    });
    const { frame, panel } = await mount(page, 'cmt-more');
    await expect.poll(() => panel.locator('article[data-thread-id]').count()).toBe(20);
    expect(await threadTexts(panel)).toEqual(Array.from({ length: 20 }, (_, index) => `Seed ${23 - index}`));

    await panel.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => panel.locator('article[data-thread-id]').count()).toBe(23);
    expect(await threadTexts(panel)).toEqual(Array.from({ length: 23 }, (_, index) => `Seed ${23 - index}`));
    expect(await panel.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    // Focus goes to the first thread loaded.
    await expect.poll(() => frame.evaluate(() => document.activeElement?.querySelector('.comment-body')?.textContent)).toBe('Seed 3');

    // SPEC B rule 7: the second page passes the first page's endCursor, never a null one.
    const afters = requests.map((search) => new URLSearchParams(search).get('after'));
    expect(afters).toHaveLength(2);
    expect(afters[0]).toBeNull();
    expect(afters[1]).toMatch(/.+/);
    expect(afters[1]).not.toMatch(/^(null|undefined)$/);
    await page.close();
  });

  it('autocompletes @ mentions from the keyboard: arrows, Enter and Tab pick, Escape closes; the mention is plain text', async () => {
    const page = await hostPage();
    const { frame, panel } = await mount(page, 'cmt-mention');
    const box = panel.getByLabel('New comment');
    await box.focus();
    await box.pressSequentially('Hello @ann');
    const listbox = panel.getByRole('listbox', { name: 'People to mention' });
    await listbox.waitFor();
    const options = listbox.getByRole('option');
    await expect.poll(() => options.allTextContents()).toEqual(['Ann@ann', 'annika']);
    const selected = () => listbox.locator('[role="option"][aria-selected="true"]').textContent();
    const activeDescendant = async () => {
      const id = await box.getAttribute('aria-activedescendant');
      return id === null ? null : frame.evaluate((id) => document.getElementById(id)?.textContent ?? null, id);
    };
    expect(await selected()).toBe('Ann@ann');
    expect(await box.getAttribute('aria-controls')).toBe(await listbox.getAttribute('id'));
    await box.press('ArrowDown');
    expect(await selected()).toBe('annika');
    expect(await activeDescendant()).toBe('annika');
    await box.press('ArrowUp');
    expect(await selected()).toBe('Ann@ann');
    await box.press('ArrowDown');
    await box.press('Enter');
    await expect.poll(() => box.inputValue()).toBe('Hello @annika ');
    expect(await listbox.count()).toBe(0);
    expect(await box.getAttribute('aria-activedescendant')).toBeNull();

    // Escape closes the list and leaves the text as typed.
    await box.pressSequentially('see @b');
    await listbox.waitFor();
    await expect.poll(() => options.allTextContents()).toEqual(['Bert@bert']);
    await box.press('Escape');
    expect(await listbox.count()).toBe(0);
    expect(await box.inputValue()).toBe('Hello @annika see @b');
    await box.press('Backspace');
    await box.press('Backspace');
    // Tab picks too.
    await box.pressSequentially('@ber');
    await listbox.waitFor();
    await expect.poll(() => options.allTextContents()).toEqual(['Bert@bert']);
    await box.press('Tab');
    await expect.poll(() => box.inputValue()).toBe('Hello @annika see @bert ');
    expect(await box.evaluate((element) => element === document.activeElement)).toBe(true);

    // An @ and letters that name nobody of the tenant stay as typed, and are not shown as a mention.
    await box.pressSequentially('cc @be');
    await listbox.waitFor();
    await box.press('Escape');

    // Keyboard only: Tab reaches Post, Enter posts.
    await box.press('Tab');
    expect(await focusedLabel(frame)).toBe('Post');
    await page.keyboard.press('Enter');
    const thread = threadWith(panel, 'Hello @annika see @bert cc @be');
    await thread.waitFor();
    expect(await thread.locator('.mention').allInnerTexts()).toEqual(['@annika', '@bert']);
    expect(await thread.locator('.comment-body').innerText()).toBe('Hello @annika see @bert cc @be');
    const ann = await apiAs('ann-1');
    // Stored verbatim.
    const root = (await ann.list('cmt-mention')).items[0]!.root;
    expect(root.body).toBe('Hello @annika see @bert cc @be');
    // The host page hears of it (svc:event:comment): ids and the mentioned viewers' external ids, not the text.
    const comments = (await hostEvents(page)).filter(([name]) => name === 'comment');
    expect(comments).toEqual([['comment', { kind: 'thread-created', publicId: 'cmt-mention', threadId: root.id, commentId: root.id, mentionedExternalIds: ['annika-1', 'bert-1'] }]]);
    await page.close();
  });

  it('can be used with the keyboard alone: start a thread, reply, and focus returns where it was', async () => {
    const page = await hostPage();
    const { frame, panel } = await mount(page, 'cmt-keys');
    await panel.getByText('No open threads.').waitFor();
    await frame.getByRole('button', { name: 'Hide comments' }).focus();
    for (let step = 0; step < 5 && (await focusedLabel(frame)) !== 'New comment'; step++) await page.keyboard.press('Tab');
    expect(await focusedLabel(frame)).toBe('New comment');
    await page.keyboard.type('Typed without a mouse');
    await page.keyboard.press('Control+Enter');
    const thread = threadWith(panel, 'Typed without a mouse');
    await thread.waitFor();

    // Tab from the text area onwards reaches the thread's Reply button.
    await panel.getByLabel('New comment').focus();
    for (let step = 0; step < 10 && (await focusedLabel(frame)) !== 'Reply'; step++) await page.keyboard.press('Tab');
    expect(await focusedLabel(frame)).toBe('Reply');
    await page.keyboard.press('Enter');
    await expect.poll(() => focusedLabel(frame)).toBe('Reply to this thread');
    await page.keyboard.type('A keyboard reply');
    await page.keyboard.press('Tab');
    expect(await focusedLabel(frame)).toBe('Cancel');
    await page.keyboard.press('Tab');
    expect(await focusedLabel(frame)).toBe('Reply');
    await page.keyboard.press('Enter');
    await commentWith(thread, 'A keyboard reply').waitFor();
    // The form closed; focus is back on the thread's Reply button.
    await expect.poll(() => frame.evaluate(() => document.activeElement?.closest('.thread-actions') !== null && document.activeElement?.textContent === 'Reply')).toBe(true);
    await page.close();
  });

  it('enforces the body limits in the form and shows a 400 from the server inline, not to the host', async () => {
    const page = await hostPage();
    const { panel } = await mount(page, 'cmt-limits');
    await panel.getByText('No open threads.').waitFor();
    const box = panel.getByLabel('New comment');
    const post = panel.getByRole('button', { name: 'Post' });

    await box.fill('x'.repeat(9_500));
    expect(await panel.locator('.composer-counter').innerText()).toBe('9,500 / 10,000 characters');
    expect(await post.isEnabled()).toBe(true);
    await box.fill('x'.repeat(10_001));
    expect(await panel.locator('.composer-counter').innerText()).toBe('10,001 / 10,000 characters');
    expect(await post.isDisabled()).toBe(true);
    expect(await panel.getByRole('alert').innerText()).toBe('Too long: a comment has at most 10,000 characters.');
    expect(await box.getAttribute('aria-invalid')).toBe('true');
    // Counted in code points, as the server counts: 10,000 emoji are 10,000 characters.
    await box.fill('😀'.repeat(10_000));
    expect(await post.isEnabled()).toBe(true);

    // A body the server refuses (a NUL character cannot be stored): its 400 message is shown by the form.
    await box.fill('bad \u0000 body');
    await post.click();
    const alert = panel.locator('.composer-error');
    await alert.waitFor();
    expect(await alert.innerText()).toMatch(/^That did not work: .*NUL/);
    expect(await box.inputValue()).toBe('bad \u0000 body');
    expect(await hostErrors(page)).toEqual([]);
    await page.close();
  });

  it('keeps unsaved drafts across a refresh and a token swap, and the refresh shows new threads', async () => {
    const bert = await apiAs('bert-1');
    await bert.post('cmt-drafts', 'Before the refresh');
    const page = await hostPage();
    const { panel } = await mount(page, 'cmt-drafts');
    const before = threadWith(panel, 'Before the refresh');
    await before.waitFor();
    await panel.getByLabel('New comment').fill('Half-written thought');
    await before.getByRole('button', { name: 'Reply' }).click();
    await before.getByLabel('Reply to this thread').fill('Half-written reply');

    await bert.post('cmt-drafts', 'After the refresh');
    await page.evaluate(() => (window as unknown as HostWindow).handle.refresh());
    await threadWith(panel, 'After the refresh').waitFor();
    expect(await panel.getByLabel('New comment').inputValue()).toBe('Half-written thought');
    expect(await before.getByLabel('Reply to this thread').inputValue()).toBe('Half-written reply');

    // A swap before the lapse is invisible (SPEC set-session rule 1); the new token posts.
    await page.evaluate(() => (window as unknown as HostWindow).handle.setSession());
    expect(await panel.getByLabel('New comment').inputValue()).toBe('Half-written thought');
    expect(await before.getByLabel('Reply to this thread').inputValue()).toBe('Half-written reply');
    await before.locator('form').getByRole('button', { name: 'Reply' }).click();
    await commentWith(before, 'Half-written reply').locator('.comment-body').waitFor();
    expect(await panel.getByLabel('New comment').inputValue()).toBe('Half-written thought');
    expect(await hostErrors(page)).toEqual([]);
    await page.close();
  });

  it('on a 401 keeps what it shows and the draft, and reports nothing itself (the session reports the lapse)', async () => {
    const bert = await apiAs('bert-1');
    await bert.post('cmt-lapse', 'Visible before the lapse');
    const page = await hostPage();
    const { frame, panel } = await mount(page, 'cmt-lapse');
    await threadWith(panel, 'Visible before the lapse').waitFor();
    // Without a renewal, the lapse stays on screen (a renewal after a lapse starts the embed afresh: set-session rule 2).
    const sessionId = await page.evaluate(() => {
      const w = window as unknown as HostWindow;
      w.refuseIds = true;
      return w.lastSessionId;
    });
    const revoked = await fetch(`${stack.svc.origin}/api/v1/embed/session/revoke`, {
      method: 'POST', headers: { authorization: `Bearer ${stack.svc.adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ sessionId }),
    });
    expect(revoked.status).toBe(204);

    await panel.getByLabel('New comment').fill('Sent into a revoked session');
    await panel.getByRole('button', { name: 'Post' }).click();
    const lapsed = frame.getByRole('alertdialog', { name: 'Your session has ended.' });
    await lapsed.waitFor();
    expect(await panel.getByLabel('New comment').inputValue()).toBe('Sent into a revoked session');
    expect(await threadWith(panel, 'Visible before the lapse').count()).toBe(1);
    expect(await panel.locator('.composer-error, .comments-error').count()).toBe(0);
    const events = (await hostEvents(page)).map(([name]) => name);
    expect(events).toContain('session-expired');
    expect(events).not.toContain('error');
    expect(await lapsed.isVisible()).toBe(true);
    await page.close();
  });

  it('reads well in light and dark (screenshots in e2e/artifacts)', async () => {
    const bert = await apiAs('bert-1');
    const annika = await apiAs('annika-1');
    const ann = await apiAs('ann-1');
    const bertsThread = await bert.post('cmt-shots', 'Can we split revenue by region? @ann');
    await annika.post('cmt-shots', 'Seconded, by country too.', bertsThread.id);
    await ann.post('cmt-shots', 'On it: @bert @annika', bertsThread.id);
    await ann.post('cmt-shots', 'Orders widget double-counts refunds.');

    const page = await hostPage();
    const { frame, panel } = await mount(page, 'cmt-shots');
    await threadWith(panel, 'double-counts').waitFor();
    await expect.poll(() => panel.locator('.comment-author').allInnerTexts()).toEqual(['Ann', 'Bert', 'annika', 'Ann']);
    const mine = threadWith(panel, 'double-counts');
    await mine.getByRole('button', { name: 'Reply' }).click();
    await mine.getByLabel('Reply to this thread').pressSequentially('Thanks @ann');
    await panel.getByRole('listbox', { name: 'People to mention' }).waitFor();
    const background = () => panel.evaluate((element) => getComputedStyle(element).backgroundColor);
    expect(await background()).toBe('rgb(255, 255, 255)');
    await panel.screenshot({ path: `${ARTIFACTS}/comments-light.png` });

    await page.evaluate(() => (window as unknown as HostWindow).handle.setColorScheme('dark'));
    await frame.waitForFunction(() => document.documentElement.dataset.colorScheme === 'dark');
    await expect.poll(background).toBe('rgb(27, 33, 41)');
    expect(await panel.evaluate((element) => getComputedStyle(element).color)).toBe('rgb(230, 235, 241)');
    await panel.screenshot({ path: `${ARTIFACTS}/comments-dark.png` });
    await page.close();
  }, 60_000);
});
