import { Type } from 'typebox';
import type { Static } from 'typebox';
import { Id, Nullable } from '../core/core.schema.js';
import { EMBED_TENANT_NAME_PATTERN } from './sessions.schema.js';

// The admin API of embed tenants and single embed users (issue 33 part 4, docs/authoring.md "Embed tenants and users").

const TenantName = Type.String({ pattern: EMBED_TENANT_NAME_PATTERN, description: 'The name Generate Session takes as embedTenantName' });

export const EmbedTenant = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  userCount: Type.Integer({ description: 'How many embed users the tenant has' }),
  createdAt: Type.String({ format: 'date-time' }),
}, { title: 'EmbedTenant' });
export type EmbedTenant = Static<typeof EmbedTenant>;

export const EmbedTenantList = Type.Object({ items: Type.Array(EmbedTenant) });
export const EmbedTenantParams = Type.Object({ tenantId: Id });
export const CreateEmbedTenantBody = Type.Object({ name: TenantName }, { additionalProperties: false });
export const UpdateEmbedTenantBody = Type.Object({ name: TenantName }, { additionalProperties: false });

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const Groups = Type.Array(Text(255), { maxItems: 100, description: "What access policies read as the viewer's groups" });
const Attributes = Type.Object({}, { additionalProperties: true, description: 'What access policies read as {userAttributes.<key>}' });

export const CreateEmbedUserBody = Type.Object({
  embedTenantName: TenantName,
  externalId: Type.String({ minLength: 1, maxLength: 255, description: 'The viewer in your product; lowercased and trimmed; unique in the tenant' }),
  username: Type.Optional(Text(255)),
  email: Type.Optional(Type.String({ maxLength: 320 })),
  firstName: Type.Optional(Type.String({ maxLength: 255 })),
  groups: Type.Optional(Groups),
  userAttributes: Type.Optional(Attributes),
}, { additionalProperties: false });
export type CreateEmbedUserBody = Static<typeof CreateEmbedUserBody>;

export const UpdateEmbedUserBody = Type.Object({
  username: Type.Optional(Text(255)),
  email: Type.Optional(Nullable(Type.String({ maxLength: 320 }))),
  firstName: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  groups: Type.Optional(Groups),
  userAttributes: Type.Optional(Attributes),
}, { additionalProperties: false, minProperties: 1 });
export type UpdateEmbedUserBody = Static<typeof UpdateEmbedUserBody>;
