import { Type } from 'typebox';
import { FilterScalar, MemberName, Nullable, ViewerFilters } from '../core/core.schema.js';
import { GRANULARITIES } from './semantic/semantic.model.js';
import { SemanticQuery } from './semantic/semantic.query.js';

/** Request and response schemas of the data endpoints (also the OpenAPI document). */
const Scalar = FilterScalar;

export const WidgetDataBody = Type.Object(
  {
    filters: Type.Optional(ViewerFilters),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone queries run in (default: the account\'s, else UTC)' })),
    granularity: Type.Optional(Type.Enum([...GRANULARITIES], { description: 'A TIME_GRAIN control\'s choice: every bucketed time dimension at this granularity' })),
    fields: Type.Optional(Type.Record(Type.String({ pattern: MemberName }), Type.String({ pattern: MemberName }), { description: 'FIELD controls: member -> member of the same kind and view' })),
    drilldown: Type.Optional(Type.Object(
      {
        member: Type.String({ pattern: MemberName, description: 'The measure drilled into' }),
        point: Type.Optional(Type.Record(Type.String({ maxLength: 210 }), Nullable(Scalar), { description: 'The mark\'s dimension values, by result column' })),
      },
      { additionalProperties: false },
    )),
    force: Type.Optional(Type.Boolean({ description: 'Answer from the data source (or a pre-aggregation), not from the result cache: the `refresh` action asks this' })),
  },
  { additionalProperties: false, title: 'WidgetDataRequest' },
);

const Format = Type.Object({ type: Type.Enum(['currency', 'percent', 'number']), decimalPlaces: Type.Optional(Nullable(Type.Integer())) });
export const ResultColumn = Type.Object(
  {
    name: Type.String(),
    member: Type.String(),
    title: Type.String(),
    type: Type.Enum(['string', 'number', 'time', 'boolean']),
    kind: Type.Enum(['dimension', 'measure']),
    granularity: Type.Optional(Type.Enum([...GRANULARITIES])),
    measureType: Type.Optional(Type.String()),
    format: Type.Optional(Format),
  },
  { title: 'ResultColumn' },
);

const AnswerSource = Type.String({
  pattern: '^(cache|warehouse|rollup:[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*)$',
  description: 'Where the answer came from: `cache` (the result cache), `rollup:<view>.<pre-aggregation>` or `warehouse` (the data source); of several statements, the least cached one',
});

export const WidgetDataResponse = Type.Object(
  {
    columns: Type.Array(ResultColumn),
    rows: Type.Array(Type.Array(Type.Unknown()), { description: 'Rows as arrays in the order of columns; time buckets as local YYYY-MM-DDTHH:MM:SS.000' }),
    truncated: Type.Boolean({ description: 'More rows matched than the row cap' }),
    totalRows: Type.Optional(Type.Integer({ minimum: 0, description: 'A drill-down only: how many rows lie under the mark, of which `rows` are the first (at most 1,000)' })),
    timezone: Type.String(),
    ignoredFilters: Type.Array(Type.String(), { description: 'Filters naming members this widget cannot reach' }),
    source: AnswerSource,
    fields: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'The FIELD swaps this widget\'s query took (member -> member), when any did: a chart\'s spec follows them' })),
    title: Type.Optional(Type.String({ description: 'The widget\'s title with those swaps: each swapped member\'s title replaced by its replacement\'s ("Revenue 2025" showing orders.count: "Orders 2025")' })),
  },
  { title: 'WidgetData' },
);

export const AiQueryBody = Type.Object(
  {
    question: Type.String({ minLength: 1, maxLength: 2000, description: 'The question, in plain language' }),
    chatId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The conversation it belongs to (echoed; a new id when absent)' })),
    publicId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The dashboard asked about (AI widget, app); default: the session\'s deployment' })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false, title: 'AiQueryRequest' },
);

export const AiAnswer = Type.Object(
  {
    chatId: Type.String(),
    question: Type.String(),
    answer: Nullable(Type.String()),
    query: SemanticQuery,
    columns: Type.Array(ResultColumn),
    rows: Type.Array(Type.Array(Type.Unknown())),
    truncated: Type.Boolean(),
    timezone: Type.String(),
  },
  { title: 'AiAnswer' },
);

export const AppQueryBody = Type.Object(
  { query: SemanticQuery, timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
  { additionalProperties: false, title: 'AppQueryRequest' },
);

export const AppQueryResult = Type.Object(
  { columns: Type.Array(ResultColumn), rows: Type.Array(Type.Array(Type.Unknown())), truncated: Type.Boolean(), timezone: Type.String(), source: AnswerSource },
  { title: 'AppQueryResult' },
);

export const CheckFiltersBody = Type.Object(
  {
    filters: ViewerFilters,
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone a date filter is read in (default: the account\'s, else UTC)' })),
  },
  { additionalProperties: false, title: 'CheckFiltersRequest' },
);

export const CheckedFilters = Type.Object(
  {
    filters: Type.Array(Type.Object({
      member: Type.String(),
      title: Type.String({ description: 'The dimension\'s title in the semantic model' }),
      type: Type.Enum(['string', 'number', 'time', 'boolean']),
    })),
  },
  { title: 'CheckedFilters' },
);

export const PreviewBody = Type.Object(
  {
    query: Type.Optional(SemanticQuery),
    snapshot: Type.Optional(Type.Object({
      meta: Type.Optional(Nullable(Type.Object({ query: Type.Optional(SemanticQuery) }, { additionalProperties: true }))),
      sqlQuery: Type.Optional(Nullable(Type.String({ maxLength: 100_000 }))),
    }, { additionalProperties: true, description: 'A report snapshot as a draft holds it: its meta.query, or its sqlQuery (admins)' })),
    asViewer: Type.Optional(Type.Object({
      securityContext: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.Unknown())),
      userAttributes: Type.Optional(Type.Record(Type.String({ maxLength: 200 }), Type.Unknown())),
      groups: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 })),
      embedTenantName: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    }, { additionalProperties: false, description: 'Run it as this viewer would see it, as Generate Session would have made them (admins only)' })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    force: Type.Optional(Type.Boolean({ description: 'Past the result cache' })),
  },
  { additionalProperties: false, title: 'QueryPreviewRequest' },
);

export const PreviewResult = Type.Object(
  {
    columns: Type.Array(ResultColumn), rows: Type.Array(Type.Array(Type.Unknown())), truncated: Type.Boolean(), timezone: Type.String(), source: AnswerSource,
    ignoredFilters: Type.Array(Type.String()),
    statement: Type.Optional(Type.Object({
      sql: Type.String(), parameters: Type.Array(Type.Unknown()), on: Type.String({ description: '`warehouse`, or `rollup:<view>.<name>`' }),
    }, { description: 'The statement that ran (admins only)' })),
    rollupHint: Type.Optional(Type.Object({
      reasons: Type.Array(Type.Object({
        rollup: Type.String({ description: '`<view>.<pre-aggregation>`' }), reason: Type.String({ description: 'Why it did not answer the query' }),
      }), { description: 'Each pre-aggregation of the query\'s view, and why it did not answer' }),
      suggestion: Nullable(Type.Object({
        view: Type.String({ description: 'The view whose `preAggregations` it belongs in' }),
        preAggregation: Type.Object({
          name: Type.String(), measures: Type.Array(Type.String()), dimensions: Type.Optional(Type.Array(Type.String())),
          timeDimension: Type.Optional(Type.String()), granularity: Type.Optional(Type.String()), timezones: Type.Optional(Type.Array(Type.String())),
          additive: Type.Optional(Type.Boolean()), refresh: Type.Optional(Type.Object({ every: Type.Optional(Type.String()) }, { additionalProperties: true })),
        }, { description: 'A pre-aggregation in the model\'s JSON shape that answers this query once added and built' }),
      }, { description: 'A pre-aggregation that would answer the query; null when none can (`unsuggested` says why)' })),
      unsuggested: Type.Optional(Type.String()),
    }, { description: 'Admins only, when the data source answered (not the cache or a rollup): why no pre-aggregation did, and one that would' })),
  },
  { title: 'QueryPreview' },
);
