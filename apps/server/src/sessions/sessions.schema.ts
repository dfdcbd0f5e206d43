import { Type } from 'typebox';
import type { Static } from 'typebox';
import { ErrorResponse, Id, ViewerFilters } from '../core/core.schema.js';

/** DESIGN "Generate Session": embed tenant names. */
export const EMBED_TENANT_NAME_PATTERN = '^[a-z][a-z0-9-]{0,34}[a-z0-9]$';

/** Generate Session's `settings.explore`, weakest first (issue 35). */
export const EXPLORE_LEVELS = ['none', 'view', 'create'] as const;
export type ExploreLevel = (typeof EXPLORE_LEVELS)[number];
const ExploreLevelSchema = (description: string) => Type.Union([Type.Literal('none'), Type.Literal('view'), Type.Literal('create')], { description });

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
const Open = (properties: Parameters<typeof Type.Object>[0], description: string) =>
  Type.Object(properties, { additionalProperties: true, description });

export const EmbedTheme = Open({
  primaryColor: Type.Optional(Text(64)),
  borderRadius: Type.Optional(Type.Union([Text(32), Type.Number({ minimum: 0 })])),
  font: Type.Optional(Text(255)),
}, 'Brand theme: primaryColor, borderRadius, font, plus any further keys kept as given (the same shape svc:action:set-theme takes)');
export type EmbedTheme = Static<typeof EmbedTheme>;

export const EmbedSettings = Open({
  locale: Type.Optional(Text(35)),
  timezone: Type.Optional(Text(64)),
  allowAi: Type.Optional(Type.Boolean()),
  commentEventText: Type.Optional(Type.Boolean({ description: "true: the embed's svc:event:comment carries the comment's text (docs/embedding.md)" })),
  lockedFilters: Type.Optional(Type.Boolean({ description: "true: Generate Session's filters are locked (docs/embedding.md \"Locked filters\"): the viewer cannot remove or change them, and every data path of the session applies them" })),
  explore: Type.Optional(ExploreLevelSchema('Exploration in the embed (docs/explore.md): none (the default), view (open the charts and views shared with the tenant) or create (also build and save)')),
}, 'Viewer settings: locale, timezone, allowAi, commentEventText, lockedFilters, explore, plus any further keys kept as given');

/** DESIGN "Generate Session": unknown top-level fields are refused, so a misspelt embedTenantName is not ignored. */
export const GenerateSessionBody = Type.Object({
  deploymentId: Id,
  externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'The viewer in your product; lowercased and trimmed' })),
  internalId: Type.Optional(Type.String({ minLength: 3, maxLength: 320, description: 'Email of a platform user of the account (no embed tenant)' })),
  embedTenantName: Type.Optional(Type.String({ pattern: EMBED_TENANT_NAME_PATTERN, description: "The viewer's customer; default: the account's tenantName" })),
  embedTheme: Type.Optional(EmbedTheme),
  email: Type.Optional(Type.String({ maxLength: 320 })),
  username: Type.Optional(Text(255)),
  firstName: Type.Optional(Type.String({ maxLength: 255 })),
  groups: Type.Optional(Type.Array(Text(255), { maxItems: 100 })),
  userAttributes: Type.Optional(Type.Object({}, { additionalProperties: true })),
  securityContext: Type.Optional(Type.Object({}, {
    additionalProperties: true,
    description: 'What access policies read as {securityContext.<key>} (issue 20): a JSON object of at most 8 KiB',
  })),
  dashboards: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
    minItems: 1, maxItems: 100,
    description: 'The publicIds this session may open (their data, comments and exports); default: every embeddable dashboard of the deployment. Recommended',
  })),
  filters: Type.Optional({ ...ViewerFilters, maxProperties: 50, description: "Filters the embed starts with, in the viewer filter format (a value, a list, or {gte, lte} by dimension); with settings.lockedFilters, locked: applied to every data path of the session and not removable (docs/embedding.md \"Locked filters\")" }),
  settings: Type.Optional(EmbedSettings),
}, { additionalProperties: false });

/** The largest securityContext Generate Session takes, as UTF-8 JSON. */
export const SECURITY_CONTEXT_MAX_BYTES = 8192;
export type GenerateSessionBody = Static<typeof GenerateSessionBody>;

export const GenerateSessionResponse = Type.Object({
  sessionId: Type.String({ description: 'Single-use; redeem it within expiresAt at POST /api/v1/embed/session/token' }),
  expiresAt: Type.String({ format: 'date-time' }),
});
export type GenerateSessionResponse = Static<typeof GenerateSessionResponse>;

/** One read answered with the token: the status and JSON body the request itself would have answered with. */
function IncludedAnswer(request: string) {
  return Type.Object({
    status: Type.Integer({ description: `The status ${request} answers with` }),
    body: Type.Unknown({ description: `Its JSON body: the same as ${request}, or the error body` }),
  }, { description: `What ${request} answers, sent with the new token` });
}

/**
 * The embed's first reads, answered with the token (docs/embedding.md "2. The embed exchanges the session id"): the
 * embed page asks for them so that it starts with one round trip instead of two.
 */
export const ExchangeInclude = Type.Object({
  session: Type.Optional(Type.Boolean({ description: 'true: the answer carries what GET /api/v1/embed/session answers with the new token' })),
  dashboard: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'A dashboard publicId: the answer carries what GET /api/v1/embed/dashboard/{publicId} answers with the new token' })),
}, { additionalProperties: false, title: 'ExchangeInclude' });

export const ExchangeBody = Type.Object({
  sessionId: Type.String({ minLength: 1, maxLength: 200 }),
  include: Type.Optional(ExchangeInclude),
}, { additionalProperties: false });
export type ExchangeBody = Static<typeof ExchangeBody>;

export const ExchangeResponse = Type.Object({
  token: Type.String({ description: 'Embed token (JWT): send it as Authorization: Embed-Token <token>' }),
  expiresAt: Type.String({ format: 'date-time', description: 'Nominal expiry of the token' }),
  effectiveEnd: Type.String({ format: 'date-time', description: 'When the embed treats the session as over (earlier than expiresAt)' }),
  expiringAt: Type.String({ format: 'date-time', description: 'When svc:event:session-expiring fires' }),
  included: Type.Optional(Type.Object({
    session: Type.Optional(IncludedAnswer('GET /api/v1/embed/session')),
    dashboard: Type.Optional(IncludedAnswer('GET /api/v1/embed/dashboard/{publicId}')),
  }, { description: 'Only when `include` asked: each read as that request, sent with the new token, answers it' })),
});
export type ExchangeResponse = Static<typeof ExchangeResponse>;

/** Either one session (`sessionId`) or every session of one viewer (`externalId`, + `embedTenantName`): logout. */
export const RevokeBody = Type.Object({
  sessionId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  embedTenantName: Type.Optional(Type.String({ pattern: EMBED_TENANT_NAME_PATTERN })),
}, { additionalProperties: false });
export type RevokeBody = Static<typeof RevokeBody>;

export const EmbedUser = Type.Object({
  id: Type.Integer(),
  externalId: Type.String(),
  embedTenantName: Type.String(),
  username: Type.String(),
  email: Type.Union([Type.String(), Type.Null()]),
  firstName: Type.Union([Type.String(), Type.Null()]),
  groups: Type.Array(Type.String()),
  userAttributes: Type.Object({}, { additionalProperties: true }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
}, { title: 'EmbedUser' });
export type EmbedUser = Static<typeof EmbedUser>;

const EmbedDefaults = Type.Object({
  timezone: Type.Union([Type.String(), Type.Null()], { description: "The session's settings.timezone, else the account's default, else null (the browser's)" }),
  locale: Type.Union([Type.String(), Type.Null()], { description: "The session's settings.locale, else the account's default, else null (the browser's)" }),
}, { description: 'What the embed starts with before any action changes it' });

export const CurrentSessionResponse = Type.Object({
  session: Type.Union([
    Type.Object({
      mode: Type.Literal('signed'),
      deploymentId: Type.Integer(),
      embedTenant: Type.Union([Type.String(), Type.Null()], { description: 'null for an internalId session' }),
      embedUserId: Type.Union([Type.Integer(), Type.Null()]),
      userId: Type.Union([Type.Integer(), Type.Null()], { description: 'The platform user of an internalId session' }),
      allowEmbedComments: Type.Boolean({ description: "The account setting: whether the embed shows its comment panel (the comments API answers regardless)" }),
      embedTheme: Type.Object({}, { additionalProperties: true, description: "Generate Session's embedTheme, applied before any set-theme" }),
      defaults: EmbedDefaults,
      commentEventText: Type.Boolean({ description: "Generate Session's settings.commentEventText: svc:event:comment carries the comment's text" }),
      explore: ExploreLevelSchema("Generate Session's settings.explore: none, view or create"),
      filters: Type.Object({}, { additionalProperties: true, description: "Generate Session's filters: what the embed starts with" }),
      lockedFilters: Type.Array(Type.String(), { description: 'The members whose filter the host locked (settings.lockedFilters): shown without a remove button, refused in the viewer\'s own filters' }),
    }),
    Type.Object({
      mode: Type.Literal('private'),
      deploymentId: Type.Null(),
      embedTenant: Type.Null(),
      embedUserId: Type.Null(),
      userId: Type.Integer({ description: 'The signed-in platform user (console cookie)' }),
      allowEmbedComments: Type.Boolean({ description: 'The account setting; a private embed has no embed tenant, so it shows no comment panel' }),
      embedTheme: Type.Object({}, { additionalProperties: true }),
      defaults: EmbedDefaults,
      commentEventText: Type.Boolean({ description: 'false: a private embed shows no comment panel' }),
      explore: Type.Literal('none', { description: 'A platform user explores in the console, not in a private embed' }),
      filters: Type.Object({}, { additionalProperties: true, description: 'A private embed starts with no filters' }),
      lockedFilters: Type.Array(Type.String(), { description: 'A private embed locks none' }),
    }),
    Type.Null(),
  ]),
});

export type CurrentSessionResponse = Static<typeof CurrentSessionResponse>;

export const EmbedUsersQuery = Type.Object({
  embedTenantName: Type.Optional(Type.String({ pattern: EMBED_TENANT_NAME_PATTERN })),
});

export const EmbedUsersResponse = Type.Object({ users: Type.Array(EmbedUser) });

export const sessionErrorResponses = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 429: ErrorResponse };

/** Issue 34 part 4, "View as a customer": whom an admin previews a dashboard as, and which version. */
export const PreviewSessionBody = Type.Object({
  embedTenantName: Type.Optional(Type.String({ pattern: EMBED_TENANT_NAME_PATTERN, description: 'An embed tenant of the account the viewer belongs to; default: none' })),
  securityContext: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'What access policies read as {securityContext.<key>}: a JSON object of at most 8 KiB' })),
  userAttributes: Type.Optional(Type.Object({}, { additionalProperties: true })),
  groups: Type.Optional(Type.Array(Text(255), { maxItems: 100 })),
  draft: Type.Optional(Type.Boolean({ description: "true: the embed shows the dashboard's draft; default: the published version" })),
}, { additionalProperties: false });
export type PreviewSessionBody = Static<typeof PreviewSessionBody>;

export const PreviewSessionResponse = Type.Object({
  sessionId: Type.String({ description: 'Single-use; open url?session=<sessionId> in a frame of the console within expiresAt' }),
  expiresAt: Type.String({ format: 'date-time' }),
  url: Type.String({ description: "The embed page's path, without the session id" }),
  version: Type.Union([Type.Literal('published'), Type.Literal('draft')]),
});
export type PreviewSessionResponse = Static<typeof PreviewSessionResponse>;
