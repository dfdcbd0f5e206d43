/**
 * Deterministic generator of a large workspace for the benchmark: folders nested up to 6 levels (10% of items),
 * workbooks and reports spread over them, 200 platform users in 20 groups, grants on folders, views.
 */

/** mulberry32: a tiny seeded PRNG, so every run generates the same workspace. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'revenue', 'pipeline', 'churn', 'cohort', 'forecast', 'budget', 'margin', 'funnel', 'retention', 'growth',
  'orders', 'invoices', 'returns', 'inventory', 'shipping', 'campaign', 'leads', 'accounts', 'support', 'tickets',
  'regional', 'weekly', 'monthly', 'quarterly', 'annual', 'daily', 'board', 'team', 'product', 'pricing',
];

/**
 * A token that no other generated name contains, down to its trigrams ('zep', 'eph', 'phy', 'hyr'): the search
 * term matches exactly the names carrying it. A term whose trigrams are common elsewhere costs more on both
 * databases, since trigram indexes intersect the posting list of every trigram of the term.
 */
export const RARE_TOKEN = 'zephyr';
/** Share of names carrying RARE_TOKEN: the search benchmark matches ~0.1% of items. */
export const RARE_SHARE = 0.001;

export interface GeneratedWorkspace {
  userCount: number;
  adminUserIndex: number;
  groupOf: number[][];
  /** Column arrays, index i = item i; ids are assigned by the loader (i + firstId). */
  type: Array<'FOLDER' | 'WORKBOOK' | 'REPORT'>;
  name: string[];
  parent: Int32Array;
  depth: Int8Array;
  createdBy: Int32Array;
  createdAt: string[];
  updatedAt: string[];
  /** Grants: item index and either a user index or a group index. */
  grants: Array<{ item: number; user: number | null; group: number | null }>;
  views: Array<{ user: number; item: number; at: string }>;
  deepFolder: number;
  member: number;
}

const DAY = 86_400_000;
const START = Date.parse('2024-11-01T00:00:00Z');

/**
 * Generates `total` items. Level-0 folders sit at the root; each further level of folders hangs under a random
 * folder of the level above; non-folders go to a random folder or the root, so every listing stays a few dozen
 * items at any size, as real workspaces do.
 */
export function generateWorkspace(total: number, seed = 42): GeneratedWorkspace {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  const userCount = 200;
  const groupCount = 20;
  const groupOf: number[][] = Array.from({ length: userCount }, (_, u) =>
    u === 0 ? [] : Array.from(new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, () => Math.floor(random() * groupCount)))),
  );

  const folderTotal = Math.max(5, Math.round(total / 10));
  const levels = 5;
  const rootFolders = Math.min(20, folderTotal);
  // Geometric growth per level so that the levels add up to folderTotal.
  let branching = 1;
  for (let b = 1; b < 100; b += 0.01) {
    let sum = 0;
    for (let l = 0; l < levels; l++) sum += rootFolders * b ** l;
    if (sum >= folderTotal) {
      branching = b;
      break;
    }
  }

  const type: GeneratedWorkspace['type'] = [];
  const name: string[] = [];
  const parent = new Int32Array(total).fill(-1);
  const depth = new Int8Array(total);
  const createdBy = new Int32Array(total);
  const createdAt: string[] = [];
  const updatedAt: string[] = [];
  const folderLevels: number[][] = [];
  let next = 0;

  const makeName = (index: number) => {
    const base = `${pick(WORDS)} ${pick(WORDS)} ${index}`;
    return random() < RARE_SHARE ? `${base} ${RARE_TOKEN}` : base;
  };
  const add = (kind: 'FOLDER' | 'WORKBOOK' | 'REPORT', parentIndex: number) => {
    const i = next++;
    type.push(kind);
    name.push(kind === 'FOLDER' ? `${pick(WORDS)} ${i}` : makeName(i));
    parent[i] = parentIndex;
    depth[i] = parentIndex < 0 ? 0 : depth[parentIndex]! + 1;
    createdBy[i] = Math.floor(random() * userCount);
    const created = START + Math.floor(random() * 700) * DAY + Math.floor(random() * DAY);
    createdAt.push(new Date(created).toISOString());
    updatedAt.push(new Date(created + Math.floor(random() * 30) * DAY).toISOString());
    return i;
  };

  for (let level = 0; level < levels && next < folderTotal; level++) {
    const wanted = Math.round(rootFolders * branching ** level);
    const current: number[] = [];
    for (let k = 0; k < wanted && next < folderTotal; k++) current.push(add('FOLDER', level === 0 ? -1 : pick(folderLevels[level - 1]!)));
    folderLevels.push(current);
  }
  const allFolders = folderLevels.flat();
  while (next < total) {
    // One slot in (folders + 1) is the root, so the root holds about as many items as a folder.
    const slot = Math.floor(random() * (allFolders.length + 1));
    add(random() < 0.5 ? 'WORKBOOK' : 'REPORT', slot === allFolders.length ? -1 : allFolders[slot]!);
  }

  const grants: GeneratedWorkspace['grants'] = [];
  for (const folder of allFolders) {
    if (random() < 0.02 || (depth[folder] === 0 && random() < 0.3)) {
      const toGroup = random() < 0.8;
      grants.push({ item: folder, user: toGroup ? null : 1 + Math.floor(random() * (userCount - 1)), group: toGroup ? Math.floor(random() * groupCount) : null });
    }
  }
  const views: GeneratedWorkspace['views'] = [];
  for (let v = 0; v < Math.min(total, 50_000); v++) {
    views.push({ user: Math.floor(random() * userCount), item: Math.floor(random() * total), at: new Date(START + Math.floor(random() * 700 * DAY)).toISOString() });
  }

  const childCount = new Map<number, number>();
  for (let i = 0; i < total; i++) if (parent[i]! >= 0) childCount.set(parent[i]!, (childCount.get(parent[i]!) ?? 0) + 1);
  const deepest = folderLevels[folderLevels.length - 1]!;
  const deepFolder = deepest.reduce((best, f) => ((childCount.get(f) ?? 0) > (childCount.get(best) ?? 0) ? f : best), deepest[0]!);
  // The member of the benchmark: in a group that holds grants on root folders.
  const rootGrantGroups = new Set(grants.filter((g) => depth[g.item] === 0 && g.group !== null).map((g) => g.group!));
  const member = groupOf.findIndex((groups, u) => u > 0 && groups.some((g) => rootGrantGroups.has(g)));
  return {
    userCount, adminUserIndex: 0, groupOf, type, name, parent, depth, createdBy, createdAt, updatedAt, grants, views, deepFolder,
    member: member < 0 ? 1 : member,
  };
}
