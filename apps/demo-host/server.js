// The demo host: an example customer app on its own origin that embeds an svc dashboard.
// Its backend holds the svc API key and mints one session id per request; the browser only ever sees session ids.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';

/** The SDK bundle built by `npm run build` (self-contained ESM, no imports). */
const SDK_FILE = new URL('../../packages/embed-sdk/dist/index.js', import.meta.url);
const PUBLIC_DIR = new URL('./public/', import.meta.url);

/** Static files of the page, by request path. */
const STATIC_FILES = {
  '/sdk.js': { file: SDK_FILE, type: 'text/javascript; charset=utf-8', missing: 'the SDK bundle is missing: run `npm run build` at the repository root' },
  '/app.js': { file: new URL('app.js', PUBLIC_DIR), type: 'text/javascript; charset=utf-8' },
  '/styles.css': { file: new URL('styles.css', PUBLIC_DIR), type: 'text/css; charset=utf-8' },
};

/** The fixed demo viewer (an embed user of the demo account's embed tenant `customer-a`). */
export const DEMO_VIEWER = { externalId: 'ann-1', embedTenantName: 'customer-a', username: 'ann', firstName: 'Ann', email: 'ann@a.test' };

/** How long the backend waits for svc before answering 502. */
const SVC_TIMEOUT_MS = 10_000;

/**
 * @typedef {object} DemoHostOptions
 * @property {number} [port] Port to listen on (default 0: any free port).
 * @property {string} [host] Interface to listen on (default 127.0.0.1).
 * @property {string} svcUrl svc's base URL, e.g. `http://127.0.0.1:3000`: the SDK's `baseUrl` and the backend's API.
 * @property {string} apiKey An admin API key of the svc account; used by the backend only, never sent to the browser.
 * @property {number} deploymentId The deployment the sessions are scoped to.
 * @property {string} [publicId] The dashboard to embed (default `sales-performance`).
 * @property {string} [externalId] The demo viewer's external id (default `ann-1`).
 */

/**
 * @typedef {object} DemoHost
 * @property {string} url The address the server listens on, e.g. `http://127.0.0.1:3001`.
 * @property {() => Promise<void>} close Stops listening and drops open connections.
 */

/**
 * Starts the demo host: `GET /` (the page), `/sdk.js`, `/app.js`, `/styles.css`, `POST /api/svc-session` (mints a
 * session id with svc's Generate Session) and `POST /api/svc-logout` (revokes every session of the viewer).
 * @param {DemoHostOptions} options
 * @returns {Promise<DemoHost>}
 */
export async function startDemoHost({ port = 0, host = '127.0.0.1', svcUrl, apiKey, deploymentId, publicId = 'sales-performance', externalId = DEMO_VIEWER.externalId }) {
  if (typeof svcUrl !== 'string' || !/^https?:\/\//.test(svcUrl)) throw new TypeError(`svcUrl must be an http(s) URL, got ${JSON.stringify(svcUrl)}`);
  if (typeof apiKey !== 'string' || apiKey === '') throw new TypeError('apiKey is required');
  if (!Number.isInteger(deploymentId)) throw new TypeError(`deploymentId must be an integer, got ${JSON.stringify(deploymentId)}`);
  const svc = svcUrl.replace(/\/+$/, '');
  const viewer = { ...DEMO_VIEWER, externalId };
  const page = renderPage({ svcUrl: svc, publicId, deploymentId, externalId: viewer.externalId });

  /** Calls svc with the API key; resolves to svc's response or throws an Error whose message is safe to show. */
  const callSvc = async (path, body) => {
    let response;
    try {
      response = await globalThis.fetch(`${svc}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
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

  const mintSession = async () => {
    const response = await callSvc('/api/v1/embed/generate-session', {
      deploymentId,
      externalId: viewer.externalId,
      embedTenantName: viewer.embedTenantName,
      username: viewer.username,
      firstName: viewer.firstName,
      email: viewer.email,
    });
    const body = await response.json().catch(() => undefined);
    if (typeof body?.sessionId !== 'string') throw new SvcCallError('svc_refused', 'svc answered Generate Session without a sessionId');
    return body.sessionId;
  };

  const logout = async () => {
    await callSvc('/api/v1/embed/session/revoke', { externalId: viewer.externalId, embedTenantName: viewer.embedTenantName });
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
    // The body of a request is never needed: read and drop it so the connection can be reused.
    request.resume();
    response.setHeader('x-content-type-options', 'nosniff');

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
    if (path === '/api/svc-session' || path === '/api/svc-logout') {
      if (!allowMethod(request, response, ['POST'])) return;
      if (!sameOrigin(request)) {
        sendJson(response, 403, errorBody(403, 'cross_origin', 'only the demo page itself may call its backend'));
        return;
      }
      try {
        if (path === '/api/svc-session') {
          sendJson(response, 200, { sessionId: await mintSession() });
        } else {
          await logout();
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
  return {
    url: `http://${hostname}:${address.port}`,
    close: () => new Promise((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections();
    }),
  };
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

/** The host page: header, the embed's container, the controls for every action and the live event log. */
export function renderPage({ svcUrl, publicId, deploymentId, externalId }) {
  const config = { svcUrl, publicId, deploymentId, externalId };
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
    <p class="viewer">Signed in as <strong>Ann</strong> (<code>${escapeHtml(externalId)}</code>, tenant <code>customer-a</code>)
      <span id="status" class="status" role="status">loading…</span></p>
  </header>

  <main class="layout">
    <section class="embed-panel" aria-labelledby="embed-heading">
      <h2 id="embed-heading">Dashboard</h2>
      <div id="embed" class="embed-container"></div>
      <div id="logged-out" class="logged-out" hidden>
        <p>You are logged out: every session of <code>${escapeHtml(externalId)}</code> was revoked and the embed removed.</p>
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
          <input id="filter-value" name="value" type="text" value='["paid"]' required spellcheck="false">
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
      <ol id="log" class="log" role="log" aria-live="polite"></ol>
    </section>
  </main>
</body>
</html>
`;
}
