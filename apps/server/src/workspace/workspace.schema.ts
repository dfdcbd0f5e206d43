import { Type } from 'typebox';
import type { Static } from 'typebox';
import { Dashboard, DashboardConfig } from './workspace.dashboard-schema.js';
import { ErrorResponse, Id, Nullable, PageInfo } from '../core/core.schema.js';

export const WORKSPACE_ITEM_TYPES = ['FOLDER', 'WORKBOOK', 'REPORT'] as const;
export const ORDER_BY_FIELDS = ['updated_at', 'created_at', 'name', 'viewer_last_viewed_at'] as const;
export const ORDER_BY_DIRECTIONS = ['ASC', 'DESC'] as const;

/** DESIGN.md: default page size 50; larger than 200 is clamped, not rejected. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
export const MAX_SEARCH_LENGTH = 255;

const ItemType = Type.Enum(WORKSPACE_ITEM_TYPES);

export const WorkspaceParams = Type.Object({ deploymentId: Id });
export type WorkspaceParams = Static<typeof WorkspaceParams>;

export const WorkspaceItemParams = Type.Object({ deploymentId: Id, itemId: Id });
export type WorkspaceItemParams = Static<typeof WorkspaceItemParams>;

export const WorkspaceQuery = Type.Object({
  folderId: Type.Optional(Id),
  types: Type.Optional(Type.Array(ItemType, { maxItems: 3 })),
  orderByField: Type.Optional(Type.Enum(ORDER_BY_FIELDS)),
  orderByDirection: Type.Optional(Type.Enum(ORDER_BY_DIRECTIONS)),
  search: Type.Optional(Type.String({ maxLength: MAX_SEARCH_LENGTH })),
  after: Type.Optional(Type.String({ maxLength: 1024 })),
  first: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type WorkspaceQuery = Static<typeof WorkspaceQuery>;

export const ResourceOwner = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    firstName: Type.Optional(Nullable(Type.String())),
    picture: Type.Optional(Nullable(Type.String())),
  },
  { title: 'ResourceOwner' },
);

export const WorkspaceFolderPathEntry = Type.Object({ id: Type.Integer(), name: Type.String() }, { title: 'WorkspaceFolderPathEntry' });

/** SPEC A: the workspace item (schema name Workbook), used for every item of the feed. */
export const WorkspaceItem = Type.Object(
  {
    id: Type.Integer(),
    deploymentId: Type.Integer(),
    name: Type.String(),
    meta: Type.Object({}, { additionalProperties: true }),
    calculatedFields: Type.Object({}, { additionalProperties: true }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    type: ItemType,
    createdBy: Type.Optional(Type.Integer()),
    userId: Type.Optional(Nullable(Type.Number())),
    user: Type.Optional(Nullable(ResourceOwner)),
    folderId: Type.Optional(Nullable(Type.Number())),
    folderPath: Type.Optional(Type.Array(WorkspaceFolderPathEntry)),
    isFavorite: Type.Optional(Nullable(Type.Boolean())),
    slug: Type.Optional(Nullable(Type.String())),
    dashboardDraft: Type.Optional(Nullable(DashboardConfig)),
    dashboardPublished: Type.Optional(Nullable(DashboardConfig)),
    publishedDashboard: Type.Optional(Nullable(Dashboard)),
  },
  { title: 'Workbook' },
);
export type WorkspaceItem = Static<typeof WorkspaceItem>;

export const WorkspaceConnectionResponse = Type.Object(
  { items: Type.Array(WorkspaceItem), pageInfo: PageInfo },
  { title: 'WorkspaceConnectionResponse' },
);
export type WorkspaceConnectionResponse = Static<typeof WorkspaceConnectionResponse>;

export const workspaceErrorResponses = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  404: ErrorResponse,
};
