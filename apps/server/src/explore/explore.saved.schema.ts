import { Type } from 'typebox';
import type { Static } from 'typebox';
import { ErrorResponse, Nullable, PageInfo } from '../core/core.schema.js';
import { CheckFiltersBody, WidgetDataBody } from '../data/data.schema.js';
import { SemanticQuery } from '../data/semantic/semantic.query.js';

// Issue 35 parts 3 and 4: the request and response schemas of saved charts and saved views (also the OpenAPI
// document). docs/explore.md "Saved charts and views".

/**
 * The console builder's chart kinds (apps/embed/src/explore/builder.ts CHART_KINDS), the one builder of the console and the embed:
 * the server cannot import the console, so explore.test.ts checks that the two lists agree.
 */
export const SAVED_CHART_KINDS = ['line', 'bar', 'area', 'kpi', 'table', 'map', 'sankey'] as const;
export const SAVED_VISIBILITIES = ['private', 'tenant'] as const;

/** Most characters of a chart's spec as JSON. */
export const MAX_SPEC_CHARACTERS = 32_768;
/** Most saved charts a view places beside the dashboard's widgets. */
export const MAX_VIEW_CHARTS = 50;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

const Timestamp = Type.String({ format: 'date-time' });
const First = Type.Integer({ minimum: 1, description: `Page size: default ${DEFAULT_PAGE_SIZE}, above ${MAX_PAGE_SIZE} clamped to ${MAX_PAGE_SIZE}, below 1 a 400` });
const After = Type.String({ maxLength: 1024, description: 'The endCursor of the previous page' });
const Visibility = Type.Enum([...SAVED_VISIBILITIES], { description: '`private`: only its author sees it; `tenant`: every viewer of the author\'s embed tenant with settings.explore view or create' });
const Title = Type.String({ minLength: 1, maxLength: 200 });
const Kind = Type.Enum([...SAVED_CHART_KINDS], { description: "The chart kind: one of the console builder's" });
const Spec = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { description: `The chart's options as the builder keeps them; at most ${MAX_SPEC_CHARACTERS} characters as JSON` });

export const ChartIdParams = Type.Object({ chartId: Type.String({ minLength: 1, maxLength: 64, description: 'A saved chart\'s id (`chart_…`)' }) });
export const ViewsParams = Type.Object({ publicId: Type.String({ minLength: 1, maxLength: 200 }) });
export const ViewIdParams = Type.Object({
  publicId: Type.String({ minLength: 1, maxLength: 200 }),
  viewId: Type.String({ minLength: 1, maxLength: 64, description: 'A saved view\'s id (`view_…`)' }),
});

export const SavedListQuery = Type.Object({
  visibility: Type.Optional(Visibility),
  first: Type.Optional(First),
  after: Type.Optional(After),
});
export type SavedListQuery = Static<typeof SavedListQuery>;

/** The author as comments show one (their embed user id), with the username a "Shared" panel shows. */
export const SavedAuthor = Type.Object({
  userId: Type.Integer({ description: 'The embed user who saved it (a comment\'s userId)' }),
  username: Type.String(),
}, { title: 'SavedAuthor' });

export const CreateChartBody = Type.Object({
  title: Title,
  query: SemanticQuery,
  kind: Kind,
  spec: Type.Optional(Spec),
  visibility: Type.Optional(Type.Enum([...SAVED_VISIBILITIES], { description: 'Default `private`' })),
}, { additionalProperties: false, title: 'CreateSavedChartRequest' });
export type CreateChartBody = Static<typeof CreateChartBody>;

export const UpdateChartBody = Type.Object({
  title: Type.Optional(Title),
  query: Type.Optional(SemanticQuery),
  kind: Type.Optional(Kind),
  spec: Type.Optional(Nullable(Spec)),
  visibility: Type.Optional(Visibility),
}, { additionalProperties: false, minProperties: 1, title: 'UpdateSavedChartRequest' });
export type UpdateChartBody = Static<typeof UpdateChartBody>;

export const SavedChart = Type.Object({
  id: Type.String({ description: 'Unguessable: `chart_` and 128 random bits' }),
  title: Type.String(),
  query: SemanticQuery,
  kind: Type.String(),
  spec: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  visibility: Visibility,
  author: SavedAuthor,
  mine: Type.Boolean({ description: 'Whether the caller saved it' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { title: 'SavedChart' });
export type SavedChart = Static<typeof SavedChart>;

export const SavedChartList = Type.Object({ charts: Type.Array(SavedChart), pageInfo: PageInfo }, { title: 'SavedChartList' });
export type SavedChartList = Static<typeof SavedChartList>;

const Cell = (description: string, minimum: number) => Type.Integer({ minimum, maximum: 1000, description });
export const ViewChart = Type.Object({
  chartId: Type.String({ minLength: 1, maxLength: 64, description: 'A saved chart the view\'s author may see' }),
  x: Cell('Column', 0), y: Cell('Row', 0), w: Cell('Width', 1), h: Cell('Height', 1),
}, { additionalProperties: false, title: 'SavedViewChart' });

/** `filters`, `granularity` and `fields` are exactly the widget data request's (WidgetDataBody). */
export const ViewState = Type.Object({
  filters: CheckFiltersBody.properties.filters,
  granularity: WidgetDataBody.properties.granularity,
  fields: WidgetDataBody.properties.fields,
  charts: Type.Optional(Type.Array(ViewChart, { maxItems: MAX_VIEW_CHARTS, description: 'The viewer\'s saved charts placed beside the dashboard\'s widgets (a personal layout; the dashboard is never changed)' })),
}, { additionalProperties: false, title: 'SavedViewState' });
export type ViewState = Static<typeof ViewState>;

export const CreateViewBody = Type.Object({
  name: Title,
  state: ViewState,
  visibility: Type.Optional(Type.Enum([...SAVED_VISIBILITIES], { description: 'Default `private`' })),
}, { additionalProperties: false, title: 'CreateSavedViewRequest' });
export type CreateViewBody = Static<typeof CreateViewBody>;

export const UpdateViewBody = Type.Object({
  name: Type.Optional(Title),
  state: Type.Optional(ViewState),
  visibility: Type.Optional(Visibility),
}, { additionalProperties: false, minProperties: 1, title: 'UpdateSavedViewRequest' });
export type UpdateViewBody = Static<typeof UpdateViewBody>;

export const SavedView = Type.Object({
  id: Type.String({ description: 'Unguessable: `view_` and 128 random bits' }),
  publicId: Type.String({ description: "The dashboard's publicId" }),
  name: Type.String(),
  state: ViewState,
  visibility: Visibility,
  author: SavedAuthor,
  mine: Type.Boolean({ description: 'Whether the caller saved it' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}, { title: 'SavedView' });
export type SavedView = Static<typeof SavedView>;

export const SavedViewList = Type.Object({ views: Type.Array(SavedView), pageInfo: PageInfo }, { title: 'SavedViewList' });
export type SavedViewList = Static<typeof SavedViewList>;

export const exploreErrorResponses = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse };
