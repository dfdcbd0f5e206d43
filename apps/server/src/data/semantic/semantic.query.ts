import { Type } from 'typebox';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { AppError } from '../../core/core.errors.js';

/**
 * The semantic query, in Cube's query format: measures, dimensions, timeDimensions with a granularity and a date
 * range, filters (member filters and and/or groups), order and limit. Members are `<view>.<member>`.
 */
export const GRANULARITIES = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

const Member = Type.String({ minLength: 3, maxLength: 200 });
const FilterValue = Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean()]);

export const FILTER_OPERATORS = [
  'equals', 'notEquals', 'contains', 'notContains', 'startsWith', 'endsWith', 'gt', 'gte', 'lt', 'lte', 'set', 'notSet',
  'inDateRange', 'notInDateRange', 'beforeDate', 'beforeOrOnDate', 'afterDate', 'afterOrOnDate',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export const MemberFilter = Type.Object(
  { member: Member, operator: Type.Enum([...FILTER_OPERATORS]), values: Type.Optional(Type.Array(FilterValue, { maxItems: 1000 })) },
  { additionalProperties: false },
);
export type MemberFilter = Static<typeof MemberFilter>;
export type QueryFilter = MemberFilter | { and: QueryFilter[] } | { or: QueryFilter[] };

// Groups nest three levels deep: deep enough for any dashboard, and a schema without recursion stays simple.
function filterGroups(depth: number): TSchema {
  if (depth === 0) return MemberFilter;
  const inner = filterGroups(depth - 1);
  return Type.Union([
    MemberFilter,
    Type.Object({ and: Type.Array(inner, { maxItems: 100 }) }, { additionalProperties: false }),
    Type.Object({ or: Type.Array(inner, { maxItems: 100 }) }, { additionalProperties: false }),
  ]);
}

const DateRange = Type.Union([Type.String({ maxLength: 100 }), Type.Array(Type.String({ maxLength: 40 }), { minItems: 2, maxItems: 2 })]);
export const TimeDimension = Type.Object(
  { dimension: Member, granularity: Type.Optional(Type.Enum([...GRANULARITIES])), dateRange: Type.Optional(DateRange) },
  { additionalProperties: false },
);
export type TimeDimension = Static<typeof TimeDimension>;

const Direction = Type.Enum(['asc', 'desc']);
export const SemanticQuery = Type.Object(
  {
    measures: Type.Optional(Type.Array(Member, { maxItems: 50 })),
    dimensions: Type.Optional(Type.Array(Member, { maxItems: 50 })),
    timeDimensions: Type.Optional(Type.Array(TimeDimension, { maxItems: 5 })),
    filters: Type.Optional(Type.Array(filterGroups(3), { maxItems: 100 })),
    order: Type.Optional(Type.Union([
      Type.Record(Type.String({ maxLength: 210 }), Direction),
      Type.Array(Type.Tuple([Type.String({ maxLength: 210 }), Direction]), { maxItems: 50 }),
    ])),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  },
  { additionalProperties: false, title: 'SemanticQuery' },
);
export interface SemanticQuery extends Omit<Static<typeof SemanticQuery>, 'filters'> {
  filters?: QueryFilter[];
}

/** Checks a query read from storage (a snapshot's `meta.query`, a tool call): the first problem is a 400 naming its path. */
export function parseSemanticQuery(value: unknown, field: string): SemanticQuery {
  if (Value.Check(SemanticQuery, value)) return value as SemanticQuery;
  const errors = [...Value.Errors(SemanticQuery, value)];
  // The most specific error: the deepest path (a union reports its branches' failures too).
  const error = errors.reduce((best, next) => (next.instancePath.length > best.instancePath.length ? next : best), errors[0]!);
  const path = error.instancePath.split('/').slice(1).map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`)).join('');
  throw new AppError('invalid_parameter', `${field}${path} ${error.message}`, `${field}${path}`);
}
