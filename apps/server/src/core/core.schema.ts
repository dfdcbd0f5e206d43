import { Type } from 'typebox';
import type { Static, TSchema } from 'typebox';

/** The largest row id (ids are 32-bit integers on PostgreSQL). */
export const MAX_ROW_ID = 2147483647;

/** A row id in a path, query or body: a positive 32-bit integer (written canonically: http.validation.ts). */
export const Id = Type.Integer({ minimum: 1, maximum: MAX_ROW_ID });

/** The body of a 204 answer. */
export const NoContent = Type.Null({ description: 'No Content' });

/**
 * `schema` with a description: on a route's response, what the OpenAPI document says that answer is.
 *
 * @example
 * response: { 200: Described(Dashboard, 'The dashboard, with its widgets') }
 */
export const Described = <T extends TSchema>(schema: T, description: string): T => ({ ...schema, description });

/** `T or null`: SPEC.md's nullable fields. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** DESIGN.md's error body, answered for every non-2xx status. */
export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      status: Type.Integer(),
      code: Type.String(),
      message: Type.String(),
      field: Type.Optional(Type.String()),
      details: Type.Optional(Type.Array(Type.Object({
        field: Type.String(),
        message: Type.String(),
        publicId: Type.Optional(Type.String()),
        widgetId: Type.Optional(Type.String()),
      }), { description: 'Each thing at fault, when there are several (the widgets a model change would break)' })),
    }),
  },
  { title: 'Error' },
);

/** SPEC.md PageInfo: cursors are opaque strings, null on an empty page. */
export const PageInfo = Type.Object(
  {
    hasNextPage: Type.Boolean(),
    hasPreviousPage: Type.Boolean(),
    startCursor: Type.Optional(Nullable(Type.String())),
    endCursor: Type.Optional(Nullable(Type.String())),
  },
  { title: 'PageInfo' },
);
export type PageInfo = Static<typeof PageInfo>;

/** A semantic member's name: `<view>.<member>`. */
export const MemberName = '^[A-Za-z_][A-Za-z0-9_]{0,62}\\.[A-Za-z_][A-Za-z0-9_]{0,62}$';

export const FilterScalar = Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean()]);

/** A viewer's filters by member: what widget data requests, Generate Session and saved views take. */
export const ViewerFilters = Type.Record(
  Type.String({ pattern: MemberName }),
  Nullable(Type.Union([
    FilterScalar,
    Type.Array(FilterScalar, { maxItems: 1000 }),
    Type.Object({ gte: Type.Optional(FilterScalar), lte: Type.Optional(FilterScalar) }, { additionalProperties: false }),
  ])),
  { description: 'The viewer\'s filters by member (`f_<semantic_view>.<dimension>=<JSON>` of the embed URL): a value, a list, or {gte, lte}; null: none' },
);
