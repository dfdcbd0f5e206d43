import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import { RAISED_RATE_LIMITS, RAISED_RATE_LIMIT_ENV } from '../../test/limits.js';
import type { ViewerSession } from '../../test/embed.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { startSvcServe } from '../../test/svc-process.js';
import type { SvcProcess } from '../../test/svc-process.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { openDatabase } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import { migrateToLatest } from '../db/db.migrations.js';
import type { Database } from '../db/db.schema.js';
import type { Comment, Thread, ThreadList } from './comments.schema.js';
import { seededRandom } from '../../test/seeded-random.js';

// Issue 8 part 4: many embed viewers replying to, editing, deleting and resolving the same threads at once, over
// real HTTP (a listening server, fetch clients, many sockets) against real databases. On PostgreSQL two app
// instances with a pool each share the database, as two `svc serve` processes would; on SQLite one app owns the
// file (a second connection in the same thread would only block it), so the requests interleave in one server, and
// a last suite runs two real `svc serve` processes on one SQLite file.
//
// What the API promises and this file checks (SPEC part B, "Comment deletion", "Thread"):
// - A deleted root takes its thread: no reply of it is ever listed or returned, and once the deletion was
//   acknowledged, replying to it, editing its replies and resolving it answer 404.
// - Edits: every PATCH is one UPDATE without a version check, so concurrent edits of one comment are last-writer-
//   wins in commit order, which a client cannot observe. What holds, and what is asserted, is that the comment
//   behaves as a linearizable register: its final body is the body of an acknowledged edit E such that no other
//   acknowledged edit was sent after E's answer arrived ("the last acknowledged edit" whenever edits do not
//   overlap; with each session editing in sequence, the last edit of some session). No reader, once an edit was
//   acknowledged, sees a body that an edit acknowledged before that one replaced.
// - Resolve and re-open: each answer shows the state asked for; the final state is the one asked by an
//   acknowledged action that no other acknowledged action started after. Concurrent resolves of an open thread
//   agree on the one resolution the thread keeps (resolveThread: "keeps its first resolution").
// - Counts: every list shows exactly the live rows of the database: its roots, and per thread its live replies.
// - An embed session id is single-use: of many concurrent exchanges exactly one gets a token, every other the
//   documented 401 (DESIGN "Exchange").
// - No request gets a 5xx under concurrency: on SQLite shared by two processes, a busy database is waited for.

/** Rate limits out of the way: this file sends hundreds of exchanges and generate-sessions from one IP and key. */
const TENANT = 'customer-a';
/** Sessions of the one embed user who starts the threads (ann), so that one author acts from several clients. */
const ANN_SESSIONS = 3;
const OTHER_VIEWERS = 12;

/** What one HTTP request answered, with real-time bounds: it was sent after `sentAt` and answered by `ackedAt`. */
interface Outcome<T = unknown> {
  status: number;
  body: T;
  text: string;
  sentAt: number;
  ackedAt: number;
}

interface ErrorBody {
  error: { status: number; code: string; message: string; field?: string };
}

/** `a` was answered before `b` was sent: in every linearization, a comes before b. */
const precedes = (a: { ackedAt: number }, b: { sentAt: number }): boolean => a.ackedAt < b.sentAt;
const random = seededRandom();
const randomInt = (below: number): number => random.int(below);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * svc's log as a reader wants it in a failure message: one line per entry, pino's JSON reduced to the message and
 * the error's type, code and message (no stack: a stack's file lines are dropped from vitest's messages).
 */
function summarizeLog(text: string): string {
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => {
    try {
      const entry = JSON.parse(line.replace(/^\[svc \d\] /, '')) as { msg?: string; reqId?: string; err?: { type?: string; code?: string; message?: string } };
      const err = entry.err === undefined ? '' : `: ${entry.err.type ?? ''} ${entry.err.code ?? ''} ${entry.err.message ?? ''}`;
      return `${/^\[svc \d\] /.exec(line)?.[0] ?? ''}${entry.msg ?? ''}${err} (request ${entry.reqId ?? '?'})`;
    } catch {
      return line.slice(0, 300);
    }
  }).join('\n');
}

/** Where requests go: the servers (one picked at random per request) and the database they share. */
interface Cluster {
  bases: string[];
  kysely: Kysely<Database>;
}

const commentsUrl = (publicId: string, rest = '') => `/api/v1/embed/dashboard/${encodeURIComponent(publicId)}/comments${rest}`;
const describeOutcome = (what: string, out: Outcome) => `${what} answered ${out.status} ${out.text.slice(0, 200)}`;
const errorOf = (out: Outcome) => (out.body as ErrorBody | null)?.error;
const errorCode = (out: Outcome) => errorOf(out)?.code;

/** One request over real HTTP to one of the cluster's servers, picked at random. */
async function callOn<T = unknown>(cluster: Cluster, headers: Record<string, string>, method: string, path: string, payload?: unknown): Promise<Outcome<T>> {
  const base = cluster.bases[randomInt(cluster.bases.length)]!;
  const sentAt = performance.now();
  const res = await fetch(`${base}${path}`, {
    method,
    headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  const text = await res.text();
  const ackedAt = performance.now();
  let body: unknown = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body: body as T, text, sentAt, ackedAt };
}

/** Every thread of a filter, page by page (taken when nothing writes). */
async function walkOn(cluster: Cluster, headers: Record<string, string>, publicId: string, filter = 'includeResolved=true'): Promise<Thread[]> {
  const threads: Thread[] = [];
  let after: string | null | undefined;
  for (;;) {
    const query = [filter, 'first=50', after == null ? '' : `after=${encodeURIComponent(after)}`].filter(Boolean).join('&');
    const res = await callOn<ThreadList>(cluster, headers, 'GET', commentsUrl(publicId, `?${query}`));
    expect(res.status, res.text).toBe(200);
    threads.push(...res.body.items);
    if (!res.body.pageInfo.hasNextPage) return threads;
    after = res.body.pageInfo.endCursor;
  }
}

/** The dashboard's comment rows as the database holds them. */
async function rowsOn(cluster: Cluster, publicId: string) {
  return cluster.kysely.selectFrom('comments as c')
    .innerJoin('dashboards as d', 'd.id', 'c.dashboard_id')
    .select(['c.id', 'c.parent_id', 'c.body', 'c.embed_user_id', 'c.created_at', 'c.removed_at', 'c.is_resolved', 'c.resolved_at', 'c.resolved_by'])
    .where('d.public_id', '=', publicId)
    // SPEC "Thread": replies oldest first (ids are not: a timestamp is taken before its insert gets an id).
    .orderBy('c.created_at').orderBy('c.id')
    .execute();
}

/**
 * "Counts shown match the rows": the list (every page, every state) shows exactly the live roots of the
 * database, each with exactly its live replies, oldest first, with the stored bodies and resolution.
 */
async function listMismatchesOn(cluster: Cluster, headers: Record<string, string>, publicId: string): Promise<string[]> {
  const problems: string[] = [];
  const threads = await walkOn(cluster, headers, publicId);
  const rows = await rowsOn(cluster, publicId);
  const liveRoots = rows.filter((row) => row.parent_id === null && row.removed_at === null).sort((a, b) => a.id - b.id);
  const shownRoots = threads.map((thread) => thread.root.id).sort((a, b) => a - b);
  if (JSON.stringify(shownRoots) !== JSON.stringify(liveRoots.map((row) => row.id))) {
    problems.push(`list shows roots ${JSON.stringify(shownRoots)}, the database holds live roots ${JSON.stringify(liveRoots.map((row) => row.id))}`);
  }
  for (const thread of threads) {
    const root = rows.find((row) => row.id === thread.root.id);
    const liveReplies = rows.filter((row) => row.parent_id === thread.root.id && row.removed_at === null);
    const shown = thread.replies.map((reply) => reply.id);
    if (JSON.stringify(shown) !== JSON.stringify(liveReplies.map((row) => row.id))) {
      problems.push(`thread ${thread.root.id} shows ${shown.length} replies ${JSON.stringify(shown)}, the database holds ${liveReplies.length} live ${JSON.stringify(liveReplies.map((row) => row.id))}`);
    }
    for (const reply of thread.replies) {
      const row = rows.find((r) => r.id === reply.id);
      if (row?.body !== reply.body) problems.push(`reply ${reply.id} shows body ${JSON.stringify(reply.body)}, the database holds ${JSON.stringify(row?.body)}`);
    }
    if (root?.body !== thread.root.body) problems.push(`root ${thread.root.id} shows body ${JSON.stringify(thread.root.body)}, the database holds ${JSON.stringify(root?.body)}`);
    if ((thread.resolvedAt != null) !== (root?.resolved_at != null) || (thread.resolvedAt != null && thread.resolvedAt !== root?.resolved_at)) {
      problems.push(`thread ${thread.root.id} shows resolvedAt ${thread.resolvedAt}, the database holds ${root?.resolved_at}`);
    }
  }
  for (const row of rows) {
    if ((row.is_resolved === 1) !== (row.resolved_at !== null) || (row.resolved_at === null) !== (row.resolved_by === null)) {
      problems.push(`row ${row.id}: is_resolved ${row.is_resolved}, resolved_at ${row.resolved_at}, resolved_by ${row.resolved_by} disagree`);
    }
  }
  return problems;
}

describeEachDialect('comments under concurrent viewers', (t) => {
  const apps: FastifyInstance[] = [];
  let secondDb: Db | undefined;
  let cluster: Cluster;
  let s: SeededAccount;
  let ids: Record<'race' | 'edits' | 'editDelete' | 'resolve', string>;
  let ann: ViewerSession[];
  let others: ViewerSession[];
  let bodyCounter = 0;

  beforeAll(async () => {
    apps.push(await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS }), { db: t().db }));
    if (t().dialect === 'postgres') {
      secondDb = openDatabase(t().url);
      apps.push(await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS }), { db: secondDb }));
    }
    cluster = { bases: await Promise.all(apps.map((app) => app.listen({ port: 0, host: '127.0.0.1' }))), kysely: t().db.kysely };
    const suffix = uniqueSuffix();
    ids = { race: `race-${suffix}`, edits: `edits-${suffix}`, editDelete: `edit-delete-${suffix}`, resolve: `resolve-${suffix}` };
    s = await seedAccount(t().db.kysely, {
      settings: { allowEmbedComments: true },
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{
        ref: 'prod', name: 'Prod',
        items: Object.entries(ids).map(([ref, publicId]) => ({
          ref, type: 'WORKBOOK' as const, name: ref, createdBy: 'alice', dashboard: { publicId, status: 'published' as const, allowEmbed: true },
        })),
      }],
    });
    const viewer = (externalId: string) => mintViewer(apps[0]!, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: TENANT, externalId });
    ann = [];
    for (let i = 0; i < ANN_SESSIONS; i++) ann.push(await viewer('ann'));
    others = [];
    for (let i = 0; i < OTHER_VIEWERS; i++) others.push(await viewer(`viewer-${i}`));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await secondDb?.close();
  });

  const nextBody = (label: string) => `${label} #${++bodyCounter}`;

  const call = <T = unknown>(headers: Record<string, string>, method: string, path: string, payload?: unknown) => callOn<T>(cluster, headers, method, path, payload);

  const postComment = (who: ViewerSession, publicId: string, body: string, parentId?: number) =>
    call<Comment>(who.headers, 'POST', commentsUrl(publicId), parentId === undefined ? { body } : { body, parentId });
  const editComment = (who: ViewerSession, publicId: string, id: number, body: string) => call<Comment>(who.headers, 'PATCH', commentsUrl(publicId, `/${id}`), { body });
  const deleteComment = (who: ViewerSession, publicId: string, id: number) => call(who.headers, 'DELETE', commentsUrl(publicId, `/${id}`));
  const resolveThread = (who: ViewerSession, publicId: string, id: number, resolved: boolean) => call<Thread>(who.headers, 'POST', commentsUrl(publicId, `/${id}/resolve`), { resolved });
  const listThreads = (who: ViewerSession, publicId: string, query = 'includeResolved=true&first=200') => call<ThreadList>(who.headers, 'GET', commentsUrl(publicId, `?${query}`));

  /** Posts and returns the comment; anything but 201 fails the test. */
  async function created(who: ViewerSession, publicId: string, body: string, parentId?: number): Promise<Comment> {
    const res = await postComment(who, publicId, body, parentId);
    expect(res.status, res.text).toBe(201);
    return res.body;
  }

  const walk = (publicId: string, filter?: string) => walkOn(cluster, others[0]!.headers, publicId, filter);
  const rowsOf = (publicId: string) => rowsOn(cluster, publicId);
  const listMismatches = (publicId: string) => listMismatchesOn(cluster, others[0]!.headers, publicId);

  it('shows no reply of a deleted root, during the race or after it, and refuses what is sent after the deletion was acknowledged', async () => {
    const publicId = ids.race;
    const ROOTS = 6;
    const REPLIERS = 8;
    const REPLIES_EACH = 4;
    const problems: string[] = [];

    interface Race {
      root: Comment;
      /** Deleted by ann once this many replies were acknowledged (never for the control thread). */
      deleteAfter: number;
      acknowledged: number;
      deletion?: Promise<Outcome>;
      deleted?: Outcome;
    }
    const roots = await Promise.all(Array.from({ length: ROOTS }, (_, i) => created(ann[i % ANN_SESSIONS]!, publicId, nextBody(`root ${i}`))));
    const control = await created(others[0]!, publicId, nextBody('control root'));
    const races: Race[] = [
      ...roots.map((root) => ({ root, deleteAfter: 2 + randomInt(REPLIERS * REPLIES_EACH - 6), acknowledged: 0 })),
      { root: control, deleteAfter: Number.POSITIVE_INFINITY, acknowledged: 0 },
    ];
    const raceOf = (rootId: number) => races.find((race) => race.root.id === rootId);

    /** Every body ever sent, and the thread it was sent into. */
    const sentBodies = new Map<string, { rootId: number; isRoot: boolean }>();
    for (const race of races) sentBodies.set(race.root.body, { rootId: race.root.id, isRoot: true });
    interface ReplyLife { race: Race; post: Outcome<Comment>; edits: { body: string; out: Outcome<Comment> }[]; removal?: Outcome }
    const replies: ReplyLife[] = [];
    const reads: Outcome<ThreadList>[] = [];
    let writing = true;

    const reader = async (who: ViewerSession) => {
      while (writing) {
        reads.push(await listThreads(who, publicId));
        await pause(randomInt(5));
      }
    };
    const replier = async (who: ViewerSession, race: Race) => {
      for (let i = 0; i < REPLIES_EACH; i++) {
        const body = nextBody(`reply to ${race.root.id}`);
        sentBodies.set(body, { rootId: race.root.id, isRoot: false });
        const life: ReplyLife = { race, post: await postComment(who, publicId, body, race.root.id), edits: [] };
        replies.push(life);
        if (life.post.status !== 201) continue;
        if (++race.acknowledged === race.deleteAfter) {
          race.deletion = deleteComment(ann[randomInt(ANN_SESSIONS)]!, publicId, race.root.id).then((out) => (race.deleted = out));
        }
        if (random.next() < 0.5) {
          const edited = nextBody(`edit of ${life.post.body.id}`);
          sentBodies.set(edited, { rootId: race.root.id, isRoot: false });
          life.edits.push({ body: edited, out: await editComment(who, publicId, life.post.body.id, edited) });
        }
        if (random.next() < 0.2) life.removal = await deleteComment(who, publicId, life.post.body.id);
      }
    };

    /** The author resolving and re-opening a thread while it is deleted: each answer is a thread read. */
    const threadReads: { race: Race; out: Outcome<Thread> }[] = [];
    const resolver = async (race: Race) => {
      while (writing) {
        const out = await resolveThread(ann[randomInt(ANN_SESSIONS)]!, publicId, race.root.id, random.next() < 0.5);
        threadReads.push({ race, out });
        if (out.status !== 200) return;
      }
    };

    const readers = [reader(others[OTHER_VIEWERS - 1]!), reader(others[OTHER_VIEWERS - 2]!), reader(ann[0]!), ...races.slice(0, ROOTS).map(resolver)];
    await Promise.all(races.flatMap((race) => others.slice(0, REPLIERS).map((who) => replier(who, race))));
    await Promise.all(races.map((race) => race.deletion));
    writing = false;
    await Promise.all(readers);

    const deletedRoots = races.filter((race) => race.deleted !== undefined);
    expect(deletedRoots.length, 'every root but the control was deleted mid-race').toBe(ROOTS);
    // The race took place: replies and resolves met deleted roots, and lists were read after deletions.
    expect(replies.filter((life) => life.post.status === 404).length, 'replies refused because their root went meanwhile').toBeGreaterThan(0);
    expect(threadReads.filter(({ out }) => out.status === 404).length, 'resolves refused because the root went meanwhile').toBeGreaterThan(0);
    expect(reads.filter((read) => deletedRoots.some((race) => precedes(race.deleted!, read))).length, 'lists read after a deletion').toBeGreaterThan(0);
    for (const race of deletedRoots) if (race.deleted!.status !== 204) problems.push(describeOutcome(`DELETE root ${race.root.id}`, race.deleted!));

    // Every write answered as the order of events allows.
    const deletion = (race: Race) => (race.deleted?.status === 204 ? race.deleted : undefined);
    for (const life of replies) {
      const gone = deletion(life.race);
      const what = `reply to root ${life.race.root.id}`;
      if (life.post.status === 201) {
        if (gone !== undefined && precedes(gone, life.post)) problems.push(`${what} sent after the root's deletion was acknowledged got 201 (id ${life.post.body.id})`);
      } else if (life.post.status !== 404 || errorCode(life.post) !== 'not_found' || gone === undefined || gone.sentAt > life.post.ackedAt) {
        problems.push(describeOutcome(what, life.post));
      }
      for (const { out } of life.edits) {
        const ok = out.status === 200 ? !(gone !== undefined && precedes(gone, out)) : out.status === 404 && gone !== undefined && gone.sentAt < out.ackedAt;
        if (!ok) problems.push(describeOutcome(`edit of reply ${life.post.body.id} (root ${life.race.root.id}, deletion acknowledged at ${gone?.ackedAt.toFixed(1)}, edit sent at ${out.sentAt.toFixed(1)})`, out));
      }
      if (life.removal !== undefined) {
        const out = life.removal;
        const ok = out.status === 204 || (out.status === 404 && gone !== undefined && gone.sentAt < out.ackedAt);
        if (!ok) problems.push(describeOutcome(`DELETE reply ${life.post.body.id}`, out));
      }
    }

    // No read, during the race, shows what it must not: neither a thread read (the resolve answer)...
    for (const { race, out } of threadReads) {
      const gone = deletion(race);
      if (out.status === 404 && errorCode(out) === 'not_found' && gone !== undefined && gone.sentAt < out.ackedAt) continue;
      if (out.status !== 200) {
        problems.push(describeOutcome(`resolve of root ${race.root.id} during the race`, out));
        continue;
      }
      if (gone !== undefined && precedes(gone, out)) problems.push(`a resolve of root ${race.root.id} sent after its deletion was acknowledged answered 200 with ${out.body.replies.length} replies`);
      for (const reply of out.body.replies) {
        const sent = sentBodies.get(reply.body);
        if (sent === undefined || sent.isRoot || sent.rootId !== race.root.id) problems.push(`the resolve answer of ${race.root.id} shows reply ${reply.id} with a body never sent into it: ${JSON.stringify(reply.body)}`);
        const life = replies.find((l) => l.post.body?.id === reply.id);
        if (life?.removal?.status === 204 && precedes(life.removal, out)) problems.push(`a resolve answer sent after reply ${reply.id}'s deletion was acknowledged shows it`);
      }
    }
    // ...nor a thread list.
    for (const read of reads) {
      if (read.status !== 200) {
        problems.push(describeOutcome('GET thread list during the race', read));
        continue;
      }
      for (const thread of read.body.items) {
        const race = raceOf(thread.root.id);
        if (race === undefined) {
          problems.push(`a read shows thread ${thread.root.id}, which nobody started`);
          continue;
        }
        const gone = deletion(race);
        if (gone !== undefined && precedes(gone, read)) {
          problems.push(`a read sent ${(read.sentAt - gone.ackedAt).toFixed(1)} ms after root ${race.root.id}'s deletion was acknowledged shows its thread with ${thread.replies.length} replies`);
        }
        for (const reply of thread.replies) {
          const sent = sentBodies.get(reply.body);
          if (sent === undefined || sent.isRoot || sent.rootId !== race.root.id) problems.push(`thread ${race.root.id} shows reply ${reply.id} with a body never sent into it: ${JSON.stringify(reply.body)}`);
          const life = replies.find((l) => l.post.body?.id === reply.id);
          if (life?.removal?.status === 204 && precedes(life.removal, read)) problems.push(`a read sent after reply ${reply.id}'s deletion was acknowledged shows it`);
        }
      }
    }

    // After the race: deleted roots are gone for every endpoint, the control thread holds exactly what was acknowledged.
    const final = await walk(publicId);
    for (const race of deletedRoots) {
      if (final.some((thread) => thread.root.id === race.root.id)) problems.push(`deleted root ${race.root.id} is still listed`);
      const author = ann[0]!;
      for (const [what, out, status] of [
        ['reply to it', await postComment(others[0]!, publicId, nextBody('late reply'), race.root.id), 404],
        ['resolve it', await resolveThread(author, publicId, race.root.id, true), 404],
        ['edit it', await editComment(author, publicId, race.root.id, nextBody('late edit')), 404],
        ['delete it again', await deleteComment(author, publicId, race.root.id), 404],
      ] as const) {
        if (out.status !== status) problems.push(describeOutcome(`after root ${race.root.id} was deleted, ${what}`, out));
      }
      const acknowledgedReply = replies.find((life) => life.race === race && life.post.status === 201 && life.removal === undefined);
      if (acknowledgedReply !== undefined) {
        const owner = others.find((who) => who.embedUserId === acknowledgedReply.post.body.userId)!;
        const out = await editComment(owner, publicId, acknowledgedReply.post.body.id, nextBody('late edit of a reply'));
        if (out.status !== 404) problems.push(describeOutcome(`after root ${race.root.id} was deleted, edit its reply ${acknowledgedReply.post.body.id}`, out));
      }
    }
    const controlThread = final.find((thread) => thread.root.id === control.id);
    const controlExpected = replies
      .filter((life) => life.race.root.id === control.id && life.post.status === 201 && life.removal?.status !== 204)
      .map((life) => ({ id: life.post.body.id, body: life.edits.at(-1)?.out.status === 200 ? life.edits.at(-1)!.body : life.post.body.body }))
      .sort((a, b) => a.id - b.id);
    expect(controlThread, 'the control thread, never deleted, is listed').toBeDefined();
    expect(controlThread!.replies.map((reply) => ({ id: reply.id, body: reply.body })).sort((a, b) => a.id - b.id), 'the control thread holds every acknowledged reply, with its last acknowledged body').toEqual(controlExpected);
    problems.push(...await listMismatches(publicId));
    expect(problems).toEqual([]);
  }, 120_000);

  /**
   * The body a comment shows must be a linearizable register's: the final body is an acknowledged edit that no
   * acknowledged edit was sent after, and no read sent after an edit E was acknowledged shows a body that an edit
   * acknowledged before E was sent had already replaced.
   */
  function registerViolations(label: string, writes: { body: string; out: Outcome<Comment> }[], reads: { body: string; out: Outcome }[], final: string): string[] {
    const problems: string[] = [];
    const acknowledged = writes.filter((write) => write.out.status === 200);
    const winner = acknowledged.find((write) => write.body === final);
    if (winner === undefined) {
      problems.push(`${label}: final body ${JSON.stringify(final)} is none of the ${acknowledged.length} acknowledged edits`);
    } else {
      const later = acknowledged.filter((write) => precedes(winner.out, write.out));
      if (later.length > 0) {
        problems.push(`${label}: lost edit: final body ${JSON.stringify(final)} was acknowledged before ${later.length} other acknowledged edits were sent, e.g. ${JSON.stringify(later.at(-1)!.body)}`);
      }
    }
    for (const read of reads) {
      const shown = acknowledged.find((write) => write.body === read.body);
      if (shown === undefined) {
        if (!writes.some((write) => write.body === read.body)) problems.push(`${label}: a read shows a body nobody sent: ${JSON.stringify(read.body)}`);
        continue;
      }
      const newer = acknowledged.find((write) => precedes(shown.out, write.out) && precedes(write.out, read.out));
      if (newer !== undefined) problems.push(`${label}: stale read: shows ${JSON.stringify(read.body)} after ${JSON.stringify(newer.body)}, sent after it, was acknowledged`);
    }
    return problems;
  }

  it('loses no acknowledged edit of a comment edited from many sessions at once, and readers never go back in time', async () => {
    const publicId = ids.edits;
    const EDITS_EACH = 12;
    const problems: string[] = [];
    const original = await created(ann[0]!, publicId, nextBody('edited comment'));
    const replyOf = await created(others[0]!, publicId, nextBody('a reply, edited by its author'), original.id);
    const creation = { body: original.body, out: { status: 200, body: original, text: '', sentAt: 0, ackedAt: 0 } satisfies Outcome<Comment> };
    const writes: { body: string; out: Outcome<Comment> }[] = [creation];
    const reads: { body: string; out: Outcome }[] = [];
    const refused: Outcome[] = [];
    let editing = true;

    const author = async (who: ViewerSession, session: number) => {
      for (let i = 0; i < EDITS_EACH; i++) {
        const body = nextBody(`edit ${i} by ann's session ${session}`);
        const out = await editComment(who, publicId, original.id, body);
        writes.push({ body, out });
        if (out.status !== 200 || out.body.body !== body || out.body.editedAt == null || out.body.isOwn !== true) problems.push(describeOutcome(`ann's edit ${JSON.stringify(body)}`, out));
      }
    };
    const intruder = async (who: ViewerSession) => {
      for (let i = 0; i < 4; i++) refused.push(await editComment(who, publicId, original.id, nextBody('not mine')));
    };
    const reader = async (who: ViewerSession) => {
      while (editing) {
        const out = await listThreads(who, publicId);
        const thread = out.status === 200 ? out.body.items.find((th) => th.root.id === original.id) : undefined;
        if (thread === undefined) problems.push(describeOutcome('a read during the edits (the thread missing)', out));
        else reads.push({ body: thread.root.body, out });
      }
    };
    const replyEdits: { body: string; out: Outcome<Comment> }[] = [{ body: replyOf.body, out: { status: 200, body: replyOf, text: '', sentAt: 0, ackedAt: 0 } }];
    const replyAuthor = async () => {
      for (let i = 0; i < EDITS_EACH; i++) {
        const body = nextBody(`reply edit ${i}`);
        replyEdits.push({ body, out: await editComment(others[0]!, publicId, replyOf.id, body) });
      }
    };

    const readers = [reader(others[1]!), reader(others[2]!), reader(ann[1]!)];
    await Promise.all([...ann.map(author), ...others.slice(3, 9).map(intruder), replyAuthor()]);
    editing = false;
    await Promise.all(readers);
    for (const out of refused) if (out.status !== 403 || errorCode(out) !== 'forbidden') problems.push(describeOutcome('a non-author\'s edit', out));
    for (const { out, body } of replyEdits) if (out.status !== 200) problems.push(describeOutcome(`the reply author's edit ${JSON.stringify(body)}`, out));

    let thread = (await walk(publicId)).find((th) => th.root.id === original.id)!;
    problems.push(...registerViolations('sequential edits from 3 sessions', writes, reads, thread.root.body));
    // The reply was edited by one client in sequence: its last edit wins, exactly.
    if (thread.replies[0]?.body !== replyEdits.at(-1)!.body) problems.push(`the reply shows ${JSON.stringify(thread.replies[0]?.body)}, its last acknowledged edit was ${JSON.stringify(replyEdits.at(-1)!.body)}`);

    // A burst: 30 edits fired at once from ann's sessions, none waiting for another.
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => {
      const body = nextBody(`burst edit ${i}`);
      return editComment(ann[i % ANN_SESSIONS]!, publicId, original.id, body).then((out) => ({ body, out }));
    }));
    for (const { out, body } of burst) if (out.status !== 200 || out.body.body !== body) problems.push(describeOutcome(`burst edit ${JSON.stringify(body)}`, out));
    thread = (await walk(publicId)).find((th) => th.root.id === original.id)!;
    problems.push(...registerViolations('a burst of 30 concurrent edits', burst, [], thread.root.body));
    const row = (await rowsOf(publicId)).find((r) => r.id === original.id)!;
    if (row.body !== thread.root.body) problems.push(`the list shows ${JSON.stringify(thread.root.body)}, the row holds ${JSON.stringify(row.body)}`);
    problems.push(...await listMismatches(publicId));
    expect(problems).toEqual([]);
  }, 120_000);

  it('refuses every edit sent after a concurrent deletion was acknowledged, and the deleted comment stays gone', async () => {
    const publicId = ids.editDelete;
    const problems: string[] = [];
    const ROUNDS = 5;
    for (let round = 0; round < ROUNDS; round++) {
      const root = await created(ann[0]!, publicId, nextBody(`to be deleted ${round}`));
      const reply = await created(ann[1]!, publicId, nextBody(`ann's own reply ${round}`), root.id);
      const edits: { target: number; out: Outcome<Comment> }[] = [];
      let deletion: Outcome | undefined;
      const deleteAfter = 3 + randomInt(12);
      let acknowledged = 0;
      const editor = async (who: ViewerSession) => {
        for (let i = 0; i < 8; i++) {
          const target = random.next() < 0.5 ? root.id : reply.id;
          const out = await editComment(who, publicId, target, nextBody(`edit racing a deletion ${round}`));
          edits.push({ target, out });
          if (out.status === 200 && ++acknowledged === deleteAfter) deletion = await deleteComment(ann[2]!, publicId, root.id);
        }
      };
      await Promise.all(ann.map(editor));
      if (deletion === undefined) deletion = await deleteComment(ann[2]!, publicId, root.id);
      if (deletion.status !== 204) problems.push(describeOutcome(`round ${round}: DELETE root`, deletion));
      for (const { target, out } of edits) {
        const ok = out.status === 200 ? !precedes(deletion, out) : out.status === 404 && errorCode(out) === 'not_found' && deletion.sentAt < out.ackedAt;
        if (!ok) problems.push(describeOutcome(`round ${round}: edit of ${target === root.id ? 'the root' : 'its reply'} ${target} (deletion sent ${deletion.sentAt.toFixed(1)}, acknowledged ${deletion.ackedAt.toFixed(1)}; edit sent ${out.sentAt.toFixed(1)})`, out));
      }
      const rows = (await rowsOf(publicId)).filter((row) => row.id === root.id || row.id === reply.id);
      for (const row of rows) if (row.removed_at === null) problems.push(`round ${round}: comment ${row.id} of the deleted thread is live in the database`);
    }
    const listed = await walk(publicId);
    if (listed.length > 0) problems.push(`every thread was deleted, yet the list shows ${listed.length}`);
    problems.push(...await listMismatches(publicId));
    expect(problems).toEqual([]);
  }, 120_000);

  it('ends resolve and re-open races in the state of an action no other acknowledged action followed; each answer shows the state asked', async () => {
    const publicId = ids.resolve;
    const THREADS = 3;
    const ACTIONS_EACH = 10;
    const problems: string[] = [];
    const roots = await Promise.all(Array.from({ length: THREADS }, (_, i) => created(ann[0]!, publicId, nextBody(`resolvable ${i}`))));
    const firstReplies = await Promise.all(roots.map((root) => created(others[0]!, publicId, nextBody('first reply'), root.id)));
    interface Action { resolved: boolean; out: Outcome<Thread> }
    const actions = new Map<number, Action[]>(roots.map((root) => [root.id, []]));
    const replyBodies = new Map<number, string[]>(roots.map((root, i) => [root.id, [firstReplies[i]!.body]]));
    const refused: { what: string; status: number; out: Outcome }[] = [];

    const resolver = async (who: ViewerSession, rootId: number) => {
      for (let i = 0; i < ACTIONS_EACH; i++) {
        const resolved = random.next() < 0.5;
        const out = await resolveThread(who, publicId, rootId, resolved);
        actions.get(rootId)!.push({ resolved, out });
        if (out.status !== 200) {
          problems.push(describeOutcome(`ann's resolve(${resolved}) of ${rootId}`, out));
          continue;
        }
        const thread = out.body;
        const expectedBy = resolved ? ann[0]!.embedUserId : null;
        if (thread.root.id !== rootId || (thread.resolvedAt != null) !== resolved || (thread.resolvedBy ?? null) !== expectedBy) {
          problems.push(`resolve(${resolved}) of ${rootId} answered resolvedAt ${thread.resolvedAt}, resolvedBy ${thread.resolvedBy}`);
        }
        for (const reply of thread.replies) if (!replyBodies.get(rootId)!.includes(reply.body)) problems.push(`resolve of ${rootId} answered a reply never sent: ${JSON.stringify(reply.body)}`);
      }
    };
    const replier = async (who: ViewerSession, rootId: number) => {
      for (let i = 0; i < 3; i++) {
        const body = nextBody(`reply while resolving ${rootId}`);
        replyBodies.get(rootId)!.push(body);
        const out = await postComment(who, publicId, body, rootId);
        if (out.status !== 201) problems.push(describeOutcome(`a reply to ${rootId} during the resolves`, out));
      }
    };
    const outsider = async (who: ViewerSession, rootId: number, replyId: number) => {
      refused.push({ what: `a non-author's resolve of ${rootId}`, status: 403, out: await resolveThread(who, publicId, rootId, random.next() < 0.5) });
      refused.push({ what: `ann's resolve of reply ${replyId}`, status: 400, out: await resolveThread(ann[randomInt(ANN_SESSIONS)]!, publicId, replyId, true) });
    };

    await Promise.all(roots.flatMap((root, i) => [
      ...ann.map((who) => resolver(who, root.id)),
      ...others.slice(1, 5).map((who) => replier(who, root.id)),
      ...others.slice(5, 8).map((who) => outsider(who, root.id, firstReplies[i]!.id)),
    ]));
    for (const { what, status, out } of refused) if (out.status !== status) problems.push(describeOutcome(what, out));

    const all = await walk(publicId);
    const resolvedOnly = await walk(publicId, 'resolvedOnly=true');
    const openOnly = await walk(publicId, '');
    for (const root of roots) {
      const thread = all.find((th) => th.root.id === root.id);
      if (thread === undefined) {
        problems.push(`thread ${root.id} is missing`);
        continue;
      }
      const isResolved = thread.resolvedAt != null;
      const acknowledged = actions.get(root.id)!.filter((action) => action.out.status === 200);
      const candidates = acknowledged.filter((action) => !acknowledged.some((other) => precedes(action.out, other.out)));
      if (!candidates.some((action) => action.resolved === isResolved)) {
        problems.push(`thread ${root.id} ends ${isResolved ? 'resolved' : 'open'}, but every action no other acknowledged action followed asked ${candidates.map((a) => a.resolved).join(', ')}`);
      }
      if (resolvedOnly.some((th) => th.root.id === root.id) !== isResolved) problems.push(`thread ${root.id}: resolvedOnly disagrees with its state`);
      if (openOnly.some((th) => th.root.id === root.id) === isResolved) problems.push(`thread ${root.id}: the default (open) list disagrees with its state`);
      if (isResolved && thread.resolvedBy !== ann[0]!.embedUserId) problems.push(`thread ${root.id} is resolved by ${thread.resolvedBy}, not its author`);
      const sentReplies = replyBodies.get(root.id)!;
      if (thread.replies.length !== sentReplies.length) problems.push(`thread ${root.id} shows ${thread.replies.length} replies, ${sentReplies.length} were acknowledged`);
    }
    problems.push(...await listMismatches(publicId));
    expect(problems).toEqual([]);
  }, 120_000);

  it('agrees on one resolution when the author resolves an open thread from several sessions at once (the first resolution is kept)', async () => {
    // comments.service.ts resolveThread: "Resolving a resolved thread keeps its first resolution (idempotent)". Of
    // concurrent resolves, one is first; every other, linearized after it, must answer with the resolution kept.
    const publicId = ids.resolve;
    const problems: string[] = [];
    for (let round = 0; round < 10; round++) {
      const root = await created(ann[0]!, publicId, nextBody(`resolved at once ${round}`));
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => resolveThread(ann[i % ANN_SESSIONS]!, publicId, root.id, true)));
      const kept = (await walk(publicId, 'resolvedOnly=true')).find((thread) => thread.root.id === root.id);
      if (kept?.resolvedAt == null) {
        problems.push(`round ${round}: thread ${root.id} is not resolved after 6 acknowledged resolves`);
        continue;
      }
      for (const out of answers) {
        if (out.status !== 200) problems.push(describeOutcome(`round ${round}: resolve`, out));
        else if (out.body.resolvedAt !== kept.resolvedAt) problems.push(`round ${round}: a resolve answered resolvedAt ${out.body.resolvedAt}, the thread keeps ${kept.resolvedAt}`);
      }
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('gives exactly one token per session id, however many exchanges race for it; the rest get the documented 401', async () => {
    const SESSIONS = 8;
    const RACERS = 25;
    const problems: string[] = [];
    const generate = (externalId: string) => call<{ sessionId: string }>(bearer(s.keys.alice!), 'POST', '/api/v1/embed/generate-session', { deploymentId: s.refs.prod, embedTenantName: TENANT, externalId });
    // Generate Session itself, many at once for one new viewer: every one answers, and all name one embed user.
    const externalId = `racer-${uniqueSuffix()}`;
    const minted = await Promise.all(Array.from({ length: SESSIONS }, () => generate(externalId)));
    for (const out of minted) if (out.status !== 200) problems.push(describeOutcome('concurrent generate-session for one viewer', out));
    expect(problems).toEqual([]);

    const exchanges = await Promise.all(minted.flatMap(({ body: { sessionId } }) =>
      Array.from({ length: RACERS }, () => call<{ token: string }>({}, 'POST', '/api/v1/embed/session/token', { sessionId }).then((out) => ({ sessionId, out })))));
    const embedUsers = new Set<number | null>();
    for (const { body: { sessionId } } of minted) {
      const mine = exchanges.filter((exchange) => exchange.sessionId === sessionId).map((exchange) => exchange.out);
      const winners = mine.filter((out) => out.status === 200);
      if (winners.length !== 1) problems.push(`session ${sessionId.slice(0, 10)}…: ${winners.length} of ${RACERS} concurrent exchanges got a token`);
      for (const out of mine.filter((o) => o.status !== 200)) {
        const error = errorOf(out);
        if (out.status !== 401 || error?.status !== 401 || error.code !== 'unauthorized' || error.field !== 'sessionId') problems.push(describeOutcome('a losing exchange', out));
      }
      for (const winner of winners) {
        const current = await call<{ session: { embedUserId: number | null } | null }>({ authorization: `Embed-Token ${winner.body.token}` }, 'GET', '/api/v1/embed/session');
        if (current.status !== 200 || current.body.session === null) problems.push(describeOutcome('the winning token', current));
        else embedUsers.add(current.body.session.embedUserId);
      }
      const late = await call({}, 'POST', '/api/v1/embed/session/token', { sessionId });
      if (late.status !== 401) problems.push(describeOutcome('an exchange after the race', late));
    }
    if (embedUsers.size !== 1) problems.push(`the tokens of one externalId name ${embedUsers.size} embed users: ${[...embedUsers].join(', ')}`);
    expect(problems).toEqual([]);
  }, 120_000);
});

/**
 * One SQLite file, two `svc serve` processes (test/svc-process.ts: "a second server sharing one database, as an
 * operator runs them"). Each process has its own connection, so SQLite's file locks, not one event loop, order the
 * writes. A busy database is something to wait for (busy_timeout), never an answer: no request may get a 5xx.
 */
describe('comments and sessions from two svc serve processes on one SQLite file', () => {
  let dir: string;
  let db: Db;
  let processes: SvcProcess[] = [];
  let cluster: Cluster;
  let output = '';
  let s: SeededAccount;
  let publicId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-two-processes-'));
    const url = `sqlite:${join(dir, 'svc.db')}`;
    db = openDatabase(url);
    await migrateToLatest(db);
    publicId = `two-processes-${uniqueSuffix()}`;
    s = await seedAccount(db.kysely, {
      settings: { allowEmbedComments: true },
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'W', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
    });
    processes = await Promise.all([startSvcServe(url, RAISED_RATE_LIMIT_ENV), startSvcServe(url, RAISED_RATE_LIMIT_ENV)]);
    for (const [i, running] of processes.entries()) {
      const keep = (chunk: Buffer) => {
        output = `${output}${chunk.toString().split('\n').filter(Boolean).map((line) => `[svc ${i}] ${line}\n`).join('')}`.slice(-50_000);
      };
      running.child.stdout!.on('data', keep);
      running.child.stderr!.on('data', keep);
    }
    cluster = { bases: processes.map((running) => running.url), kysely: db.kysely };
  }, 60_000);

  afterAll(async () => {
    await Promise.all(processes.map((running) => running.stop()));
    await db?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const generate = (externalId: string) =>
    callOn<{ sessionId: string }>(cluster, bearer(s.keys.alice!), 'POST', '/api/v1/embed/generate-session', { deploymentId: s.refs.prod, externalId });
  const exchange = (sessionId: string) => callOn<{ token: string }>(cluster, {}, 'POST', '/api/v1/embed/session/token', { sessionId });

  /** A viewer minted through either process (no embedTenantName: SPEC B rule 6, the account's own tenant); undefined if refused. */
  async function mint(externalId: string, problems: string[]): Promise<ViewerSession | undefined> {
    const minted = await generate(externalId);
    if (minted.status !== 200) {
      problems.push(describeOutcome('generate-session', minted));
      return undefined;
    }
    const exchanged = await exchange(minted.body.sessionId);
    if (exchanged.status !== 200) {
      problems.push(describeOutcome('exchange', exchanged));
      return undefined;
    }
    const headers = { authorization: `Embed-Token ${exchanged.body.token}` };
    const current = await callOn<{ session: { embedUserId: number } }>(cluster, headers, 'GET', '/api/v1/embed/session');
    if (current.status !== 200) {
      problems.push(describeOutcome('GET /api/v1/embed/session', current));
      return undefined;
    }
    return { headers, token: exchanged.body.token, embedUserId: current.body.session.embedUserId };
  }

  it('answers every request of viewers minted and writing through both processes at once without a 5xx, and one exchange per session id wins', async () => {
    const problems: string[] = [];
    const viewers = (await Promise.all(Array.from({ length: 60 }, (_, i) => mint(`two-${i % 20}`, problems)))).filter((viewer) => viewer !== undefined);
    const authors = viewers.slice(0, 4);
    const roots: Comment[] = [];
    for (const [i, author] of authors.entries()) {
      const out = await callOn<Comment>(cluster, author.headers, 'POST', commentsUrl(publicId), { body: `root ${i}` });
      if (out.status === 201) roots.push(out.body);
      else problems.push(describeOutcome('POST root', out));
    }
    const expect2xx = (what: string, out: Outcome, status: number) => {
      if (out.status !== status) problems.push(describeOutcome(what, out));
    };
    const replier = async (who: ViewerSession, n: number) => {
      for (let i = 0; i < 5; i++) {
        const root = roots[randomInt(roots.length)]!;
        const posted = await callOn<Comment>(cluster, who.headers, 'POST', commentsUrl(publicId), { body: `reply ${n}.${i}`, parentId: root.id });
        expect2xx('POST reply', posted, 201);
        if (posted.status !== 201) continue;
        expect2xx('PATCH reply', await callOn(cluster, who.headers, 'PATCH', commentsUrl(publicId, `/${posted.body.id}`), { body: `reply ${n}.${i} edited` }), 200);
        if (random.next() < 0.25) expect2xx('DELETE reply', await callOn(cluster, who.headers, 'DELETE', commentsUrl(publicId, `/${posted.body.id}`)), 204);
        expect2xx('GET threads', await callOn(cluster, who.headers, 'GET', commentsUrl(publicId, '?includeResolved=true')), 200);
      }
    };
    const resolver = async (who: ViewerSession, root: Comment) => {
      for (let i = 0; i < 5; i++) expect2xx('resolve', await callOn(cluster, who.headers, 'POST', commentsUrl(publicId, `/${root.id}/resolve`), { resolved: i % 2 === 0 }), 200);
    };
    await Promise.all([...viewers.map(replier), ...roots.map((root, i) => resolver(authors[i]!, root))]);

    // One winner per session id, with the racers spread over both processes.
    const sessionIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const minted = await generate(`two-racer-${i}`);
      if (minted.status === 200) sessionIds.push(minted.body.sessionId);
      else problems.push(describeOutcome('generate-session', minted));
    }
    const races = await Promise.all(sessionIds.map((sessionId) => Promise.all(Array.from({ length: 20 }, () => exchange(sessionId)))));
    for (const outs of races) {
      const winners = outs.filter((out) => out.status === 200).length;
      if (winners !== 1) problems.push(`${winners} of ${outs.length} concurrent exchanges of one session id got a token`);
      for (const out of outs) if (out.status !== 200 && (out.status !== 401 || errorCode(out) !== 'unauthorized')) problems.push(describeOutcome('a losing exchange', out));
    }
    if (viewers.length > 0) problems.push(...await listMismatchesOn(cluster, viewers[0]!.headers, publicId));
    // A failure's log line (pino, written asynchronously) reaches the pipe a moment after its answer.
    if (problems.length > 0) await pause(500);
    expect(problems, `${problems.length} problem(s):\n${problems.slice(0, 20).join('\n')}\n\nsvc output (tail):\n${summarizeLog(output).split('\n').slice(-30).join('\n')}`).toEqual([]);
  }, 120_000);
});
