import { describe, expect, it } from 'vitest';
import { canCreateDashboardIn, canEditDashboard, canEditWithoutGrants } from './dashboards.policy.js';

/** Issue 33's edit rule as plain functions; the HTTP tests (dashboards.authoring.test.ts) hold it end to end. */
describe('who may change a dashboard', () => {
  const admin = { role: 'admin' as const, userId: 1 };
  const member = { role: 'member' as const, userId: 7 };
  const none = { editorGrant: false };
  const editor = { editorGrant: true };

  it('lets an admin change every dashboard, and a member those they created or below an editor grant', () => {
    expect(canEditDashboard(admin, { created_by: 2 }, none)).toBe(true);
    expect(canEditDashboard(member, { created_by: 7 }, none)).toBe(true);
    expect(canEditDashboard(member, { created_by: 2 }, editor)).toBe(true);
    expect(canEditDashboard(member, { created_by: 2 }, none)).toBe(false);
    expect(canEditDashboard(member, { created_by: null }, none)).toBe(false);
  });

  it('needs the grants only for a member who did not create the dashboard', () => {
    expect(canEditWithoutGrants(admin, { created_by: null })).toBe(true);
    expect(canEditWithoutGrants(member, { created_by: 7 })).toBe(true);
    expect(canEditWithoutGrants(member, { created_by: 2 })).toBe(false);
  });

  it('lets a member create at the root, and in a folder only when they created it or an editor grant reaches it', () => {
    expect(canCreateDashboardIn(member, null, none)).toBe(true);
    expect(canCreateDashboardIn(member, { created_by: 7 }, none)).toBe(true);
    expect(canCreateDashboardIn(member, { created_by: 1 }, editor)).toBe(true);
    expect(canCreateDashboardIn(member, { created_by: 1 }, none)).toBe(false);
    expect(canCreateDashboardIn(admin, { created_by: 2 }, none)).toBe(true);
  });
});
