import { sendRequest } from './request.js';
import type {
  AccountSettings, ApiKeySummary, AuditEvent, AuthoredDashboard, DashboardCreateInput, DashboardDraftInput, DashboardVersion, Deployment,
  DeploymentSummary, EmbedTenant, EmbedUser, EmbedUserChange, EmbedUserInput, Group, ModelCheck, ModelInput, ModelMeta, NewApiKey, PageInfo, PlatformUser,
  PlatformUserChange, PlatformUserInput, PreviewSession, PreviewSessionRequest, QueryPreview, QueryPreviewRequest, WorkspaceConnectionResponse, WorkspaceItem, WorkspaceQuery,
} from './types.js';
import type { ItemGrant, ItemGrantInput, Me, PreAggregationStatus, WorkspacePermissions } from './types.js';

export interface SvcClientOptions {
  /** The tenant host, e.g. `https://analytics.example.com`. */
  baseUrl: string;
  /** An API key (platform API). Server-side only: never ship it to a browser. */
  apiKey: string;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof fetch;
}

/**
 * A typed client for the svc platform API.
 *
 * @example
 * const client = new SvcClient({ baseUrl: 'http://localhost:3000', apiKey: process.env.SVC_API_KEY! });
 * for await (const item of client.workspaceItems(1, { types: ['WORKBOOK'] })) console.log(item.name);
 */
export class SvcClient {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;

  constructor(options: SvcClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** One page of the workspace listing (`workspaceObjects`). */
  async listWorkspace(deploymentId: number, query: WorkspaceQuery = {}): Promise<WorkspaceConnectionResponse> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) params.append(name, String(v));
      else params.set(name, String(value));
    }
    const qs = params.toString();
    return this.#get(`/api/v1/deployments/${deploymentId}/workspace${qs ? `?${qs}` : ''}`);
  }

  /**
   * Every item of a listing, page after page, following `endCursor` while `hasNextPage` (SPEC: loops are driven
   * by hasNextPage, never by a null cursor).
   */
  async *workspaceItems(deploymentId: number, query: Omit<WorkspaceQuery, 'after'> = {}): AsyncGenerator<WorkspaceItem> {
    let after: string | undefined;
    for (;;) {
      const page = await this.listWorkspace(deploymentId, after === undefined ? query : { ...query, after });
      yield* page.items;
      if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
      after = page.pageInfo.endCursor;
    }
  }

  /** The account's deployments. */
  async listDeployments(): Promise<DeploymentSummary[]> {
    return (await this.#call<{ items: DeploymentSummary[] }>('GET', '/api/v1/deployments')).items;
  }

  /** A deployment with its model (admins). */
  async getDeployment(deploymentId: number): Promise<Deployment> {
    return this.#call('GET', `/api/v1/deployments/${deploymentId}`);
  }

  /** What the model offers authors, in Cube's /v1/meta shape. */
  async getMeta(deploymentId: number): Promise<ModelMeta> {
    return this.#call('GET', `/api/v1/deployments/${deploymentId}/meta`);
  }

  /**
   * Replaces the model over `revision` (the `modelRevision` read): a stale one throws a 412 SvcApiError; one that
   * breaks published widgets a 409 whose `details` names each, unless `force`.
   */
  async replaceModel(deploymentId: number, model: ModelInput, options: { revision: number; force?: boolean }): Promise<Deployment> {
    return this.#call('PUT', `/api/v1/deployments/${deploymentId}/model${options.force === true ? '?force=true' : ''}`, model, { 'if-match': `"model-${options.revision}"` });
  }

  /**
   * Checks a model as `replaceModel` would, writing nothing: what it changes, view by view, and the published widgets
   * it would break. A model the checks refuse throws a 400 SvcApiError at its JSON path (`field`).
   */
  async checkModel(deploymentId: number, model: ModelInput): Promise<ModelCheck> {
    return this.#call('POST', `/api/v1/deployments/${deploymentId}/model/check`, model);
  }

  /** A new dashboard with a draft (publish it for viewers to see it). */
  async createDashboard(deploymentId: number, input: DashboardCreateInput): Promise<AuthoredDashboard> {
    return this.#call('POST', `/api/v1/deployments/${deploymentId}/dashboards`, input);
  }

  /** A dashboard's published version and its draft. */
  async getDashboard(publicId: string): Promise<AuthoredDashboard> {
    return this.#call('GET', `/api/v1/dashboards/${encodeURIComponent(publicId)}`);
  }

  /** Replaces the draft over `revision` (the `draftRevision` read). */
  async replaceDraft(publicId: string, draft: DashboardDraftInput, options: { revision: number }): Promise<AuthoredDashboard> {
    return this.#call('PUT', `/api/v1/dashboards/${encodeURIComponent(publicId)}/draft`, draft, { 'if-match': `"draft-${options.revision}"` });
  }

  /** Makes the draft the next version. */
  async publishDashboard(publicId: string): Promise<AuthoredDashboard> {
    return this.#call('POST', `/api/v1/dashboards/${encodeURIComponent(publicId)}/publish`);
  }

  async listDashboardVersions(publicId: string): Promise<DashboardVersion[]> {
    return (await this.#call<{ items: DashboardVersion[] }>('GET', `/api/v1/dashboards/${encodeURIComponent(publicId)}/versions`)).items;
  }

  /** Copies version `versionNumber` into the draft. */
  async restoreDashboardVersion(publicId: string, versionNumber: number): Promise<AuthoredDashboard> {
    return this.#call('POST', `/api/v1/dashboards/${encodeURIComponent(publicId)}/versions/${versionNumber}/restore`);
  }

  /** Archives the dashboard (its comments, versions and draft stay). */
  async archiveDashboard(publicId: string): Promise<void> {
    await this.#call('DELETE', `/api/v1/dashboards/${encodeURIComponent(publicId)}`);
  }

  /**
   * Runs a semantic query (or a report snapshot) on a deployment as yourself, or (admins) `asViewer`, through the
   * viewers' policy step; an admin's answer carries the statement that ran.
   */
  async previewQuery(deploymentId: number, request: QueryPreviewRequest): Promise<QueryPreview> {
    return this.#call('POST', `/api/v1/deployments/${deploymentId}/query`, request);
  }

  /**
   * Admins: a single-use session with which the embed page shows one dashboard (published, or its draft) as a viewer
   * of this tenant and context would see it. Only svc's own origin (its console) may frame that page.
   */
  async createPreviewSession(publicId: string, request: PreviewSessionRequest = {}): Promise<PreviewSession> {
    return this.#call('POST', `/api/v1/dashboards/${encodeURIComponent(publicId)}/preview-sessions`, request);
  }

  /** Every audit event of the account, newest first, page after page (admins). */
  async *auditEvents(options: { first?: number } = {}): AsyncGenerator<AuditEvent> {
    let after: string | undefined;
    for (;;) {
      const params = new URLSearchParams();
      if (options.first !== undefined) params.set('first', String(options.first));
      if (after !== undefined) params.set('after', after);
      const qs = params.toString();
      const page = await this.#call<{ items: AuditEvent[]; pageInfo: PageInfo }>('GET', `/api/v1/audit${qs ? `?${qs}` : ''}`);
      yield* page.items;
      if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
      after = page.pageInfo.endCursor;
    }
  }

  // ---- the account's admin API (admins): users, API keys, groups, settings, embed tenants and users ----

  async listUsers(): Promise<PlatformUser[]> {
    return (await this.#get<{ items: PlatformUser[] }>('/api/v1/users')).items;
  }

  async createUser(input: PlatformUserInput): Promise<PlatformUser> {
    return this.#call('POST', '/api/v1/users', input);
  }

  async getUser(userId: number): Promise<PlatformUser> {
    return this.#get(`/api/v1/users/${userId}`);
  }

  /** Changes a user; a new password signs them out of the console, a demotion takes effect on their next request. */
  async updateUser(userId: number, change: PlatformUserChange): Promise<PlatformUser> {
    return this.#call('PATCH', `/api/v1/users/${userId}`, change);
  }

  /** Deletes a user: their keys stop working at once; what they made stays. */
  async deleteUser(userId: number): Promise<void> {
    await this.#call('DELETE', `/api/v1/users/${userId}`);
  }

  async listApiKeys(userId: number): Promise<ApiKeySummary[]> {
    return (await this.#get<{ items: ApiKeySummary[] }>(`/api/v1/users/${userId}/api-keys`)).items;
  }

  /**
   * Makes an API key for a user. Keep `key` now: svc never shows it again.
   *
   * @example
   * const { key } = await client.createApiKey(userId, { name: 'CI deploy' });
   */
  async createApiKey(userId: number, options: { name?: string } = {}): Promise<NewApiKey> {
    return this.#call('POST', `/api/v1/users/${userId}/api-keys`, options);
  }

  async deleteApiKey(userId: number, keyId: number): Promise<void> {
    await this.#call('DELETE', `/api/v1/users/${userId}/api-keys/${keyId}`);
  }

  async listGroups(): Promise<Group[]> {
    return (await this.#get<{ items: Group[] }>('/api/v1/groups')).items;
  }

  async createGroup(input: { name: string; memberIds?: number[] }): Promise<Group> {
    return this.#call('POST', '/api/v1/groups', input);
  }

  async getGroup(groupId: number): Promise<Group> {
    return this.#get(`/api/v1/groups/${groupId}`);
  }

  /** Renames a group and/or replaces its members (`memberIds` is the whole membership). */
  async updateGroup(groupId: number, change: { name?: string; memberIds?: number[] }): Promise<Group> {
    return this.#call('PATCH', `/api/v1/groups/${groupId}`, change);
  }

  async deleteGroup(groupId: number): Promise<void> {
    await this.#call('DELETE', `/api/v1/groups/${groupId}`);
  }

  async getAccountSettings(): Promise<AccountSettings> {
    return this.#get('/api/v1/account/settings');
  }

  /** Changes the settings named; the others stay. */
  async updateAccountSettings(change: Partial<AccountSettings>): Promise<AccountSettings> {
    return this.#call('PATCH', '/api/v1/account/settings', change);
  }

  async listEmbedTenants(): Promise<EmbedTenant[]> {
    return (await this.#get<{ items: EmbedTenant[] }>('/api/v1/embed/tenants')).items;
  }

  async createEmbedTenant(name: string): Promise<EmbedTenant> {
    return this.#call('POST', '/api/v1/embed/tenants', { name });
  }

  async getEmbedTenant(tenantId: number): Promise<EmbedTenant> {
    return this.#get(`/api/v1/embed/tenants/${tenantId}`);
  }

  /** Renames a tenant; its live sessions are revoked (mint new ones with the new name). */
  async renameEmbedTenant(tenantId: number, name: string): Promise<EmbedTenant> {
    return this.#call('PATCH', `/api/v1/embed/tenants/${tenantId}`, { name });
  }

  /** Offboards a customer: the tenant, its viewers, their sessions and its threads are deleted. */
  async deleteEmbedTenant(tenantId: number): Promise<void> {
    await this.#call('DELETE', `/api/v1/embed/tenants/${tenantId}`);
  }

  async listEmbedUsers(embedTenantName?: string): Promise<EmbedUser[]> {
    const qs = embedTenantName === undefined ? '' : `?embedTenantName=${encodeURIComponent(embedTenantName)}`;
    return (await this.#get<{ users: EmbedUser[] }>(`/api/v1/embed/users${qs}`)).users;
  }

  async createEmbedUser(input: EmbedUserInput): Promise<EmbedUser> {
    return this.#call('POST', '/api/v1/embed/users', input);
  }

  async getEmbedUser(embedUserId: number): Promise<EmbedUser> {
    return this.#get(`/api/v1/embed/users/${embedUserId}`);
  }

  async updateEmbedUser(embedUserId: number, change: EmbedUserChange): Promise<EmbedUser> {
    return this.#call('PATCH', `/api/v1/embed/users/${embedUserId}`, change);
  }

  /** Deletes an embed user: their sessions are revoked, their comments stay without an author. */
  async deleteEmbedUser(embedUserId: number): Promise<void> {
    await this.#call('DELETE', `/api/v1/embed/users/${embedUserId}`);
  }

  // Issue 33, editor grants (admins).

  /** The grants on a workspace item, each to a user or a group with its role (`viewer` reads, `editor` also changes its dashboards). */
  async listItemGrants(deploymentId: number, itemId: number): Promise<ItemGrant[]> {
    return (await this.#call<{ grants: ItemGrant[] }>('GET', `/api/v1/deployments/${deploymentId}/workspace/${itemId}/grants`)).grants;
  }

  /** Replaces the item's grants, all of them, in one write; a grant without a role is a viewer's. */
  async replaceItemGrants(deploymentId: number, itemId: number, grants: ItemGrantInput[]): Promise<ItemGrant[]> {
    return (await this.#call<{ grants: ItemGrant[] }>('PUT', `/api/v1/deployments/${deploymentId}/workspace/${itemId}/grants`, { grants })).grants;
  }

  // Issue 34, the console.

  /** Who is calling: the user, their account, and how they are signed in (here always `api-key`). */
  async me(): Promise<Me> {
    return this.#call('GET', '/api/v1/me');
  }

  // Folders (the console's workspace).

  /** Makes a folder at the deployment's root, or in `parentId`; answers it as the workspace listing shows it. */
  async createFolder(deploymentId: number, input: { name: string; parentId?: number | null }): Promise<WorkspaceItem> {
    return this.#call('POST', `/api/v1/deployments/${deploymentId}/workspace/folders`, input);
  }

  /** Renames an item (`name`), or moves it with everything below it into another folder (`parentId`; null: the root). */
  async updateWorkspaceItem(deploymentId: number, itemId: number, change: { name?: string; parentId?: number | null }): Promise<WorkspaceItem> {
    return this.#call('PATCH', `/api/v1/deployments/${deploymentId}/workspace/${itemId}`, change);
  }

  /**
   * What the caller may do in `folderId` (absent: the root) and with `itemIds` (`workspacePermissions`): rename, move,
   * edit a workbook's dashboard, and its publicId (a draft's only for who may change it). Items out of reach are left out.
   */
  async workspacePermissions(deploymentId: number, query: { itemIds?: readonly number[]; folderId?: number } = {}): Promise<WorkspacePermissions> {
    const params = new URLSearchParams();
    for (const id of query.itemIds ?? []) params.append('itemId', String(id));
    if (query.folderId !== undefined) params.set('folderId', String(query.folderId));
    const qs = params.toString();
    return this.#get(`/api/v1/deployments/${deploymentId}/workspace/permissions${qs ? `?${qs}` : ''}`);
  }

  /** Each pre-aggregation's build status in a deployment (admins): built or not, when, rows, size, partitions, why due. */
  async listPreAggregations(deploymentId: number): Promise<PreAggregationStatus[]> {
    return (await this.#get<{ items: PreAggregationStatus[] }>(`/api/v1/deployments/${deploymentId}/pre-aggregations`)).items;
  }

  async #get<T>(path: string): Promise<T> {
    return this.#call('GET', path);
  }

  async #call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    return sendRequest(this.#fetch, `${this.#baseUrl}${path}`, `Bearer ${this.#apiKey}`, method, body, headers);
  }
}
