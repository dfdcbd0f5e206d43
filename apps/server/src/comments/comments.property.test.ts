import * as fc from 'fast-check';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { mintViewer } from '../../test/embed.js';
import type { ViewerSession } from '../../test/embed.js';
import { seedAccount, uniqueSuffix } from '../../test/factory.js';
import { RAISED_RATE_LIMITS } from '../../test/limits.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import type { Db } from '../db/db.database.js';
import type { Comment, Thread, ThreadList } from './comments.schema.js';

// Random sequences of comment commands by several embed users of two embed tenants, run against the HTTP API and
// against an in-memory model written from SPEC part B alone (never from the service or the store). After the
// commands, and whenever a "check lists" command comes up, every session's full thread list (paged and unpaged,
// under every filter) must equal the model's.

/**
 * The embed users of every run. The two "ann"s share an externalId in different embed tenants, so authorship or
 * visibility keyed by externalId instead of by embed user and tenant shows up.
 */
const EMBED_USERS = [
  { label: 'annA', externalId: 'ann', tenant: 'customer-a' },
  { label: 'amyA', externalId: 'amy', tenant: 'customer-a' },
  { label: 'bobB', externalId: 'bob', tenant: 'customer-b' },
  { label: 'annB', externalId: 'ann', tenant: 'customer-b' },
] as const;
/**
 * The sessions that act: the embed user behind each. annA holds two sessions, so "isOwn" and authorship must follow
 * the embed user, not the token.
 */
const SESSION_USERS = [0, 1, 2, 3, 0] as const;
const SESSION_LABELS = ['annA', 'amyA', 'bobB', 'annB', 'annA#2'] as const;

/** SPEC Limits: 1 to 10,000 characters. An emoji is one character, so 10,000 emoji (20,000 UTF-16 units) fit. */
const MAX_BODY = 10_000;
/** Never the id of a comment: the largest id the API accepts in a path. */
const UNUSED_ID = 2147483647;
/** The clock starts here and moves by 0 or 1 ms per write, so that equal timestamps (and the id tie-break) occur. */
const START = Date.parse('2026-03-02T09:00:00.000Z');

/** SPEC B rule 3's four ways to ask, and a filter whose list differs (for the cursor-reuse check). */
interface ListFilter {
  name: string;
  query: Record<string, string>;
  shows: (isResolved: boolean) => boolean;
  /** Index in FILTERS of a filter that selects other threads: its cursors must not be accepted here. */
  other: number;
}
const FILTERS: readonly ListFilter[] = [
  { name: 'default', query: {}, shows: (isResolved) => !isResolved, other: 1 },
  { name: 'includeResolved', query: { includeResolved: 'true' }, shows: () => true, other: 2 },
  { name: 'resolvedOnly', query: { resolvedOnly: 'true' }, shows: (isResolved) => isResolved, other: 0 },
  // SPEC B rule 3: resolvedOnly wins when both are set.
  { name: 'includeResolved+resolvedOnly', query: { includeResolved: 'true', resolvedOnly: 'true' }, shows: (isResolved) => isResolved, other: 1 },
];

interface ModelComment {
  id: number;
  /** Index in EMBED_USERS. */
  author: number;
  parentId: number | null;
  body: string;
  createdAt: string;
  editedAt: string | null;
  /** Deleted itself; a reply of a deleted root is gone too, but through its root (see isLive). */
  isDeleted: boolean;
  /**
   * Roots only: empty while open; when resolved, the times its resolvedAt may show. SPEC leaves open whether
   * resolving a resolved thread keeps or moves resolvedAt, so both are allowed until a response shows which.
   */
  resolvedAt: string[];
}

interface CommentsModel {
  comments: ModelComment[];
  /** The embed user id of each EMBED_USERS entry, as the server numbers them. */
  userIds: number[];
}

interface CommentsReal {
  app: FastifyInstance;
  clock: { now: number };
  publicId: string;
  url: string;
  sessions: ViewerSession[];
  /** Comments of tenant A on another dashboard of the same deployment: a 404 through this dashboard's URL. */
  elsewhere: number[];
}

const tenantOf = (user: number): string => EMBED_USERS[user]!.tenant;
const pickFrom = <T>(items: readonly T[], pick: number): T => items[pick % items.length]!;
const describeBody = (body: string): string => (body.length > 24 ? `${JSON.stringify([...body].slice(0, 6).join(''))}…(${[...body].length} code points)` : JSON.stringify(body));

function findComment(model: CommentsModel, id: number): ModelComment {
  const comment = model.comments.find((c) => c.id === id);
  if (comment === undefined) throw new Error(`model has no comment ${id}`);
  return comment;
}

/** SPEC "Comment deletion": a deleted comment is gone, and so is every reply of a deleted root. */
function isLive(model: CommentsModel, comment: ModelComment): boolean {
  return !comment.isDeleted && (comment.parentId === null || !findComment(model, comment.parentId).isDeleted);
}

/** The live comments a user's embed tenant holds (SPEC B rule 6), optionally only roots or only replies. */
function liveInTenant(model: CommentsModel, user: number, kind: 'any' | 'root' | 'reply' = 'any'): ModelComment[] {
  return model.comments.filter((c) => tenantOf(c.author) === tenantOf(user) && isLive(model, c)
    && (kind === 'any' || (kind === 'root') === (c.parentId === null)));
}

const byTime = (a: ModelComment, b: ModelComment): number => Date.parse(a.createdAt) - Date.parse(b.createdAt);
/** SPEC B rule 2: threads newest first by start; equal start times, the higher id first. */
const newestFirst = (a: ModelComment, b: ModelComment): number => byTime(b, a) || b.id - a.id;
/** SPEC "Thread": replies oldest first; equal times, the lower id first. */
const oldestFirst = (a: ModelComment, b: ModelComment): number => byTime(a, b) || a.id - b.id;

function expectedComment(model: CommentsModel, comment: ModelComment, viewer: number, publicId: string): Comment {
  return {
    id: comment.id,
    dashboardId: publicId,
    userId: model.userIds[comment.author]!,
    body: comment.body,
    editedAt: comment.editedAt,
    removedAt: null,
    createdAt: comment.createdAt,
    isOwn: comment.author === viewer,
  };
}

/** The thread as `viewer` must see it; `shownResolvedAt` is what the server showed, accepted if the model allows it. */
function expectedThread(model: CommentsModel, root: ModelComment, viewer: number, publicId: string, shownResolvedAt: unknown): Thread {
  const replies = model.comments.filter((c) => c.parentId === root.id && !c.isDeleted).sort(oldestFirst);
  const resolvedAt = root.resolvedAt.length === 0 ? null
    : root.resolvedAt.find((at) => at === shownResolvedAt) ?? root.resolvedAt[0]!;
  return {
    root: expectedComment(model, root, viewer, publicId),
    replies: replies.map((reply) => expectedComment(model, reply, viewer, publicId)),
    resolvedAt,
    // Only the root's author may resolve (SPEC "Thread" states), so a resolved thread was resolved by them.
    resolvedBy: resolvedAt === null ? null : model.userIds[root.author]!,
  };
}

function expectedList(model: CommentsModel, viewer: number, filter: ListFilter, publicId: string, shown: readonly Thread[]): Thread[] {
  const roots = model.comments
    .filter((c) => c.parentId === null && tenantOf(c.author) === tenantOf(viewer) && isLive(model, c) && filter.shows(c.resolvedAt.length > 0))
    .sort(newestFirst);
  return roots.map((root) => expectedThread(model, root, viewer, publicId, shown.find((t) => t.root.id === root.id)?.resolvedAt));
}

function send(real: CommentsReal, session: number, options: { method?: InjectOptions['method']; path?: string; query?: Record<string, string>; payload?: object }): Promise<LightMyRequestResponse> {
  const query = options.query === undefined ? '' : `?${new URLSearchParams(options.query).toString()}`;
  return real.app.inject({
    method: options.method ?? 'GET',
    url: `${real.url}${options.path ?? ''}${query}`,
    headers: real.sessions[session]!.headers,
    ...(options.payload === undefined ? {} : { payload: options.payload }),
  });
}

/** Moves the app's clock (0 ms makes a tie with the previous write) and gives the time the next write carries. */
function advance(real: CommentsReal, tick: number): string {
  real.clock.now += tick;
  return new Date(real.clock.now).toISOString();
}

/**
 * Walks every page of one list (SPEC B rule 7: driven by hasNextPage, `after` = the previous endCursor), checking
 * each page's pageInfo on the way. `first` undefined asks with the default page size.
 */
async function walkPages(real: CommentsReal, session: number, filter: ListFilter, first: number | undefined, context: string): Promise<{ threads: Thread[]; pages: ThreadList[] }> {
  const threads: Thread[] = [];
  const pages: ThreadList[] = [];
  let after: string | undefined;
  for (;;) {
    const query: Record<string, string> = { ...filter.query };
    if (first !== undefined) query.first = String(first);
    if (after !== undefined) query.after = after;
    const res = await send(real, session, { query });
    expect(res.statusCode, `${context} page ${pages.length + 1}: ${res.body}`).toBe(200);
    const page = res.json() as ThreadList;
    const where = `${context} page ${pages.length + 1}`;
    expect(page.pageInfo.hasPreviousPage, `${where}: hasPreviousPage`).toBe(after !== undefined);
    const size = Math.min(first ?? 100, 200);
    expect(page.items.length, `${where}: page size`).toBeLessThanOrEqual(size);
    if (page.pageInfo.hasNextPage) expect(page.items.length, `${where}: a page followed by another is full`).toBe(size);
    if (page.items.length === 0) {
      // SPEC "Thread list": cursors null or absent on an empty page.
      expect(page.pageInfo.startCursor ?? null, `${where}: startCursor of an empty page`).toBeNull();
      expect(page.pageInfo.endCursor ?? null, `${where}: endCursor of an empty page`).toBeNull();
      expect(page.pageInfo.hasNextPage, `${where}: hasNextPage of an empty page`).toBe(false);
    } else {
      expect(typeof page.pageInfo.startCursor, `${where}: startCursor`).toBe('string');
      expect(typeof page.pageInfo.endCursor, `${where}: endCursor`).toBe('string');
    }
    pages.push(page);
    threads.push(...page.items);
    if (!page.pageInfo.hasNextPage) return { threads, pages };
    expect(pages.length, `${where}: too many pages`).toBeLessThan(500);
    after = page.pageInfo.endCursor!;
  }
}

/**
 * Every session's list under every filter: paged with `pageSize`, unpaged, and (default filter) with a `first`
 * above the maximum, which is clamped and not refused. A page's endCursor under another filter is a 400.
 */
async function checkLists(model: CommentsModel, real: CommentsReal, pageSize: number, oversizedFirst: number): Promise<void> {
  for (let session = 0; session < SESSION_USERS.length; session++) {
    const viewer = SESSION_USERS[session]!;
    for (const filter of FILTERS) {
      const context = `${SESSION_LABELS[session]} ${filter.name}`;
      const paged = await walkPages(real, session, filter, pageSize, `${context} first=${pageSize}`);
      expect(paged.threads, `${context} first=${pageSize}`).toEqual(expectedList(model, viewer, filter, real.publicId, paged.threads));

      const cursor = paged.pages[0]!.pageInfo.endCursor;
      if (typeof cursor === 'string') {
        const other = FILTERS[filter.other]!;
        const reused = await send(real, session, { query: { ...other.query, first: String(pageSize), after: cursor } });
        expect(reused.statusCode, `${context}: its endCursor sent with ${other.name}: ${reused.body}`).toBe(400);
      }

      const whole = await walkPages(real, session, filter, undefined, `${context} without first`);
      expect(whole.pages, `${context} without first: one page of up to 100`).toHaveLength(1);
      expect(whole.threads, `${context} without first`).toEqual(expectedList(model, viewer, filter, real.publicId, whole.threads));

      if (filter.name === 'default') {
        const clamped = await walkPages(real, session, filter, oversizedFirst, `${context} first=${oversizedFirst}`);
        expect(clamped.pages, `${context} first=${oversizedFirst}: clamped to 200, one page`).toHaveLength(1);
        expect(clamped.threads, `${context} first=${oversizedFirst}`).toEqual(expectedList(model, viewer, filter, real.publicId, clamped.threads));
      }
    }
  }
}

type CommentsCommand = fc.AsyncCommand<CommentsModel, CommentsReal>;

/** Starts a thread (SPEC B POST without parentId). */
/** A post's 201 as a Comment: its `mentions` (issue 23, an extension; comments.mentions.ts tests it) set aside. */
function withoutMentions(answer: Comment & { mentions?: unknown }): Comment {
  const comment = { ...answer };
  expect(Array.isArray(comment.mentions)).toBe(true);
  delete comment.mentions;
  return comment;
}

class PostThread implements CommentsCommand {
  constructor(readonly session: number, readonly body: string, readonly tick: number) {}
  check = (): boolean => true;
  async run(model: CommentsModel, real: CommentsReal): Promise<void> {
    const at = advance(real, this.tick);
    const res = await send(real, this.session, { method: 'POST', payload: { body: this.body } });
    expect(res.statusCode, `${this}: ${res.body}`).toBe(201);
    const created = withoutMentions(res.json() as Comment & { mentions?: unknown });
    expect(model.comments.some((c) => c.id === created.id), `${this}: id ${created.id} is new`).toBe(false);
    const comment: ModelComment = { id: created.id, author: SESSION_USERS[this.session]!, parentId: null, body: this.body, createdAt: at, editedAt: null, isDeleted: false, resolvedAt: [] };
    model.comments.push(comment);
    expect(created, `${this}`).toEqual(expectedComment(model, comment, comment.author, real.publicId));
  }
  toString = (): string => `post(${SESSION_LABELS[this.session]}, ${describeBody(this.body)}, +${this.tick}ms)`;
}

/** Replies to a live thread root of the caller's tenant, open or resolved, anyone's (SPEC B rules 1 and 5). */
class Reply implements CommentsCommand {
  constructor(readonly session: number, readonly pick: number, readonly body: string, readonly tick: number) {}
  check = (model: Readonly<CommentsModel>): boolean => liveInTenant(model, SESSION_USERS[this.session]!, 'root').length > 0;
  async run(model: CommentsModel, real: CommentsReal): Promise<void> {
    const root = pickFrom(liveInTenant(model, SESSION_USERS[this.session]!, 'root'), this.pick);
    const at = advance(real, this.tick);
    const res = await send(real, this.session, { method: 'POST', payload: { body: this.body, parentId: root.id } });
    expect(res.statusCode, `${this} to ${root.id}: ${res.body}`).toBe(201);
    const created = withoutMentions(res.json() as Comment & { mentions?: unknown });
    expect(model.comments.some((c) => c.id === created.id), `${this}: id ${created.id} is new`).toBe(false);
    const comment: ModelComment = { id: created.id, author: SESSION_USERS[this.session]!, parentId: root.id, body: this.body, createdAt: at, editedAt: null, isDeleted: false, resolvedAt: [] };
    model.comments.push(comment);
    expect(created, `${this} to ${root.id}`).toEqual(expectedComment(model, comment, comment.author, real.publicId));
  }
  toString = (): string => `reply(${SESSION_LABELS[this.session]}, #${this.pick}, ${describeBody(this.body)}, +${this.tick}ms)`;
}

/** The author replaces the body of their own live comment, root or reply (SPEC B PATCH). */
class Edit implements CommentsCommand {
  constructor(readonly session: number, readonly pick: number, readonly body: string, readonly tick: number) {}
  private own = (model: Readonly<CommentsModel>) => liveInTenant(model, SESSION_USERS[this.session]!).filter((c) => c.author === SESSION_USERS[this.session]);
  check = (model: Readonly<CommentsModel>): boolean => this.own(model).length > 0;
  async run(model: CommentsModel, real: CommentsReal): Promise<void> {
    const comment = pickFrom(this.own(model), this.pick);
    const at = advance(real, this.tick);
    const res = await send(real, this.session, { method: 'PATCH', path: `/${comment.id}`, payload: { body: this.body } });
    expect(res.statusCode, `${this} of ${comment.id}: ${res.body}`).toBe(200);
    comment.body = this.body;
    comment.editedAt = at;
    expect(res.json(), `${this} of ${comment.id}`).toEqual(expectedComment(model, comment, comment.author, real.publicId));
  }
  toString = (): string => `edit(${SESSION_LABELS[this.session]}, #${this.pick}, ${describeBody(this.body)}, +${this.tick}ms)`;
}

/** The author deletes their own live comment; a root takes its whole thread (SPEC "Comment deletion"). */
class Delete implements CommentsCommand {
  constructor(readonly session: number, readonly pick: number, readonly tick: number) {}
  private own = (model: Readonly<CommentsModel>) => liveInTenant(model, SESSION_USERS[this.session]!).filter((c) => c.author === SESSION_USERS[this.session]);
  check = (model: Readonly<CommentsModel>): boolean => this.own(model).length > 0;
  async run(model: CommentsModel, real: CommentsReal): Promise<void> {
    const comment = pickFrom(this.own(model), this.pick);
    advance(real, this.tick);
    const res = await send(real, this.session, { method: 'DELETE', path: `/${comment.id}` });
    expect(res.statusCode, `${this} of ${comment.id}: ${res.body}`).toBe(204);
    expect(res.body, `${this}: 204 has no body`).toBe('');
    comment.isDeleted = true;
  }
  toString = (): string => `delete(${SESSION_LABELS[this.session]}, #${this.pick}, +${this.tick}ms)`;
}

/** The root's author resolves or re-opens their own thread, whatever its state (SPEC "Thread" states). */
class Resolve implements CommentsCommand {
  constructor(readonly session: number, readonly pick: number, readonly resolved: boolean, readonly tick: number) {}
  private own = (model: Readonly<CommentsModel>) => liveInTenant(model, SESSION_USERS[this.session]!, 'root').filter((c) => c.author === SESSION_USERS[this.session]);
  check = (model: Readonly<CommentsModel>): boolean => this.own(model).length > 0;
  async run(model: CommentsModel, real: CommentsReal): Promise<void> {
    const root = pickFrom(this.own(model), this.pick);
    const at = advance(real, this.tick);
    const res = await send(real, this.session, { method: 'POST', path: `/${root.id}/resolve`, payload: { resolved: this.resolved } });
    expect(res.statusCode, `${this} of ${root.id}: ${res.body}`).toBe(200);
    root.resolvedAt = this.resolved ? [...new Set([...root.resolvedAt, at])] : [];
    const thread = res.json() as Thread;
    expect(thread, `${this} of ${root.id}`).toEqual(expectedThread(model, root, root.author, real.publicId, thread.resolvedAt));
    // From now on the model holds the server to the resolution time it showed.
    if (this.resolved) root.resolvedAt = [thread.resolvedAt!];
  }
  toString = (): string => `${this.resolved ? 'resolve' : 'reopen'}(${SESSION_LABELS[this.session]}, #${this.pick}, +${this.tick}ms)`;
}

/** SPEC B rule 1: replies nest one level, so a reply's id as parentId is a 400, whoever wrote it. */
class ReplyToReply implements CommentsCommand {
  constructor(readonly session: number, readonly pick: number, readonly body: string) {}
  check = (model: Readonly<CommentsModel>): boolean => liveInTenant(model, SESSION_USERS[this.session]!, 'reply').length > 0;
  async run(model: CommentsModel, real: CommentsReal): Promise<void> {
    const reply = pickFrom(liveInTenant(model, SESSION_USERS[this.session]!, 'reply'), this.pick);
    const res = await send(real, this.session, { method: 'POST', payload: { body: this.body, parentId: reply.id } });
    expect(res.statusCode, `${this}: parentId ${reply.id}: ${res.body}`).toBe(400);
  }
  toString = (): string => `replyToReply(${SESSION_LABELS[this.session]}, #${this.pick})`;
}

/** SPEC "Thread" states: resolving a reply's id is a 400, checked before authorship, so also for others' replies. */
class ResolveReply implements CommentsCommand {
  constructor(readonly session: number, readonly pick: number, readonly resolved: boolean) {}
  check = (model: Readonly<CommentsModel>): boolean => liveInTenant(model, SESSION_USERS[this.session]!, 'reply').length > 0;
  async run(model: CommentsModel, real: CommentsReal): Promise<void> {
    const reply = pickFrom(liveInTenant(model, SESSION_USERS[this.session]!, 'reply'), this.pick);
    const res = await send(real, this.session, { method: 'POST', path: `/${reply.id}/resolve`, payload: { resolved: this.resolved } });
    expect(res.statusCode, `${this}: reply ${reply.id} by ${EMBED_USERS[reply.author]!.label}: ${res.body}`).toBe(400);
  }
  toString = (): string => `resolveReply(${SESSION_LABELS[this.session]}, #${this.pick}, ${this.resolved})`;
}

type ForeignAction = 'edit' | 'delete' | 'resolve';

/** SPEC B rule 5: a live comment of the same tenant written by someone else is readable but not theirs to change (403). */
class ActOnOthers implements CommentsCommand {
  constructor(readonly session: number, readonly pick: number, readonly action: ForeignAction, readonly body: string) {}
  private targets = (model: Readonly<CommentsModel>) => liveInTenant(model, SESSION_USERS[this.session]!, this.action === 'resolve' ? 'root' : 'any')
    .filter((c) => c.author !== SESSION_USERS[this.session]);
  check = (model: Readonly<CommentsModel>): boolean => this.targets(model).length > 0;
  async run(model: CommentsModel, real: CommentsReal): Promise<void> {
    const target = pickFrom(this.targets(model), this.pick);
    const res = await act(real, this.session, this.action, target.id, this.body);
    expect(res.statusCode, `${this}: comment ${target.id} by ${EMBED_USERS[target.author]!.label}: ${res.body}`).toBe(403);
  }
  toString = (): string => `${this.action}Others(${SESSION_LABELS[this.session]}, #${this.pick})`;
}

type GoneAction = 'reply' | 'edit' | 'delete' | 'resolve';
type GoneSource = 'deleted' | 'otherTenant' | 'otherDashboard' | 'unused';

/**
 * SPEC B rules 1, 4, 6 and "Errors": a deleted comment (or a reply of a deleted root), any comment of the other
 * embed tenant, a comment of another dashboard and an id of nothing are all 404, as target and as parentId.
 */
class ActOnGone implements CommentsCommand {
  constructor(readonly session: number, readonly pick: number, readonly action: GoneAction, readonly source: GoneSource, readonly body: string) {}
  check = (): boolean => true;
  async run(model: CommentsModel, real: CommentsReal): Promise<void> {
    const user = SESSION_USERS[this.session]!;
    const candidates = this.source === 'deleted' ? model.comments.filter((c) => tenantOf(c.author) === tenantOf(user) && !isLive(model, c)).map((c) => c.id)
      : this.source === 'otherTenant' ? model.comments.filter((c) => tenantOf(c.author) !== tenantOf(user)).map((c) => c.id)
        : this.source === 'otherDashboard' ? real.elsewhere
          : [];
    const id = candidates.length === 0 ? UNUSED_ID : pickFrom(candidates, this.pick);
    const res = await act(real, this.session, this.action, id, this.body);
    expect(res.statusCode, `${this}: comment ${id}: ${res.body}`).toBe(404);
  }
  toString = (): string => `${this.action}Gone(${SESSION_LABELS[this.session]}, ${this.source} #${this.pick})`;
}

function act(real: CommentsReal, session: number, action: GoneAction, id: number, body: string): Promise<LightMyRequestResponse> {
  switch (action) {
    case 'reply': return send(real, session, { method: 'POST', payload: { body, parentId: id } });
    case 'edit': return send(real, session, { method: 'PATCH', path: `/${id}`, payload: { body } });
    case 'delete': return send(real, session, { method: 'DELETE', path: `/${id}` });
    case 'resolve': return send(real, session, { method: 'POST', path: `/${id}/resolve`, payload: { resolved: true } });
  }
}

/** SPEC Limits: a body of 0 or over 10,000 characters is a 400 on post, reply and edit, and changes nothing. */
class BadBody implements CommentsCommand {
  constructor(readonly session: number, readonly pick: number, readonly op: 'post' | 'reply' | 'edit', readonly body: string) {}
  check = (): boolean => true;
  async run(model: CommentsModel, real: CommentsReal): Promise<void> {
    const user = SESSION_USERS[this.session]!;
    const roots = liveInTenant(model, user, 'root');
    const own = liveInTenant(model, user).filter((c) => c.author === user);
    const res = this.op === 'reply' && roots.length > 0 ? await send(real, this.session, { method: 'POST', payload: { body: this.body, parentId: pickFrom(roots, this.pick).id } })
      : this.op === 'edit' && own.length > 0 ? await send(real, this.session, { method: 'PATCH', path: `/${pickFrom(own, this.pick).id}`, payload: { body: this.body } })
        : await send(real, this.session, { method: 'POST', payload: { body: this.body } });
    expect(res.statusCode, `${this}: ${res.body.slice(0, 300)}`).toBe(400);
  }
  toString = (): string => `badBody(${SESSION_LABELS[this.session]}, ${this.op}, ${describeBody(this.body)})`;
}

/** SPEC B rule 7 and Limits: `first` below 1 and a cursor that is no endCursor (null sent back included) are 400s. */
class BadListQuery implements CommentsCommand {
  constructor(readonly session: number, readonly query: Record<string, string>) {}
  check = (): boolean => true;
  async run(_model: CommentsModel, real: CommentsReal): Promise<void> {
    const res = await send(real, this.session, { query: this.query });
    expect(res.statusCode, `${this}: ${res.body}`).toBe(400);
  }
  toString = (): string => `badList(${SESSION_LABELS[this.session]}, ${new URLSearchParams(this.query).toString()})`;
}

class CheckLists implements CommentsCommand {
  constructor(readonly pageSize: number, readonly oversizedFirst: number) {}
  check = (): boolean => true;
  run = (model: CommentsModel, real: CommentsReal): Promise<void> => checkLists(model, real, this.pageSize, this.oversizedFirst);
  toString = (): string => `checkLists(first=${this.pageSize})`;
}

const sessionArb = fc.nat(SESSION_USERS.length - 1);
const tickArb = fc.constantFrom(0, 1);
/**
 * Bodies kept verbatim (SPEC "Comment"): astral-plane emoji, ZWJ sequences, combining marks, right-to-left text,
 * whitespace and invisibles (also leading, trailing and alone), JSON and LIKE metacharacters, any printable grapheme; now and then
 * exactly 10,000 emoji, the longest body allowed.
 */
const bodyArb = fc.oneof(
  { weight: 20, arbitrary: fc.string({
    unit: fc.oneof(
      fc.constantFrom('😀', '👩‍👩‍👧', '𝄞', '🇫🇷', 'a', 'Z', ' ', '\n', '\t', 'é', 'e\u0301', '%', '_', '"', '\\', '@ann', '\u200b', '\r', '\ufeff', 'مرحبا'),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
    ),
    minLength: 1, maxLength: 12,
  }) },
  { weight: 1, arbitrary: fc.constant('😀'.repeat(MAX_BODY)) },
);
const badBodyArb = fc.constantFrom('', 'a'.repeat(MAX_BODY + 1), '😀'.repeat(MAX_BODY + 1));
const badQueryArb = fc.constantFrom<Record<string, string>>(
  { first: '0' }, { first: '-1' }, { includeResolved: 'true', first: '0' },
  { after: 'null' }, { after: 'undefined' }, { after: '' }, { after: 'bogus' }, { resolvedOnly: 'true', after: 'null' },
);

const postArb = fc.tuple(sessionArb, bodyArb, tickArb).map(([s, body, tick]) => new PostThread(s, body, tick));
const replyArb = fc.tuple(sessionArb, fc.nat(), bodyArb, tickArb).map(([s, pick, body, tick]) => new Reply(s, pick, body, tick));
const editArb = fc.tuple(sessionArb, fc.nat(), bodyArb, tickArb).map(([s, pick, body, tick]) => new Edit(s, pick, body, tick));
const deleteArb = fc.tuple(sessionArb, fc.nat(), tickArb).map(([s, pick, tick]) => new Delete(s, pick, tick));
const resolveArb = fc.tuple(sessionArb, fc.nat(), fc.constantFrom(true, true, false), tickArb).map(([s, pick, resolved, tick]) => new Resolve(s, pick, resolved, tick));
/** fc.commands draws each entry alike, so repeats weigh: writes that build up threads come up most. */
const COMMANDS: fc.Arbitrary<CommentsCommand>[] = [
  postArb, postArb, postArb, replyArb, replyArb, replyArb, editArb, editArb, deleteArb, deleteArb, resolveArb, resolveArb, resolveArb,
  fc.tuple(sessionArb, fc.nat(), bodyArb).map(([s, pick, body]) => new ReplyToReply(s, pick, body)),
  fc.tuple(sessionArb, fc.nat(), fc.boolean()).map(([s, pick, resolved]) => new ResolveReply(s, pick, resolved)),
  fc.tuple(sessionArb, fc.nat(), fc.constantFrom<ForeignAction>('edit', 'delete', 'resolve'), bodyArb)
    .map(([s, pick, action, body]) => new ActOnOthers(s, pick, action, body)),
  fc.tuple(sessionArb, fc.nat(), fc.constantFrom<GoneAction>('reply', 'edit', 'delete', 'resolve'), fc.constantFrom<GoneSource>('deleted', 'deleted', 'otherTenant', 'otherDashboard', 'unused'), bodyArb)
    .map(([s, pick, action, source, body]) => new ActOnGone(s, pick, action, source, body)),
  fc.tuple(sessionArb, fc.nat(), fc.constantFrom<'post' | 'reply' | 'edit'>('post', 'reply', 'edit'), badBodyArb).map(([s, pick, op, body]) => new BadBody(s, pick, op, body)),
  fc.tuple(sessionArb, badQueryArb).map(([s, query]) => new BadListQuery(s, query)),
  fc.tuple(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 201, max: 1000 })).map(([size, oversized]) => new CheckLists(size, oversized)),
];
/** Threads, replies and resolutions every run starts with, so that lists span several pages from the first command on. */
const warmUpArb = fc.array(fc.oneof({ weight: 3, arbitrary: postArb }, { weight: 2, arbitrary: replyArb }, { weight: 1, arbitrary: resolveArb }), { minLength: 4, maxLength: 12 });

/** A fresh account per run (no clean-up, no state shared between runs): two published embeddable dashboards, five sessions. */
async function setUpRun(db: Db, app: FastifyInstance, clock: { now: number }): Promise<{ model: CommentsModel; real: CommentsReal }> {
  const suffix = uniqueSuffix();
  const publicId = `comments-prop-${suffix}`;
  const elsewherePublicId = `comments-prop-other-${suffix}`;
  const s = await seedAccount(db.kysely, {
    users: [{ ref: 'alice', role: 'admin' }],
    deployments: [{
      ref: 'prod', name: 'Prod', items: [
        { ref: 'wb', type: 'WORKBOOK', name: 'Q1', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } },
        { ref: 'wb2', type: 'WORKBOOK', name: 'Q2', createdBy: 'alice', dashboard: { publicId: elsewherePublicId, status: 'published', allowEmbed: true } },
      ],
    }],
  });
  const sessions: ViewerSession[] = [];
  for (const user of SESSION_USERS) {
    const { externalId, tenant, label } = EMBED_USERS[user]!;
    sessions.push(await mintViewer(app, s.keys.alice!, { deploymentId: s.refs.prod!, embedTenantName: tenant, externalId, username: label }));
  }
  const userIds = EMBED_USERS.map((_, user) => sessions[SESSION_USERS.indexOf(user as 0 | 1 | 2 | 3)]!.embedUserId);
  expect(new Set(userIds).size, 'four distinct embed users').toBe(4);
  expect(sessions[4]!.embedUserId, 'a second session of annA is the same embed user').toBe(userIds[0]);

  const elsewhereUrl = `/api/v1/embed/dashboard/${elsewherePublicId}/comments`;
  const root = await app.inject({ method: 'POST', url: elsewhereUrl, headers: sessions[0]!.headers, payload: { body: 'on another dashboard' } });
  expect(root.statusCode, root.body).toBe(201);
  const reply = await app.inject({ method: 'POST', url: elsewhereUrl, headers: sessions[1]!.headers, payload: { body: 'reply there', parentId: root.json().id } });
  expect(reply.statusCode, reply.body).toBe(201);

  return {
    model: { comments: [], userIds },
    real: { app, clock, publicId, url: `/api/v1/embed/dashboard/${publicId}/comments`, sessions, elsewhere: [root.json().id as number, reply.json().id as number] },
  };
}

describeEachDialect('comments model-based property', (t) => {
  const clock = { now: START };
  let app: FastifyInstance;

  beforeAll(async () => {
    // Own app: a clock the commands move (ties in createdAt on purpose), and no rate limit on minting five sessions a run.
    app = await buildApp(testConfig({ rateLimits: RAISED_RATE_LIMITS }), { db: t().db, now: () => new Date(clock.now) });
  });
  afterAll(async () => {
    await app.close();
  });

  it('every session\'s thread list, under every filter and page size, matches a SPEC B model after random commands', async () => {
    await fc.assert(
      fc.asyncProperty(warmUpArb, fc.commands(COMMANDS, { maxCommands: 25, size: 'max' }), fc.integer({ min: 1, max: 7 }), async (warmUp, commands, finalPageSize) => {
        const setup = await setUpRun(t().db, app, clock);
        await fc.asyncModelRun(() => setup, [...warmUp, ...commands]);
        // Whatever the commands were, the run ends with a full comparison.
        await checkLists(setup.model, setup.real, finalPageSize, 201);
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it('pages by 100 without first, and clamps a first above 200 to 200 threads, however large, keeping hasNextPage true (SPEC Limits)', async () => {
    const { real } = await setUpRun(t().db, app, clock);
    for (let n = 0; n < 201; n++) {
      const res = await send(real, n % 2 === 0 ? 0 : 1, { method: 'POST', payload: { body: `thread ${n}` } });
      expect(res.statusCode, res.body).toBe(201);
    }
    const byDefault = await send(real, 0, {});
    expect(byDefault.statusCode, byDefault.body).toBe(200);
    expect((byDefault.json() as ThreadList).items, 'without first: 100 threads').toHaveLength(100);
    expect((byDefault.json() as ThreadList).pageInfo.hasNextPage, 'without first').toBe(true);
    // SPEC Limits sets no ceiling above which a larger `first` stops being clamped and becomes a 400.
    for (const first of ['201', '1000', '2147483647', '2147483648', '99999999999']) {
      const res = await send(real, 0, { query: { first } });
      expect(res.statusCode, `first=${first}: ${res.body}`).toBe(200);
      const page = res.json() as ThreadList;
      expect(page.items, `first=${first}`).toHaveLength(200);
      expect(page.pageInfo.hasNextPage, `first=${first}`).toBe(true);
    }
  });
});
