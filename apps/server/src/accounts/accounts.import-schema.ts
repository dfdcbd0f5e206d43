import type { DataSourceConfig, SemanticView } from '../data/data.model.js';

/**
 * JSON Schema of the import file (DESIGN.md "The import file"). Plain JSON Schema rather than TypeBox because
 * the item tree is recursive. Unknown keys are rejected so that a typo names its path instead of being ignored.
 */
const ref = { type: 'string', minLength: 1, maxLength: 200 } as const;
const timestamp = { type: 'string', minLength: 10, maxLength: 40 } as const;
const jsonObject = { type: 'object' } as const;
const optionalText = { type: ['string', 'null'], maxLength: 10000 } as const;
export const TENANT_NAME_PATTERN = '^[a-z][a-z0-9-]{0,34}[a-z0-9]$';

/** Integers that land in 32-bit columns. */
const int32 = { type: 'integer', minimum: 1, maximum: 2147483647 } as const;

const identifier = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}$' } as const;
const memberName = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}\\.[A-Za-z_][A-Za-z0-9_]{0,62}$' } as const;
const memberSource = { column: identifier, sql: { type: 'string', minLength: 1, maxLength: 10000 }, title: { type: 'string', maxLength: 200 } } as const;

/** A deployment's data source (issue 7): the bundled demo warehouse, a SQLite file, or a PostgreSQL URL. */
const dataSource = {
  oneOf: [
    { type: 'object', additionalProperties: false, required: ['type'], properties: { type: { const: 'demo' } } },
    { type: 'object', additionalProperties: false, required: ['type', 'path'], properties: { type: { const: 'sqlite' }, path: { type: 'string', minLength: 1, maxLength: 4096 } } },
    {
      type: 'object', additionalProperties: false, required: ['type', 'url'],
      properties: { type: { const: 'postgres' }, url: { type: 'string', pattern: '^postgres(ql)?://', maxLength: 4096 }, schema: identifier },
    },
  ],
} as const;

/** Semantic views: the dimensions and measures a deployment's queries may use. */
const semanticView = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'dimensions', 'measures'],
  properties: {
    name: identifier,
    title: { type: 'string', maxLength: 200 },
    table: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?$' },
    sql: { type: 'string', minLength: 1, maxLength: 100000 },
    joins: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['view', 'foreignKey'], properties: { view: identifier, foreignKey: identifier, primaryKey: identifier } },
    },
    dimensions: {
      type: 'array', maxItems: 500,
      items: {
        type: 'object', additionalProperties: false, required: ['name', 'type'],
        properties: { name: identifier, type: { enum: ['string', 'number', 'time', 'boolean'] }, primaryKey: { type: 'boolean' }, ...memberSource },
      },
    },
    measures: {
      type: 'array', maxItems: 500,
      items: {
        type: 'object', additionalProperties: false, required: ['name', 'type'],
        properties: {
          name: identifier, type: { enum: ['count', 'sum', 'avg', 'min', 'max', 'count_distinct'] }, ...memberSource,
          format: {
            type: 'object', additionalProperties: false, required: ['type'],
            properties: { type: { enum: ['currency', 'percent', 'number'] }, decimalPlaces: { type: ['integer', 'null'], minimum: 0, maximum: 10 } },
          },
        },
      },
    },
    drillMembers: { type: 'array', items: memberName },
  },
} as const;

const reportSnapshot = {
  type: 'object',
  additionalProperties: false,
  required: ['report'],
  properties: {
    report: ref,
    versionNumber: int32,
    name: optionalText,
    title: optionalText,
    description: optionalText,
    kind: { enum: ['vega', 'table', 'kpi', 'html', 'map', 'sankey', null] },
    isSourceReport: { type: ['boolean', 'null'] },
    meta: { type: ['object', 'null'] },
    spec: { type: ['string', 'object', 'null'] },
    sqlQuery: { type: ['string', 'null'] },
    pythonCode: { type: ['string', 'null'] },
    fillMissingRows: {
      type: ['object', 'null'],
      required: ['member'],
      properties: { member: { type: 'string' }, excludedDimensions: { type: ['array', 'null'], items: { type: 'string' } } },
    },
    periodComparisons: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        required: ['measure', 'timeDimension', 'offset'],
        properties: {
          measure: { type: 'string' },
          timeDimension: { type: 'string' },
          offset: {
            type: 'object',
            required: ['amount', 'unit'],
            properties: { amount: { type: 'integer', minimum: -2147483648, maximum: 2147483647 }, unit: { type: 'string' } },
          },
          outputs: { type: ['array', 'null'], items: { type: 'string' } },
        },
      },
    },
    preferences: { type: ['object', 'null'] },
  },
} as const;

const dashboard = {
  type: 'object',
  additionalProperties: false,
  required: ['publicId'],
  properties: {
    publicId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    status: { enum: ['draft', 'published', 'archived'] },
    allowEmbed: { type: 'boolean' },
    title: optionalText,
    description: optionalText,
    config: jsonObject,
    draftConfig: jsonObject,
    versionNumber: int32,
    fromSharedWorkspace: { type: ['boolean', 'null'] },
    restrictDataDownload: { type: ['boolean', 'null'] },
    useBoardDashboards: { type: ['boolean', 'null'] },
    reportSnapshots: { type: 'array', items: reportSnapshot },
  },
} as const;

const grant = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  properties: { group: ref, user: ref },
} as const;

export const importFileSchema = {
  $id: 'svc-import-file',
  type: 'object',
  additionalProperties: false,
  required: ['accounts'],
  definitions: {
    item: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'name'],
      properties: {
        ref,
        type: { enum: ['FOLDER', 'WORKBOOK', 'REPORT'] },
        name: { type: 'string', minLength: 1, maxLength: 255 },
        createdBy: ref,
        createdAt: timestamp,
        updatedAt: timestamp,
        meta: jsonObject,
        calculatedFields: jsonObject,
        slug: { type: ['string', 'null'], maxLength: 255 },
        grants: { type: 'array', items: grant },
        children: { type: 'array', items: { $ref: '#/definitions/item' } },
        dashboard,
      },
    },
  },
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
          deployments: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name'],
              properties: {
                ref,
                name: { type: 'string', minLength: 1, maxLength: 200 },
                dataSource,
                semanticViews: { type: 'array', maxItems: 200, items: semanticView },
                items: { type: 'array', items: { $ref: '#/definitions/item' } },
                views: {
                  type: 'array',
                  items: {
                    type: 'object',
                    additionalProperties: false,
                    required: ['user', 'item', 'at'],
                    properties: { user: ref, item: ref, at: timestamp },
                  },
                },
                favorites: {
                  type: 'array',
                  items: { type: 'object', additionalProperties: false, required: ['user', 'item'], properties: { user: ref, item: ref } },
                },
              },
            },
          },
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

export interface ImportReportSnapshot {
  /** The ref of a REPORT of the same deployment (a numeric id could not name an item of a new account). */
  report: string;
  versionNumber?: number;
  name?: string | null;
  title?: string | null;
  description?: string | null;
  kind?: string | null;
  isSourceReport?: boolean | null;
  meta?: Record<string, unknown> | null;
  spec?: string | Record<string, unknown> | null;
  sqlQuery?: string | null;
  pythonCode?: string | null;
  fillMissingRows?: Record<string, unknown> | null;
  periodComparisons?: unknown[] | null;
  preferences?: Record<string, unknown> | null;
}

export interface ImportDashboard {
  publicId: string;
  status?: 'draft' | 'published' | 'archived';
  allowEmbed?: boolean;
  title?: string | null;
  description?: string | null;
  config?: Record<string, unknown>;
  draftConfig?: Record<string, unknown>;
  versionNumber?: number;
  fromSharedWorkspace?: boolean | null;
  restrictDataDownload?: boolean | null;
  useBoardDashboards?: boolean | null;
  reportSnapshots?: ImportReportSnapshot[];
}

export interface ImportItem {
  ref?: string;
  type: 'FOLDER' | 'WORKBOOK' | 'REPORT';
  name: string;
  createdBy?: string;
  createdAt?: string;
  updatedAt?: string;
  meta?: Record<string, unknown>;
  calculatedFields?: Record<string, unknown>;
  slug?: string | null;
  grants?: Array<{ group?: string; user?: string }>;
  children?: ImportItem[];
  dashboard?: ImportDashboard;
}

export interface ImportAccount {
  ref?: string;
  name: string;
  tenantName: string;
  settings?: Record<string, unknown>;
  users?: Array<{
    ref?: string;
    email: string;
    firstName?: string | null;
    picture?: string | null;
    role: 'admin' | 'member';
    password?: string;
    apiKeys?: string[];
  }>;
  groups?: Array<{ ref?: string; name: string; members?: string[] }>;
  deployments?: Array<{
    ref?: string;
    name: string;
    dataSource?: DataSourceConfig;
    semanticViews?: SemanticView[];
    items?: ImportItem[];
    views?: Array<{ user: string; item: string; at: string }>;
    favorites?: Array<{ user: string; item: string }>;
  }>;
  embedTenants?: Array<{
    name: string;
    users?: Array<{ ref?: string; externalId: string; username?: string; email?: string | null; firstName?: string | null }>;
  }>;
}

export interface ImportFile {
  accounts: ImportAccount[];
}
