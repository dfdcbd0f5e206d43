import { Type } from 'typebox';
import type { Static } from 'typebox';
import { Id } from '../core/core.schema.js';

/** The roles of a grant (migration 0015): `viewer` reads what it reaches; `editor` also changes its dashboards. */
export const GRANT_ROLES = ['viewer', 'editor'] as const;

const Role = Type.Enum(GRANT_ROLES, { description: 'viewer reads the item and everything below it; editor also changes the dashboards below it and creates dashboards in the folder' });

/** One grant as the API answers it: to a user or to a group, with its role. */
export const ItemGrant = Type.Object({
  userId: Type.Optional(Type.Integer({ description: 'The platform user granted (or groupId)' })),
  groupId: Type.Optional(Type.Integer({ description: 'The group granted (or userId)' })),
  role: Role,
}, { title: 'ItemGrant' });
export type ItemGrant = Static<typeof ItemGrant>;

/** One grant as an admin sends it: exactly one of userId and groupId (the service names the grant that has not). */
export const ItemGrantInput = Type.Object({
  userId: Type.Optional(Id),
  groupId: Type.Optional(Id),
  role: Type.Optional(Type.Enum(GRANT_ROLES, { description: 'viewer (the default) or editor' })),
}, { additionalProperties: false, title: 'ItemGrantInput' });
export type ItemGrantInput = Static<typeof ItemGrantInput>;

export const ItemGrants = Type.Object({ grants: Type.Array(ItemGrant) }, { title: 'ItemGrants' });

export const ItemGrantsBody = Type.Object({
  grants: Type.Array(ItemGrantInput, { maxItems: 200, description: "The item's grants, all of them: those not listed are removed" }),
}, { additionalProperties: false, title: 'ItemGrantsInput' });
