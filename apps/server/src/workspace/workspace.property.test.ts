import * as fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { ImportItem } from '../import/import.js';

// The property below compares the paged HTTP listing with an in-memory model written from SPEC A and DESIGN.md
// alone (never from the store's SQL), over random trees, users, groups, grants, views and queries.

type ItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';
type OrderByField = 'updated_at' | 'created_at' | 'name' | 'viewer_last_viewed_at';
type OrderByDirection = 'ASC' | 'DESC';
type Grant = { user: string } | { group: string };

const ITEM_TYPES: readonly ItemType[] = ['FOLDER', 'WORKBOOK', 'REPORT'];
const ORDER_BY_FIELDS: readonly OrderByField[] = ['updated_at', 'created_at', 'name', 'viewer_last_viewed_at'];
/** Few timestamps, so that sort keys tie often and the id tie-break is exercised. */
const TIMES = ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z'] as const;
/**
 * Few characters, mixed case, with LIKE's wildcards: names collide case-insensitively and searches hit. ASCII and
 * Latin-1 only, so that JavaScript's UTF-16 order equals the databases' UTF-8 byte order.
 */
const NAME_CHARS = ['a', 'A', 'b', 'B', 'e', '1', ' ', '%', '_', 'é', 'É'] as const;
/** Items nest at most this deep (0 is the root level). */
const MAX_DEPTH = 4;

interface ScenarioItem {
  ref: string;
  type: ItemType;
  name: string;
  /** Ref of the parent folder; null at the root. */
  parent: string | null;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
  grants: Grant[];
}

interface ScenarioQuery {
  caller: string;
  /** Ref of the folder listed; null lists the root (or, with search, the whole deployment). */
  folder: string | null;
  types?: ItemType[];
  orderByField?: OrderByField;
  orderByDirection?: OrderByDirection;
  search?: string;
  first: number;
}

interface Scenario {
  users: Array<{ ref: string; role: 'admin' | 'member' }>;
  groups: Array<{ ref: string; members: string[] }>;
  items: ScenarioItem[];
  /** At most one view per user and item. */
  views: Array<{ user: string; item: string; at: string }>;
  /** Several listings asked of the same workspace. */
  queries: ScenarioQuery[];
}

interface RawItem {
  type: ItemType;
  parent: number | undefined;
  name: string;
  createdBy: number | undefined;
  createdAt: number;
  updatedAt: number;
  grants: Array<{ toGroup: boolean; index: number }>;
}

const rawItem: fc.Arbitrary<RawItem> = fc.record({
  type: fc.constantFrom<ItemType>('FOLDER', 'FOLDER', 'WORKBOOK', 'REPORT', 'REPORT'),
  /** Undefined: the root; else an index into the folders that may take children. */
  parent: fc.option(fc.nat(), { nil: undefined, freq: 2 }),
  name: fc.string({ unit: fc.constantFrom(...NAME_CHARS), minLength: 1, maxLength: 6 }),
  createdBy: fc.option(fc.nat(), { nil: undefined, freq: 4 }),
  createdAt: fc.nat(TIMES.length - 1),
  updatedAt: fc.nat(TIMES.length - 1),
  grants: fc.oneof(
    fc.constant<Array<{ toGroup: boolean; index: number }>>([]),
    fc.array(fc.record({ toGroup: fc.boolean(), index: fc.nat() }), { minLength: 1, maxLength: 2 }),
  ),
});

/**
 * A search term: a slice of the name of some item in the searched subtree (case changed, or not), or a short
 * string of name characters (often with wildcards).
 */
const rawSearch = fc.oneof(
  { weight: 3, arbitrary: fc.record({ item: fc.nat(), start: fc.nat(), length: fc.integer({ min: 1, max: 3 }), casing: fc.constantFrom('keep', 'upper', 'lower') }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...NAME_CHARS), minLength: 1, maxLength: 3 }) },
);

const rawQuery = fc.record({
  caller: fc.nat(),
  folder: fc.option(fc.record({ index: fc.nat(), preferNonEmpty: fc.boolean() }), { nil: undefined, freq: 2 }),
  types: fc.option(fc.subarray([...ITEM_TYPES], { minLength: 1 }), { nil: undefined, freq: 2 }),
  orderByField: fc.option(fc.constantFrom(...ORDER_BY_FIELDS), { nil: undefined, freq: 3 }),
  orderByDirection: fc.option(fc.constantFrom<OrderByDirection>('ASC', 'DESC'), { nil: undefined, freq: 3 }),
  search: fc.option(rawSearch, { nil: undefined, freq: 2 }),
  first: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 8 })),
});

const rawScenario = fc.record({
  memberCount: fc.integer({ min: 2, max: 3 }),
  groups: fc.array(fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), { maxLength: 3 }),
  items: fc.array(rawItem, { maxLength: 40, size: 'medium' }),
  views: fc.array(fc.record({ user: fc.nat(), item: fc.nat(), at: fc.nat(TIMES.length - 1) }), { maxLength: 30, size: 'medium' }),
  queries: fc.array(rawQuery, { minLength: 1, maxLength: 6 }),
});

type RawQuery = typeof rawQuery extends fc.Arbitrary<infer T> ? T : never;
type RawScenario = typeof rawScenario extends fc.Arbitrary<infer T> ? T : never;

/** A query's folder (preferring one with contents when asked) and search term, drawn from the workspace built. */
function buildQuery(raw: RawQuery, items: readonly ScenarioItem[], userAt: (n: number) => string): ScenarioQuery {
  const folders = items.filter((it) => it.type === 'FOLDER');
  const nonEmptyFolders = folders.filter((f) => items.some((it) => it.parent === f.ref));
  const folderChoices = raw.folder?.preferNonEmpty === true && nonEmptyFolders.length > 0 ? nonEmptyFolders : folders;
  const folder = raw.folder === undefined || folderChoices.length === 0 ? null : folderChoices[raw.folder.index % folderChoices.length]!.ref;
  const query: ScenarioQuery = { caller: userAt(raw.caller), folder, first: raw.first };
  if (raw.types !== undefined) query.types = raw.types;
  if (raw.orderByField !== undefined) query.orderByField = raw.orderByField;
  if (raw.orderByDirection !== undefined) query.orderByDirection = raw.orderByDirection;
  if (typeof raw.search === 'string') {
    query.search = raw.search;
  } else if (raw.search !== undefined) {
    const isBelowFolder = (it: ScenarioItem): boolean => {
      for (let p = it.parent; p !== null; p = items.find((f) => f.ref === p)!.parent) if (p === folder) return true;
      return false;
    };
    const searched = folder === null ? items : items.filter(isBelowFolder);
    const name = searched.length === 0 ? 'a' : searched[raw.search.item % searched.length]!.name;
    const start = raw.search.start % name.length;
    const slice = name.slice(start, start + raw.search.length);
    query.search = raw.search.casing === 'upper' ? slice.toUpperCase() : raw.search.casing === 'lower' ? slice.toLowerCase() : slice;
  }
  return query;
}

/** Turns raw choices into a consistent scenario: parents are earlier folders within the depth limit, refs resolve. */
function buildScenario(raw: RawScenario): Scenario {
  const users: Scenario['users'] = [{ ref: 'u0', role: 'admin' }];
  for (let m = 1; m <= raw.memberCount; m++) users.push({ ref: `u${m}`, role: 'member' });
  const userAt = (n: number) => users[n % users.length]!.ref;
  const groups = raw.groups.map((membership, g) => ({
    ref: `g${g}`,
    members: users.filter((_, u) => membership[u] === true).map((u) => u.ref),
  }));

  const items: ScenarioItem[] = [];
  const depthOf = new Map<string, number>();
  raw.items.forEach((r, i) => {
    const parents = items.filter((it) => it.type === 'FOLDER' && depthOf.get(it.ref)! < MAX_DEPTH).map((it) => it.ref);
    const parent = r.parent === undefined || parents.length === 0 ? null : parents[r.parent % parents.length]!;
    const ref = `i${i}`;
    depthOf.set(ref, parent === null ? 0 : depthOf.get(parent)! + 1);
    items.push({
      ref, type: r.type, name: r.name, parent,
      createdBy: r.createdBy === undefined ? null : userAt(r.createdBy),
      createdAt: TIMES[r.createdAt]!,
      updatedAt: TIMES[r.updatedAt]!,
      grants: r.grants.map((g) => (g.toGroup && groups.length > 0 ? { group: groups[g.index % groups.length]!.ref } : { user: userAt(g.index) })),
    });
  });

  // The latest view of a user and item wins, as the import does; keep one per pair so the scenario reads plainly.
  const viewByPair = new Map<string, { user: string; item: string; at: string }>();
  if (items.length > 0) {
    for (const v of raw.views) {
      const view = { user: userAt(v.user), item: items[v.item % items.length]!.ref, at: TIMES[v.at]! };
      viewByPair.set(`${view.user} ${view.item}`, view);
    }
  }
  return { users, groups, items, views: [...viewByPair.values()], queries: raw.queries.map((q) => buildQuery(q, items, userAt)) };
}

/** The scenario's tree as import items, children in the order they were generated. */
function importItemsOf(items: readonly ScenarioItem[]): ImportItem[] {
  const roots: ImportItem[] = [];
  const byRef = new Map<string, ImportItem>();
  for (const it of items) {
    const item: ImportItem = {
      ref: it.ref, type: it.type, name: it.name, createdAt: it.createdAt, updatedAt: it.updatedAt,
    };
    if (it.createdBy !== null) item.createdBy = it.createdBy;
    if (it.grants.length > 0) item.grants = it.grants;
    byRef.set(it.ref, item);
    if (it.parent === null) {
      roots.push(item);
    } else {
      const parent = byRef.get(it.parent)!;
      (parent.children ??= []).push(item);
    }
  }
  return roots;
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The model: the whole listing, unpaged, from the rules of SPEC A and DESIGN.md.
 * - Without search, the direct children of the folder (the root without one). With search, every item whose name
 *   contains the term case-insensitively (% and _ literal), anywhere, or strictly below the folder when one is given.
 * - Only the given types.
 * - Access: an admin sees everything; a member sees what they created, or what a grant to them or to a group of
 *   theirs reaches, on the item itself or on any folder above it.
 * - Folders first by lower-cased name then id, ascending, whatever the order asked; then the rest by the field
 *   (default updated_at) in the direction (default DESC), ties by id in that direction. Under
 *   viewer_last_viewed_at, the items the caller viewed by view time, then the never-viewed by id.
 */
function expectedListing(s: Scenario, q: ScenarioQuery, idOf: (ref: string) => number): ScenarioItem[] {
  const byRef = new Map(s.items.map((it) => [it.ref, it]));
  const ancestorsOf = (it: ScenarioItem): string[] => {
    const refs: string[] = [];
    for (let p = it.parent; p !== null; p = byRef.get(p)!.parent) refs.push(p);
    return refs;
  };
  const isAdmin = s.users.find((u) => u.ref === q.caller)!.role === 'admin';
  const callerGroups = new Set(s.groups.filter((g) => g.members.includes(q.caller)).map((g) => g.ref));
  const isGrantedToCaller = (g: Grant) => ('user' in g ? g.user === q.caller : callerGroups.has(g.group));
  const canSee = (it: ScenarioItem) =>
    isAdmin || it.createdBy === q.caller || [it.ref, ...ancestorsOf(it)].some((ref) => byRef.get(ref)!.grants.some(isGrantedToCaller));

  const search = q.search;
  const inScope = (it: ScenarioItem) =>
    search === undefined
      ? it.parent === q.folder
      : it.name.toLowerCase().includes(search.toLowerCase()) && (q.folder === null || ancestorsOf(it).includes(q.folder));
  const listed = s.items.filter((it) => inScope(it) && (q.types === undefined || q.types.includes(it.type)) && canSee(it));

  const folders = listed
    .filter((it) => it.type === 'FOLDER')
    .sort((a, b) => compareText(a.name.toLowerCase(), b.name.toLowerCase()) || idOf(a.ref) - idOf(b.ref));
  const others = listed.filter((it) => it.type !== 'FOLDER');
  const sign = (q.orderByDirection ?? 'DESC') === 'ASC' ? 1 : -1;
  const byKeyThenId = (keyOf: (it: ScenarioItem) => string) => (a: ScenarioItem, b: ScenarioItem) =>
    sign * (compareText(keyOf(a), keyOf(b)) || idOf(a.ref) - idOf(b.ref));
  const field = q.orderByField ?? 'updated_at';
  if (field === 'viewer_last_viewed_at') {
    const viewedAt = new Map(s.views.filter((v) => v.user === q.caller).map((v) => [v.item, v.at]));
    const viewed = others.filter((it) => viewedAt.has(it.ref)).sort(byKeyThenId((it) => viewedAt.get(it.ref)!));
    const neverViewed = others.filter((it) => !viewedAt.has(it.ref)).sort((a, b) => sign * (idOf(a.ref) - idOf(b.ref)));
    return [...folders, ...viewed, ...neverViewed];
  }
  const keyOf = (it: ScenarioItem) => (field === 'name' ? it.name.toLowerCase() : field === 'created_at' ? it.createdAt : it.updatedAt);
  return [...folders, ...others.sort(byKeyThenId(keyOf))];
}

interface Page {
  ids: number[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/** Walks the listing over HTTP, following endCursor while hasNextPage. */
async function walkPages(app: FastifyInstance, deploymentId: number, key: string, query: ScenarioQuery, folderId: number | null, limit: number): Promise<Page[]> {
  const params: string[] = [];
  if (folderId !== null) params.push(`folderId=${folderId}`);
  for (const type of query.types ?? []) params.push(`types=${type}`);
  if (query.orderByField !== undefined) params.push(`orderByField=${query.orderByField}`);
  if (query.orderByDirection !== undefined) params.push(`orderByDirection=${query.orderByDirection}`);
  if (query.search !== undefined) params.push(`search=${encodeURIComponent(query.search)}`);
  params.push(`first=${query.first}`);

  const pages: Page[] = [];
  let after: string | undefined;
  for (;;) {
    const qs = [...params, ...(after === undefined ? [] : [`after=${encodeURIComponent(after)}`])].join('&');
    const res = await app.inject({ url: `/api/v1/deployments/${deploymentId}/workspace?${qs}`, headers: bearer(key) });
    expect(res.statusCode, `${qs}: ${res.body}`).toBe(200);
    const body = res.json() as { items: Array<{ id: number }>; pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor?: string | null } };
    pages.push({ ids: body.items.map((i) => i.id), hasNextPage: body.pageInfo.hasNextPage, hasPreviousPage: body.pageInfo.hasPreviousPage });
    if (!body.pageInfo.hasNextPage) return pages;
    expect(pages.length, 'the walk does not end').toBeLessThan(limit);
    expect(typeof body.pageInfo.endCursor, 'endCursor of a page with a next page').toBe('string');
    after = body.pageInfo.endCursor!;
  }
}

describeEachDialect('workspace listing property', (t) => {
  it(
    'paging through any listing yields exactly the accessible items in scope, folders first by name, the rest in the ' +
      'requested order with ties by id, every page but the last full',
    async () => {
      await fc.assert(
        fc.asyncProperty(rawScenario.map(buildScenario), async (s) => {
          const { refs, keys } = await seedAccount(t().db.kysely, {
            users: s.users,
            groups: s.groups.map((g) => ({ ref: g.ref, name: `Group ${g.ref}`, members: g.members })),
            deployments: [{ ref: 'dep', name: 'Property', items: importItemsOf(s.items), views: s.views }],
          });
          const idOf = (ref: string) => refs[ref]!;
          const refOf = new Map(s.items.map((it) => [idOf(it.ref), it.ref]));
          const asRefs = (ids: number[]) => ids.map((id) => refOf.get(id) ?? `unknown id ${id}`).join(',');

          for (const [k, q] of s.queries.entries()) {
            const expected = expectedListing(s, q, idOf).map((it) => idOf(it.ref));
            const pages = await walkPages(t().app, idOf('dep'), keys[q.caller]!, q, q.folder === null ? null : idOf(q.folder), expected.length + 2);
            const actual = pages.flatMap((p) => p.ids);

            const where = `query ${k} ${JSON.stringify(q)}`;
            expect(actual, `${where}: listed [${asRefs(actual)}], model [${asRefs(expected)}]`).toEqual(expected);
            expect(pages, `${where}: page count`).toHaveLength(Math.max(1, Math.ceil(expected.length / q.first)));
            pages.forEach((page, n) => {
              const isLast = n === pages.length - 1;
              if (!isLast) expect(page.ids, `${where}: page ${n} is not the last, so it is full`).toHaveLength(q.first);
              expect(page.hasPreviousPage, `${where}: hasPreviousPage of page ${n}`).toBe(n > 0);
              expect(page.hasNextPage, `${where}: hasNextPage of page ${n}`).toBe(!isLast);
            });
          }
        }),
        { numRuns: 30 },
      );
    },
    120_000,
  );
});
