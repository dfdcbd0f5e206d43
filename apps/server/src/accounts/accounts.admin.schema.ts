import { Type } from 'typebox';
import type { Static } from 'typebox';
import { ErrorResponse, Id, Nullable } from '../core/core.schema.js';

// The admin API of an account's platform users, groups, API keys and settings (issue 33 part 4,
// docs/authoring.md "Users, groups and API keys", "Account settings").

const Role = Type.Union([Type.Literal('admin'), Type.Literal('member')], { description: 'admin: everything; member: the workspace, authoring of their own dashboards' });
const Email = Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$', description: 'Lowercased and trimmed; unique in the account' });
const Password = Type.String({ minLength: 12, maxLength: 1024, description: 'For the console sign-in; at least 12 characters; never shown again' });
const FirstName = Type.String({ minLength: 1, maxLength: 255 });

export const User = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  firstName: Nullable(Type.String()),
  role: Role,
  hasPassword: Type.Boolean({ description: 'Whether the user can sign in to the console' }),
  createdAt: Type.String({ format: 'date-time' }),
}, { title: 'User' });
export type User = Static<typeof User>;

export const UserList = Type.Object({ items: Type.Array(User) });

export const CreateUserBody = Type.Object({
  email: Email,
  firstName: Type.Optional(FirstName),
  role: Role,
  password: Type.Optional(Password),
}, { additionalProperties: false });
export type CreateUserBody = Static<typeof CreateUserBody>;

export const UpdateUserBody = Type.Object({
  email: Type.Optional(Email),
  firstName: Type.Optional(Nullable(FirstName)),
  role: Type.Optional(Role),
  password: Type.Optional(Nullable(Password)),
}, { additionalProperties: false, minProperties: 1 });
export type UpdateUserBody = Static<typeof UpdateUserBody>;

export const UserParams = Type.Object({ userId: Id });

export const ApiKey = Type.Object({
  id: Type.Integer(),
  name: Nullable(Type.String()),
  hint: Nullable(Type.String({ description: "The key's last four characters; null for keys made before svc kept them" })),
  createdAt: Type.String({ format: 'date-time' }),
}, { title: 'ApiKey' });
export type ApiKey = Static<typeof ApiKey>;

export const ApiKeyList = Type.Object({ items: Type.Array(ApiKey) });

export const NewApiKey = Type.Intersect([ApiKey, Type.Object({ key: Type.String({ description: 'The key itself: shown in this answer only, never again' }) })], { title: 'NewApiKey' });
export type NewApiKey = Static<typeof NewApiKey>;

export const CreateApiKeyBody = Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A label to recognise the key by' })) }, { additionalProperties: false });
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const ApiKeyParams = Type.Object({ userId: Id, keyId: Id });

export const AccountSettings = Type.Object({
  allowedEmbedOrigins: Type.Array(Type.String(), { description: 'Host origins allowed to frame the embed (exact origins)' }),
  allowEmbedComments: Type.Boolean({ description: 'Whether the embed shows its comment panel' }),
  timezone: Nullable(Type.String({ description: 'The default IANA time zone of embeds; null: the browser decides' })),
  locale: Nullable(Type.String({ description: 'The default BCP 47 locale of embeds; null: the browser decides' })),
}, { title: 'AccountSettings' });
export type AccountSettings = Static<typeof AccountSettings>;

export const UpdateAccountSettingsBody = Type.Object({
  allowedEmbedOrigins: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), { maxItems: 100 })),
  allowEmbedComments: Type.Optional(Type.Boolean()),
  timezone: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
  locale: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 35 }))),
}, { additionalProperties: false, minProperties: 1 });
export type UpdateAccountSettingsBody = Static<typeof UpdateAccountSettingsBody>;

export const adminErrorResponses = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse };
