export { SvcClient } from './client.js';
export type { SvcClientOptions } from './client.js';
export { SvcApiError, isSvcErrorBody } from './errors.js';
export type { SvcErrorBody } from './errors.js';
export type { PageInfo, ResourceOwner, WorkspaceConnectionResponse, WorkspaceItem, WorkspaceItemType, WorkspaceOrderByField, WorkspaceQuery } from './types.js';
