import { Type } from 'typebox';
import type { Static } from 'typebox';
import { Described, Id, Nullable } from '../core/core.schema.js';

// Folders and items through the authoring API (issue 34, the console; docs/authoring.md "Folders"): the bodies of
// creating a folder and of renaming or moving an item. The answer is the item as the listing shows it.

/** The longest item name: the import file's (import.deployment-schema.ts `itemSchema`). */
export const MAX_ITEM_NAME_LENGTH = 255;

const ItemName = Type.String({ minLength: 1, maxLength: MAX_ITEM_NAME_LENGTH, description: 'Trimmed; not empty once trimmed' });

export const CreateFolderBody = Type.Object({
  name: ItemName,
  parentId: Type.Optional(Described(Nullable(Id), 'The folder to make it in (a FOLDER of the deployment); absent or null: the root')),
}, { additionalProperties: false, title: 'FolderCreateInput' });
export type CreateFolderBody = Static<typeof CreateFolderBody>;

export const UpdateItemBody = Type.Object({
  name: Type.Optional(ItemName),
  parentId: Type.Optional(Described(Nullable(Id), 'Move it (with everything below it) into this folder (a FOLDER of the deployment); null: to the root')),
}, { additionalProperties: false, minProperties: 1, title: 'WorkspaceItemUpdateInput' });
export type UpdateItemBody = Static<typeof UpdateItemBody>;
