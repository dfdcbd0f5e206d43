// The demo host: an example customer app on its own origin that embeds an svc dashboard.
// Its backend holds the svc API key and mints one session id per request; the browser only ever sees session ids.
// Two customers of the host app share the dashboard: each session carries its customer in securityContext.tenant,
// and the access policy on `orders` (apps/server/demo/demo.json) keeps each to its own rows (issue 20).
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';

/**
 * The SDK bundle built by `npm run build` (self-contained ESM, no imports): the one svc serves, with both entries, so
 * that the page's `debug` says why a message was dropped (`@svc/embed-sdk/tools`).
 */
const SDK_FILE = new URL('../../packages/embed-sdk/dist/browser/embed-sdk.js', import.meta.url);
const PUBLIC_DIR = new URL('./public/', import.meta.url);

/** Static files of the page, by request path. */
const STATIC_FILES = {
  '/sdk.js': { file: SDK_FILE, type: 'text/javascript; charset=utf-8', missing: 'the SDK bundle is missing: run `npm run build` at the repository root' },
  '/app.js': { file: new URL('app.js', PUBLIC_DIR), type: 'text/javascript; charset=utf-8' },
  '/styles.css': { file: new URL('styles.css', PUBLIC_DIR), type: 'text/css; charset=utf-8' },
};

/**
 * @typedef {object} DemoCustomer
 * @property {string} tenant The customer's account: the embed tenant's name and `securityContext.tenant`.
 * @property {string} label What the switch shows, e.g. `Customer A`.
 * @property {string} externalId The viewer's external id at that customer.
 * @property {string} embedTenantName
 * @property {string} username
 * @property {string} firstName
 * @property {string} email
 * @property {ReadonlyArray<{ externalId: string, username: string, firstName: string, email: string }>} [colleagues]
 *   Other viewers of the same customer (issue 35: a chart one shares, the other sees): the page opens as one with
 *   `?customer=<tenant>&viewer=<externalId>`, and the session routes take `{ "customer", "externalId" }`.
 */

/**
 * The demo's two customers, one viewer each (embed users of the demo account's embed tenants `customer-a` and
 * `customer-b`), and a second viewer of `customer-a` (Amy) who sees what Ann shares with her company. The first
 * customer is the one the page opens with.
 * @type {readonly DemoCustomer[]}
 */
export const DEMO_CUSTOMERS = Object.freeze([
  {
    tenant: 'customer-a', label: 'Customer A', externalId: 'ann-1', embedTenantName: 'customer-a', username: 'ann', firstName: 'Ann', email: 'ann@a.test',
    colleagues: Object.freeze([{ externalId: 'amy-2', username: 'amy', firstName: 'Amy', email: 'amy@a.test' }]),
  },
  { tenant: 'customer-b', label: 'Customer B', externalId: 'ben-1', embedTenantName: 'customer-b', username: 'ben', firstName: 'Ben', email: 'ben@b.test' },
]);

/** The first demo viewer (Ann, of `customer-a`). */
export const DEMO_VIEWER = DEMO_CUSTOMERS[0];

/** The largest request body the backend reads (`{"customer":"customer-b"}` needs a few dozen bytes). */
const MAX_BODY_BYTES = 1024;

/** How long the backend waits for svc before answering 502. */
const SVC_TIMEOUT_MS = 10_000;

/** The largest webhook body the receiver reads. */
const MAX_WEBHOOK_BYTES = 256 * 1024;
/** Standard Webhooks: a delivery whose timestamp is further than this from now is refused (replays). */
const WEBHOOK_TOLERANCE_S = 300;
/** How often at most the backend reads svc's embed users again to name someone it does not know yet. */
const NAMES_REREAD_MS = 5_000;
/** The most external ids `/api/people` names at once (svc resolves at most 50 mentions per comment). */
const MAX_PEOPLE = 50;
/** What the demo host calls its own webhook endpoint in svc (it replaces its earlier ones on start). */
const WEBHOOK_DESCRIPTION = 'svc demo host: mention toasts';

/**
 * Whether a delivery is signed with `secret` as Standard Webhooks says: `webhook-signature` holds `v1,<base64
 * HMAC-SHA256 of "id.timestamp.body">` (possibly several, space-separated), compared in constant time, and the
 * timestamp is within five minutes.
 * @param {string} secret `whsec_...`
 * @param {import('node:http').IncomingHttpHeaders} headers
 * @param {string} body the raw body
 * @param {number} [nowSeconds]
 */
export function verifyWebhook(secret, headers, body, nowSeconds = Date.now() / 1000) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string' || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > WEBHOOK_TOLERANCE_S) return false;
  const expected = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64')).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((part) => {
    const [version, signature] = part.split(',');
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/**
 * @typedef {object} DemoHostOptions
 * @property {number} [port] Port to listen on (default 0: any free port).
 * @property {string} [host] Interface to listen on (default 127.0.0.1).
 * @property {string} svcUrl svc's base URL, e.g. `http://127.0.0.1:3000`: the SDK's `baseUrl` and the backend's API.
 * @property {string} apiKey An admin API key of the svc account; used by the backend only, never sent to the browser.
 * @property {number} deploymentId The deployment the sessions are scoped to.
 * @property {string} [publicId] The dashboard to embed (default `sales-performance`).
 * @property {string} [externalId] The first customer's viewer's external id (default `ann-1`).
 * @property {DemoCustomer[]} [customers] The customers the page switches between (default {@link DEMO_CUSTOMERS}).
 * @property {boolean} [webhooks] Register this host's webhook endpoint in svc on start (default true) and show a toast
 *   when a `comment.created` mentions the signed-in viewer. svc must be allowed to deliver to this host's address (the
 *   demo account's `allowPrivateWebhookUrls`); when registering fails, the host runs without toasts and says why.
 */

/**
 * @typedef {object} DemoHost
 * @property {string} url The address the server listens on, e.g. `http://127.0.0.1:3001`.
 * @property {number | undefined} webhookEndpointId svc's id of the host's webhook endpoint, once registered.
 * @property {() => Promise<void>} close Stops listening and drops open connections.
 */

/**
 * Starts the demo host: `GET /` (the page), `/sdk.js`, `/app.js`, `/styles.css`, `POST /api/svc-session` (mints a
 * session id with svc's Generate Session for one customer's viewer) and `POST /api/svc-logout` (revokes every
 * session of that viewer). Both POST routes take `{ "customer": "customer-b" }`; without a body, the first customer.
 * With webhooks: `POST /api/svc-webhook` (svc's deliveries), `GET /api/notifications?customer=` (the page's mention
 * toasts, Server-Sent Events) and `GET /api/people?customer=&externalId=` (names for the external ids of an event).
 * @param {DemoHostOptions} options
 * @returns {Promise<DemoHost>}
 */
export async function startDemoHost({ port = 0, host = '127.0.0.1', svcUrl, apiKey, deploymentId, publicId = 'sales-performance', externalId, customers = DEMO_CUSTOMERS, webhooks = true }) {
  if (typeof svcUrl !== 'string' || !/^https?:\/\//.test(svcUrl)) throw new TypeError(`svcUrl must be an http(s) URL, got ${JSON.stringify(svcUrl)}`);
  if (typeof apiKey !== 'string' || apiKey === '') throw new TypeError('apiKey is required');
  if (!Number.isInteger(deploymentId)) throw new TypeError(`deploymentId must be an integer, got ${JSON.stringify(deploymentId)}`);
  if (!Array.isArray(customers) || customers.length === 0) throw new TypeError('customers must be a non-empty list');
  const svc = svcUrl.replace(/\/+$/, '');
  const viewers = customers.map((customer, i) => (i === 0 && externalId !== undefined ? { ...customer, externalId } : { ...customer }));
  const viewerOf = new Map(viewers.map((viewer) => [viewer.tenant, viewer]));
  const page = renderPage({ svcUrl: svc, publicId, deploymentId, customers: viewers.map(({ tenant, label, externalId: id, firstName, colleagues = [] }) => ({ tenant, label, externalId: id, firstName, colleagues: colleagues.map((c) => ({ externalId: c.externalId, firstName: c.firstName })) })) });

  /** Calls svc with the API key; resolves to svc's response or throws an Error whose message is safe to show. */
  const callSvc = async (path, body, method = 'POST') => {
    let response;
    try {
      response = await globalThis.fetch(`${svc}${path}`, {
        method,
        // Only a request with a body says what it is: svc refuses a Content-Type of JSON with an empty body (a DELETE).
        headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: globalThis.AbortSignal.timeout(SVC_TIMEOUT_MS),
      });
    } catch (error) {
      throw new SvcCallError('svc_unreachable', `svc at ${svc} did not answer: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
      let message = text.slice(0, 500);
      try {
        message = JSON.parse(text)?.error?.message ?? message;
      } catch {
        // not JSON: keep the text
      }
      throw new SvcCallError('svc_refused', `svc answered ${response.status} to ${path}: ${message}`);
    }
    return response;
  };

  /** Generate Session for one customer's viewer: its rows (securityContext.tenant), and this dashboard only. */
  const mintSession = async (viewer) => {
    const response = await callSvc('/api/v1/embed/generate-session', {
      deploymentId,
      externalId: viewer.externalId,
      embedTenantName: viewer.embedTenantName,
      username: viewer.username,
      firstName: viewer.firstName,
      email: viewer.email,
      securityContext: { tenant: viewer.tenant },
      dashboards: [publicId],
      // Issue 35: the demo's viewers build, save and share charts and views in the embed (docs/explore.md).
      settings: { explore: 'create' },
    });
    const body = await response.json().catch(() => undefined);
    if (typeof body?.sessionId !== 'string') throw new SvcCallError('svc_refused', 'svc answered Generate Session without a sessionId');
    return body.sessionId;
  };

  const logout = async (viewer) => {
    await callSvc('/api/v1/embed/session/revoke', { externalId: viewer.externalId, embedTenantName: viewer.embedTenantName });
  };

  /** The secret of this host's webhook endpoint (shown by svc once, when the host registers it on start). */
  let webhookSecret;
  let webhookEndpointId;
  /** Open notification streams of the page, by customer tenant. */
  const listeners = new Map();

  /** Tells the pages of a customer's viewer that they were mentioned (Server-Sent Events). */
  const notify = (tenant, notification) => {
    for (const response of listeners.get(tenant) ?? []) response.write(`event: mention\ndata: ${JSON.stringify(notification)}\n\n`);
  };

  /**
   * The names of embed users, as this host shows people: svc's events carry external ids (this host's own ids), so
   * the host names them from what it knows: its own customers' viewers first, else the embed users svc keeps for it
   * (`GET /api/v1/embed/users`, the first name it gave Generate Session, else the username), read once per tenant
   * and again when an id is missing: at once for an id not asked about before (a viewer who just signed in), at most
   * every few seconds for one that stays unknown. An id nobody knows stays as it is.
   */
  const directories = new Map();
  const missingAskedAt = new Map();
  const namesOf = async (embedTenantName, externalIds) => {
    const own = (id) => viewers.find((v) => v.embedTenantName === embedTenantName && v.externalId === id)?.firstName;
    let directory = directories.get(embedTenantName);
    const now = Date.now();
    const missing = externalIds.filter((id) => own(id) === undefined && !directory?.names.has(id));
    const isDue = missing.some((id) => now - (missingAskedAt.get(`${embedTenantName}\n${id}`) ?? -Infinity) > NAMES_REREAD_MS);
    for (const id of missing) missingAskedAt.set(`${embedTenantName}\n${id}`, now);
    if (missingAskedAt.size > 10_000) missingAskedAt.clear();
    if (isDue) {
      try {
        const { users } = await (await callSvc(`/api/v1/embed/users?embedTenantName=${encodeURIComponent(embedTenantName)}`, undefined, 'GET')).json();
        directory = { readAt: Date.now(), names: new Map(users.map((user) => [user.externalId, user.firstName?.trim() || user.username])) };
        directories.set(embedTenantName, directory);
      } catch (error) {
        console.warn(`demo host: could not read the embed users of ${embedTenantName}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return externalIds.map((id) => own(id) ?? directory?.names.get(id) ?? id);
  };

  /** Dashboard titles by publicId (a webhook names the dashboard by its publicId), read from svc once each. */
  const titles = new Map();
  const titleOf = async (publicId) => {
    if (!titles.has(publicId)) {
      try {
        const dashboard = await (await callSvc(`/api/v1/embed/dashboard/${encodeURIComponent(publicId)}`, undefined, 'GET')).json();
        if (typeof dashboard?.title === 'string' && dashboard.title !== '') titles.set(publicId, dashboard.title);
      } catch {
        // Shown by its publicId; asked again next time.
      }
    }
    return titles.get(publicId) ?? publicId;
  };

  /** A verified `comment.created`: a toast for each mentioned viewer of this host who is one of its customers. */
  const onWebhook = async (event) => {
    if (event?.type !== 'comment.created' || !Array.isArray(event.data?.mentions)) return;
    const mentioned = event.data.mentions.map((mention) => viewers.find((v) => v.embedTenantName === event.data.embedTenant && v.externalId === mention.externalId)).filter(Boolean);
    if (mentioned.length === 0) return;
    const authorId = event.data.author?.externalId;
    const [by] = typeof authorId === 'string' ? await namesOf(event.data.embedTenant, [authorId]) : ['Someone'];
    const dashboardTitle = await titleOf(event.data.dashboardId);
    for (const viewer of mentioned) {
      notify(viewer.tenant, {
        externalId: viewer.externalId, by, byExternalId: authorId ?? null, dashboardId: event.data.dashboardId, dashboardTitle,
        threadId: event.data.threadId, commentId: event.data.commentId,
      });
    }
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      console.error('demo host: request failed', error);
      if (!response.headersSent) sendJson(response, 500, errorBody(500, 'internal', 'the demo host failed'));
      else response.destroy();
    });
  });

  /** @param {import('node:http').IncomingMessage} request @param {import('node:http').ServerResponse} response */
  const handle = async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://demo-host.invalid').pathname;
    response.setHeader('x-content-type-options', 'nosniff');
    const isSessionRoute = path === '/api/svc-session' || path === '/api/svc-logout';
    const isWebhookRoute = path === '/api/svc-webhook';
    // Only a POST to the session and webhook routes reads its body: any other is dropped so the connection can be reused.
    let body = '';
    if (isSessionRoute && request.method === 'POST') body = await readBody(request);
    else if (isWebhookRoute && request.method === 'POST') body = await readBody(request, MAX_WEBHOOK_BYTES);
    else request.resume();

    if (isWebhookRoute) {
      if (!allowMethod(request, response, ['POST'])) return;
      // svc's signature is the only credential of this route: anything unsigned, forged or stale is refused.
      if (webhookSecret === undefined || body === undefined || !verifyWebhook(webhookSecret, request.headers, body)) {
        sendJson(response, 401, errorBody(401, 'bad_signature', 'the webhook signature does not verify'));
        return;
      }
      let event;
      try {
        event = JSON.parse(body);
      } catch {
        sendJson(response, 400, errorBody(400, 'bad_request', 'the webhook body is not JSON'));
        return;
      }
      // Answered at once: naming the people may ask svc, which must not wait on its own delivery.
      response.writeHead(204).end();
      onWebhook(event).catch((error) => console.error('demo host: a webhook could not be shown', error));
      return;
    }
    if (path === '/api/people') {
      // The page's svc:event:comment carries the mentioned viewers' external ids; the page shows their names.
      if (!allowMethod(request, response, ['GET'])) return;
      const query = new URL(request.url ?? '/', 'http://demo-host.invalid').searchParams;
      const viewer = viewerOf.get(query.get('customer') ?? viewers[0].tenant);
      const externalIds = query.getAll('externalId');
      if (viewer === undefined || externalIds.length > MAX_PEOPLE) {
        sendJson(response, 400, errorBody(400, 'bad_request', `customer must be one of ${[...viewerOf.keys()].join(', ')}, with at most ${MAX_PEOPLE} externalId`));
        return;
      }
      const names = await namesOf(viewer.embedTenantName, externalIds);
      sendJson(response, 200, { people: externalIds.map((externalId, i) => ({ externalId, name: names[i] })) });
      return;
    }
    if (path === '/api/notifications') {
      if (!allowMethod(request, response, ['GET'])) return;
      const tenant = new URL(request.url ?? '/', 'http://demo-host.invalid').searchParams.get('customer') ?? viewers[0].tenant;
      if (!viewerOf.has(tenant)) {
        sendJson(response, 400, errorBody(400, 'bad_request', `customer must be one of ${[...viewerOf.keys()].join(', ')}`));
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
      response.write(`event: ready\ndata: ${JSON.stringify({ webhooks: webhookSecret !== undefined })}\n\n`);
      const set = listeners.get(tenant) ?? new Set();
      listeners.set(tenant, set.add(response));
      const heartbeat = globalThis.setInterval(() => response.write(': heartbeat\n\n'), 15_000);
      // The answer's close, not the request's: a request without a body counts as closed once it is read.
      response.on('close', () => {
        globalThis.clearInterval(heartbeat);
        set.delete(response);
      });
      return;
    }

    if (path === '/' || path === '/index.html') {
      if (!allowMethod(request, response, ['GET', 'HEAD'])) return;
      send(response, 200, 'text/html; charset=utf-8', page, request.method === 'HEAD');
      return;
    }
    const asset = Object.hasOwn(STATIC_FILES, path) ? STATIC_FILES[path] : undefined;
    if (asset !== undefined) {
      if (!allowMethod(request, response, ['GET', 'HEAD'])) return;
      let content;
      try {
        content = await readFile(asset.file);
      } catch {
        sendJson(response, 500, errorBody(500, 'missing_file', asset.missing ?? `${path} is missing`));
        return;
      }
      send(response, 200, asset.type, content, request.method === 'HEAD');
      return;
    }
    if (isSessionRoute) {
      if (!allowMethod(request, response, ['POST'])) return;
      if (!sameOrigin(request)) {
        sendJson(response, 403, errorBody(403, 'cross_origin', 'only the demo page itself may call its backend'));
        return;
      }
      const viewer = viewerFrom(body, viewerOf, viewers[0]);
      if (typeof viewer === 'string') {
        sendJson(response, 400, errorBody(400, 'bad_request', viewer));
        return;
      }
      try {
        if (path === '/api/svc-session') {
          sendJson(response, 200, { sessionId: await mintSession(viewer) });
        } else {
          await logout(viewer);
          response.writeHead(204, { 'cache-control': 'no-store' }).end();
        }
      } catch (error) {
        if (!(error instanceof SvcCallError)) throw error;
        sendJson(response, 502, errorBody(502, error.code, error.message));
      }
      return;
    }
    sendJson(response, 404, errorBody(404, 'not_found', `no route ${request.method} ${path}`));
  };

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(undefined);
    });
  });
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  const hostname = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${hostname}:${address.port}`;
  if (webhooks) {
    try {
      // Replace the endpoints an earlier start of the host registered (their secrets are gone with that process).
      const existing = await (await callSvc('/api/v1/webhooks/endpoints', undefined, 'GET')).json();
      for (const endpoint of existing.items ?? []) {
        if (endpoint.description === WEBHOOK_DESCRIPTION && new URL(endpoint.url).port === String(address.port)) {
          await callSvc(`/api/v1/webhooks/endpoints/${endpoint.id}`, undefined, 'DELETE');
        }
      }
      const created = await (await callSvc('/api/v1/webhooks/endpoints', {
        url: `${url}/api/svc-webhook`, eventTypes: ['comment.created'], description: WEBHOOK_DESCRIPTION,
      })).json();
      webhookSecret = created.secret;
      webhookEndpointId = created.id;
    } catch (error) {
      console.warn(`demo host: no mention toasts: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return {
    url,
    get webhookEndpointId() {
      return webhookEndpointId;
    },
    close: () => new Promise((resolve, reject) => {
      for (const set of listeners.values()) for (const response of set) response.end();
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections();
    }),
  };
}

/**
 * The request body as text (at most `limit` bytes; the rest is read and dropped), or `undefined` when it was longer.
 * @param {import('node:http').IncomingMessage} request
 * @param {number} [limit]
 * @returns {Promise<string | undefined>}
 */
async function readBody(request, limit = MAX_BODY_BYTES) {
  const chunks = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  return size > limit ? undefined : Buffer.concat(chunks).toString('utf8');
}

/**
 * The viewer a session route is for: the body's `customer` (a customer's tenant), or the first customer when the
 * body is empty; with `externalId`, that viewer of the customer (its own, or one of its colleagues). A message for
 * a 400 otherwise.
 * @param {string | undefined} body
 * @param {Map<string, DemoCustomer>} viewerOf
 * @param {DemoCustomer} first
 * @returns {DemoCustomer | string}
 */
function viewerFrom(body, viewerOf, first) {
  if (body === undefined) return `the body is larger than ${MAX_BODY_BYTES} bytes`;
  if (body.trim() === '') return first;
  let parsed;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'the body is not JSON: send {"customer": "customer-a"}';
  }
  const customer = parsed?.customer;
  if (customer === undefined) return first;
  const known = [...viewerOf.keys()];
  if (typeof customer !== 'string' || !viewerOf.has(customer)) return `customer must be one of ${known.join(', ')}; got ${JSON.stringify(customer)}`;
  const viewer = viewerOf.get(customer);
  const externalId = parsed?.externalId;
  if (externalId === undefined || externalId === viewer.externalId) return viewer;
  const colleague = (viewer.colleagues ?? []).find((c) => c.externalId === externalId);
  if (typeof externalId !== 'string' || colleague === undefined) return `externalId must be one of ${[viewer.externalId, ...(viewer.colleagues ?? []).map((c) => c.externalId)].join(', ')}; got ${JSON.stringify(externalId)}`;
  return { ...viewer, ...colleague };
}

/** An svc call that failed: answered as 502 with its code and message. */
class SvcCallError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = 'SvcCallError';
    this.code = code;
  }
}

/** svc's error body shape (DESIGN: every non-2xx), reused so the page reads one shape. */
function errorBody(status, code, message) {
  return { error: { status, code, message } };
}

function send(response, status, type, body, headOnly = false) {
  response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  response.end(headOnly ? undefined : body);
}

function sendJson(response, status, body) {
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

function allowMethod(request, response, methods) {
  if (methods.includes(request.method ?? '')) return true;
  response.setHeader('allow', methods.join(', '));
  sendJson(response, 405, errorBody(405, 'method_not_allowed', `${request.method} is not allowed here; use ${methods.join(' or ')}`));
  return false;
}

/**
 * A browser sends `Origin` on every POST; when present it must be this server's own (so another site cannot mint
 * sessions or log the viewer out from its pages). Non-browser clients (curl, tests) send none and are let through.
 */
function sameOrigin(request) {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

/** Text for HTML: `&`, `<`, `>`, `"` and `'` escaped. */
function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that is safe inside a `<script>` element. */
function scriptJson(value) {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

const OPTION = (value, label = value) => `<option value="${escapeHtml(value)}">${escapeHtml(label)}</option>`;

/**
 * The host page: header with the customer switch, the embed's container, the controls for every action and the
 * live event log. `customers` are what the page may show of each customer: never a key.
 */
export function renderPage({ svcUrl, publicId, deploymentId, customers }) {
  const config = { svcUrl, publicId, deploymentId, customers };
  const [first] = customers;
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>svc demo host: ${escapeHtml(publicId)}</title>
  <link rel="stylesheet" href="/styles.css">
  <script type="application/json" id="demo-config">${scriptJson(config)}</script>
  <script type="module" src="/app.js"></script>
</head>
<body>
  <header class="site-header">
    <div>
      <h1>Acme Portal <span class="badge">demo host</span></h1>
      <p class="subtitle">An example customer app on its own origin, embedding the svc dashboard
        <code>${escapeHtml(publicId)}</code> from <code>${escapeHtml(svcUrl)}</code> with <code>@svc/embed-sdk</code>.</p>
    </div>
    <div class="session-box">
      <div class="customer-switch" role="group" aria-labelledby="customer-switch-label">
        <span id="customer-switch-label" class="switch-label">Customer</span>
        ${customers.map((c, i) => `<button type="button" data-customer="${escapeHtml(c.tenant)}" aria-pressed="${i === 0}">${escapeHtml(c.label)} · ${escapeHtml(c.firstName)}</button>`).join('\n        ')}
      </div>
      <p class="viewer">Signed in as <strong id="viewer-name">${escapeHtml(first.firstName)}</strong>
        (<code id="viewer-id">${escapeHtml(first.externalId)}</code>, tenant <code id="viewer-tenant">${escapeHtml(first.tenant)}</code>)
        <span id="status" class="status" role="status">loading…</span></p>
      <p class="hint switch-hint">Each customer sees only its own orders: the backend mints the session with
        <code>securityContext.tenant</code>, and svc's access policy on <code>orders</code> filters by it.</p>
    </div>
  </header>

  <div id="toasts" class="toasts" role="status" aria-live="polite"></div>

  <main class="layout">
    <section class="embed-panel" aria-labelledby="embed-heading">
      <h2 id="embed-heading">Dashboard</h2>
      <div id="embed" class="embed-container"></div>
      <div id="logged-out" class="logged-out" hidden>
        <p>You are logged out: every session of <code id="logged-out-id">${escapeHtml(first.externalId)}</code> was revoked and the embed removed.</p>
        <button type="button" id="login">Log in again</button>
      </div>
    </section>

    <aside class="controls" aria-labelledby="controls-heading">
      <h2 id="controls-heading">Actions</h2>

      <fieldset>
        <legend>Colour scheme</legend>
        <div class="buttons">
          <button type="button" data-scheme="light">Light</button>
          <button type="button" data-scheme="dark">Dark</button>
          <button type="button" data-scheme="auto">Auto</button>
        </div>
      </fieldset>

      <form id="theme-form">
        <fieldset>
          <legend>Theme</legend>
          <label for="theme-primary">Primary colour</label>
          <input id="theme-primary" name="primaryColor" type="color" value="#4f46e5">
          <label for="theme-radius">Border radius</label>
          <input id="theme-radius" name="borderRadius" type="text" value="8px" placeholder="8px">
          <label for="theme-font">Font</label>
          <input id="theme-font" name="font" type="text" value="" placeholder="Georgia, serif">
          <button type="submit">Apply theme</button>
        </fieldset>
      </form>

      <form id="locale-form">
        <fieldset>
          <legend>Locale</legend>
          <label for="locale">Language</label>
          <select id="locale" name="locale">
            ${['en-US', 'de-DE', 'fr', 'pt-BR', 'ja-JP'].map((l) => OPTION(l)).join('\n            ')}
          </select>
          <button type="submit">Set locale</button>
        </fieldset>
      </form>

      <form id="timezone-form">
        <fieldset>
          <legend>Time zone</legend>
          <label for="timezone">Time zone</label>
          <select id="timezone" name="timezone">
            ${[['UTC'], ['Europe/Berlin'], ['America/New_York'], ['Asia/Tokyo'], ['+02:00', '+02:00 (bare offset: ignored by the embed)']].map(([v, l]) => OPTION(v, l)).join('\n            ')}
          </select>
          <button type="submit">Set time zone</button>
        </fieldset>
      </form>

      <form id="filter-form">
        <fieldset>
          <legend>Filter</legend>
          <label for="filter-view">Semantic view</label>
          <input id="filter-view" name="view" type="text" value="orders" required>
          <label for="filter-dimension">Dimension</label>
          <input id="filter-dimension" name="dimension" type="text" value="status" required>
          <label for="filter-value">Value (JSON)</label>
          <input id="filter-value" name="value" type="text" value='["completed"]' required spellcheck="false">
          <button type="submit">Set filter</button>
        </fieldset>
      </form>

      <form id="navigate-form">
        <fieldset>
          <legend>Navigate</legend>
          <label for="navigate-path">In-embed path</label>
          <input id="navigate-path" name="path" type="text" required spellcheck="false"
            placeholder="/embed/d/${escapeHtml(deploymentId)}/app/workbook/1">
          <button type="submit">Navigate</button>
        </fieldset>
      </form>

      <fieldset>
        <legend>Data and session</legend>
        <div class="buttons">
          <button type="button" id="refresh">Refresh</button>
          <button type="button" id="renew">Renew session now</button>
          <button type="button" id="logout" class="danger">Log out</button>
        </div>
      </fieldset>
    </aside>

    <section class="log-panel" aria-labelledby="log-heading">
      <div class="log-header">
        <h2 id="log-heading">Event log <span class="hint">(newest first)</span></h2>
        <button type="button" id="clear-log">Clear log</button>
      </div>
      <!-- The live region and scroll box wraps the list: an <ol> with role="log" is no list, and its items none (axe:
           listitem); a tab stop, so that the keyboard scrolls it (axe: scrollable-region-focusable). -->
      <div class="log" role="log" aria-live="polite" aria-labelledby="log-heading" tabindex="0"><ol id="log" class="log-entries"></ol></div>
    </section>
  </main>
</body>
</html>
`;
}
