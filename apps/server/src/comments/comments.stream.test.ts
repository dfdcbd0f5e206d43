import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { eventually } from '../../test/eventually.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { SseStream } from '../../test/sse.js';
import type { SseEvent } from '../../test/sse.js';
import { buildApp } from '../app.js';
import type { AppOptions } from '../app.js';
import { testConfig } from '../../test/config.js';
import type { ConfigOverrides } from '../../test/config.js';
import { expectErrorBody } from '../../test/errors.js';
import type { Comment } from './comments.schema.js';
import { pruneCommentEvents } from './comments.store.js';
import { CommentStreamHub } from './comments.stream.js';
import type { StreamCaller } from './comments.stream.js';
import { selectLiveSessions } from '../sessions/sessions.service.js';

const SPARE_DASHBOARDS = 24;
const HEARTBEAT_MS = 250;
const REPLAY_MAX = 50;
const PER_SESSION = 3;

/** A comment as the API answers it. */
type CommentJson = Comment;

/**
 * Issue 23: the live comment stream over real HTTP (the app listening on a port, the stream read with fetch as the
 * embed panel reads it), on both databases: each event type, the thread list's scoping, resuming with Last-Event-ID,
 * the reset, the end of a stream (revocation, expiry, an unreadable dashboard, shutdown), the per-session limit and
 * the heartbeats. Writes go through the REST endpoints of the same app.
 */
describeEachDialect('live comment stream', (t) => {
  let s: SeededAccount;
  let ids: Record<'main' | 'draft' | 'archived' | 'noembed' | 'stage' | 'foreign', string>;
  let spares: string[];
  let ann: ViewerSession;
  let ben: ViewerSession;
  let cat: ViewerSession;
  let app: FastifyInstance;
  let base: string;

  /**
   * An app of its own over the suite's database, listening on a free port. Its idle timeout is short: fetch opens
   * a spare connection when a stream is aborted, and the drain of app.close() waits for a connection that never
   * sent a request until the idle timeout cuts it (heartbeats keep streams within it).
   */
  const listeningApp = async (overrides: ConfigOverrides = {}, options: Partial<AppOptions> = {}): Promise<{ app: FastifyInstance; base: string }> => {
    const started = await buildApp(testConfig({
      commentStreams: { heartbeatMs: HEARTBEAT_MS, replayMax: REPLAY_MAX, perSession: PER_SESSION }, timeouts: { idleMs: 4 * HEARTBEAT_MS }, ...overrides,
    }), { db: t().db, ...options });
    await started.listen({ port: 0, host: '127.0.0.1' });
    return { app: started, base: `http://127.0.0.1:${(started.server.address() as AddressInfo).port}` };
  };

  beforeAll(async () => {
    const suffix = uniqueSuffix();
    const dashboard = (ref: string, publicId: string, extra: Record<string, unknown> = {}) => ({
      ref, type: 'WORKBOOK' as const, name: ref, createdBy: 'alice',
      dashboard: { publicId: `${publicId}-${suffix}`, status: 'published' as const, allowEmbed: true, ...extra },
    });
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [
        {
          ref: 'prod', name: 'Prod', items: [
            dashboard('wb-main', 'main'), dashboard('wb-draft', 'draft', { status: 'draft' }), dashboard('wb-archived', 'archived', { status: 'archived' }),
            dashboard('wb-noembed', 'noembed', { allowEmbed: false }),
            ...Array.from({ length: SPARE_DASHBOARDS }, (_, i) => dashboard(`wb-spare-${i}`, `spare-${i}`)),
          ],
        },
        { ref: 'stage', name: 'Stage', items: [dashboard('wb-stage', 'stage')] },
      ],
    });
    await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P', items: [dashboard('wb', 'foreign')] }] });
    ids = { main: `main-${suffix}`, draft: `draft-${suffix}`, archived: `archived-${suffix}`, noembed: `noembed-${suffix}`, stage: `stage-${suffix}`, foreign: `foreign-${suffix}` };
    spares = Array.from({ length: SPARE_DASHBOARDS }, (_, i) => `spare-${i}-${suffix}`);
    ({ app, base } = await listeningApp());
    ann = await viewer({ embedTenantName: 'customer-a', username: 'ann' });
    ben = await viewer({ embedTenantName: 'customer-a', username: 'ben' });
    cat = await viewer({ embedTenantName: 'customer-b', username: 'cat' });
  });

  afterAll(async () => {
    await app?.close();
  });

  const viewer = (body: Record<string, unknown> = {}, on = app) => mintViewer(on, s.keys.alice!, { deploymentId: s.refs.prod!, ...body });
  const path = (publicId: string, rest = '') => `/api/v1/embed/dashboard/${encodeURIComponent(publicId)}/comments${rest}`;
  /** A dashboard of its own, so that a stream sees only what the test does. */
  const freshDashboard = (): string => {
    const publicId = spares.pop();
    if (publicId === undefined) throw new Error('seed more spare dashboards');
    return publicId;
  };
  const connect = (who: { headers: Record<string, string> }, publicId: string, lastEventId?: string, at = base) =>
    SseStream.open(`${at}${path(publicId, '/stream')}`, { ...who.headers, ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) });
  /** An open stream, past its first event (which is returned). */
  const opened = async (who: ViewerSession, publicId: string, lastEventId?: string, at = base): Promise<{ stream: SseStream; first: SseEvent }> => {
    const stream = await connect(who, publicId, lastEventId, at);
    expect(stream.status, stream.body).toBe(200);
    return { stream, first: await stream.next() };
  };
  const posted = async (who: ViewerSession, publicId: string, body: string, parentId?: number): Promise<CommentJson> => {
    const res = await app.inject({ method: 'POST', url: path(publicId), headers: who.headers, payload: parentId === undefined ? { body } : { body, parentId } });
    expect(res.statusCode, res.body).toBe(201);
    // The 201's `mentions` (issue 23) is not part of the Comment a stream sends.
    const comment = res.json() as CommentJson & { mentions?: unknown };
    delete comment.mentions;
    return comment;
  };
  const edited = async (who: ViewerSession, publicId: string, id: number, body: string): Promise<CommentJson> => {
    const res = await app.inject({ method: 'PATCH', url: path(publicId, `/${id}`), headers: who.headers, payload: { body } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const removed = async (who: ViewerSession, publicId: string, id: number) => {
    const res = await app.inject({ method: 'DELETE', url: path(publicId, `/${id}`), headers: who.headers });
    expect(res.statusCode, res.body).toBe(204);
  };
  const resolution = async (who: ViewerSession, publicId: string, id: number, resolved: boolean) => {
    const res = await app.inject({ method: 'POST', url: path(publicId, `/${id}/resolve`), headers: who.headers, payload: { resolved } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { resolvedAt: string | null; resolvedBy: number | null };
  };
  const dataOf = (event: SseEvent) => JSON.parse(event.data) as Record<string, unknown>;
  const expectRefused = (stream: SseStream, status: number, field?: string) => expectErrorBody({ status: stream.status, text: stream.body ?? '' }, status, field);
  /** Revokes every session of the viewer (logout), with the admin's key. */
  const revokeViewer = async (who: ViewerSession, tenant: string) => {
    const users = (await app.inject({ url: `/api/v1/embed/users?embedTenantName=${tenant}`, headers: bearer(s.keys.alice!) })).json().users as { id: number; externalId: string }[];
    const externalId = users.find((u) => u.id === who.embedUserId)!.externalId;
    const res = await app.inject({ method: 'POST', url: '/api/v1/embed/session/revoke', headers: bearer(s.keys.alice!), payload: { externalId, embedTenantName: tenant } });
    expect(res.statusCode).toBe(204);
  };

  describe('events', () => {
    it('sends each event type as it happens, with its JSON, increasing ids and each stream its own isOwn', async () => {
      const publicId = freshDashboard();
      const { stream: annStream, first } = await opened(ann, publicId);
      const { stream: benStream } = await opened(ben, publicId);
      expect(first).toEqual({ event: 'stream.ready', id: '0', data: JSON.stringify({ resumed: false }) });
      expect(annStream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(annStream.headers.get('cache-control')).toBe('no-store');
      // The connection ends with the stream: a client never gets it back for its next request as svc closes it.
      expect(annStream.headers.get('connection')).toBe('close');
      expect(annStream.retry).toBe(3000);
      const both = async () => [await annStream.next(), await benStream.next()] as const;

      const root = await posted(ben, publicId, 'Why did March drop?');
      let [a, b] = await both();
      expect(a.event).toBe('comment.created');
      expect(dataOf(a)).toEqual({ threadId: root.id, comment: { ...root, isOwn: false } });
      expect(dataOf(b)).toEqual({ threadId: root.id, comment: root });
      expect(a.id).toBe(b.id);

      const reply = await posted(ann, publicId, 'Looking', root.id);
      [a, b] = await both();
      expect(a.event).toBe('comment.created');
      expect(dataOf(a)).toEqual({ threadId: root.id, comment: reply });
      expect(dataOf(b)).toEqual({ threadId: root.id, comment: { ...reply, isOwn: false } });

      const changed = await edited(ann, publicId, reply.id, 'Looking into it');
      [a, b] = await both();
      expect(a.event).toBe('comment.edited');
      expect(dataOf(a)).toEqual({ threadId: root.id, comment: changed });
      expect(changed.editedAt).not.toBeNull();

      const resolved = await resolution(ben, publicId, root.id, true);
      [a, b] = await both();
      expect(b.event).toBe('thread.resolved');
      expect(dataOf(a)).toEqual({ threadId: root.id, resolvedAt: resolved.resolvedAt, resolvedBy: ben.embedUserId });

      await resolution(ben, publicId, root.id, false);
      [a, b] = await both();
      expect(a.event).toBe('thread.reopened');
      expect(dataOf(b)).toEqual({ threadId: root.id, resolvedAt: null, resolvedBy: null });

      await removed(ann, publicId, reply.id);
      [a, b] = await both();
      expect(a.event).toBe('comment.deleted');
      expect(dataOf(a)).toEqual({ threadId: root.id, commentId: reply.id });

      await removed(ben, publicId, root.id);
      [a, b] = await both();
      expect(b.event).toBe('comment.deleted');
      expect(dataOf(b)).toEqual({ threadId: root.id, commentId: root.id });

      expect(annStream.lastEventId).toBe(a.id);
      expect(await annStream.drain(100)).toEqual([]);
      annStream.close();
      benStream.close();
    });

    it('coalesces a burst: every event of it arrives once and in order, on every stream of the scope', async () => {
      const publicId = freshDashboard();
      const streams = await Promise.all([opened(ann, publicId), opened(ben, publicId), opened(ann, publicId)]);
      const bodies = Array.from({ length: 30 }, (_, i) => `burst ${i}`);
      await Promise.all(bodies.map((body) => posted(ben, publicId, body)));
      for (const { stream } of streams) {
        const events = await Promise.all(bodies.map(() => stream.next()));
        const ids = events.map((e) => Number(e.id));
        expect(ids).toEqual([...ids].sort((x, y) => x - y));
        expect(new Set(ids).size).toBe(bodies.length);
        expect(events.map((e) => (dataOf(e).comment as CommentJson).body).sort()).toEqual([...bodies].sort());
        expect(await stream.drain(100)).toEqual([]);
        stream.close();
      }
    });
  });

  it('misses nothing when the PostgreSQL listening connection is lost: what commits meanwhile arrives once it is back', async () => {
    if (t().dialect !== 'postgres') return; // SQLite polls its file: there is no connection to lose.
    const publicId = freshDashboard();
    const { stream } = await opened(ann, publicId);
    const db = t().db.kysely;
    const listeners = sql<{ pid: number }>`select pid from pg_stat_activity where application_name = 'svc-credential-listener'`;
    const before = (await listeners.execute(db)).rows.map((row) => row.pid);
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'svc-credential-listener'`.execute(db);
    expect(await eventually(async () => (await listeners.execute(db)).rows.every((row) => !before.includes(row.pid)))).toBe(true);
    const during = await posted(ben, publicId, 'while the listener was down');
    expect(dataOf(await stream.next(5000))).toMatchObject({ comment: { id: during.id } });
    const after = await posted(ben, publicId, 'listening again');
    expect(dataOf(await stream.next(5000))).toMatchObject({ comment: { id: after.id } });
    stream.close();
  });

  describe('scoped exactly like the thread list', () => {
    it("shows a stream nothing of another embed tenant's threads, nor of another dashboard's", async () => {
      const publicId = freshDashboard();
      const elsewhere = freshDashboard();
      const { stream: annStream } = await opened(ann, publicId);
      const { stream: catStream } = await opened(cat, publicId);
      const { stream: annElsewhere } = await opened(ann, elsewhere);
      const annComment = await posted(ann, publicId, 'customer-a only');
      expect(dataOf(await annStream.next())).toMatchObject({ comment: { id: annComment.id } });
      const catComment = await posted(cat, publicId, 'customer-b only');
      expect(dataOf(await catStream.next())).toMatchObject({ comment: { id: catComment.id } });
      expect(await annStream.drain(300)).toEqual([]);
      expect(await catStream.drain(0)).toEqual([]);
      expect(await annElsewhere.drain(0)).toEqual([]);
      // Nor does a resume from the start in another tenant replay it.
      const { stream: catAgain, first } = await opened(cat, publicId, '0');
      expect(first.event).toBe('stream.ready');
      expect(dataOf(await catAgain.next())).toMatchObject({ comment: { id: catComment.id } });
      expect(await catAgain.drain(200)).toEqual([]);
      for (const stream of [annStream, catStream, annElsewhere, catAgain]) stream.close();
    });

    it('refuses to open as the thread list refuses to list: 401, 403 without an embed tenant, 404 before 403', async () => {
      expectRefused(await connect({ headers: {} }, ids.main), 401, 'Authorization');
      expectRefused(await connect({ headers: { authorization: 'Embed-Token not.a.jwt' } }, ids.main), 401, 'Authorization');
      expectRefused(await connect({ headers: bearer(s.keys.alice!) }, ids.main), 403, 'Authorization');
      const email = (await t().db.kysely.selectFrom('users').select('email').where('id', '=', s.refs.alice!).executeTakeFirstOrThrow()).email;
      expectRefused(await connect(await viewer({ internalId: email }), ids.main), 403, 'Authorization');
      for (const publicId of ['no-such-dashboard', ids.foreign]) expectRefused(await connect(ann, publicId), 404, 'publicId');
      for (const publicId of [ids.draft, ids.archived, ids.noembed, ids.stage]) expectRefused(await connect(ann, publicId), 403, 'publicId');
      const limited = await viewer({ embedTenantName: 'customer-a', dashboards: [ids.draft] });
      expectRefused(await connect(limited, ids.main), 403, 'publicId');
    });

    it('hides what the list hides: a deleted thread replays as its deletion only, and a reply that raced its root\'s deletion never shows', async () => {
      const publicId = freshDashboard();
      const { first } = await opened(ann, publicId).then(({ stream, first: f }) => (stream.close(), { first: f }));
      const root = await posted(ben, publicId, 'soon gone');
      const reply = await posted(ann, publicId, 'a reply', root.id);
      await edited(ann, publicId, reply.id, 'a reply, edited');
      await resolution(ben, publicId, root.id, true);
      await removed(ben, publicId, root.id);
      const kept = await posted(ann, publicId, 'stays');
      // A reply written after its root was deleted, as a post that raced the deletion leaves it (the list hides it).
      const scope = await t().db.kysely.selectFrom('comments').select(['account_id', 'embed_tenant_id', 'dashboard_id']).where('id', '=', root.id).executeTakeFirstOrThrow();
      await t().db.kysely.insertInto('comments')
        .values({ ...scope, parent_id: root.id, embed_user_id: ann.embedUserId, body: 'raced', created_at: new Date().toISOString() })
        .execute();
      const after = await posted(ann, publicId, 'after the race');
      const { stream, first: ready } = await opened(ann, publicId, first.id);
      expect(dataOf(ready)).toEqual({ resumed: true });
      const replayed = [await stream.next(), await stream.next(), await stream.next()];
      expect(replayed.map((e) => [e.event, dataOf(e)])).toEqual([
        ['comment.deleted', { threadId: root.id, commentId: root.id }],
        ['comment.created', { threadId: kept.id, comment: kept }],
        ['comment.created', { threadId: after.id, comment: after }],
      ]);
      expect(await stream.drain(200)).toEqual([]);
      const list = (await app.inject({ url: path(publicId, '?includeResolved=true'), headers: ann.headers })).json() as { items: Array<{ root: { id: number }; replies: unknown[] }> };
      expect(list.items.map((thread) => thread.root.id)).toEqual([after.id, kept.id]);
      expect(JSON.stringify(list)).not.toContain('raced');
      stream.close();
    });
  });

  describe('resuming with Last-Event-ID', () => {
    it('resumes after a dropped connection with nothing missed, then goes on live', async () => {
      const publicId = freshDashboard();
      const { stream } = await opened(ann, publicId);
      const seen: SseEvent[] = [];
      const root = await posted(ben, publicId, 'one');
      seen.push(await stream.next());
      stream.close();
      // Missed while the connection was down: every kind of event.
      const reply = await posted(ben, publicId, 'two', root.id);
      await edited(ben, publicId, reply.id, 'two, edited');
      await resolution(ben, publicId, root.id, true);
      const third = await posted(ann, publicId, 'three');
      await removed(ann, publicId, third.id);
      const { stream: again, first } = await opened(ann, publicId, stream.lastEventId);
      expect(first).toEqual({ event: 'stream.ready', id: seen[0]!.id, data: JSON.stringify({ resumed: true }) });
      const missed = await Promise.all(Array.from({ length: 4 }, () => again.next()));
      // The reply shows as it is now (edited); the thread 'three', deleted meanwhile, as its deletion only.
      expect(missed.map((e) => [e.event, dataOf(e)])).toEqual([
        ['comment.created', { threadId: root.id, comment: { ...reply, body: 'two, edited', editedAt: expect.any(String), isOwn: false } }],
        ['comment.edited', { threadId: root.id, comment: { ...reply, body: 'two, edited', editedAt: expect.any(String), isOwn: false } }],
        ['thread.resolved', { threadId: root.id, resolvedAt: expect.any(String), resolvedBy: ben.embedUserId }],
        ['comment.deleted', { threadId: third.id, commentId: third.id }],
      ]);
      const ids = [seen[0]!, ...missed].map((e) => Number(e.id));
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      expect(await again.drain(200)).toEqual([]);
      // Live again: the next event comes on the resumed stream.
      const live = await posted(ben, publicId, 'four');
      expect(dataOf(await again.next())).toMatchObject({ comment: { id: live.id } });
      again.close();
    });
  });

  describe('resuming a long absence', () => {
    it('replays more than a MiB of missed events, a page at a time as the client takes them', async () => {
      const roomy = await listeningApp({ commentStreams: { heartbeatMs: HEARTBEAT_MS, replayMax: 500, perSession: PER_SESSION } });
      try {
        const publicId = freshDashboard();
        const { stream, first } = await opened(ann, publicId, undefined, roomy.base);
        stream.close();
        const long = 'x'.repeat(9_990);
        const posts: number[] = [];
        for (let i = 0; i < 120; i++) posts.push((await posted(ben, publicId, `${i} ${long}`)).id);
        const { stream: again, first: ready } = await opened(ann, publicId, first.id, roomy.base);
        expect(dataOf(ready)).toEqual({ resumed: true });
        const replayed: number[] = [];
        for (let i = 0; i < posts.length; i++) replayed.push((dataOf(await again.next()).comment as CommentJson).id);
        expect(replayed).toEqual(posts);
        expect(again.ended).toBe(false);
        again.close();
      } finally {
        await roomy.app.close();
      }
    });
  });

  describe('resets', () => {
    it('sends stream.reset at the head when more than replayMax events were missed, and replays up to replayMax', async () => {
      const small = await listeningApp({ commentStreams: { heartbeatMs: HEARTBEAT_MS, replayMax: 3, perSession: PER_SESSION } });
      try {
        const publicId = freshDashboard();
        const { stream: watcher, first } = await opened(ann, publicId, undefined, small.base);
        const missed: SseEvent[] = [];
        for (let i = 0; i < 4; i++) {
          await posted(ben, publicId, `missed ${i}`);
          missed.push(await watcher.next());
        }
        watcher.close();
        // Exactly replayMax missed: replayed.
        const { stream: some, first: ready } = await opened(ann, publicId, missed[0]!.id, small.base);
        expect(dataOf(ready)).toEqual({ resumed: true });
        expect([await some.next(), await some.next(), await some.next()].map((e) => e.id)).toEqual(missed.slice(1).map((e) => e.id));
        some.close();
        // One more: reset at the head, and live from there.
        const { stream: again, first: reset } = await opened(ann, publicId, first.id, small.base);
        expect(reset).toEqual({ event: 'stream.reset', id: missed[3]!.id, data: JSON.stringify({ reason: 'too_many_missed', replayMax: 3 }) });
        expect(await again.drain(200)).toEqual([]);
        const live = await posted(ben, publicId, 'after the reset');
        const next = await again.next();
        expect(dataOf(next)).toMatchObject({ comment: { id: live.id } });
        expect(Number(next.id)).toBeGreaterThan(Number(reset.id));
        again.close();
      } finally {
        await small.app.close();
      }
    });

    it("sends stream.reset for a position it cannot vouch for: never handed out, another dashboard's or tenant's, before what retention removed", async () => {
      const publicId = freshDashboard();
      const { stream, first } = await opened(ann, publicId);
      await posted(ann, publicId, 'kept a while');
      const own = await stream.next();
      await posted(ann, publicId, 'and another');
      const latest = await stream.next();
      stream.close();
      const elsewhere = freshDashboard();
      const { stream: elsewhereStream } = await opened(ann, elsewhere);
      await posted(ann, elsewhere, 'on another dashboard');
      const elsewhereEvent = await elsewhereStream.next();
      elsewhereStream.close();
      const { stream: catStream } = await opened(cat, publicId);
      await posted(cat, publicId, 'customer-b');
      const catEvent = await catStream.next();
      catStream.close();
      const resumeFrom = async (who: ViewerSession, position: string) => {
        const { stream: probe, first: answer } = await opened(who, publicId, position);
        probe.close();
        return answer;
      };
      const reset = (id: string | undefined) => ({ event: 'stream.reset', id, data: JSON.stringify({ reason: 'unknown_position', replayMax: REPLAY_MAX }) });
      expect((await resumeFrom(ann, own.id!)).event).toBe('stream.ready');
      for (const position of ['2147483647', elsewhereEvent.id!, catEvent.id!]) expect(await resumeFrom(ann, position)).toEqual(reset(latest.id));

      // Retention: this scope's events are made old, then removed by the function svc runs on its timer.
      const scope = await t().db.kysely.selectFrom('comments').select(['dashboard_id', 'embed_tenant_id']).where('body', '=', 'kept a while')
        .where('embed_user_id', '=', ann.embedUserId).executeTakeFirstOrThrow();
      await t().db.kysely.updateTable('comment_events').set({ recorded_at: '2000-01-01T00:00:00.000Z' })
        .where('dashboard_id', '=', scope.dashboard_id).where('embed_tenant_id', '=', scope.embed_tenant_id).execute();
      expect(await pruneCommentEvents(t().db.kysely, '2001-01-01T00:00:00.000Z')).toBe(2);
      // From before the last removed event something is lost: reset. From the last one nothing is: resumed.
      for (const position of [first.id!, own.id!]) expect(await resumeFrom(ann, position)).toEqual(reset(latest.id));
      expect(await resumeFrom(ann, latest.id!)).toEqual({ event: 'stream.ready', id: latest.id, data: JSON.stringify({ resumed: true }) });
      const { stream: fresh, first: ready } = await opened(ann, publicId);
      expect(ready.id).toBe(latest.id);
      const after = await posted(ann, publicId, 'after the retention');
      expect(dataOf(await fresh.next())).toMatchObject({ comment: { id: after.id } });
      fresh.close();
      // The other tenant's events on the same dashboard were kept.
      expect((await resumeFrom(cat, catEvent.id!)).event).toBe('stream.ready');
    });
  });

  describe('how a stream ends', () => {
    const ended = (reason: string) => ({ event: 'stream.end', id: undefined, data: JSON.stringify({ reason }) });

    it('ends when its session is revoked (its reconnection is a 401), and other streams go on', async () => {
      const publicId = freshDashboard();
      const dee = await viewer({ embedTenantName: 'customer-a' });
      const { stream } = await opened(dee, publicId);
      const { stream: annStream } = await opened(ann, publicId);
      await revokeViewer(dee, 'customer-a');
      expect(await stream.next(3000)).toEqual(ended('revoked'));
      expect(await stream.waitForEnd()).toBe(true);
      expectRefused(await connect(dee, publicId, stream.lastEventId), 401, 'Authorization');
      const comment = await posted(ann, publicId, 'still here');
      expect(dataOf(await annStream.next())).toMatchObject({ comment: { id: comment.id } });
      annStream.close();
    });

    it('a revocation look-up in flight never ends a stream opened while it ran (that stream was not asked about)', async () => {
      const publicId = freshDashboard();
      const gio = await viewer({ embedTenantName: 'customer-a' });
      const hal = await viewer({ embedTenantName: 'customer-a' });
      // The race, staged: the hub's look-up of live sessions runs on the database as always, and its answer is held
      // back until the test lets it go. Only the next look-up after `hold` is set is held.
      let hold: { entered: () => void; released: Promise<void> } | undefined;
      const asked: number[][] = [];
      const failures: unknown[] = [];
      const hub = new CommentStreamHub({
        ctx: { db: t().db.kysely, dialect: t().db.dialect, now: () => new Date() },
        notifications: t().db.notifications,
        changes: t().db.changes,
        settings: { perSession: PER_SESSION, heartbeatMs: HEARTBEAT_MS, replayMax: REPLAY_MAX, retentionMs: 3_600_000 },
        onError: (error) => failures.push(error),
        liveSessions: async (ctx, accountId, sessionIds) => {
          const live = await selectLiveSessions(ctx, accountId, sessionIds);
          const held = hold;
          hold = undefined;
          if (held !== undefined) {
            asked.push([...sessionIds]);
            held.entered();
            await held.released;
          }
          return live;
        },
      });
      /** The stream's caller, as the route makes it from the viewer's token. */
      const callerOf = async (who: ViewerSession): Promise<StreamCaller> => {
        const row = await t().db.kysely.selectFrom('embed_sessions').select(['id', 'account_id', 'deployment_id', 'embed_tenant_id', 'embed_user_id'])
          .where('embed_user_id', '=', who.embedUserId).executeTakeFirstOrThrow();
        return {
          commenter: { accountId: row.account_id, deploymentId: row.deployment_id, embedTenantId: row.embed_tenant_id!, embedUserId: row.embed_user_id!, dashboards: null },
          sessionId: row.id, tokenExpiresAt: null,
        };
      };
      const sink = () => {
        const written = { text: '', ended: false, write: (text: string) => void (written.text += text), backlog: () => 0, end: () => void (written.ended = true) };
        return written;
      };
      try {
        const gioCaller = await callerOf(gio);
        const gioSink = sink();
        await hub.open(gioCaller, publicId, undefined, gioSink);
        expect(await eventually(() => gioSink.text.includes('event: stream.ready'))).toBe(true);

        let entered!: () => void;
        const inFlight = new Promise<void>((resolve) => (entered = resolve));
        let release!: () => void;
        hold = { entered, released: new Promise<void>((resolve) => (release = resolve)) };
        // A session minted in the account: its credentials changed, so the hub looks up its streams' sessions.
        await viewer({ embedTenantName: 'customer-a' });
        await inFlight;
        expect(asked).toEqual([[gioCaller.sessionId]]);

        // Hal's stream opens while the look-up is out; then its answer (Gio live) arrives.
        const halSink = sink();
        await hub.open(await callerOf(hal), publicId, undefined, halSink);
        expect(await eventually(() => halSink.text.includes('event: stream.ready'))).toBe(true);
        release();
        const comment = await posted(ann, publicId, 'after the look-up came back');
        for (const written of [gioSink, halSink]) {
          expect(await eventually(() => written.text.includes(`"id":${comment.id},`))).toBe(true);
          expect(written.text).not.toContain('stream.end');
          expect(written.ended).toBe(false);
        }

        // Hal's stream is judged by the next look-up: a revocation still ends it, and only it.
        await revokeViewer(hal, 'customer-a');
        expect(await eventually(() => halSink.ended)).toBe(true);
        expect(halSink.text).toContain('event: stream.end\ndata: {"reason":"revoked"}');
        expect(gioSink.ended).toBe(false);
        expect(failures).toEqual([]);
      } finally {
        hub.close();
      }
    });

    it('ends when its embed user is deleted', async () => {
      const publicId = freshDashboard();
      const eve = await viewer({ embedTenantName: 'customer-a' });
      const { stream } = await opened(eve, publicId);
      const res = await app.inject({ method: 'DELETE', url: `/api/v1/embed/users/${eve.embedUserId}`, headers: bearer(s.keys.alice!) });
      expect(res.statusCode, res.body).toBe(204);
      expect(await stream.next(3000)).toEqual(ended('revoked'));
      expect(await stream.waitForEnd()).toBe(true);
    });

    it('ends when its token expires, and the token opens no new one', async () => {
      const short = await listeningApp({ embedLifetimes: { sessionTtlMs: 60_000, tokenTtlMs: 2000 } });
      try {
        const fay = await viewer({ embedTenantName: 'customer-a' }, short.app);
        const publicId = freshDashboard();
        const { stream } = await opened(fay, publicId, undefined, short.base);
        const openedAt = Date.now();
        expect(await stream.next(4000)).toEqual(ended('expired'));
        expect(Date.now() - openedAt).toBeLessThan(2500);
        expect(await stream.waitForEnd()).toBe(true);
        expectRefused(await connect(fay, publicId, undefined, short.base), 401, 'Authorization');
      } finally {
        await short.app.close();
      }
    });

    it('ends with forbidden when its dashboard can no longer be read', async () => {
      const publicId = freshDashboard();
      const { stream } = await opened(ann, publicId);
      // What an archive does to the dashboard's row.
      await t().db.kysely.updateTable('dashboards').set({ status: 'archived' }).where('public_id', '=', publicId).execute();
      expect(await stream.next(4 * HEARTBEAT_MS)).toEqual(ended('forbidden'));
      expect(await stream.waitForEnd()).toBe(true);
      expectRefused(await connect(ann, publicId), 403, 'publicId');
    });

    it('ends with shutdown when svc stops, without holding up the stop', async () => {
      const stopping = await listeningApp();
      const publicId = freshDashboard();
      const { stream } = await opened(ann, publicId, undefined, stopping.base);
      const started = Date.now();
      await stopping.app.close();
      expect(Date.now() - started).toBeLessThan(2000);
      expect(await stream.next()).toEqual(ended('shutdown'));
      expect(await stream.waitForEnd()).toBe(true);
    });

    it('outlives the handler and request timeouts', async () => {
      const patient = await listeningApp({ timeouts: { handlerMs: 200, requestMs: 200, idleMs: 4 * HEARTBEAT_MS } });
      try {
        const publicId = freshDashboard();
        const { stream } = await opened(ann, publicId, undefined, patient.base);
        await new Promise((resolve) => setTimeout(resolve, 1200));
        const comment = await posted(ben, publicId, 'a second later');
        expect(dataOf(await stream.next())).toMatchObject({ comment: { id: comment.id } });
        expect(stream.ended).toBe(false);
        stream.close();
      } finally {
        await patient.app.close();
      }
    });
  });

  describe('limits and heartbeats', () => {
    it(`allows ${PER_SESSION} open streams per embed session; one more is a 429 naming the limit, until one closes`, async () => {
      const gus = await viewer({ embedTenantName: 'customer-a' });
      const streams = [];
      for (let i = 0; i < PER_SESSION; i++) streams.push((await opened(gus, freshDashboard())).stream);
      const refused = await connect(gus, ids.main);
      expectRefused(refused, 429);
      expect(refused.json().error.message).toContain(`at most ${PER_SESSION} open comment streams per embed session`);
      expect(refused.json().error.message).toContain('SVC_COMMENT_STREAMS_PER_SESSION');
      // Another session of the same viewer counts apart.
      const again = await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: 'customer-a', externalId: (await t().db.kysely
        .selectFrom('embed_users').select('external_id').where('id', '=', gus.embedUserId).executeTakeFirstOrThrow()).external_id });
      const { stream: other } = await opened(again, ids.main);
      other.close();
      streams.pop()!.close();
      let reopened: SseStream | undefined;
      for (let attempt = 0; attempt < 50 && reopened === undefined; attempt++) {
        const tried = await connect(gus, ids.main);
        if (tried.status === 200) reopened = tried;
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(reopened?.status).toBe(200);
      for (const stream of [...streams, reopened!]) stream.close();
    });

    it('sends a heartbeat comment line at the configured interval, and nothing else while idle', async () => {
      const { stream } = await opened(ann, freshDashboard());
      expect(await stream.drain(3.5 * HEARTBEAT_MS)).toEqual([]);
      expect(stream.comments.filter((line) => line === 'heartbeat').length).toBeGreaterThanOrEqual(2);
      stream.close();
    });

    it.each(['abc', '-1', '1.5', '01', '2147483648', '1, 2', '0x10'])('answers a malformed Last-Event-ID %j with a 400 naming it', async (value) => {
      const refused = await connect(ann, ids.main, value);
      expectRefused(refused, 400, 'Last-Event-ID');
      expect(refused.json().error.code).toBe('invalid_parameter');
    });
  });

  it('never writes the token to the log', async () => {
    const lines: string[] = [];
    const logged = await listeningApp({}, { logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } } });
    try {
      const publicId = freshDashboard();
      const { stream } = await opened(ann, publicId, undefined, logged.base);
      await posted(ann, publicId, 'logged?');
      await stream.next();
      stream.close();
      await connect(ann, publicId, 'bad', logged.base);
    } finally {
      await logged.app.close();
    }
    expect(lines.join('\n')).toContain('/comments/stream');
    expect(lines.join('\n')).not.toContain(ann.token);
  });
});
