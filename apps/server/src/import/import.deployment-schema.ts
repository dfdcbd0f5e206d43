import type { DataSourceConfig, SemanticView } from '../data/semantic/semantic.model.js';
import { FILTER_OPERATORS } from '../data/semantic/semantic.query.js';
import { GRANULARITIES } from '../data/semantic/semantic.model.js';

// JSON Schema of what one deployment of the import file holds (DESIGN.md "The import file"): its data source,
// semantic views, item tree with grants and dashboards, views and favourites. `import.schema.ts` puts it into the
// whole file. Plain JSON Schema rather than TypeBox because the item tree is recursive. Unknown keys are rejected
// so that a typo names its path instead of being ignored.

/** The file's own name for a row, so that other entries can point at it before it has an id. */
export const ref = { type: 'string', minLength: 1, maxLength: 200 } as const;
const timestamp = { type: 'string', minLength: 10, maxLength: 40 } as const;
const jsonObject = { type: 'object' } as const;
const optionalText = { type: ['string', 'null'], maxLength: 10000 } as const;

/** Integers that land in 32-bit columns. */
const int32 = { type: 'integer', minimum: 1, maximum: 2147483647 } as const;

const identifier = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}$' } as const;
const memberName = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}\\.[A-Za-z_][A-Za-z0-9_]{0,62}$' } as const;
const memberSource = { column: identifier, sql: { type: 'string', minLength: 1, maxLength: 10000 }, title: { type: 'string', maxLength: 200 } } as const;

/**
 * When the data source's cached answers go stale (cache.results.ts): every interval, or when an SQL query's value
 * changes (asked at most once per `every`, default 10 seconds).
 */
const refreshKey = {
  type: 'object', additionalProperties: false, minProperties: 1,
  properties: {
    every: { type: 'string', pattern: '^[1-9][0-9]{0,5} (second|minute|hour|day|week)s?$' },
    sql: { type: 'string', minLength: 1, maxLength: 10000, pattern: '^\\s*([Ss][Ee][Ll][Ee][Cc][Tt]|[Ww][Ii][Tt][Hh])\\s' },
  },
} as const;

const filePath = { type: 'string', minLength: 1, maxLength: 4096 } as const;

/** Issue 35 explore: viewers' explore queries that no pre-aggregation answers are refused (docs/explore.md "Limits"). */
const exploreRequiresRollup = { type: 'boolean' } as const;

/** The forms of a deployment's data source, by `type`: the fields each takes besides it. */
const dataSourceForms = {
  demo: { properties: {} },
  sqlite: { required: ['path'], properties: { path: filePath } },
  postgres: { required: ['url'], properties: { url: { type: 'string', pattern: '^postgres(ql)?://', maxLength: 4096 }, schema: identifier } },
  // Issue 21. At least one of path and files, and the files' table names and extensions: warehouse.duckdb.ts
  // `duckDbSourceProblem`, so that the import can say which.
  duckdb: { properties: { path: filePath, files: { type: 'object', maxProperties: 500, additionalProperties: filePath } } },
} as const;

/**
 * A deployment's data source (issue 7): the bundled demo warehouse, a SQLite file, a PostgreSQL URL or DuckDB
 * (issue 21). `type` picks the form (`if`/`then`, not `oneOf`), so an error names the field of that form.
 */
const dataSource = {
  type: 'object',
  required: ['type'],
  properties: { type: { enum: Object.keys(dataSourceForms) } },
  allOf: Object.entries(dataSourceForms).map(([type, form]) => ({
    if: { required: ['type'], properties: { type: { const: type } } },
    then: { ...form, additionalProperties: false, properties: { type: { const: type }, ...form.properties, refreshKey, exploreRequiresRollup } },
  })),
} as const;

/** A member of a view's access policy: `view.member`, or a bare member name of the policy's own view. */
const policyMember = { type: 'string', pattern: '^([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,62}$' } as const;
const groupName = { type: 'string', minLength: 1, maxLength: 255 } as const;

/**
 * A row filter of an access policy, in the query format: a member filter, or an `and` / `or` group of them
 * (`#/definitions/policyFilter` of the whole file's schema). `if` picks the form, so an error names the right one.
 */
export const policyFilterSchema = {
  if: { type: 'object', required: ['and'] },
  then: { type: 'object', additionalProperties: false, required: ['and'], properties: { and: { type: 'array', minItems: 1, maxItems: 100, items: { $ref: '#/definitions/policyFilter' } } } },
  else: {
    if: { type: 'object', required: ['or'] },
    then: { type: 'object', additionalProperties: false, required: ['or'], properties: { or: { type: 'array', minItems: 1, maxItems: 100, items: { $ref: '#/definitions/policyFilter' } } } },
    else: {
      type: 'object', additionalProperties: false, required: ['member', 'operator'],
      properties: {
        member: policyMember,
        operator: { enum: [...FILTER_OPERATORS] },
        values: { type: 'array', maxItems: 1000, items: { type: ['string', 'number', 'boolean'], maxLength: 1000 } },
      },
    },
  },
} as const;

/** Issue 20: one access policy of a view (Cube's `access_policy` shape; policy.access.ts). */
const accessPolicy = {
  type: 'object',
  additionalProperties: false,
  properties: {
    group: groupName,
    groups: { type: 'array', minItems: 1, maxItems: 100, items: groupName },
    memberLevel: {
      type: 'object', additionalProperties: false,
      properties: {
        includes: { oneOf: [{ const: '*' }, { type: 'array', maxItems: 1000, items: policyMember }] },
        excludes: { type: 'array', maxItems: 1000, items: policyMember },
      },
    },
    rowLevel: {
      type: 'object', additionalProperties: false,
      properties: { allowAll: { type: 'boolean' }, filters: { type: 'array', minItems: 1, maxItems: 100, items: { $ref: '#/definitions/policyFilter' } } },
    },
  },
} as const;

/** Issue 21: a pre-aggregation of a view (preagg.definitions.ts): its members, time bucket, partitions and refresh. */
const interval = { type: 'string', pattern: '^[1-9][0-9]{0,5} (second|minute|hour|day|week)s?$' } as const;
const preAggregation = {
  type: 'object', additionalProperties: false, required: ['name', 'measures'],
  properties: {
    name: identifier,
    measures: { type: 'array', maxItems: 100, items: memberName },
    dimensions: { type: 'array', maxItems: 50, items: memberName },
    timeDimension: memberName,
    granularity: { enum: [...GRANULARITIES] },
    partitionGranularity: { enum: ['month', 'quarter', 'year'] },
    refresh: {
      type: 'object', additionalProperties: false,
      properties: { ...refreshKey.properties, incremental: { type: 'boolean' }, updateWindow: interval },
    },
    timezones: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 64 } },
    additive: { type: 'boolean' },
  },
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
        properties: {
          name: identifier, type: { enum: ['string', 'number', 'time', 'boolean'] }, primaryKey: { type: 'boolean' }, ...memberSource,
          // How a table shows its values (a drill-down's amount as currency); the same shape as a measure's.
          format: {
            type: 'object', additionalProperties: false, required: ['type'],
            properties: { type: { enum: ['currency', 'percent', 'number'] }, decimalPlaces: { type: ['integer', 'null'], minimum: 0, maximum: 10 } },
          },
        },
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
    accessPolicy: { type: 'array', maxItems: 100, items: accessPolicy },
    preAggregations: { type: 'array', maxItems: 50, items: preAggregation },
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

/**
 * A grant to a group or a user (exactly one of the two: `not` both, `anyOf` one, so either mistake is refused at the
 * grant's own path), with its role: `viewer` (the default) reads, `editor` also changes the dashboards below it.
 */
const grant = {
  type: 'object',
  additionalProperties: false,
  properties: { group: ref, user: ref, role: { enum: ['viewer', 'editor'] } },
  not: { required: ['group', 'user'] },
  anyOf: [{ required: ['group'] }, { required: ['user'] }],
} as const;

/**
 * One workspace item and, for a folder, its children. The tree is recursive: the whole file's schema holds this
 * as `definitions.item`, and `#/definitions/item` names it there.
 */
export const itemSchema = {
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
} as const;

/**
 * A deployment's model, as the authoring API replaces it (`PUT /api/v1/deployments/{id}/model`): the same semantic
 * views and data source as a deployment of the file, checked by the same schema.
 */
export const modelSchema = {
  $id: 'svc-model',
  type: 'object',
  additionalProperties: false,
  required: ['semanticViews'],
  definitions: { policyFilter: policyFilterSchema },
  properties: {
    semanticViews: { type: 'array', maxItems: 200, items: semanticView },
    dataSource,
  },
} as const;

/** One deployment of an account; its items are `#/definitions/item` of the whole file's schema. */
export const deploymentSchema = {
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

/** Exactly one of the two: the ref of a group or of a user of the same account; and its role (default viewer). */
export interface ImportGrant {
  group?: string;
  user?: string;
  role?: 'viewer' | 'editor';
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
  grants?: ImportGrant[];
  children?: ImportItem[];
  dashboard?: ImportDashboard;
}

/** A user's last view of an item (`at`, ISO 8601), and a user's favourite: refs of the same account and deployment. */
export interface ImportView {
  user: string;
  item: string;
  at: string;
}

export interface ImportFavorite {
  user: string;
  item: string;
}

export interface ImportDeployment {
  ref?: string;
  name: string;
  dataSource?: DataSourceConfig;
  semanticViews?: SemanticView[];
  items?: ImportItem[];
  views?: ImportView[];
  favorites?: ImportFavorite[];
}
