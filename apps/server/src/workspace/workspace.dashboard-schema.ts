import { Type } from 'typebox';
import type { Static, TSchema } from 'typebox';
import { Nullable } from '../core/core.schema.js';

// SPEC A's Dashboard, with its config and report snapshots: what a workbook of the listing carries, and what
// GET /dashboard/{publicId} answers (dashboards/, which imports this room for its read check's grants).

const AnyObject = Type.Object({}, { additionalProperties: true });
const BreakpointKeys = ['lg', 'md', 'sm', 'xs', 'xxs'] as const;

function perBreakpoint<T extends TSchema>(schema: T) {
  return Type.Object(
    Object.fromEntries(BreakpointKeys.map((key) => [key, Type.Optional(Nullable(schema))])) as Record<
      (typeof BreakpointKeys)[number],
      ReturnType<typeof Type.Optional<ReturnType<typeof Nullable<T>>>>
    >,
  );
}

export const DashboardWidgetPosition = Type.Object(
  { x: Type.Integer(), y: Type.Integer(), w: Type.Integer(), h: Type.Integer() },
  { title: 'DashboardWidgetPosition' },
);

export const DashboardWidget = Type.Object(
  {
    id: Type.String(),
    type: Type.Enum(['CHART', 'TEXT', 'FILTER', 'AI', 'TIME_GRAIN', 'FIELD', 'PARENT', 'SPACER', 'DIVIDER', 'CONTAINER']),
    position: DashboardWidgetPosition,
    config: Type.Optional(Nullable(AnyObject)),
    style: Type.Optional(Nullable(AnyObject)),
    responsiveLayouts: Type.Optional(Nullable(perBreakpoint(DashboardWidgetPosition))),
  },
  { title: 'DashboardWidget' },
);

export const DashboardLayout = Type.Object(
  {
    breakpoints: Type.Optional(perBreakpoint(Type.Integer())),
    cols: Type.Optional(perBreakpoint(Type.Integer())),
    containerPadding: Type.Optional(Nullable(Type.Array(Type.Integer()))),
    margin: Type.Optional(Nullable(Type.Array(Type.Integer()))),
    rowHeight: Type.Optional(Nullable(Type.Integer())),
  },
  { title: 'DashboardLayout' },
);

export const DashboardAppSource = Type.Object(
  {
    entry: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    files: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
    html: Type.Optional(Nullable(Type.String())),
    manifest: Type.Optional(
      Nullable(
        Type.Object({
          dependencies: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
          version: Type.Optional(Nullable(Type.Integer())),
        }),
      ),
    ),
  },
  { title: 'DashboardAppSource' },
);

export const DashboardConfig = Type.Object(
  {
    kind: Type.Optional(Nullable(Type.Enum(['CLASSIC', 'APP']))),
    title: Type.Optional(Nullable(Type.String())),
    description: Type.Optional(Nullable(Type.String())),
    app: Type.Optional(Nullable(DashboardAppSource)),
    layout: Type.Optional(Nullable(DashboardLayout)),
    settings: Type.Optional(Nullable(AnyObject)),
    theme: Type.Optional(Nullable(AnyObject)),
    widgets: Type.Optional(Nullable(Type.Array(DashboardWidget))),
    translations: Type.Optional(Nullable(Type.Record(Type.String(), Type.Record(Type.String(), Type.String()), {
      description: 'Translated content (docs/authoring.md): locale (canonical BCP 47, e.g. "ja", "pt-BR") -> text key ("title", "description", "widgets.<id>.title", "widgets.<id>.markdown" of a TEXT widget) -> text. The embed shows the viewer\'s locale, then its language, then the words above',
    }))),
  },
  { title: 'DashboardConfig' },
);
export type DashboardConfig = Static<typeof DashboardConfig>;

export const ReportSnapshot = Type.Object(
  {
    id: Type.Integer(),
    reportId: Type.Integer(),
    versionNumber: Type.Integer(),
    name: Type.Optional(Nullable(Type.String())),
    title: Type.Optional(Nullable(Type.String())),
    description: Type.Optional(Nullable(Type.String())),
    kind: Type.Optional(Nullable(Type.Enum(['vega', 'table', 'kpi', 'html', 'map', 'sankey']))),
    isSourceReport: Type.Optional(Nullable(Type.Boolean())),
    meta: Type.Optional(Nullable(AnyObject)),
    spec: Type.Optional(Nullable(Type.Union([Type.String(), AnyObject]))),
    sqlQuery: Type.Optional(Nullable(Type.String())),
    pythonCode: Type.Optional(Nullable(Type.String())),
    fillMissingRows: Type.Optional(
      Nullable(Type.Object({ member: Type.String(), excludedDimensions: Type.Optional(Nullable(Type.Array(Type.String()))) })),
    ),
    periodComparisons: Type.Optional(
      Nullable(
        Type.Array(
          Type.Object({
            measure: Type.String(),
            timeDimension: Type.String(),
            offset: Type.Object({ amount: Type.Integer(), unit: Type.String() }),
            outputs: Type.Optional(Nullable(Type.Array(Type.String()))),
          }),
        ),
      ),
    ),
    preferences: Type.Optional(
      Nullable(
        Type.Object({
          columnFormats: Type.Optional(
            Type.Record(
              Type.String(),
              Type.Object({
                type: Type.Enum(['currency', 'percent', 'number']),
                decimalPlaces: Type.Optional(Nullable(Type.Integer())),
              }),
            ),
          ),
        }),
      ),
    ),
  },
  { title: 'ReportSnapshot' },
);
export type ReportSnapshot = Static<typeof ReportSnapshot>;

export const DashboardStatusSchema = Type.Enum(['draft', 'published', 'archived']);

export const Dashboard = Type.Object(
  {
    id: Type.Integer(),
    publicId: Type.String(),
    deploymentId: Type.Integer(),
    workbookId: Type.Integer(),
    status: DashboardStatusSchema,
    allowEmbed: Type.Boolean(),
    config: DashboardConfig,
    versionNumber: Type.Integer(),
    versionId: Type.Integer(),
    reportSnapshots: Type.Array(ReportSnapshot),
    createdBy: Type.Optional(Nullable(Type.Integer())),
    description: Type.Optional(Nullable(Type.String())),
    title: Type.Optional(Nullable(Type.String())),
    fromSharedWorkspace: Type.Optional(Nullable(Type.Boolean())),
    restrictDataDownload: Type.Optional(Nullable(Type.Boolean())),
    useBoardDashboards: Type.Optional(Nullable(Type.Boolean())),
  },
  { title: 'Dashboard' },
);
export type Dashboard = Static<typeof Dashboard>;
