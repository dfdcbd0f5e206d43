import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { canChangeItem, canPlaceIn } from '../workspace/workspace.policy.js';
import type { EditorReach } from '../workspace/workspace.policy.js';

// Who may change a dashboard through the authoring API (issue 33; docs/authoring.md "Who may do what"). Reading is
// DESIGN "Access" (any grant, dashboards.service `canReachWorkbook`); changing needs more. The store reads the facts
// (`EditorReach`), these functions decide: no SQL here, no strings for actions.

/** Who asks, as the edit rule sees them. */
export type Author = Pick<PlatformUserPrincipal, 'role' | 'userId'>;

/** What the rule needs to know of a dashboard: who created it. */
export interface DashboardFacts {
  created_by: number | null;
}

export type { EditorReach };

/**
 * Issue 33: admins change every dashboard of the account; a member, the dashboards they created, and those below an
 * editor grant to them or a group of theirs (on the workbook or any folder above it). A viewer grant only reads.
 *
 * @example
 * canEditDashboard({ role: 'member', userId: 7 }, { created_by: 7 }, { editorGrant: false }); // true: theirs
 */
export function canEditDashboard(author: Author, dashboard: DashboardFacts, reach: EditorReach): boolean {
  return canChangeItem(author, dashboard, reach);
}

/** Whether the rule can be decided without reading the grants (an admin, or the dashboard's creator). */
export function canEditWithoutGrants(author: Author, dashboard: DashboardFacts): boolean {
  return canEditDashboard(author, dashboard, { editorGrant: false });
}

/**
 * Creating a dashboard in a folder is changing that folder (Metabase's "curate"): admins anywhere; a member in a
 * folder they created or below an editor grant. `folder` null is the deployment's root, open to every member
 * (docs/decisions.md "creating a dashboard").
 */
export function canCreateDashboardIn(author: Author, folder: { created_by: number | null } | null, reach: EditorReach): boolean {
  return canPlaceIn(author, folder, reach);
}
