import { call } from '../api.js';

/**
 * The admin API's calls the embedding settings page makes (docs/authoring.md "Account settings", "Embed tenants and
 * users", "Users, groups and API keys"; docs/webhooks.md): all of them admins only, each answered for the signed-in
 * user's account alone.
 */

export interface AccountSettings { allowedEmbedOrigins: string[]; allowEmbedComments: boolean; timezone: string | null; locale: string | null }

export interface EmbedTenant { id: number; name: string; userCount: number; createdAt: string }

export interface EmbedUser { id: number; externalId: string; embedTenantName: string; username: string; email: string | null; createdAt: string }

export interface ApiKey { id: number; name: string | null; hint: string | null; createdAt: string }

export const WEBHOOK_EVENTS = ['comment.created', 'comment.edited', 'comment.deleted', 'thread.resolved', 'thread.reopened', 'embed_session.revoked'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface WebhookEndpoint {
  id: number; url: string; description: string | null; eventTypes: WebhookEvent[]; enabled: boolean; disabledReason: string | null; createdAt: string;
}

export interface WebhookDelivery {
  id: number; eventId: string; eventType: WebhookEvent; status: 'pending' | 'delivered' | 'failed'; attempts: number; createdAt: string;
  attemptLog: Array<{ attempt: number; attemptedAt: string; statusCode: number | null; error: string | null }>;
}

const json = encodeURIComponent;

export const getSettings = () => call<AccountSettings>('GET', '/api/v1/account/settings');
export const updateSettings = (change: Partial<AccountSettings>) => call<AccountSettings>('PATCH', '/api/v1/account/settings', change);

export const listTenants = () => call<{ items: EmbedTenant[] }>('GET', '/api/v1/embed/tenants');
export const createTenant = (name: string) => call<EmbedTenant>('POST', '/api/v1/embed/tenants', { name });
export const renameTenant = (id: number, name: string) => call<EmbedTenant>('PATCH', `/api/v1/embed/tenants/${id}`, { name });
export const deleteTenant = (id: number) => call<void>('DELETE', `/api/v1/embed/tenants/${id}`);
export const listTenantUsers = (name: string) => call<{ users: EmbedUser[] }>('GET', `/api/v1/embed/users?embedTenantName=${json(name)}`);

export const listApiKeys = (userId: number) => call<{ items: ApiKey[] }>('GET', `/api/v1/users/${userId}/api-keys`);
export const createApiKey = (userId: number, name: string) => call<ApiKey & { key: string }>('POST', `/api/v1/users/${userId}/api-keys`, { name });
export const deleteApiKey = (userId: number, keyId: number) => call<void>('DELETE', `/api/v1/users/${userId}/api-keys/${keyId}`);

const endpoints = '/api/v1/webhooks/endpoints';
export const listEndpoints = () => call<{ items: WebhookEndpoint[] }>('GET', endpoints);
export const createEndpoint = (input: { url: string; eventTypes: WebhookEvent[]; description?: string }) =>
  call<WebhookEndpoint & { secret: string }>('POST', endpoints, input);
export const deleteEndpoint = (id: number) => call<void>('DELETE', `${endpoints}/${id}`);
export const listDeliveries = (id: number) => call<{ items: WebhookDelivery[] }>('GET', `${endpoints}/${id}/deliveries?first=20`);
export const replayDelivery = (endpointId: number, deliveryId: number) =>
  call<WebhookDelivery>('POST', `${endpoints}/${endpointId}/deliveries/${deliveryId}/replay`);
