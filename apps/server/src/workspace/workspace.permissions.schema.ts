import { Type } from 'typebox';
import type { Static } from 'typebox';
import { Described, Id, Nullable } from '../core/core.schema.js';

// The caller's permissions on the items of a listing page (issue 34, the console; workspace.permissions.ts).

/** At most a listing page's largest size (MAX_PAGE_SIZE) of ids in one question. */
export const MAX_PERMISSION_ITEMS = 200;

export const WorkspacePermissionsQuery = Type.Object({
  itemId: Type.Optional(Type.Array(Id, { maxItems: MAX_PERMISSION_ITEMS, description: 'The items asked about; repeat the parameter for several' })),
  folderId: Type.Optional(Described(Id, 'The folder shown; absent: the root')),
});
export type WorkspacePermissionsQuery = Static<typeof WorkspacePermissionsQuery>;

export const WorkspacePermissions = Type.Object({
  folder: Type.Object({
    id: Nullable(Type.Integer()),
    canCreate: Type.Boolean({ description: 'Whether the caller may make a dashboard or folder in it (the root: every platform user)' }),
  }),
  items: Type.Array(Type.Object({
    id: Type.Integer(),
    canEdit: Type.Boolean({ description: "Whether the caller may rename or move the item, and change a workbook's dashboard" }),
    dashboardPublicId: Nullable(Type.String({ description: "A workbook's dashboard: published, or a draft the caller may change; else null" })),
  }), { description: 'The items asked about that the caller can access; others are left out' }),
}, { title: 'WorkspacePermissions' });
export type WorkspacePermissions = Static<typeof WorkspacePermissions>;
