import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount } from '../../test/factory.js';
import { seededRandom } from '../../test/seeded-random.js';
import { accessViewerOf, canAccessItem, reachesSubtree } from './workspace.policy.js';
import type { AccessViewer } from './workspace.policy.js';
import { listingPhases } from './workspace.service.js';
import { selectAncestorChain, selectGrantedItemIds, selectPhaseRows } from './workspace.store.js';

const random = seededRandom();

function viewer(overrides: Partial<AccessViewer> = {}): AccessViewer {
  return { admin: false, userId: 7, grantedItemIds: new Set(), ...overrides };
}

describe('workspace policy (DESIGN "Access")', () => {
  it('lets an admin reach every item, whoever created it and whatever is granted', () => {
    expect(canAccessItem(viewer({ admin: true }), { createdBy: 99, chainIds: [5, 4, 1] })).toBe(true);
    expect(canAccessItem(viewer({ admin: true }), { createdBy: null, chainIds: [5] })).toBe(true);
    expect(reachesSubtree(viewer({ admin: true }), [3])).toBe(true);
  });

  it('lets a member reach what they created, and nothing else without a grant', () => {
    expect(canAccessItem(viewer(), { createdBy: 7, chainIds: [5, 1] })).toBe(true);
    expect(canAccessItem(viewer(), { createdBy: 8, chainIds: [5, 1] })).toBe(false);
    expect(canAccessItem(viewer(), { createdBy: null, chainIds: [5, 1] })).toBe(false);
  });

  it('lets a grant on the item or on any folder above it reach the item, and not a grant below or beside it', () => {
    const granted = (...ids: number[]) => viewer({ grantedItemIds: new Set(ids) });
    expect(canAccessItem(granted(5), { createdBy: 8, chainIds: [5, 4, 1] })).toBe(true);
    expect(canAccessItem(granted(1), { createdBy: 8, chainIds: [5, 4, 1] })).toBe(true);
    expect(canAccessItem(granted(6, 2), { createdBy: 8, chainIds: [5, 4, 1] })).toBe(false);
    expect(reachesSubtree(granted(4), [4, 1])).toBe(true);
    // Having created a folder does not reach what others put in it.
    expect(reachesSubtree(granted(), [4, 1])).toBe(false);
  });

  it("builds a viewer from a principal's role and granted ids", () => {
    const principal = { kind: 'platform-user', accountId: 1, userId: 7, role: 'member', email: 'm@x', dataVersion: '', via: 'api-key', credentialId: 1 } as const;
    const v = accessViewerOf(principal, [3, 3, 9]);
    expect(v).toEqual({ admin: false, userId: 7, grantedItemIds: new Set([3, 9]) });
    expect(accessViewerOf({ ...principal, role: 'admin' }, []).admin).toBe(true);
  });
});

/**
 * The rule's three forms agree: over a random tree with random creators and grants (to users and groups), for every
 * user and item, the policy (on the facts the store reads), the listing's SQL (`isAccessible`, asked without the
 * granted-folder shortcut) and the item writes' check (PUT favorite: 204 or 403) give the same answer.
 */
describeEachDialect('workspace policy against its SQL form', (t) => {
  it('gives the same access for every user and item as the listing SQL and the favourite check', async () => {
    const users = [
      { ref: 'admin', role: 'admin' as const },
      ...['m1', 'm2', 'm3'].map((ref) => ({ ref, role: 'member' as const })),
    ];
    const groups = [{ ref: 'g1', name: 'G1', members: ['m1', 'm2'] }, { ref: 'g2', name: 'G2', members: ['m3'] }];
    const pick = <T,>(list: readonly T[]): T => list[random.int(list.length)]!;

    type Spec = { ref: string; type: 'FOLDER' | 'WORKBOOK' | 'REPORT'; name: string; createdBy?: string; grants?: Array<{ user: string } | { group: string }>; children?: Spec[] };
    const roots: Spec[] = [];
    const folders: Spec[] = [];
    for (let n = 0; n < 30; n++) {
      const type = pick(['FOLDER', 'FOLDER', 'WORKBOOK', 'REPORT'] as const);
      const spec: Spec = { ref: `i${n}`, type, name: `Item ${n}` };
      if (random.next() < 0.8) spec.createdBy = pick(users).ref;
      if (random.next() < 0.25) spec.grants = [random.next() < 0.5 ? { user: pick(users).ref } : { group: pick(groups).ref }];
      const parent = folders.length > 0 && random.next() < 0.7 ? pick(folders) : null;
      if (parent === null) roots.push(spec);
      else (parent.children ??= []).push(spec);
      if (type === 'FOLDER') folders.push(spec);
    }
    const { refs, keys } = await seedAccount(t().db.kysely, { users, groups, deployments: [{ ref: 'dep', name: 'Policy', items: roots }] });
    const db = t().db.kysely;
    const { account_id: accountId } = await db.selectFrom('deployments').select('account_id').where('id', '=', refs['dep']!).executeTakeFirstOrThrow();
    const deploymentId = refs['dep']!;
    const itemRefs = Array.from({ length: 30 }, (_, n) => `i${n}`);
    const folderIds = [null, ...folders.map((f) => refs[f.ref]!)];

    let reached = 0;
    for (const user of users) {
      const userId = refs[user.ref]!;
      const granted = await selectGrantedItemIds(db, accountId, userId);
      const principal = { kind: 'platform-user', accountId, userId, role: user.role, email: '', dataVersion: '', via: 'api-key', credentialId: 0 } as const;
      const v = accessViewerOf(principal, granted);

      // The SQL form: every folder level listed with the per-item check on (no admin or granted-folder shortcut).
      const listed = new Set<number>();
      for (const folderId of folderIds) {
        for (const phase of listingPhases({})) {
          const scope = { accountId, deploymentId, userId, folderId, search: null, seesEverything: v.admin, grantedItemIds: granted };
          for (const row of await selectPhaseRows(db, t().dialect, scope, phase, null, 1000)) listed.add(row.id);
        }
      }

      for (const ref of itemRefs) {
        const itemId = refs[ref]!;
        const chain = await selectAncestorChain(db, accountId, itemId);
        const allowed = canAccessItem(v, { createdBy: chain[0]!.created_by, chainIds: chain.map((f) => f.id) });
        const where = `seed ${random.seed}, ${user.ref} on ${ref}`;
        expect(listed.has(itemId), `${where}: listing SQL against the policy`).toBe(allowed);
        const res = await t().app.inject({ method: 'PUT', url: `/api/v1/deployments/${deploymentId}/workspace/${itemId}/favorite`, headers: bearer(keys[user.ref]!) });
        expect(res.statusCode, `${where}: favourite check against the policy`).toBe(allowed ? 204 : 403);
        if (allowed && !v.admin) reached++;
      }
    }
    // The random tree must exercise both answers for members, or the comparison proves little.
    expect(reached, `seed ${random.seed}: members reached some items`).toBeGreaterThan(0);
    expect(reached, `seed ${random.seed}: members were refused some items`).toBeLessThan(3 * itemRefs.length);
  }, 60_000);
});
