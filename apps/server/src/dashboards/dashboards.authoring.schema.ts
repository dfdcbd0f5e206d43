import { Type } from 'typebox';
import { Described, Id, Nullable } from '../core/core.schema.js';
import { Dashboard, DashboardConfig, ReportSnapshot } from '../workspace/workspace.dashboard-schema.js';

// The authoring API's dashboard schemas (docs/authoring.md "Dashboards"): request bodies and answers, also the
// OpenAPI document. dashboards.authoring.routes.ts wires them to the service.

const SnapshotInput = Type.Object({
  ...Type.Omit(ReportSnapshot, ['id', 'reportId', 'versionNumber']).properties,
  reportId: Type.Optional(Nullable(Id)),
}, { additionalProperties: false, title: 'ReportSnapshotInput', description: "A chart's report snapshot; without reportId, publishing makes a REPORT item for it beside the workbook" });

const draftFields = {
  title: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  allowEmbed: Type.Optional(Type.Boolean({ description: 'Whether embeds may show it once published (default true)' })),
  config: DashboardConfig,
  reportSnapshots: Type.Optional(Type.Array(SnapshotInput, { maxItems: 500 })),
};

export const DraftBody = Type.Object(draftFields, { additionalProperties: false, title: 'DashboardDraftInput' });

export const CreateBody = Type.Object({
  ...draftFields,
  config: Type.Optional(Described(DashboardConfig, 'Required, unless copyOf is given')),
  title: Type.String({ minLength: 1, maxLength: 255, description: 'The title, also the workbook item\'s name' }),
  publicId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Default: one svc makes' })),
  folderId: Type.Optional(Id),
  copyOf: Type.Optional(Type.String({
    minLength: 1, maxLength: 200,
    description: "The publicId of a dashboard to copy (same deployment): its draft when the caller may change it and it has one, else its published version. Leave config and reportSnapshots out",
  })),
}, { additionalProperties: false, title: 'DashboardCreateInput' });

const Draft = Type.Object({
  title: Nullable(Type.String()), description: Nullable(Type.String()), allowEmbed: Type.Boolean(), config: DashboardConfig,
  reportSnapshots: Type.Array(Type.Object({}, { additionalProperties: true })),
}, { title: 'DashboardDraft' });

export const AuthoredDashboard = Type.Object({
  publicId: Type.String(),
  deploymentId: Type.Integer(),
  workbookId: Type.Integer(),
  status: Type.Enum(['draft', 'published', 'archived']),
  createdBy: Nullable(Type.Integer()),
  published: Described(Nullable(Dashboard), 'The version viewers see, or null before the first publish'),
  draft: Described(Nullable(Draft), 'The draft, or null when nothing changed since the last publish'),
  draftRevision: Type.Integer({ description: 'The draft\'s ETag is "draft-<draftRevision>"' }),
  canEdit: Type.Boolean({ description: 'Whether the caller may change it (its draft, publish, restore, archive)' }),
}, { title: 'AuthoredDashboard' });

const DashboardVersion = Type.Object({
  versionNumber: Type.Integer(), title: Nullable(Type.String()), publishedAt: Type.String({ format: 'date-time' }), publishedBy: Nullable(Type.Integer()), current: Type.Boolean(),
}, { title: 'DashboardVersion' });

export const PublicIdParams = Type.Object({ publicId: Type.String({ minLength: 1, maxLength: 200 }) });
export const IfMatch = Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 200, description: 'The draft\'s ETag, "draft-<revision>"' })) });

export const DashboardVersionList = Type.Object({ items: Type.Array(DashboardVersion) });

export const DeploymentParams = Type.Object({ deploymentId: Id });

export const VersionParams = Type.Object({ publicId: PublicIdParams.properties.publicId, versionNumber: Id });
