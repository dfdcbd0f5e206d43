import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { expectErrorBody } from '../../test/errors.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { openDatabase } from '../db/db.database.js';

const PASSWORD = 'correct horse battery staple';
const SPARE_DASHBOARDS = 16;

interface CommentJson {
  id: number;
  dashboardId: string;
  userId: number | null;
  body: string;
  editedAt: string | null;
  removedAt: string | null;
  createdAt: string;
  isOwn: boolean;
}
interface ThreadJson {
  root: CommentJson;
  replies: CommentJson[];
  resolvedAt: string | null;
  resolvedBy: number | null;
}
interface PageInfoJson {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

/**
 * SPEC part B over HTTP: every numbered rule, the Thread and Comment-deletion state tables, and each row of the
 * Errors and Limits tables that concerns comments. The app runs on a clock that moves 1 ms per reading, so the
 * order of threads and replies is the order the test posts them in.
 */
describeEachDialect('dashboard comments', (t) => {
  let clock = Date.parse('2026-06-01T12:00:00.000Z');
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  let ids: Record<'main' | 'second' | 'draft' | 'archived' | 'noembed' | 'stage' | 'foreign', string>;
  let ann: ViewerSession;
  let ben: ViewerSession;
  let cat: ViewerSession;
  let spares: string[];

  beforeAll(async () => {
    app = await buildApp(testConfig(), { db: t().db, now: () => new Date(clock++) });
    const suffix = uniqueSuffix();
    const dashboard = (ref: string, publicId: string, extra: Record<string, unknown> = {}) => ({
      ref, type: 'WORKBOOK' as const, name: ref, createdBy: 'alice',
      dashboard: { publicId: `${publicId}-${suffix}`, status: 'published' as const, allowEmbed: true, ...extra },
    });
    s = await seedAccount(t().db.kysely, {
      settings: { allowEmbedComments: true },
      users: [{ ref: 'alice', role: 'admin', password: PASSWORD }, { ref: 'bob', role: 'member' }],
      deployments: [
        {
          ref: 'prod', name: 'Prod', items: [
            dashboard('wb-main', 'main'), dashboard('wb-second', 'second'),
            dashboard('wb-draft', 'draft', { status: 'draft' }), dashboard('wb-archived', 'archived', { status: 'archived' }),
            dashboard('wb-noembed', 'noembed', { allowEmbed: false }),
            ...Array.from({ length: SPARE_DASHBOARDS }, (_, i) => dashboard(`wb-spare-${i}`, `spare-${i}`)),
          ],
        },
        { ref: 'stage', name: 'Stage', items: [dashboard('wb-stage', 'stage')] },
      ],
    });
    other = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P', items: [dashboard('wb', 'foreign')] }] });
    ids = {
      main: `main-${suffix}`, second: `second-${suffix}`, draft: `draft-${suffix}`, archived: `archived-${suffix}`,
      noembed: `noembed-${suffix}`, stage: `stage-${suffix}`, foreign: `foreign-${suffix}`,
    };
    spares = Array.from({ length: SPARE_DASHBOARDS }, (_, i) => `spare-${i}-${suffix}`);
    ann = await viewer({ embedTenantName: 'customer-a', username: 'ann' });
    ben = await viewer({ embedTenantName: 'customer-a', username: 'ben' });
    cat = await viewer({ embedTenantName: 'customer-b', username: 'cat' });
  });

  afterAll(async () => {
    await app.close();
  });

  const viewer = (body: Record<string, unknown> = {}, account = s) => mintViewer(app, account.keys.alice!, { deploymentId: account.refs.prod!, ...body });
  const url = (publicId: string, rest = '') => `/api/v1/embed/dashboard/${encodeURIComponent(publicId)}/comments${rest}`;
  const post = (who: { headers: Record<string, string> }, payload: Record<string, unknown>, publicId = ids.main) =>
    app.inject({ method: 'POST', url: url(publicId), headers: who.headers, payload });
  const list = (who: { headers: Record<string, string> }, query = '', publicId = ids.main) =>
    app.inject({ url: url(publicId, query === '' ? '' : `?${query}`), headers: who.headers });
  const edit = (who: ViewerSession, id: number, payload: Record<string, unknown>, publicId = ids.main) =>
    app.inject({ method: 'PATCH', url: url(publicId, `/${id}`), headers: who.headers, payload });
  const remove = (who: ViewerSession, id: number, publicId = ids.main) => app.inject({ method: 'DELETE', url: url(publicId, `/${id}`), headers: who.headers });
  const resolve = (who: ViewerSession, id: number, payload: Record<string, unknown>, publicId = ids.main) =>
    app.inject({ method: 'POST', url: url(publicId, `/${id}/resolve`), headers: who.headers, payload });
  const mentionable = (who: { headers: Record<string, string> }, query = '', publicId = ids.main) =>
    app.inject({ url: url(publicId, `/mentionable-users${query === '' ? '' : `?${query}`}`), headers: who.headers });

  /** Posts and returns the comment, failing the test on anything but 201. */
  const posted = async (who: ViewerSession, body: string, parentId?: number, publicId = ids.main): Promise<CommentJson> => {
    const res = await post(who, parentId === undefined ? { body } : { body, parentId }, publicId);
    expect(res.statusCode, res.body).toBe(201);
    // The 201's `mentions` (issue 23) is not part of the Comment a thread lists.
    const { mentions, ...comment } = res.json() as CommentJson & { mentions: unknown[] };
    expect(Array.isArray(mentions)).toBe(true);
    return comment;
  };
  /** Every thread of every page, walking `endCursor` while `hasNextPage`. */
  const walk = async (who: { headers: Record<string, string> }, filter = '', first = 100, publicId = ids.main): Promise<ThreadJson[]> => {
    const threads: ThreadJson[] = [];
    let after: string | null = null;
    for (;;) {
      const query = [filter, `first=${first}`, after === null ? '' : `after=${after}`].filter(Boolean).join('&');
      const res = await list(who, query, publicId);
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json() as { items: ThreadJson[]; pageInfo: PageInfoJson };
      expect(page.pageInfo.hasPreviousPage).toBe(after !== null);
      threads.push(...page.items);
      if (!page.pageInfo.hasNextPage) return threads;
      after = page.pageInfo.endCursor;
    }
  };
  /** A dashboard of its own, so list assertions see only what the test made. */
  const freshDashboard = async (): Promise<string> => {
    const publicId = spares.pop();
    if (publicId === undefined) throw new Error('seed more spare dashboards');
    return publicId;
  };
  // Scoped to this suite's two accounts: other test files write comments into the same PostgreSQL database at once.
  const commentCount = async () => Number((await t().db.kysely.selectFrom('comments as c').innerJoin('accounts as a', 'a.id', 'c.account_id')
    .where('a.tenant_name', 'in', [s.tenantName, other.tenantName]).select((e) => e.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const expectError = (res: LightMyRequestResponse, status: number, field?: string) => expectErrorBody({ status: res.statusCode, text: res.body }, status, field);

  describe('Authentication (SPEC "Authentication", Comments; Errors 401 and 403)', () => {
    it('accepts the embed token as Embed-Token and as Bearer, and resolves the same embed user', async () => {
      const comment = await posted(ann, 'both schemes');
      const asBearer = await list({ headers: { authorization: `Bearer ${ann.token}` } }, 'includeResolved=true');
      expect(asBearer.statusCode, asBearer.body).toBe(200);
      const mine = (asBearer.json().items as ThreadJson[]).find((th) => th.root.id === comment.id)!;
      expect(mine.root).toMatchObject({ userId: ann.embedUserId, isOwn: true });
    });

    it('answers 401 without Authorization, for a token that does not verify, and for a lower-case scheme', async () => {
      expectError(await list({ headers: {} }), 401, 'Authorization');
      expectError(await list({ headers: { authorization: 'Embed-Token not.a.jwt' } }), 401, 'Authorization');
      expectError(await list({ headers: { authorization: `embed-token ${ann.token}` } }), 401, 'Authorization');
      expectError(await post({ headers: {} }, { body: 'x' }), 401);
    });

    it('answers 401 once the session is revoked, on the very next request', async () => {
      const dee = await viewer({ embedTenantName: 'customer-a' });
      expect((await list(dee)).statusCode).toBe(200);
      const users = (await app.inject({ url: '/api/v1/embed/users?embedTenantName=customer-a', headers: bearer(s.keys.alice!) })).json().users as { id: number; externalId: string }[];
      const externalId = users.find((u) => u.id === dee.embedUserId)!.externalId;
      const revoked = await app.inject({ method: 'POST', url: '/api/v1/embed/session/revoke', headers: bearer(s.keys.alice!), payload: { externalId, embedTenantName: 'customer-a' } });
      expect(revoked.statusCode).toBe(204);
      expectError(await list(dee), 401);
    });

    it('answers 403 for an API key, a console session and an internalId session: none carries an embed tenant', async () => {
      expectError(await list({ headers: bearer(s.keys.alice!) }), 403, 'Authorization');
      expectError(await post({ headers: bearer(s.keys.bob!) }, { body: 'from a key' }), 403, 'Authorization');
      const email = (await t().db.kysely.selectFrom('users').select('email').where('id', '=', s.refs.alice!).executeTakeFirstOrThrow()).email;
      const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: PASSWORD } });
      expect(login.statusCode, login.body).toBe(200);
      const cookie = login.cookies.find((c) => c.name === 'svc_console')!;
      const consoleRead = await app.inject({ url: url(ids.main), cookies: { svc_console: cookie.value } });
      expectError(consoleRead, 403, 'Authorization');
      const internal = await viewer({ internalId: email });
      expectError(await list(internal), 403, 'Authorization');
      expectError(await mentionable(internal), 403, 'Authorization');
    });

    it('answers 403 for a credential without an embed tenant even when the dashboard does not exist', async () => {
      expectError(await list({ headers: bearer(s.keys.alice!) }, '', 'no-such-dashboard'), 403);
    });
  });

  describe('rule 10: the caller must be able to read the dashboard (404 before 403)', () => {
    const everyEndpoint = (who: ViewerSession, publicId: string) => [
      list(who, '', publicId),
      post(who, { body: 'x' }, publicId),
      mentionable(who, '', publicId),
      edit(who, 1, { body: 'x' }, publicId),
      remove(who, 1, publicId),
      resolve(who, 1, { resolved: true }, publicId),
    ];

    it('answers 404 on every endpoint for a publicId that does not resolve, or resolves only in another account', async () => {
      for (const publicId of ['no-such-dashboard', ids.foreign]) {
        for (const res of await Promise.all(everyEndpoint(ann, publicId))) expectError(res, 404, 'publicId');
      }
    });

    it('answers 403 on every endpoint for a draft, an archived, a non-embeddable dashboard, or one of another deployment', async () => {
      for (const publicId of [ids.draft, ids.archived, ids.noembed, ids.stage]) {
        for (const res of await Promise.all(everyEndpoint(ann, publicId))) expectError(res, 403, 'publicId');
      }
    });

    it('writes nothing when the dashboard is unreadable', async () => {
      const before = await commentCount();
      expectError(await post(ann, { body: 'lost?' }, ids.draft), 403);
      expect(await commentCount()).toBe(before);
    });
  });

  describe('posting (POST /comments) and rule 1: one level of nesting', () => {
    it('returns the Comment: 201 with every field, the author the session\'s embed user', async () => {
      const res = await post(ann, { body: 'Revenue looks off in March' });
      expect(res.statusCode, res.body).toBe(201);
      const comment = res.json();
      expect(comment).toEqual({
        id: expect.any(Number), dashboardId: ids.main, userId: ann.embedUserId, body: 'Revenue looks off in March',
        editedAt: null, removedAt: null, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), isOwn: true, mentions: [],
      });
    });

    it('replies to a thread root', async () => {
      const root = await posted(ann, 'root');
      const reply = await posted(ben, 'reply', root.id);
      const thread = (await walk(ann, 'includeResolved=true')).find((th) => th.root.id === root.id)!;
      expect(thread.replies.map((r) => r.id)).toEqual([reply.id]);
    });

    it('answers 400 for a reply to a reply, naming parentId, and writes nothing', async () => {
      const root = await posted(ann, 'root');
      const reply = await posted(ben, 'reply', root.id);
      const before = await commentCount();
      expectError(await post(ann, { body: 'nested', parentId: reply.id }), 400, 'parentId');
      expect(await commentCount()).toBe(before);
    });

    it('answers 404 for a parentId naming nothing, a deleted thread, a comment on another dashboard, or of another tenant', async () => {
      expectError(await post(ann, { body: 'x', parentId: 2147483647 }), 404, 'parentId');
      const deleted = await posted(ann, 'to delete');
      expect((await remove(ann, deleted.id)).statusCode).toBe(204);
      expectError(await post(ann, { body: 'x', parentId: deleted.id }), 404, 'parentId');
      const elsewhere = await posted(ann, 'on the second dashboard', undefined, ids.second);
      expectError(await post(ann, { body: 'x', parentId: elsewhere.id }), 404, 'parentId');
      const otherTenant = await posted(cat, 'customer-b');
      expectError(await post(ann, { body: 'x', parentId: otherTenant.id }), 404, 'parentId');
    });

    it('answers 400 for a parentId that is not a positive integer', async () => {
      expectError(await post(ann, { body: 'x', parentId: 0 }), 400, 'parentId');
      expectError(await post(ann, { body: 'x', parentId: 1.5 }), 400, 'parentId');
    });

    it('answers 415 for a body of an unsupported type, 400 for plain text or JSON that does not parse', async () => {
      const xml = await app.inject({ method: 'POST', url: url(ids.main), headers: { ...ann.headers, 'content-type': 'application/xml' }, payload: '<body/>' });
      expectError(xml, 415);
      const text = await app.inject({ method: 'POST', url: url(ids.main), headers: { ...ann.headers, 'content-type': 'text/plain' }, payload: 'hello' });
      expectError(text, 400);
      const broken = await app.inject({ method: 'POST', url: url(ids.main), headers: { ...ann.headers, 'content-type': 'application/json' }, payload: '{"body":' });
      expectError(broken, 400);
    });
  });

  describe('bodies are JSON as sent: a field of the wrong type is a 400, never converted', () => {
    it.each([
      ['POST', { body: 12345 }, 'body'],
      ['POST', { body: true }, 'body'],
      ['POST', { body: ['text'] }, 'body'],
      ['POST', { body: null }, 'body'],
      ['POST', { body: 'x', parentId: '1' }, 'parentId'],
      ['PATCH', { body: 42 }, 'body'],
      ['RESOLVE', { resolved: null }, 'resolved'],
      ['RESOLVE', { resolved: 'false' }, 'resolved'],
      ['RESOLVE', { resolved: 0 }, 'resolved'],
    ] as Array<['POST' | 'PATCH' | 'RESOLVE', Record<string, unknown>, string]>)('%s %j: 400 naming %s, nothing changed', async (kind, payload, field) => {
      const root = await posted(ann, 'typed');
      expect((await resolve(ann, root.id, { resolved: true })).statusCode).toBe(200);
      const before = await commentCount();
      const res = kind === 'POST' ? await post(ann, payload) : kind === 'PATCH' ? await edit(ann, root.id, payload) : await resolve(ann, root.id, payload);
      expectError(res, 400, field);
      expect(await commentCount()).toBe(before);
      const thread = (await walk(ann, 'resolvedOnly=true')).find((th) => th.root.id === root.id)!;
      expect(thread.root.body).toBe('typed');
      expect(thread.resolvedAt).not.toBeNull();
    });
  });

  describe('edited cursors and odd paths are 4xx, never 500', () => {
    const forge = (cursor: string, position: unknown[]) => {
      const [version, fingerprint] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
      return Buffer.from(JSON.stringify([version, fingerprint, ...position])).toString('base64url');
    };

    it('answers 400 for a cursor whose position was edited into something the database cannot compare', async () => {
      await posted(ann, 'a');
      await posted(ann, 'b');
      const cursor = (await list(ann, 'first=1')).json().pageInfo.endCursor as string;
      const [, , createdAt] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [number, string, string, number];
      for (const position of [[createdAt, 2147483648], [createdAt, 2 ** 53], [createdAt, 0], [createdAt, 1.5], ['2026-06-01\u0000', 1], ['not a time', 1], [createdAt, '1']]) {
        expectError(await list(ann, `first=1&after=${forge(cursor, position)}`), 400, 'after');
      }
      // An edited position inside the caller's own scope is only a position: it cannot reach other rows.
      expect((await list(ann, `first=1&after=${forge(cursor, ['9999-12-31T00:00:00.000Z', 2147483647])}`)).statusCode).toBe(200);
      const users = (await mentionable(ann, 'first=1')).json().pageInfo.endCursor as string;
      expectError(await mentionable(ann, `after=${forge(users, ['a\u0000', 1])}`), 400, 'after');
      expectError(await mentionable(ann, `after=${forge(users, ['a', 2147483648])}`), 400, 'after');
    });

    it('answers 400 for a search with U+0000 and 404 for a publicId with one', async () => {
      expectError(await mentionable(ann, 'search=a%00b'), 400, 'search');
      expectError(await list(ann, '', 'a\u0000b'), 404, 'publicId');
      expectError(await app.inject({ url: '/api/v1/embed/dashboard/a%00b', headers: ann.headers }), 404, 'publicId');
    });
  });

  describe('rule 9: no endpoint accepts an author in the body', () => {
    it.each(['userId', 'embedUserId', 'author', 'isOwn', 'createdAt'])('answers 400 naming %s on POST and PATCH, and writes nothing', async (field) => {
      const mine = await posted(ann, 'mine');
      const before = await commentCount();
      expectError(await post(ann, { body: 'x', [field]: ben.embedUserId }), 400, field);
      expectError(await edit(ann, mine.id, { body: 'x', [field]: ben.embedUserId }), 400, field);
      expect(await commentCount()).toBe(before);
    });
  });

  describe('rule 2: threads newest-first by start, replies oldest-first', () => {
    it('lists threads newest first; a reply never moves its thread; replies oldest first', async () => {
      const publicId = await freshDashboard();
      const first = await posted(ann, 'first', undefined, publicId);
      const second = await posted(ben, 'second', undefined, publicId);
      const third = await posted(ann, 'third', undefined, publicId);
      const r1 = await posted(ben, 'r1', first.id, publicId);
      const r2 = await posted(ann, 'r2', first.id, publicId);
      const r3 = await posted(ben, 'r3', first.id, publicId);
      const threads = await walk(ann, '', 100, publicId);
      expect(threads.map((th) => th.root.id)).toEqual([third.id, second.id, first.id]);
      expect(threads[2]!.replies.map((r) => r.id)).toEqual([r1.id, r2.id, r3.id]);
      expect(threads[2]!.replies.map((r) => r.body)).toEqual(['r1', 'r2', 'r3']);
    });

    it('breaks a tie of start times by id, newest (highest) first', async () => {
      const publicId = await freshDashboard();
      const frozen = clock;
      const a = await posted(ann, 'a', undefined, publicId);
      clock = frozen;
      const b = await posted(ann, 'b', undefined, publicId);
      clock = frozen + 10;
      expect(a.createdAt).toBe(b.createdAt);
      for (const size of [1, 100]) expect((await walk(ann, '', size, publicId)).map((th) => th.root.id)).toEqual([b.id, a.id]);
    });
  });

  describe('rule 3: open threads by default; includeResolved; resolvedOnly wins', () => {
    it('filters in SQL before the page is cut', async () => {
      const publicId = await freshDashboard();
      const made: CommentJson[] = [];
      for (let i = 0; i < 6; i++) made.push(await posted(ann, `t${i}`, undefined, publicId));
      for (const index of [1, 2, 4]) expect((await resolve(ann, made[index]!.id, { resolved: true }, publicId)).statusCode).toBe(200);
      const newestFirst = (indexes: number[]) => indexes.map((i) => made[i]!.id).reverse();
      for (const size of [1, 2, 100]) {
        expect((await walk(ann, '', size, publicId)).map((th) => th.root.id)).toEqual(newestFirst([0, 3, 5]));
        expect((await walk(ann, 'includeResolved=true', size, publicId)).map((th) => th.root.id)).toEqual(newestFirst([0, 1, 2, 3, 4, 5]));
        expect((await walk(ann, 'resolvedOnly=true', size, publicId)).map((th) => th.root.id)).toEqual(newestFirst([1, 2, 4]));
        expect((await walk(ann, 'includeResolved=true&resolvedOnly=true', size, publicId)).map((th) => th.root.id)).toEqual(newestFirst([1, 2, 4]));
        expect((await walk(ann, 'includeResolved=false&resolvedOnly=false', size, publicId)).map((th) => th.root.id)).toEqual(newestFirst([0, 3, 5]));
      }
      // A page of one open thread knows whether another open one follows, though resolved ones sit between.
      const page = (await list(ann, 'first=1', publicId)).json();
      expect(page.pageInfo.hasNextPage).toBe(true);
      const last = (await list(ann, `first=1&after=${(await list(ann, 'first=2', publicId)).json().pageInfo.endCursor}`, publicId)).json();
      expect(last.items.map((th: ThreadJson) => th.root.id)).toEqual([made[0]!.id]);
      expect(last.pageInfo.hasNextPage).toBe(false);
    });

    it('answers 400 naming the field for a filter that is not a boolean', async () => {
      expectError(await list(ann, 'includeResolved=maybe'), 400, 'includeResolved');
      expectError(await list(ann, 'resolvedOnly=2'), 400, 'resolvedOnly');
    });
  });

  describe('the Thread state table: resolve and re-open', () => {
    it('resolves (resolvedAt and resolvedBy set) and re-opens (both null), returning the Thread with its replies', async () => {
      const root = await posted(ann, 'resolve me');
      const reply = await posted(ben, 'a reply', root.id);
      const resolved = await resolve(ann, root.id, { resolved: true });
      expect(resolved.statusCode, resolved.body).toBe(200);
      expect(resolved.json()).toEqual({
        root: { ...root, isOwn: true }, replies: [{ ...reply, isOwn: false }],
        resolvedAt: expect.stringMatching(/Z$/), resolvedBy: ann.embedUserId,
      });
      const again = await resolve(ann, root.id, { resolved: true });
      expect(again.json().resolvedAt).toBe(resolved.json().resolvedAt);
      const reopened = await resolve(ann, root.id, { resolved: false });
      expect(reopened.statusCode).toBe(200);
      expect(reopened.json()).toMatchObject({ resolvedAt: null, resolvedBy: null });
      expect((await walk(ann)).some((th) => th.root.id === root.id)).toBe(true);
    });

    it('answers 400 on a reply\'s id, whoever asks, and leaves the thread unchanged', async () => {
      const root = await posted(ann, 'root');
      const reply = await posted(ben, 'reply', root.id);
      expectError(await resolve(ben, reply.id, { resolved: true }), 400, 'commentId');
      expectError(await resolve(ann, reply.id, { resolved: true }), 400, 'commentId');
      expect((await walk(ann)).find((th) => th.root.id === root.id)?.resolvedAt).toBeNull();
    });

    it('answers 403 to anyone but the root\'s author, and leaves the thread unchanged', async () => {
      const root = await posted(ann, 'mine to resolve');
      expectError(await resolve(ben, root.id, { resolved: true }), 403, 'commentId');
      expect((await walk(ann)).find((th) => th.root.id === root.id)?.resolvedAt).toBeNull();
      expect((await resolve(ann, root.id, { resolved: true })).statusCode).toBe(200);
      expectError(await resolve(ben, root.id, { resolved: false }), 403, 'commentId');
      expect((await walk(ann, 'resolvedOnly=true')).some((th) => th.root.id === root.id)).toBe(true);
    });

    it('answers 400 without a boolean `resolved`, and 404 for a comment that is not there', async () => {
      const root = await posted(ann, 'x');
      expectError(await resolve(ann, root.id, {}), 400, 'resolved');
      expectError(await resolve(ann, root.id, { resolved: 'yes' }), 400, 'resolved');
      expectError(await resolve(ann, 2147483647, { resolved: true }), 404, 'commentId');
    });
  });

  describe('rule 4 and the Comment deletion table', () => {
    it('deleting a reply removes it from replies; the rest of the thread keeps its place', async () => {
      const publicId = await freshDashboard();
      const older = await posted(ann, 'older', undefined, publicId);
      const root = await posted(ann, 'root', undefined, publicId);
      const keep = await posted(ben, 'keep', root.id, publicId);
      const drop = await posted(ben, 'drop', root.id, publicId);
      const res = await remove(ben, drop.id, publicId);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      const threads = await walk(ann, '', 100, publicId);
      expect(threads.map((th) => th.root.id)).toEqual([root.id, older.id]);
      expect(threads[0]!.replies.map((r) => r.id)).toEqual([keep.id]);
    });

    it('deleting a root removes the whole thread, replies included, from every list', async () => {
      const publicId = await freshDashboard();
      const root = await posted(ann, 'root', undefined, publicId);
      const reply = await posted(ben, 'reply', root.id, publicId);
      expect((await remove(ann, root.id, publicId)).statusCode).toBe(204);
      for (const filter of ['', 'includeResolved=true', 'resolvedOnly=true']) expect(await walk(ann, filter, 100, publicId)).toEqual([]);
      // The thread's replies are gone with it: not editable, deletable or repliable.
      expectError(await edit(ben, reply.id, { body: 'still here?' }, publicId), 404, 'commentId');
      expectError(await remove(ben, reply.id, publicId), 404, 'commentId');
      expectError(await post(ben, { body: 'x', parentId: root.id }, publicId), 404, 'parentId');
    });

    it('answers 403 to anyone but the author and deletes nothing; 404 the second time', async () => {
      const root = await posted(ann, 'not yours');
      expectError(await remove(ben, root.id), 403, 'commentId');
      expect((await walk(ann)).some((th) => th.root.id === root.id)).toBe(true);
      expect((await remove(ann, root.id)).statusCode).toBe(204);
      expectError(await remove(ann, root.id), 404, 'commentId');
      expectError(await resolve(ann, root.id, { resolved: true }), 404, 'commentId');
    });

    it('keeps the rows (soft delete): a root is marked with its replies, and never returned', async () => {
      const root = await posted(ann, 'soft');
      const reply = await posted(ben, 'soft reply', root.id);
      const other = await posted(ann, 'another thread');
      expect((await remove(ann, root.id)).statusCode).toBe(204);
      const rows = await t().db.kysely.selectFrom('comments').select(['id', 'removed_at', 'body']).where('id', 'in', [root.id, reply.id, other.id]).orderBy('id').execute();
      expect(rows.map((row) => [row.id, row.body, row.removed_at !== null])).toEqual([[root.id, 'soft', true], [reply.id, 'soft reply', true], [other.id, 'another thread', false]]);
    });

    it('deletes nothing of a thread whose root is not the caller\'s, replies included', async () => {
      const root = await posted(ann, 'mine');
      const reply = await posted(ben, 'his reply', root.id);
      expectError(await remove(ben, root.id), 403);
      const rows = await t().db.kysely.selectFrom('comments').select(['removed_at']).where('id', 'in', [root.id, reply.id]).execute();
      expect(rows.every((row) => row.removed_at === null)).toBe(true);
    });
  });

  describe('rule 5: the author edits; every embed user of the tenant reads', () => {
    it('lets the author replace the body and sets editedAt', async () => {
      const root = await posted(ann, 'draft wording');
      const res = await edit(ann, root.id, { body: 'final wording' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ id: root.id, body: 'final wording', userId: ann.embedUserId, createdAt: root.createdAt, isOwn: true });
      expect(res.json().editedAt).not.toBeNull();
      expect(Date.parse(res.json().editedAt)).toBeGreaterThan(Date.parse(root.createdAt));
      const listed = (await walk(ben)).find((th) => th.root.id === root.id)!;
      expect(listed.root).toMatchObject({ body: 'final wording', editedAt: res.json().editedAt, isOwn: false });
    });

    it('answers 403 to another user of the tenant and leaves the body unchanged', async () => {
      const root = await posted(ann, 'original');
      expectError(await edit(ben, root.id, { body: 'vandalised' }), 403, 'commentId');
      expect((await walk(ann)).find((th) => th.root.id === root.id)!.root).toMatchObject({ body: 'original', editedAt: null });
    });

    it('shows every thread of the tenant to each of its users, with isOwn set per caller', async () => {
      const root = await posted(ann, 'for everyone');
      const reply = await posted(ben, 'seen', root.id);
      const asBen = (await walk(ben)).find((th) => th.root.id === root.id)!;
      expect(asBen.root.isOwn).toBe(false);
      expect(asBen.replies).toEqual([{ ...reply, isOwn: true }]);
      const asAnn = (await walk(ann)).find((th) => th.root.id === root.id)!;
      expect(asAnn.root.isOwn).toBe(true);
      expect(asAnn.replies[0]!.isOwn).toBe(false);
    });

    it('answers 404 for editing a comment of another dashboard or of another tenant', async () => {
      const elsewhere = await posted(ann, 'second dashboard', undefined, ids.second);
      expectError(await edit(ann, elsewhere.id, { body: 'x' }), 404, 'commentId');
      const otherTenant = await posted(cat, 'customer-b');
      expectError(await edit(ann, otherTenant.id, { body: 'x' }), 404, 'commentId');
      expectError(await remove(ann, otherTenant.id), 404, 'commentId');
      expectError(await resolve(ann, otherTenant.id, { resolved: true }), 404, 'commentId');
    });

    it('answers 400 naming commentId for an id that is not a positive integer', async () => {
      expectError(await app.inject({ method: 'PATCH', url: url(ids.main, '/abc'), headers: ann.headers, payload: { body: 'x' } }), 400, 'commentId');
      expectError(await app.inject({ method: 'DELETE', url: url(ids.main, '/0'), headers: ann.headers }), 400, 'commentId');
    });
  });

  describe('rule 6: threads are stored per embed tenant', () => {
    it('never lists another tenant\'s threads', async () => {
      const publicId = await freshDashboard();
      const a = await posted(ann, 'tenant a', undefined, publicId);
      const b = await posted(cat, 'tenant b', undefined, publicId);
      expect((await walk(ann, 'includeResolved=true', 100, publicId)).map((th) => th.root.id)).toEqual([a.id]);
      expect((await walk(cat, 'includeResolved=true', 100, publicId)).map((th) => th.root.id)).toEqual([b.id]);
      const row = await t().db.kysely.selectFrom('comments as c').innerJoin('embed_tenants as t', 't.id', 'c.embed_tenant_id').select('t.name').where('c.id', '=', b.id).executeTakeFirstOrThrow();
      expect(row.name).toBe('customer-b');
    });

    it('puts every session minted without embedTenantName in the account\'s tenant: one conversation, one directory', async () => {
      const publicId = await freshDashboard();
      const dan = await viewer({ username: `dan-${uniqueSuffix()}` });
      const eve = await viewer({ username: `eve-${uniqueSuffix()}` });
      const root = await posted(dan, 'default tenant', undefined, publicId);
      expect((await walk(eve, '', 100, publicId)).map((th) => th.root.id)).toEqual([root.id]);
      expect((await walk(ann, '', 100, publicId))).toEqual([]);
      const directory = (await mentionable(eve, 'first=200')).json().items as { id: number }[];
      expect(directory.map((u) => u.id)).toEqual(expect.arrayContaining([dan.embedUserId, eve.embedUserId]));
      expect(directory.map((u) => u.id)).not.toContain(ann.embedUserId);
    });
  });

  describe('rule 7 and Limits: pagination', () => {
    let publicId: string;
    let made: CommentJson[];
    beforeAll(async () => {
      publicId = await freshDashboard();
      made = [];
      for (let i = 0; i < 9; i++) made.push(await posted(i % 2 === 0 ? ann : ben, `p${i}`, undefined, publicId));
    });

    it.each([1, 2, 7])('walks every thread exactly once in order at page size %i', async (size) => {
      expect((await walk(ann, '', size, publicId)).map((th) => th.root.id)).toEqual(made.map((c) => c.id).reverse());
    });

    it('answers 400 for `after` that is absent or null sent back, empty, or bogus', async () => {
      for (const after of ['null', 'undefined', '', 'abc', 'WzFd', '%00']) expectError(await list(ann, `after=${after}`, publicId), 400, 'after');
    });

    it('answers 400 for a cursor of another filter, another dashboard, another tenant, or the mentionable users', async () => {
      const cursor = (await list(ann, 'first=1', publicId)).json().pageInfo.endCursor as string;
      expect((await list(ben, `first=1&after=${cursor}`, publicId)).statusCode).toBe(200);
      expectError(await list(ann, `first=1&includeResolved=true&after=${cursor}`, publicId), 400, 'after');
      expectError(await list(ann, `first=1&resolvedOnly=true&after=${cursor}`, publicId), 400, 'after');
      expectError(await list(ann, `first=1&after=${cursor}`, ids.main), 400, 'after');
      expectError(await list(cat, `first=1&after=${cursor}`, publicId), 400, 'after');
      expectError(await mentionable(ann, `after=${cursor}`), 400, 'after');
    });

    it('answers 400 naming first below 1 or not an integer', async () => {
      for (const first of ['0', '-1', '1.5', 'ten']) expectError(await list(ann, `first=${first}`, publicId), 400, 'first');
      expectError(await mentionable(ann, 'first=0'), 400, 'first');
    });

    it('returns 100 threads by default and clamps first above 200 to 200, hasNextPage staying true', async () => {
      const big = await freshDashboard();
      const roots: number[] = [];
      for (let i = 0; i < 205; i++) roots.push((await posted(ann, `b${i}`, undefined, big)).id);
      const byDefault = (await list(ann, '', big)).json();
      expect(byDefault.items).toHaveLength(100);
      expect(byDefault.pageInfo.hasNextPage).toBe(true);
      const clamped = (await list(ann, 'first=100000', big)).json();
      expect(clamped.items).toHaveLength(200);
      expect(clamped.pageInfo.hasNextPage).toBe(true);
      const rest = (await list(ann, `first=100000&after=${clamped.pageInfo.endCursor}`, big)).json();
      expect(rest.items.map((th: ThreadJson) => th.root.id)).toEqual(roots.slice(0, 5).reverse());
      expect(rest.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    });

    it('answers an empty page with null cursors', async () => {
      const empty = await freshDashboard();
      const page = (await list(ann, '', empty)).json();
      expect(page).toEqual({ items: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } });
    });
  });

  describe('rule 8: mentionable users', () => {
    let tenant: string;
    let people: Record<string, ViewerSession>;
    beforeAll(async () => {
      tenant = `mention-${uniqueSuffix()}`;
      people = {};
      const specs = [
        { username: 'zed', email: 'zed@x.test' }, { username: 'Amy', email: 'amy@x.test' }, { username: 'bob_1', email: 'b@x.test' },
        { username: 'carl', email: 'CARL.100%@Example.test' }, { username: 'bobby', email: null }, { username: 'Émile', email: 'emile@x.test' },
      ];
      for (const spec of specs) people[spec.username] = await viewer({ embedTenantName: tenant, username: spec.username, ...(spec.email === null ? {} : { email: spec.email }), firstName: `F ${spec.username}` });
      await viewer({ embedTenantName: `${tenant}-other`, username: 'amelia', email: 'amelia@x.test' });
    });
    const names = async (query = '') => {
      const res = await mentionable(people.zed!, query);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().items as { username: string }[]).map((u) => u.username);
    };

    it("lists the tenant's embed users only, by username case-insensitively, with id, username, email and firstName", async () => {
      expect(await names()).toEqual(['Amy', 'bob_1', 'bobby', 'carl', 'zed', 'Émile']);
      const amy = (await mentionable(people.zed!, 'search=amy')).json().items[0];
      expect(amy).toEqual({ id: people.Amy!.embedUserId, username: 'Amy', email: 'amy@x.test', firstName: 'F Amy' });
      expect((await mentionable(people.zed!, 'search=bobby')).json().items[0].email).toBeNull();
    });

    it('never lists platform users of the account', async () => {
      const email = (await t().db.kysely.selectFrom('users').select('email').where('id', '=', s.refs.alice!).executeTakeFirstOrThrow()).email;
      expect(await names(`search=${encodeURIComponent(email)}`)).toEqual([]);
      expect(await names('search=alice')).toEqual([]);
    });

    it('searches username or email case-insensitively, with % and _ literal', async () => {
      expect(await names('search=AMY')).toEqual(['Amy']);
      expect(await names('search=example')).toEqual(['carl']);
      expect(await names(`search=${encodeURIComponent('100%')}`)).toEqual(['carl']);
      expect(await names('search=b_')).toEqual(['bob_1']);
      expect(await names('search=%C3%A9MILE')).toEqual(['Émile']);
      expect(await names('search=bob')).toEqual(['bob_1', 'bobby']);
      expect(await names('search=')).toEqual(['Amy', 'bob_1', 'bobby', 'carl', 'zed', 'Émile']);
    });

    it('answers an empty page with null cursors when nothing matches', async () => {
      const res = await mentionable(people.zed!, 'search=nobody-at-all');
      expect(res.json()).toEqual({ items: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } });
    });

    it('paginates with first and after, bound to the search', async () => {
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const res = await mentionable(people.zed!, `first=2${after === null ? '' : `&after=${after}`}`);
        expect(res.statusCode, res.body).toBe(200);
        seen.push(...(res.json().items as { username: string }[]).map((u) => u.username));
        if (!res.json().pageInfo.hasNextPage) break;
        after = res.json().pageInfo.endCursor;
      }
      expect(seen).toEqual(['Amy', 'bob_1', 'bobby', 'carl', 'zed', 'Émile']);
      const cursor = (await mentionable(people.zed!, 'first=1')).json().pageInfo.endCursor as string;
      expectError(await mentionable(people.zed!, `search=b&after=${cursor}`), 400, 'after');
      expectError(await mentionable(people.zed!, 'after=null'), 400, 'after');
    });

    it('finds a user by the username and email of their latest session, not the earlier ones', async () => {
      const externalId = `renamed-${uniqueSuffix()}`;
      await viewer({ embedTenantName: tenant, externalId, username: 'oldhandle', email: 'old@x.test' });
      const renamed = await viewer({ embedTenantName: tenant, externalId, username: 'Newhandle', email: 'fresh@x.test' });
      expect(await names('search=oldhandle')).toEqual([]);
      expect(await names('search=old@')).toEqual([]);
      expect(await names('search=NEWHAND')).toEqual(['Newhandle']);
      expect(await names('search=fresh@')).toEqual(['Newhandle']);
      expect((await app.inject({ method: 'DELETE', url: `/api/v1/embed/users/${renamed.embedUserId}`, headers: bearer(s.keys.alice!) })).statusCode).toBe(204);
      expect(await names('search=newhandle')).toEqual([]);
    });

    it('answers 400 for a search over 255 characters, and accepts 255', async () => {
      expect((await mentionable(people.zed!, `search=${'a'.repeat(255)}`)).statusCode).toBe(200);
      expectError(await mentionable(people.zed!, `search=${'a'.repeat(256)}`), 400, 'search');
    });
  });

  describe('Limits: the body is 1 to 10,000 characters, stored and returned verbatim', () => {
    it('counts Unicode code points: 10,000 astral-plane characters are accepted, 10,001 are not', async () => {
      const emoji = '😀'.repeat(10_000);
      expect(emoji.length).toBe(20_000);
      const comment = await posted(ann, emoji);
      expect(comment.body).toBe(emoji);
      const stored = (await walk(ann)).find((th) => th.root.id === comment.id)!.root.body;
      expect(stored).toBe(emoji);
      expectError(await post(ann, { body: `${emoji}😀` }), 400, 'body');
      expectError(await edit(ann, comment.id, { body: `${emoji}😀` }), 400, 'body');
    });

    it('accepts exactly 10,000 and refuses 10,001 ASCII characters, and an empty body, on POST and PATCH', async () => {
      const comment = await posted(ann, 'x'.repeat(10_000));
      expect(comment.body).toHaveLength(10_000);
      expectError(await post(ann, { body: 'x'.repeat(10_001) }), 400, 'body');
      expectError(await post(ann, { body: '' }), 400, 'body');
      expectError(await post(ann, {}), 400, 'body');
      expectError(await edit(ann, comment.id, { body: '' }), 400, 'body');
      expectError(await edit(ann, comment.id, {}), 400, 'body');
    });

    it('returns markup, whitespace, @mentions and combining marks exactly as sent', async () => {
      const body = '  <b>@ann</b> & "quotes"\n\ttabs\r\n e\u0301 \u200d 👩‍👩‍👧 \\ end  ';
      const comment = await posted(ann, body);
      expect(comment.body).toBe(body);
      expect((await walk(ann)).find((th) => th.root.id === comment.id)!.root.body).toBe(body);
      const edited = await edit(ann, comment.id, { body: `${body}!` });
      expect(edited.json().body).toBe(`${body}!`);
    });

    it('answers 400 for a body that cannot be stored verbatim (U+0000, an unpaired surrogate), writing nothing', async () => {
      const before = await commentCount();
      expectError(await post(ann, { body: 'a\u0000b' }), 400, 'body');
      expectError(await app.inject({ method: 'POST', url: url(ids.main), headers: { ...ann.headers, 'content-type': 'application/json' }, payload: '{"body":"a\\ud800b"}' }), 400, 'body');
      expect(await commentCount()).toBe(before);
    });
  });

  describe('cached thread lists (DESIGN: no stale page after a write, from this process or another)', () => {
    it('serves every write made through a second app on its own connection on the next request', async () => {
      const publicId = await freshDashboard();
      const second = openDatabase(t().url);
      const otherApp = await buildApp(testConfig(), { db: second, now: () => new Date(clock++) });
      try {
        const ids = async () => (await list(ann, 'includeResolved=true', publicId)).json().items.map((th: ThreadJson) => [th.root.id, th.root.body, th.replies.length, th.resolvedAt !== null]);
        const via = (payload: Record<string, unknown>, method = 'POST', rest = '') =>
          otherApp.inject({ method: method as 'POST', url: url(publicId, rest), headers: ann.headers, ...(method === 'DELETE' ? {} : { payload }) });
        expect(await ids()).toEqual([]);
        const root = (await via({ body: 'one' })).json() as CommentJson;
        expect(await ids()).toEqual([[root.id, 'one', 0, false]]);
        expect((await via({ body: 'reply', parentId: root.id })).statusCode).toBe(201);
        expect(await ids()).toEqual([[root.id, 'one', 1, false]]);
        expect((await via({ body: 'two' }, 'PATCH', `/${root.id}`)).statusCode).toBe(200);
        expect(await ids()).toEqual([[root.id, 'two', 1, false]]);
        expect((await via({ resolved: true }, 'POST', `/${root.id}/resolve`)).statusCode).toBe(200);
        expect(await ids()).toEqual([[root.id, 'two', 1, true]]);
        expect((await via({}, 'DELETE', `/${root.id}`)).statusCode).toBe(204);
        expect(await ids()).toEqual([]);
      } finally {
        await otherApp.close();
        await second.close();
      }
    });

    it('drops the author of a deleted embed user from a page it served before', async () => {
      const publicId = await freshDashboard();
      const hal = await viewer({ embedTenantName: 'customer-a', username: 'hal' });
      const root = await posted(hal, 'cached', undefined, publicId);
      expect((await list(ann, '', publicId)).json().items[0].root.userId).toBe(hal.embedUserId);
      expect((await app.inject({ method: 'DELETE', url: `/api/v1/embed/users/${hal.embedUserId}`, headers: bearer(s.keys.alice!) })).statusCode).toBe(204);
      expect((await list(ann, '', publicId)).json().items[0].root).toMatchObject({ id: root.id, userId: null });
    });

    it('keeps isOwn per caller: a page cached for one viewer is not served to another', async () => {
      const publicId = await freshDashboard();
      await posted(ann, 'whose?', undefined, publicId);
      expect((await list(ann, '', publicId)).json().items[0].root.isOwn).toBe(true);
      expect((await list(ben, '', publicId)).json().items[0].root.isOwn).toBe(false);
      expect((await list(ann, '', publicId)).json().items[0].root.isOwn).toBe(true);
    });

    it('still checks the dashboard on every request', async () => {
      const publicId = await freshDashboard();
      await posted(ann, 'then unpublished', undefined, publicId);
      expect((await list(ann, '', publicId)).statusCode).toBe(200);
      await t().db.kysely.updateTable('dashboards').set({ status: 'archived' }).where('public_id', '=', publicId).execute();
      expectError(await list(ann, '', publicId), 403, 'publicId');
    });
  });

  describe('deleted embed users and the allowEmbedComments setting', () => {
    it('keeps the comments of a deleted embed user, with userId null and isOwn false', async () => {
      const gus = await viewer({ embedTenantName: 'customer-a', username: 'gus' });
      const root = await posted(gus, 'I will leave');
      expect((await resolve(gus, root.id, { resolved: true })).statusCode).toBe(200);
      const reply = await posted(gus, 'me too', root.id);
      const deleted = await app.inject({ method: 'DELETE', url: `/api/v1/embed/users/${gus.embedUserId}`, headers: bearer(s.keys.alice!) });
      expect(deleted.statusCode).toBe(204);
      const thread = (await walk(ann, 'resolvedOnly=true')).find((th) => th.root.id === root.id)!;
      expect(thread.root).toMatchObject({ userId: null, isOwn: false, body: 'I will leave' });
      expect(thread.replies).toEqual([expect.objectContaining({ id: reply.id, userId: null, isOwn: false })]);
      expect(thread.resolvedAt).not.toBeNull();
      expect(thread.resolvedBy).toBeNull();
      // Nobody is its author any more: nobody edits, deletes or re-opens it.
      expectError(await edit(ann, root.id, { body: 'x' }), 403);
      expectError(await resolve(ann, root.id, { resolved: false }), 403);
      expectError(await list(gus), 401);
    });

    it('exposes allowEmbedComments to the embed, and the API answers whatever it says', async () => {
      expect((await app.inject({ url: '/api/v1/embed/session', headers: ann.headers })).json().session.allowEmbedComments).toBe(true);
      const quiet = await seedAccount(t().db.kysely, {
        settings: { allowEmbedComments: false },
        users: [{ ref: 'alice', role: 'admin' }],
        deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'W', createdBy: 'alice', dashboard: { publicId: `quiet-${uniqueSuffix()}`, status: 'published', allowEmbed: true } }] }],
      });
      const publicId = (await t().db.kysely.selectFrom('dashboards').select('public_id').where('workbook_id', '=', quiet.refs.wb!).executeTakeFirstOrThrow()).public_id;
      const viewerOfQuiet = await viewer({}, quiet);
      expect((await app.inject({ url: '/api/v1/embed/session', headers: viewerOfQuiet.headers })).json().session.allowEmbedComments).toBe(false);
      expect((await post(viewerOfQuiet, { body: 'still answered' }, publicId)).statusCode).toBe(201);
      expect((await list(viewerOfQuiet, '', publicId)).json().items).toHaveLength(1);
    });

    it('defaults allowEmbedComments to false for an account that never set it', async () => {
      const viewerOfOther = await viewer({}, other);
      expect((await app.inject({ url: '/api/v1/embed/session', headers: viewerOfOther.headers })).json().session.allowEmbedComments).toBe(false);
    });
  });
});
