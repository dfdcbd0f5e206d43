export { SvcClient } from './client.js';
export type { SvcClientOptions } from './client.js';
export { SvcApiError, isSvcErrorBody } from './errors.js';
export type { SvcErrorBody, SvcErrorDetail } from './errors.js';
export type {
  AccountSettings, ApiKeySummary, EmbedTenant, EmbedUser, EmbedUserChange, EmbedUserInput, Group, NewApiKey, PlatformUser, PlatformUserChange, PlatformUserInput, UserRole,
  AuditEvent, AuthoredDashboard, DashboardCreateInput, DashboardDraftInput, DashboardVersion, Deployment, DeploymentSummary, MetaMember, ModelCheck, ModelInput, ModelMeta,
  PageInfo, QueryPreview, QueryPreviewRequest, ResourceOwner, WorkspaceConnectionResponse, WorkspaceItem, WorkspaceItemType, WorkspaceOrderByField, WorkspaceQuery } from './types.js';
export type { GrantRole, ItemGrant, ItemGrantInput, Me } from './types.js';
export type { PreviewSession, PreviewSessionRequest } from './types.js';
// Issue 35 saved charts and views.
export { SvcEmbedClient } from './embed-client.js';
export type { SvcEmbedClientOptions } from './embed-client.js';
export type {
  SavedAuthor, SavedChart, SavedChartChange, SavedChartInput, SavedChartKind, SavedChartList, SavedFilterValue, SavedListQuery, SavedQuery, SavedView,
  SavedViewChange, SavedViewInput, SavedViewList, SavedViewState, SavedVisibility,
} from './types.js';
