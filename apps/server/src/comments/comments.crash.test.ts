import { randomBytes } from 'node:crypto';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { mintViewerOverHttp } from '../../test/embed.js';
import { RAISED_RATE_LIMIT_ENV } from '../../test/limits.js';
import { describeEachOwnDatabase } from '../../test/own-database.js';
import type { SvcProcess } from '../../test/svc-process.js';
import { openDatabase } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import type { Comment, Thread, ThreadList } from './comments.schema.js';
import { seededRandom } from '../../test/seeded-random.js';

// Issue 8 part 3, DESIGN "Storage": writes the API acknowledged survive a killed process. A real `svc serve`
// child takes concurrent comment writes from several embed viewers (new threads, replies, edits, resolves,
// re-opens, deletions) and is killed with SIGKILL at a random moment mid-load, then restarted on the same
// database, several rounds in a row. After each restart:
// - every acknowledged write (a 2xx received) is there with its exact content: body, author, thread, edit mark,
//   resolution; every acknowledged deletion stays deleted;
// - a write in flight at the kill is either wholly there or wholly absent. In svc's model a thread's root is its
//   first comment (one row), so "half-present" means: a reply whose root is missing, on another dashboard or
//   itself a reply; a row with another author, thread or body than was sent; a row whose comment stream version
//   (moved by a trigger in the same statement) did not move with it; a resolution half-set (is_resolved,
//   resolved_at and resolved_by disagreeing). A write never sent (its request refused, or sent to the dead
//   process) is absent.
// - the list shows exactly the live rows, and the embed tokens minted before the first kill still work;
// - SQLite: PRAGMA integrity_check is ok and PRAGMA foreign_key_check finds nothing; PostgreSQL: the B-tree
//   indexes of the comment tables pass amcheck's bt_index_check (when the amcheck extension is installed).
// A round's outcome also settles what was in flight, so the next round edits, resolves and deletes comments
// whose fate was decided by a crash.

/** Kill-and-restart rounds per dialect (SVC_CRASH_ROUNDS for a longer soak). */
const ROUNDS = Number(process.env.SVC_CRASH_ROUNDS ?? 5);
const WRITERS = 8;
/** The child is killed this long (plus up to KILL_SPREAD_MS, at random) after its first acknowledged write of the round. */
const KILL_AFTER_MS = 100;
const KILL_SPREAD_MS = 1000;

/** A comment some writer sent, and what the database must hold of it. `pending*`: in flight at a kill. */
interface ModelComment {
  writer: number;
  root: ModelComment | null;
  createBody: string;
  /** Unknown while the create is in flight, or when its answer was cut off after the status. */
  id: number | undefined;
  isCreatePending: boolean;
  body: string;
  pendingBody: string | undefined;
  isEdited: boolean;
  isResolved: boolean;
  pendingResolved: boolean | undefined;
  /** Deleted for sure: its deletion (or its root's) was acknowledged, or a request on it answered 404. */
  isDeleted: boolean;
  isDeletePending: boolean;
  /** Never written: its create was refused (404: the root went meanwhile), or was in flight and did not land. */
  isNeverWritten: boolean;
}

/** A comment as the thread list shows it, with the thread it sits in. */
interface Observed {
  comment: Comment;
  rootId: number | null;
  thread: Thread;
}

interface Viewer {
  headers: { authorization: string };
  embedUserId: number;
}

/**
 * svc's log as a reader wants it in a failure message: one line per entry, pino's JSON reduced to the message and
 * the error's type, code and message (no stack: a stack's file lines are dropped from vitest's messages).
 */
function summarizeLog(text: string): string {
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string; reqId?: string; err?: { type?: string; code?: string; message?: string } };
      const err = entry.err === undefined ? '' : `: ${entry.err.type ?? ''} ${entry.err.code ?? ''} ${entry.err.message ?? ''}`;
      return `${entry.msg ?? ''}${err} (request ${entry.reqId ?? '?'})`;
    } catch {
      return line.slice(0, 300);
    }
  }).join('\n');
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const random = seededRandom();
const randomInt = (below: number): number => random.int(below);
const pick = <T>(items: readonly T[]): T | undefined => items[randomInt(items.length)];

describeEachOwnDatabase('comments survive SIGKILL of svc serve under concurrent writes', { name: 'crash', settings: { allowEmbedComments: true } }, (t) => {
  let server: SvcProcess | undefined;
  let childLog = '';
  let starts = 0;

  /** Starts the child; its output (stdout: pino's log lines; stderr) is kept for failure messages. */
  async function start(): Promise<SvcProcess> {
    starts++;
    childLog += `\n--- svc serve start ${starts} ---\n`;
    const started = await t().start(RAISED_RATE_LIMIT_ENV);
    const keep = (chunk: Buffer) => {
      childLog += chunk.toString();
      if (childLog.length > 200_000) childLog = childLog.slice(-100_000);
    };
    started.child.stdout!.on('data', keep);
    started.child.stderr!.on('data', keep);
    return started;
  }

  async function kill(running: SvcProcess): Promise<void> {
    const exited = new Promise((resolve) => running.child.once('exit', resolve));
    if (running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await exited;
    }
    childLog += `\n--- svc serve ${starts} killed: ${running.child.signalCode ?? `exit ${running.child.exitCode}`} ---\n`;
  }

  const withLog = (problems: string[]) => `${problems.length} problem(s):\n${problems.slice(0, 30).join('\n')}\n\nsvc serve output (last 40 lines):\n${summarizeLog(childLog).split('\n').slice(-40).join('\n')}`;

  const json = (headers: Record<string, string>, body: unknown) => ({
    headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });

  /** A viewer's embed token through the real flow, over HTTP: Generate Session, then the exchange. */
  const mintViewer = (base: string, externalId: string): Promise<Viewer> => mintViewerOverHttp(base, t().adminKey, { deploymentId: t().deploymentId, externalId });

  it('keeps every acknowledged write, and nothing half-written, across repeated kills mid-load', async () => {
    const problems: string[] = [];
    const comments: ModelComment[] = [];
    let bodyCounter = 0;
    let acknowledgedTotal = 0;
    let inFlightTotal = 0;

    server = await start();
    const viewers: Viewer[] = [];
    for (let w = 0; w < WRITERS; w++) viewers.push(await mintViewer(server.url, `writer-${w}`));
    const commentsUrl = (base: string, rest = '') => `${base}/api/v1/embed/dashboard/${t().publicId}/comments${rest}`;

    const isGone = (c: ModelComment) => c.isDeleted || c.isNeverWritten || (c.root !== null && c.root.isDeleted);
    /** What the writer may act on: written, id known, and not deleted as far as anyone knows. */
    const isUsable = (c: ModelComment) => c.id !== undefined && !c.isCreatePending && !isGone(c) && !c.isDeletePending && !(c.root?.isDeletePending ?? false);

    for (let round = 1; round <= ROUNDS; round++) {
      const base = server.url;
      let isKilling = false;
      let acknowledged = 0;
      let inFlight = 0;
      let noteFirstAcknowledged!: () => void;
      // A fresh process answers its first requests slowly: the kill is timed from the first acknowledged write.
      const firstAcknowledged = new Promise<void>((resolve) => {
        noteFirstAcknowledged = resolve;
      });

      /** One request; undefined when it failed without an answer (in flight at the kill). */
      const send = async (writer: number, method: string, path: string, payload?: unknown): Promise<{ status: number; text: string } | undefined> => {
        let status: number | undefined;
        try {
          const res = await fetch(path, {
            method,
            ...(payload === undefined ? { headers: viewers[writer]!.headers } : json(viewers[writer]!.headers, payload)),
            signal: AbortSignal.timeout(15_000),
          });
          status = res.status;
          if (status >= 200 && status < 300) noteFirstAcknowledged();
          return { status, text: await res.text() };
        } catch (error) {
          // The status line came, the body was cut off: acknowledged all the same (no id to learn, though).
          if (status !== undefined) return { status, text: '' };
          if (!isKilling) problems.push(`round ${round}: ${method} ${path} failed while svc was alive: ${error instanceof Error ? error.message : String(error)}`);
          inFlight++;
          return undefined;
        }
      };
      const parsed = <T>(text: string): T | undefined => {
        try {
          return JSON.parse(text) as T;
        } catch {
          return undefined;
        }
      };
      const unexpected = (what: string, answer: { status: number; text: string }) => problems.push(`round ${round}: ${what} answered ${answer.status} ${answer.text.slice(0, 300)}`);

      async function create(writer: number, root: ModelComment | null): Promise<boolean> {
        const body = `round ${round} writer ${writer} ${root === null ? 'thread' : `reply to ${root.id}`} #${++bodyCounter} ${randomBytes(3).toString('hex')}`;
        const comment: ModelComment = {
          writer, root, createBody: body, id: undefined, isCreatePending: true, body, pendingBody: undefined, isEdited: false,
          isResolved: false, pendingResolved: undefined, isDeleted: false, isDeletePending: false, isNeverWritten: false,
        };
        comments.push(comment);
        const answer = await send(writer, 'POST', commentsUrl(base), root === null ? { body } : { body, parentId: root.id });
        if (answer === undefined) return false;
        if (answer.status === 201) {
          acknowledged++;
          comment.isCreatePending = false;
          const shown = parsed<Comment>(answer.text);
          comment.id = shown?.id;
          if (shown !== undefined && (shown.body !== body || shown.userId !== viewers[writer]!.embedUserId)) unexpected('POST comment (answer differs from what was sent)', answer);
          return true;
        }
        comment.isCreatePending = false;
        comment.isNeverWritten = true;
        // SPEC B rule 1: a reply to a root deleted meanwhile is a 404, and proves the root's deletion committed.
        if (answer.status === 404 && root !== null && (root.isDeletePending || root.isDeleted)) {
          root.isDeleted = true;
          return true;
        }
        unexpected(`POST ${root === null ? 'thread' : `reply to ${root.id}`}`, answer);
        return false;
      }

      async function edit(writer: number, comment: ModelComment): Promise<boolean> {
        const body = `${comment.createBody} edited #${++bodyCounter}`;
        comment.pendingBody = body;
        const answer = await send(writer, 'PATCH', commentsUrl(base, `/${comment.id}`), { body });
        if (answer === undefined) return false;
        comment.pendingBody = undefined;
        if (answer.status === 200) {
          acknowledged++;
          comment.body = body;
          comment.isEdited = true;
          return true;
        }
        if (answer.status === 404 && comment.root !== null && (comment.root.isDeletePending || comment.root.isDeleted)) {
          comment.root.isDeleted = true;
          return true;
        }
        unexpected(`PATCH ${comment.id}`, answer);
        return false;
      }

      async function resolve(writer: number, root: ModelComment): Promise<boolean> {
        const resolved = !root.isResolved;
        root.pendingResolved = resolved;
        const answer = await send(writer, 'POST', commentsUrl(base, `/${root.id}/resolve`), { resolved });
        if (answer === undefined) return false;
        root.pendingResolved = undefined;
        if (answer.status === 200) {
          acknowledged++;
          root.isResolved = resolved;
          const thread = parsed<Thread>(answer.text);
          if (thread !== undefined && (thread.resolvedAt != null) !== resolved) unexpected(`resolve(${resolved}) of ${root.id} (answer shows the other state)`, answer);
          return true;
        }
        unexpected(`resolve(${resolved}) of ${root.id}`, answer);
        return false;
      }

      async function remove(writer: number, comment: ModelComment): Promise<boolean> {
        comment.isDeletePending = true;
        const answer = await send(writer, 'DELETE', commentsUrl(base, `/${comment.id}`));
        if (answer === undefined) return false;
        comment.isDeletePending = false;
        if (answer.status === 204) {
          acknowledged++;
          comment.isDeleted = true;
          return true;
        }
        if (answer.status === 404 && comment.root !== null && (comment.root.isDeletePending || comment.root.isDeleted)) {
          comment.root.isDeleted = true;
          comment.isDeleted = true;
          return true;
        }
        unexpected(`DELETE ${comment.id}`, answer);
        return false;
      }

      /** One writer: random operations on the shared threads until the kill; it stops at its first unanswered request. */
      async function writer(w: number): Promise<void> {
        while (!isKilling) {
          const own = comments.filter((c) => c.writer === w && isUsable(c));
          const roll = random.next();
          // Replies also go to roots whose deletion is in flight: the race SPEC B rule 1 answers with a 404.
          const root = pick(comments.filter((c) => c.root === null && c.id !== undefined && !c.isCreatePending && !isGone(c)));
          const mine = pick(own);
          const myRoot = pick(own.filter((c) => c.root === null));
          let ok: boolean;
          if (roll < 0.35 && root !== undefined) ok = await create(w, root);
          else if (roll < 0.55 && mine !== undefined) ok = await edit(w, mine);
          else if (roll < 0.67 && myRoot !== undefined) ok = await resolve(w, myRoot);
          else if (roll < 0.75 && mine !== undefined) ok = await remove(w, mine);
          else ok = await create(w, null);
          if (!ok) return;
        }
      }

      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
      await Promise.race([firstAcknowledged, pause(20_000)]);
      await pause(KILL_AFTER_MS + randomInt(KILL_SPREAD_MS));
      isKilling = true;
      await kill(server);
      await Promise.all(writers);
      acknowledgedTotal += acknowledged;
      inFlightTotal += inFlight;

      server = await start();
      problems.push(...(await checkAfterRestart(server.url, round, comments, viewers)).map((problem) => `round ${round}: ${problem}`));
      expect(problems, withLog(problems)).toEqual([]);
      expect(acknowledged, `round ${round}: the kill came mid-load, after writes were acknowledged`).toBeGreaterThan(0);
    }
    // The rounds did what they are for: writes acknowledged and writes cut off by the kill, in every round overall.
    expect(acknowledgedTotal).toBeGreaterThan(ROUNDS * 10);
    expect(inFlightTotal, 'writes were in flight at the kills').toBeGreaterThan(0);
  }, 60_000 + ROUNDS * 30_000);

  /** Every thread, every state, page by page, as viewer 0 sees it (every writer's comments are in one embed tenant). */
  async function listEverything(base: string, viewer: Viewer): Promise<Thread[]> {
    const threads: Thread[] = [];
    let after: string | null | undefined;
    for (;;) {
      const query = ['includeResolved=true', 'first=200', after == null ? '' : `after=${encodeURIComponent(after)}`].filter(Boolean).join('&');
      const res = await fetch(`${base}/api/v1/embed/dashboard/${t().publicId}/comments?${query}`, { headers: viewer.headers });
      const text = await res.text();
      expect(res.status, `the thread list after a restart: ${text}\n${summarizeLog(childLog).split('\n').slice(-20).join('\n')}`).toBe(200);
      const page = JSON.parse(text) as ThreadList;
      threads.push(...page.items);
      if (!page.pageInfo.hasNextPage) return threads;
      after = page.pageInfo.endCursor;
    }
  }

  /** The checks after a restart; settles what was in flight to what the database kept. */
  async function checkAfterRestart(base: string, round: number, comments: ModelComment[], viewers: Viewer[]): Promise<string[]> {
    const problems: string[] = [];
    const threads = await listEverything(base, viewers[0]!);
    const observed = new Map<number, Observed>();
    for (const thread of threads) {
      observed.set(thread.root.id, { comment: thread.root, rootId: null, thread });
      for (const reply of thread.replies) observed.set(reply.id, { comment: reply, rootId: thread.root.id, thread });
    }
    const byCreateBody = new Map<string, Observed>();
    for (const seen of observed.values()) byCreateBody.set(seen.comment.body, seen);

    const claimed = new Set<number>();
    for (const c of comments) {
      if (c.isNeverWritten && !c.isCreatePending) {
        const seen = [...observed.values()].find((o) => o.comment.body === c.createBody);
        if (seen !== undefined) problems.push(`comment ${seen.comment.id} holds the body of a create that was refused: ${JSON.stringify(c.createBody)}`);
        continue;
      }
      // A pending create has no id: it is found by its body (no edit can have followed it).
      const seen = c.id !== undefined ? observed.get(c.id) : byCreateBody.get(c.createBody);
      const label = `${c.root === null ? 'thread' : 'reply'} ${c.id ?? '(id unknown)'} ${JSON.stringify(c.createBody)}`;
      const mustBeGone = c.isDeleted || (c.root !== null && c.root.isDeleted);
      const mayBeGone = c.isCreatePending || c.isDeletePending || (c.root !== null && (c.root.isDeletePending || c.root.isCreatePending));
      if (seen === undefined) {
        if (!mustBeGone && !mayBeGone) problems.push(`acknowledged ${label} is lost`);
      } else {
        claimed.add(seen.comment.id);
        if (mustBeGone) problems.push(`${label} is listed, but its deletion${c.isDeleted ? '' : ' (of its root)'} was acknowledged`);
        const shown = seen.comment;
        const bodies = c.pendingBody === undefined ? [c.body] : [c.body, c.pendingBody];
        if (!bodies.includes(shown.body)) problems.push(`${label} shows body ${JSON.stringify(shown.body)}, expected ${bodies.map((b) => JSON.stringify(b)).join(' or ')}`);
        if (shown.userId !== viewers[c.writer]!.embedUserId) problems.push(`${label} shows author ${shown.userId}, written by embed user ${viewers[c.writer]!.embedUserId}`);
        const isEdited = shown.body === c.pendingBody || c.isEdited;
        if ((shown.editedAt != null) !== isEdited) problems.push(`${label} shows editedAt ${shown.editedAt}, ${isEdited ? 'edited' : 'never edited'}`);
        if (c.root === null ? seen.rootId !== null : seen.rootId !== c.root.id) problems.push(`${label} sits in thread ${seen.rootId ?? '(as a root)'}, sent to ${c.root?.id ?? '(as a root)'}`);
        if (c.root === null) {
          const states = c.pendingResolved === undefined ? [c.isResolved] : [c.isResolved, c.pendingResolved];
          const isResolved = seen.thread.resolvedAt != null;
          if (!states.includes(isResolved)) problems.push(`${label} is ${isResolved ? 'resolved' : 'open'}, its last acknowledged action left it ${c.isResolved ? 'resolved' : 'open'}`);
          if (isResolved && seen.thread.resolvedBy !== viewers[c.writer]!.embedUserId) problems.push(`${label} is resolved by ${seen.thread.resolvedBy}, not its author`);
        }
        // Settle: what the database kept is the truth from here on.
        c.id = shown.id;
        c.body = shown.body;
        c.isEdited = shown.editedAt != null;
        if (c.root === null) c.isResolved = seen.thread.resolvedAt != null;
      }
      if (seen === undefined && !mustBeGone) {
        if (c.isCreatePending) c.isNeverWritten = true;
        else c.isDeleted = true;
      }
      c.isCreatePending = false;
      c.pendingBody = undefined;
      c.pendingResolved = undefined;
      c.isDeletePending = false;
    }
    for (const seen of observed.values()) {
      if (!claimed.has(seen.comment.id)) problems.push(`comment ${seen.comment.id} ${JSON.stringify(seen.comment.body)} (thread ${seen.rootId ?? 'root'}) matches no write that was sent`);
    }
    // A token minted before the first kill still works after it (its session and the signing key were committed).
    for (const viewer of viewers) {
      const res = await fetch(`${base}/api/v1/embed/session`, { headers: viewer.headers });
      if (res.status !== 200) problems.push(`a token minted before the kills answers ${res.status} after restart ${round}`);
    }
    problems.push(...await checkDatabase(threads));
    return problems;
  }

  /** What the database holds, looked at directly (a second connection beside the running child). */
  async function checkDatabase(threads: Thread[]): Promise<string[]> {
    const problems: string[] = [];
    const { sqlitePath } = t();
    if (sqlitePath !== undefined) {
      const sqlite = new SqliteDatabase(sqlitePath);
      try {
        const integrity = sqlite.pragma('integrity_check') as { integrity_check: string }[];
        if (integrity.length !== 1 || integrity[0]!.integrity_check !== 'ok') problems.push(`PRAGMA integrity_check: ${JSON.stringify(integrity)}`);
        const foreignKeys = sqlite.pragma('foreign_key_check') as unknown[];
        if (foreignKeys.length > 0) problems.push(`PRAGMA foreign_key_check: ${JSON.stringify(foreignKeys.slice(0, 10))}`);
      } finally {
        sqlite.close();
      }
    }
    const db = openDatabase(t().url);
    try {
      const kysely = db.kysely;
      const dashboard = await kysely.selectFrom('dashboards').select(['id', 'account_id']).where('public_id', '=', t().publicId).executeTakeFirstOrThrow();
      const rows = await kysely.selectFrom('comments')
        .select(['id', 'parent_id', 'dashboard_id', 'embed_tenant_id', 'account_id', 'body', 'removed_at', 'is_resolved', 'resolved_at', 'resolved_by'])
        .where('account_id', '=', dashboard.account_id)
        .execute();
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const row of rows) {
        if (row.dashboard_id !== dashboard.id) problems.push(`row ${row.id} sits on dashboard ${row.dashboard_id}, nobody wrote there`);
        if (row.parent_id !== null) {
          const parent = byId.get(row.parent_id);
          if (parent === undefined) problems.push(`reply ${row.id}: its root ${row.parent_id} is missing`);
          else if (parent.parent_id !== null || parent.dashboard_id !== row.dashboard_id || parent.embed_tenant_id !== row.embed_tenant_id) {
            problems.push(`reply ${row.id}: its parent ${parent.id} is not a root of the same dashboard and tenant`);
          }
        }
        if ((row.is_resolved === 1) !== (row.resolved_at !== null) || (row.resolved_at === null) !== (row.resolved_by === null)) {
          problems.push(`row ${row.id}: half-set resolution: is_resolved ${row.is_resolved}, resolved_at ${row.resolved_at}, resolved_by ${row.resolved_by}`);
        }
      }
      const tenants = new Set(rows.map((row) => row.embed_tenant_id));
      for (const tenant of tenants) {
        const stream = await kysely.selectFrom('comment_streams').select('version')
          .where('dashboard_id', '=', dashboard.id).where('embed_tenant_id', '=', tenant).executeTakeFirst();
        const written = rows.filter((row) => row.embed_tenant_id === tenant).length;
        // Every insert moves the version in its own statement: fewer moves than rows is a torn write.
        if (stream === undefined || stream.version < written) problems.push(`comment stream of tenant ${tenant}: version ${stream?.version} for ${written} rows`);
      }
      // The list shows exactly the live rows: live roots, each with its live replies.
      const liveRoots = rows.filter((row) => row.parent_id === null && row.removed_at === null).map((row) => row.id).sort((a, b) => a - b);
      const listedRoots = threads.map((thread) => thread.root.id).sort((a, b) => a - b);
      if (JSON.stringify(liveRoots) !== JSON.stringify(listedRoots)) problems.push(`the list shows roots ${JSON.stringify(listedRoots)}, the database holds live ${JSON.stringify(liveRoots)}`);
      for (const thread of threads) {
        const live = rows.filter((row) => row.parent_id === thread.root.id && row.removed_at === null).map((row) => row.id).sort((a, b) => a - b);
        const listed = thread.replies.map((reply) => reply.id).sort((a, b) => a - b);
        if (JSON.stringify(live) !== JSON.stringify(listed)) problems.push(`thread ${thread.root.id} lists replies ${JSON.stringify(listed)}, the database holds live ${JSON.stringify(live)}`);
      }
      if (t().dialect === 'postgres') problems.push(...await checkPostgresIndexes(db.kysely));
    } finally {
      await db.close();
    }
    return problems;
  }

  /** amcheck's bt_index_check on every B-tree index of the comment tables, when the extension can be installed. */
  async function checkPostgresIndexes(kysely: Db['kysely']): Promise<string[]> {
    const available = await sql<{ name: string }>`select name from pg_available_extensions where name = 'amcheck'`.execute(kysely);
    if (available.rows.length === 0) return [];
    await sql`create extension if not exists amcheck`.execute(kysely);
    const indexes = await sql<{ name: string }>`
      select c.relname as name from pg_index i
        join pg_class c on c.oid = i.indexrelid
        join pg_am am on am.oid = c.relam
      where am.amname = 'btree' and i.indrelid in ('comments'::regclass, 'comment_streams'::regclass)`.execute(kysely);
    const problems: string[] = [];
    for (const index of indexes.rows) {
      try {
        await sql`select bt_index_check(${index.name}::regclass, true)`.execute(kysely);
      } catch (error) {
        problems.push(`bt_index_check(${index.name}): ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    if (indexes.rows.length === 0) problems.push('no B-tree index of comments found to check');
    return problems;
  }
});
