import swagger from '@fastify/swagger';
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readDocsFonts } from './http.docs-fonts.js';
import { FAVICON } from './http.root.js';
import { toOpenApiSchema } from './http.openapi-schema.js';

/** The one answer a non-2xx response has (DESIGN.md's error body): what each status means to the caller. */
export const ERROR_DESCRIPTIONS: Readonly<Record<string, string>> = {
  400: 'The request is invalid: a parameter or body field is missing or malformed (`error.field` names it)',
  401: 'No usable credential: the Authorization header is missing, or its key or token is unknown, expired or revoked',
  403: 'The credential is valid but may not do this (another account, tenant or role, or a dashboard it cannot read)',
  404: 'Nothing by that id or name, or nothing the caller can see',
  409: 'The request conflicts with the current state (a limit reached, a delivery still pending, a disabled endpoint, a model change that breaks published widgets: `error.details` names each)',
  412: 'If-Match names a revision that is no longer current: read the resource again (its ETag) and redo the change',
  413: 'The request body is larger than the limit (1 MiB)',
  428: 'If-Match is required: send the ETag of the revision you changed, from its GET',
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
  { name: 'Embed users', description: "Your customers (embed tenants) and their viewers (embed users): made ahead of a session, changed, removed" },
  { name: 'Embed', description: 'What an embedded dashboard reads: the dashboard, its widgets\' data, app queries and questions in plain language' },
  { name: 'Embed comments', description: "Threads and replies on a dashboard, within the viewer's embed tenant" },
  // Issue 35 saved charts and views.
  { name: 'Embed exploration', description: "Charts and dashboard views an embed viewer saved (settings.explore), private or shared with their embed tenant" },
  { name: 'Webhooks', description: "Endpoints of your backend that svc tells about comments, threads and revoked sessions, signed as Standard Webhooks say; their delivery logs" },
  { name: 'Authoring', description: "Deployments and their models, changed over the revision read (If-Match), and the audit log of every change" },
  { name: 'Users and groups', description: "The account's platform users, their groups and API keys (a key is shown once), and the account's settings; admins only" },
  { name: 'Operations', description: 'Probes for load balancers and orchestrators; no credential' },
  { name: 'Cube', description: "Cube's REST API at /cubejs-api/v1 (docs/cube.md): load and meta in Cube's shapes and error shape, under the caller's access policies, for @cubejs-client and tools written for Cube" },
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
      customCss: `${fonts.css}\n${DOCS_CONTRAST_CSS}`,
      // Runs in the page (Scalar inlines a function option's source): see repairDocsAccessibility.
      onLoaded: repairDocsAccessibility,
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

/**
 * Scalar's colours that axe measured under 4.5:1 on its backgrounds (issue 31 item 11: 627 color-contrast
 * violations): the secondary greys, the HTTP method colours that also colour strings in examples, and "required"
 * (orange). Darker in light mode and lighter in dark mode, the same hues; `!important` since Scalar adds its theme's
 * variables after this sheet.
 */
export const DOCS_CONTRAST_CSS = `.light-mode {
  --scalar-color-2: #545454 !important; --scalar-color-3: #5e5e5e !important; --scalar-color-accent: #0058b0 !important;
  --scalar-color-blue: #00579a !important; --scalar-color-green: #006b45 !important; --scalar-color-orange: #a33f00 !important;
  --scalar-color-red: #b80000 !important; --scalar-color-yellow: #6f5200 !important; --scalar-color-purple: #6232a8 !important;
}
.dark-mode {
  --scalar-color-2: #b8b8b8 !important; --scalar-color-3: #a6a6a6 !important;
  --scalar-color-blue: #6cb6ff !important; --scalar-color-green: #4cd38f !important; --scalar-color-orange: #ff9a5c !important;
  --scalar-color-red: #ff7b7b !important; --scalar-color-yellow: #f2c94c !important; --scalar-color-purple: #c5a3ff !important;
}`;

/**
 * What Scalar's markup gets wrong for axe and no option changes (issue 31 item 11), repaired in the page once the
 * reference is drawn and again whenever it redraws: the page's language; `aria-selected` on the sidebar's buttons
 * (allowed on tabs and options only: 43 critical aria-allowed-attr), which becomes `aria-current` on the selected
 * one; the search button's name; and scrolling lists of operations made tab stops (scrollable-region-focusable).
 * Self-contained: Scalar puts this function's source in the page.
 */
export function repairDocsAccessibility(): void {
  // The server's program has no DOM types: the little of the page this uses, typed here.
  interface Element {
    textContent: string | null;
    getAttribute(name: string): string | null;
    setAttribute(name: string, value: string): void;
    removeAttribute(name: string): void;
    hasAttribute(name: string): boolean;
  }
  const page = globalThis as unknown as {
    document: { documentElement: { lang: string }; body: unknown; querySelectorAll(selector: string): Iterable<Element> };
    MutationObserver: new (callback: () => void) => { observe(target: unknown, options: object): void };
  };
  const { document } = page;
  document.documentElement.lang = 'en';
  const repair = () => {
    for (const button of document.querySelectorAll('button[aria-selected]:not([role])')) {
      if (button.getAttribute('aria-selected') === 'true') button.setAttribute('aria-current', 'page');
      else button.removeAttribute('aria-current');
      button.removeAttribute('aria-selected');
    }
    for (const button of document.querySelectorAll('button[role="search"]')) {
      button.removeAttribute('role');
      if (!button.hasAttribute('aria-label') && (button.textContent ?? '').trim() === '') button.setAttribute('aria-label', 'Search');
    }
    for (const list of document.querySelectorAll('ul[aria-label$=" endpoints"]:not([tabindex])')) list.setAttribute('tabindex', '0');
  };
  repair();
  new page.MutationObserver(repair).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-selected', 'role'] });
}
