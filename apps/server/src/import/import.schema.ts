import { deploymentSchema, itemSchema, policyFilterSchema, ref } from './import.deployment-schema.js';
import type { ImportDeployment } from './import.deployment-schema.js';

/** An account's tenantName and an embed tenant's name: 2 to 36 of a-z, 0-9 and '-', starting with a letter, not ending with '-'. */
export const TENANT_NAME_PATTERN = '^[a-z][a-z0-9-]{0,34}[a-z0-9]$';

/**
 * JSON Schema of the import file (DESIGN.md "The import file"): accounts with their users, groups, embed tenants
 * and deployments (what a deployment holds is in `import.deployment-schema.ts`). Plain JSON Schema rather than
 * TypeBox because the item tree is recursive. Unknown keys are rejected so that a typo names its path instead of
 * being ignored.
 */
export const importFileSchema = {
  $id: 'svc-import-file',
  type: 'object',
  additionalProperties: false,
  required: ['accounts'],
  definitions: { item: itemSchema, policyFilter: policyFilterSchema },
  properties: {
    accounts: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'tenantName'],
        properties: {
          ref,
          name: { type: 'string', minLength: 1, maxLength: 200 },
          tenantName: { type: 'string', pattern: TENANT_NAME_PATTERN },
          settings: {
            type: 'object',
            properties: {
              allowEmbedComments: { type: 'boolean' },
              allowPrivateWebhookUrls: { type: 'boolean' },
              allowedEmbedOrigins: { type: 'array', maxItems: 100, items: { type: 'string', pattern: '^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$' } },
              timezone: { type: 'string', minLength: 1, maxLength: 64 },
              locale: { type: 'string', minLength: 1, maxLength: 35 },
            },
          },
          users: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['email', 'role'],
              properties: {
                ref,
                email: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 320 },
                firstName: { type: ['string', 'null'], maxLength: 200 },
                picture: { type: ['string', 'null'], maxLength: 2000 },
                role: { enum: ['admin', 'member'] },
                password: { type: 'string', minLength: 8, maxLength: 200 },
                apiKeys: { type: 'array', items: { type: 'string', pattern: '^svc_[A-Za-z0-9_]{8,200}$' } },
              },
            },
          },
          groups: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name'],
              properties: { ref, name: { type: 'string', minLength: 1, maxLength: 200 }, members: { type: 'array', items: ref } },
            },
          },
          deployments: { type: 'array', items: deploymentSchema },
          embedTenants: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name'],
              properties: {
                name: { type: 'string', pattern: TENANT_NAME_PATTERN },
                users: {
                  type: 'array',
                  items: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['externalId'],
                    properties: {
                      ref,
                      externalId: { type: 'string', minLength: 1, maxLength: 255 },
                      username: { type: 'string', minLength: 1, maxLength: 255 },
                      email: { type: ['string', 'null'], maxLength: 320 },
                      firstName: { type: ['string', 'null'], maxLength: 200 },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

/** A platform user; `password` is for the console, `apiKeys` are plain keys, stored as digests. */
export interface ImportUser {
  ref?: string;
  email: string;
  firstName?: string | null;
  picture?: string | null;
  role: 'admin' | 'member';
  password?: string;
  apiKeys?: string[];
}

/** A group; `members` are refs of users of the same account. */
export interface ImportGroup {
  ref?: string;
  name: string;
  members?: string[];
}

export interface ImportEmbedUser {
  ref?: string;
  externalId: string;
  username?: string;
  email?: string | null;
  firstName?: string | null;
}

export interface ImportEmbedTenant {
  name: string;
  users?: ImportEmbedUser[];
}

export interface ImportAccount {
  ref?: string;
  name: string;
  tenantName: string;
  settings?: Record<string, unknown>;
  users?: ImportUser[];
  groups?: ImportGroup[];
  deployments?: ImportDeployment[];
  embedTenants?: ImportEmbedTenant[];
}

export interface ImportFile {
  accounts: ImportAccount[];
}
