import { Type } from 'typebox';
import type { Static } from 'typebox';
import { Id } from '../core/core.schema.js';

// The admin API of an account's groups of platform users (issue 33 part 4, docs/authoring.md "Users, groups and
// API keys"): the groups item grants name.

export const Group = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  memberIds: Type.Array(Type.Integer(), { description: 'The platform users in the group' }),
}, { title: 'Group' });
export type Group = Static<typeof Group>;

export const GroupList = Type.Object({ items: Type.Array(Group) });

const GroupName = Type.String({ minLength: 1, maxLength: 255, description: 'Unique in the account' });
const MemberIds = Type.Array(Id, { maxItems: 10_000, uniqueItems: true, description: 'Platform users of the account; replaces the membership' });

export const CreateGroupBody = Type.Object({ name: GroupName, memberIds: Type.Optional(MemberIds) }, { additionalProperties: false });
export type CreateGroupBody = Static<typeof CreateGroupBody>;

export const UpdateGroupBody = Type.Object({ name: Type.Optional(GroupName), memberIds: Type.Optional(MemberIds) }, { additionalProperties: false, minProperties: 1 });
export type UpdateGroupBody = Static<typeof UpdateGroupBody>;

export const GroupParams = Type.Object({ groupId: Id });

