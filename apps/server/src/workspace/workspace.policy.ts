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

/**
 * What the store found of the caller's grants above an item: whether an editor grant to them or a group of theirs
 * sits on the item (or the folder something is made in) or on any folder above it.
 */
export interface EditorReach {
  editorGrant: boolean;
}

/**
 * Issue 33's edit rule, for any item: admins change every item of the account; a member, the items they created and
 * those below an editor grant to them or a group of theirs. A viewer grant only reads. A dashboard is changed by
 * the same rule as its workbook (dashboards.policy.ts).
 *
 * @example
 * canChangeItem({ role: 'member', userId: 7 }, { created_by: 7 }, { editorGrant: false }); // true: theirs
 */
export function canChangeItem(author: Pick<PlatformUserPrincipal, 'role' | 'userId'>, item: { created_by: number | null }, reach: EditorReach): boolean {
  return isAdmin(author) || item.created_by === author.userId || reach.editorGrant;
}

/**
 * Putting something in a folder (a new dashboard or folder, or an item moved there) is changing that folder
 * (Metabase's "curate"): admins anywhere; a member in a folder they created or below an editor grant. `folder` null
 * is the deployment's root, open to every member (docs/decisions.md "creating a dashboard").
 */
export function canPlaceIn(author: Pick<PlatformUserPrincipal, 'role' | 'userId'>, folder: { created_by: number | null } | null, reach: EditorReach): boolean {
  return folder === null || canChangeItem(author, folder, reach);
}
