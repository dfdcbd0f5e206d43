/** SPEC.md PageInfo: opaque cursors, null on an empty page. */
export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor?: string | null;
  endCursor?: string | null;
}

export type WorkspaceItemType = 'FOLDER' | 'WORKBOOK' | 'REPORT';
export type WorkspaceOrderByField = 'updated_at' | 'created_at' | 'name' | 'viewer_last_viewed_at';

export interface ResourceOwner {
  id: number;
  email: string;
  firstName?: string | null;
  picture?: string | null;
}

/** A workspace item (SPEC.md schema Workbook). Dashboard shapes are kept open here: see the OpenAPI document. */
export interface WorkspaceItem {
  id: number;
  deploymentId: number;
  name: string;
  meta: Record<string, unknown>;
  calculatedFields: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  type: WorkspaceItemType;
  createdBy?: number;
  userId?: number | null;
  user?: ResourceOwner | null;
  folderId?: number | null;
  folderPath?: Array<{ id: number; name: string }>;
  isFavorite?: boolean | null;
  slug?: string | null;
  dashboardDraft?: Record<string, unknown> | null;
  dashboardPublished?: Record<string, unknown> | null;
  publishedDashboard?: Record<string, unknown> | null;
}

export interface WorkspaceConnectionResponse {
  items: WorkspaceItem[];
  pageInfo: PageInfo;
}

/** Query of `GET /api/v1/deployments/{deploymentId}/workspace` (SPEC part A). */
export interface WorkspaceQuery {
  folderId?: number;
  types?: WorkspaceItemType[];
  orderByField?: WorkspaceOrderByField;
  orderByDirection?: 'ASC' | 'DESC';
  search?: string;
  first?: number;
  after?: string;
}
