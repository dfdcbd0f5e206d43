import { isAdmin } from '../accounts/accounts.principal.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';

// DESIGN "Access": an admin sees every item of the account; anyone else sees an item they created, or one granted
// (to them or a group of theirs) on the item or any folder above it. This file is that rule, once. The listing's
// SQL (workspace.store `isAccessible`) is its set form; workspace.policy.test.ts checks the two agree.

/** Who asks, as the rule sees them: their role, and the items granted to them or a group of theirs. */
export interface AccessViewer {
  admin: boolean;
  userId: number;
  grantedItemIds: ReadonlySet<number>;
}

/** What the rule needs to know of an item: its creator, and its ancestor chain (the item itself first). */
export interface ItemAccessFacts {
  createdBy: number | null;
  /** The item's id and the ids of every folder above it. */
  chainIds: readonly number[];
}

/** The facts of an item from its ancestor chain as the store reads it (the item itself first). */
export function accessFactsOf(chain: ReadonlyArray<{ id: number; created_by: number | null }>): ItemAccessFacts {
  return { createdBy: chain[0]?.created_by ?? null, chainIds: chain.map((f) => f.id) };
}

export function accessViewerOf(principal: Pick<PlatformUserPrincipal, 'role' | 'userId'>, grantedItemIds: Iterable<number>): AccessViewer {
  return { admin: isAdmin(principal), userId: principal.userId, grantedItemIds: new Set(grantedItemIds) };
}

/**
 * Whether the viewer sees everything at and below the item whose chain this is: an admin, or a grant on the item or
 * a folder above it. Inside such a folder the listing skips the per-item check.
 */
export function reachesSubtree(viewer: AccessViewer, chainIds: readonly number[]): boolean {
  return viewer.admin || chainIds.some((id) => viewer.grantedItemIds.has(id));
}

/** DESIGN "Access" for one item. */
export function canAccessItem(viewer: AccessViewer, item: ItemAccessFacts): boolean {
  return item.createdBy === viewer.userId || reachesSubtree(viewer, item.chainIds);
}

/**
 * Issue 33: an item's grants (who reads it, who edits the dashboards below it) are the admins' to change, as the
 * model, users and settings are; a member never changes them.
 */
export function canManageGrants(principal: Pick<PlatformUserPrincipal, 'role'>): boolean {
  return isAdmin(principal);
}
