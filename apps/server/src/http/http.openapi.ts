import swagger from '@fastify/swagger';
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readDocsFonts } from './http.docs-fonts.js';
import { toOpenApiSchema } from './http.openapi-schema.js';

/** The one answer a non-2xx response has (DESIGN.md's error body): what each status means to the caller. */
export const ERROR_DESCRIPTIONS: Readonly<Record<string, string>> = {
  400: 'The request is invalid: a parameter or body field is missing or malformed (`error.field` names it)',
  401: 'No usable credential: the Authorization header is missing, or its key or token is unknown, expired or revoked',
  403: 'The credential is valid but may not do this (another account, tenant or role, or a dashboard it cannot read)',
  404: 'Nothing by that id or name, or nothing the caller can see',
  409: 'The request conflicts with the current state (a limit reached, a delivery still pending, a disabled endpoint)',
  422: 'The request is well-formed, but what it names cannot be answered (a report without a query, a question the model cannot map)',
  429: 'Too many requests: the `retry-after` header says how many seconds to wait',
  502: 'The configured AI model answered with an error or an unusable answer',
  503: 'svc cannot answer now: the database or warehouse is unreachable, svc is shutting down, or the request took too long',
  504: 'The warehouse query ran past its time limit',
  '4XX': 'The request was refused before it reached this endpoint: a URL, headers or body svc cannot read (the error body says which)',
};

/**
 * Success answers of the routes whose schemas carry no description of their own (the data and session routes).
 * A route's own `description` on its response schema wins; the OpenAPI test refuses a "Default Response".
 */
const SUCCESS_DESCRIPTIONS: Readonly<Record<string, string>> = {
  getWidgetData: "The widget's columns and rows, with the viewer's filters and time zone applied",
  runAppQuery: "The query's columns and rows for the APP dashboard's code",
  checkDashboardFilters: 'Every filter is one the widget data requests accept: each with its dimension\'s title and type',
  askQuestion: 'The semantic query the model chose, svc checked and ran, with its rows',
  generateEmbedSession: 'A single-use session id for the viewer, to hand to the embed',
  exchangeEmbedSession: 'The embed token of the session, with its expiry',
  currentEmbedSession: 'The embed session of the token sent, or `session: null` without one',
  listEmbedUsers: 'The embed users, ordered by embed tenant and external id',
};

export const TAGS = [
  { name: 'Workspace', description: 'The platform API: the folders, workbooks and reports of a deployment, as an API key sees them' },
  { name: 'Console', description: 'Sign-in and sign-out of platform users in the console (an httpOnly cookie)' },
  { name: 'Embed sessions', description: "Signed embedding: your backend mints a session id for a viewer; the embed exchanges it for an embed token" },
  { name: 'Embed users', description: 'The embed users svc has seen, and their removal' },
  { name: 'Embed', description: 'What an embedded dashboard reads: the dashboard, its widgets\' data, app queries and questions in plain language' },
  { name: 'Embed comments', description: "Threads and replies on a dashboard, within the viewer's embed tenant" },
  { name: 'Webhooks', description: "Endpoints of your backend that svc tells about comments, threads and revoked sessions, signed as Standard Webhooks say; their delivery logs" },
  { name: 'Operations', description: 'Probes for load balancers and orchestrators; no credential' },
] as const;

interface RouteSchema {
  operationId?: string;
  response?: Record<string, unknown>;
  [key: string]: unknown;
}

/**
 * The route's schema as the OpenAPI document shows it: JSON Schema 2020-12 (`prefixItems`), and every response
 * described. Ajv validates requests with the route's own (draft-07) schema, which stays as it is.
 */
export function documentedRouteSchema(schema: RouteSchema): RouteSchema {
  const documented = toOpenApiSchema(schema) as RouteSchema;
  if (documented.response === undefined) return documented;
  const response: Record<string, unknown> = {};
  for (const [status, raw] of Object.entries(documented.response)) {
    const described = raw as { description?: string };
    const fallback = /^2/.test(status) ? SUCCESS_DESCRIPTIONS[documented.operationId ?? ''] : ERROR_DESCRIPTIONS[status.toUpperCase()];
    response[status] = described.description !== undefined || fallback === undefined ? raw : { ...described, description: fallback };
  }
  return { ...documented, response };
}

/**
 * Headers of the API reference pages: the page may load from svc's own origin only, so a Scalar release that
 * reached for a remote host would be refused (and shown in the console) rather than leak the reader's visit.
 * Inline script and style: Scalar's page starts with an inline `createApiReference` call and sets styles at run time.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'self'", "script-src 'self' 'unsafe-inline'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data: blob:",
  "font-src 'self'", "connect-src 'self'", "worker-src 'self' blob:", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'",
].join('; ');

/**
 * The OpenAPI 3.1 document, generated from the route schemas, at /api/v1/openapi.json, and the API reference
 * page rendered from it at /docs, with every asset (Scalar's script, its fonts) served by svc itself.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc platform and embed API',
        version: '1.0.0',
        description: 'Workspace listing (platform API), embed sessions, embedded dashboards and their data, and dashboard comments of svc.',
        // The LICENSE file at the repository's root; every package.json says the same.
        license: { name: 'Apache License 2.0', identifier: 'Apache-2.0' },
      },
      // The instance that serves the document: a relative URL, so it holds behind any proxy or port.
      servers: [{ url: '/', description: 'This svc instance' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http', scheme: 'bearer',
            description: 'An API key (`Authorization: Bearer svc_...`; `Api-Key svc_...` works too). On embed endpoints an embed token may be sent as `Bearer` as well.',
          },
          embedToken: {
            type: 'apiKey', in: 'header', name: 'Authorization',
            description: 'An embed token from POST /api/v1/embed/session/token, sent as `Authorization: Embed-Token <token>` (type the `Embed-Token ` prefix too).',
          },
        },
      },
      // Every operation names its own; this is what an operation without one would need.
      security: [{ bearerAuth: [] }],
      tags: [...TAGS],
    },
    transform: ({ schema, url }) => ({ schema: documentedRouteSchema(schema as RouteSchema) as typeof schema, url }),
  });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  const fonts = readDocsFonts('/docs/fonts/');
  const docsHeaders = (_request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    void reply.header('content-security-policy', DOCS_CONTENT_SECURITY_POLICY);
    done();
  };
  await app.register(apiReference, {
    routePrefix: '/docs',
    hooks: { onRequest: docsHeaders },
    configuration: {
      url: '/api/v1/openapi.json',
      pageTitle: 'svc API reference',
      // Scalar's own fonts come from its CDN; the same faces are served from /docs/fonts instead.
      withDefaultFonts: false,
      customCss: fonts.css,
      favicon: '/docs/favicon.svg',
      // Every tag open: about 25 operations, so the browser's own search finds each of them.
      defaultOpenAllTags: true,
      // No "Open API Client" button to Scalar's hosted client, no link to its SDK generator.
      hideClientButton: true,
      showDeveloperTools: 'never',
      telemetry: false,
    },
  });
  app.get('/docs/fonts/:file', { schema: { hide: true }, onRequest: docsHeaders }, async (request, reply) => {
    const font = fonts.files.get((request.params as { file: string }).file);
    if (font === undefined) return reply.callNotFound();
    return reply.header('content-type', 'font/woff2').header('cache-control', 'public, max-age=86400').send(font);
  });
  app.get('/docs/favicon.svg', { schema: { hide: true }, onRequest: docsHeaders }, async (_request, reply) =>
    reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON));
}

/** A plain mark for the tab, so that the browser does not ask for /favicon.ico. */
const FAVICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2b5bd7"/><path d="M4 11h8M4 8h6M4 5h8" stroke="#fff" stroke-width="1.5"/></svg>';
