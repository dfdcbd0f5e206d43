// The demo host page's script (runs in the browser): embeds the dashboard with @svc/embed-sdk, logs every event
// and wires every action to the controls. Session ids come from this host's own backend (/api/svc-session).
/* global document, fetch, FormData, history, location, EventSource, setTimeout, URLSearchParams */
import { debug, embed } from '/sdk.js';

const config = JSON.parse(document.getElementById('demo-config').textContent);

/** Every event the SDK emits: SPEC's catalogue, svc's action-result and the SDK's own renewal-failed. */
const EVENTS = [
  'ready', 'view', 'navigate', 'dashboard-loaded', 'download', 'drilldown', 'ai-query',
  'session-expiring', 'session-expired', 'error', 'action-result', 'renewal-failed', 'comment',
];
const MAX_LOG_ENTRIES = 300;

const $ = (id) => document.getElementById(id);
const logList = $('log');
const status = $('status');
const container = $('embed');
const loggedOut = $('logged-out');
const switchButtons = [...document.querySelectorAll('[data-customer]')];

const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hourCycle: 'h23' });

/**
 * Adds an entry on top of the log.
 * @param {'event' | 'action' | 'info' | 'error'} kind
 * @param {string} label
 * @param {unknown} [payload]
 */
function log(kind, label, payload) {
  const item = document.createElement('li');
  item.className = `entry entry-${kind}`;
  const head = document.createElement('div');
  head.className = 'entry-head';
  const when = document.createElement('time');
  const now = new Date();
  when.dateTime = now.toISOString();
  when.textContent = time.format(now);
  const kindLabel = document.createElement('span');
  kindLabel.className = 'entry-kind';
  kindLabel.textContent = kind;
  const name = document.createElement('strong');
  name.textContent = label;
  head.append(when, kindLabel, name);
  item.append(head);
  if (payload !== undefined) {
    const pre = document.createElement('pre');
    pre.textContent = stringify(payload);
    item.append(pre);
  }
  logList.prepend(item);
  while (logList.children.length > MAX_LOG_ENTRIES) logList.lastElementChild.remove();
}

/** JSON of a payload; Errors (renewal-failed carries an SvcEmbedError) show their name, code, message and cause. */
function stringify(value) {
  try {
    return JSON.stringify(value, (_key, v) => (v instanceof Error ? describeError(v) : v), 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function describeError(error) {
  const out = { name: error.name, message: error.message };
  if (error.code !== undefined) out.code = error.code;
  if (error.cause !== undefined) out.cause = error.cause instanceof Error ? describeError(error.cause) : error.cause;
  return out;
}

function setStatus(text) {
  status.textContent = text;
}

// ---- the customer: whose viewer the sessions are for (?customer= picks the first one) ----

/**
 * The customer whose viewer is signed in: one of config.customers, whose tenant the backend puts in securityContext;
 * `?viewer=` picks another viewer of that customer (one of its colleagues: issue 35's "a second viewer sees shared").
 */
let customer = (() => {
  const params = new URL(location.href).searchParams;
  const chosen = config.customers.find((c) => c.tenant === params.get('customer')) ?? config.customers[0];
  const colleague = (chosen.colleagues ?? []).find((c) => c.externalId === params.get('viewer'));
  return colleague === undefined ? chosen : { ...chosen, ...colleague };
})();

/** Shows the signed-in customer in the header and the switch, and keeps it in the address (a reload keeps it). */
function showCustomer() {
  $('viewer-name').textContent = customer.firstName;
  $('viewer-id').textContent = customer.externalId;
  $('viewer-tenant').textContent = customer.tenant;
  $('logged-out-id').textContent = customer.externalId;
  for (const button of switchButtons) button.setAttribute('aria-pressed', String(button.dataset.customer === customer.tenant));
  const url = new URL(location.href);
  url.searchParams.set('customer', customer.tenant);
  const main = config.customers.find((c) => c.tenant === customer.tenant);
  if (main !== undefined && main.externalId !== customer.externalId) url.searchParams.set('viewer', customer.externalId);
  else url.searchParams.delete('viewer');
  history.replaceState(null, '', url);
}

// ---- sessions: minted by this host's backend, which holds the API key ----

let handle;
let sessionCount = 0;
let manualRenewal = false;

/**
 * The SDK's getSessionId for one customer: called for the first load and for every renewal (a fresh id each time).
 * Bound to the customer at mount, so a late renewal of an embed being replaced never mints for the other customer.
 */
async function getSessionId(forCustomer) {
  sessionCount += 1;
  const reason = sessionCount === 1 ? 'first load' : manualRenewal ? 'manual renewal' : 'automatic renewal (or a retry)';
  log('info', `getSessionId #${sessionCount}: ${reason}`, { request: 'POST /api/svc-session', customer: forCustomer.tenant });
  let response;
  try {
    response = await fetch('/api/svc-session', {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ customer: forCustomer.tenant, externalId: forCustomer.externalId }),
    });
  } catch (error) {
    log('error', 'the demo backend did not answer', describeError(error));
    throw error;
  }
  const body = await response.json().catch(() => undefined);
  if (!response.ok || typeof body?.sessionId !== 'string') {
    const message = body?.error?.message ?? `POST /api/svc-session answered ${response.status}`;
    log('error', 'could not mint a session', body ?? { status: response.status });
    throw new Error(message);
  }
  // A session id is a single-use credential: shown shortened, for the demo.
  log('info', `session #${sessionCount} minted`, { sessionId: `${body.sessionId.slice(0, 10)}…` });
  return body.sessionId;
}

function mount() {
  sessionCount = 0;
  container.hidden = false;
  loggedOut.hidden = true;
  setStatus('loading…');
  const forCustomer = customer;
  try {
    handle = embed({
      container,
      baseUrl: config.svcUrl,
      surface: 'dashboard',
      publicId: config.publicId,
      getSessionId: () => getSessionId(forCustomer),
      allowExport: true,
      // The iframe takes the dashboard's height (svc's content-size event): the page scrolls, not the frame.
      autoResize: true,
      // The default, said out loud: the comment panel starts open only where the grid beside it keeps the
      // dashboard's own layout (at 1280 px it starts as its button, so that the first screen shows data).
      comments: 'auto',
      // Says why a message was dropped, in words (from @svc/embed-sdk/tools; `debug: true` logs the message itself).
      debug,
    });
  } catch (error) {
    handle = undefined;
    setStatus('embed failed');
    log('error', 'embed() refused its options', describeError(error));
    return;
  }
  for (const name of EVENTS) {
    handle.on(name, (payload) => {
      log(name === 'error' || name === 'renewal-failed' ? 'error' : 'event', name, payload);
      onEvent(name, payload);
    });
  }
}

function onEvent(name, payload) {
  switch (name) {
    case 'ready':
      setStatus(`ready (${payload.mode})`);
      break;
    case 'dashboard-loaded':
      setStatus('dashboard loaded');
      break;
    case 'session-expiring':
    case 'session-expired':
      log('info', `${name}: the SDK renews the session (once per session)`);
      if (name === 'session-expired') setStatus('session expired: renewing…');
      break;
    case 'action-result':
      if (payload.action === 'svc:action:set-session') {
        log(payload.ok ? 'info' : 'error', payload.ok ? 'session renewed: the embed confirmed set-session' : 'the embed refused the new session id');
        if (payload.ok) setStatus('session renewed');
      }
      break;
    case 'renewal-failed':
      setStatus('renewal failed: reload the page');
      break;
    case 'error':
      if (payload.fatal) setStatus('embed error');
      break;
    case 'comment':
      if (payload.mentionedExternalIds.length > 0) void toastMentioned(payload.mentionedExternalIds);
      break;
    default:
      break;
  }
}

// ---- actions ----

/** Runs an action on the live embed; logs it, and logs (never throws) when it cannot be sent. */
function act(label, payload, send) {
  if (handle === undefined) {
    log('error', `${label}: no embed (log in again first)`);
    return;
  }
  try {
    send(handle);
    log('action', label, payload);
  } catch (error) {
    log('error', `${label} failed`, describeError(error));
  }
}

/** Wires a form's submit to a handler that gets its fields; a handler that throws is logged, never rethrown. */
function onSubmit(id, handler) {
  $(id).addEventListener('submit', (event) => {
    event.preventDefault();
    try {
      handler(Object.fromEntries(new FormData(event.currentTarget)));
    } catch (error) {
      log('error', `${id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

for (const button of document.querySelectorAll('[data-scheme]')) {
  button.addEventListener('click', () => {
    const scheme = button.dataset.scheme;
    act('set-color-scheme', { scheme }, (h) => h.setColorScheme(scheme));
  });
}

onSubmit('theme-form', (fields) => {
  const theme = {};
  if (fields.primaryColor) theme.primaryColor = String(fields.primaryColor);
  const radius = String(fields.borderRadius ?? '').trim();
  if (radius !== '') theme.borderRadius = /^\d+(\.\d+)?$/.test(radius) ? Number(radius) : radius;
  const font = String(fields.font ?? '').trim();
  if (font !== '') theme.font = font;
  act('set-theme', theme, (h) => h.setTheme(theme));
});

onSubmit('locale-form', ({ locale }) => {
  act('set-locale', { locale }, (h) => h.setLocale(String(locale)));
});

onSubmit('timezone-form', ({ timezone }) => {
  const tz = String(timezone);
  const note = /^[+-]\d{2}:?\d{2}$/.test(tz) ? ' (a bare offset: the embed ignores it and takes IANA names only)' : '';
  act(`set-timezone${note}`, { timezone: tz }, (h) => h.setTimezone(tz));
});

onSubmit('filter-form', ({ view, dimension, value }) => {
  const v = String(view ?? '').trim();
  const d = String(dimension ?? '').trim();
  if (v === '' || d === '') {
    log('error', 'set-filter: view and dimension are required');
    return;
  }
  let parsed;
  try {
    parsed = JSON.parse(String(value));
  } catch (error) {
    log('error', 'set-filter: the value is not valid JSON (try ["completed"], "completed" or 42)', { value, reason: error instanceof Error ? error.message : String(error) });
    return;
  }
  act('set-filter', { filterUrlParameter: `f_${v}.${d}=${JSON.stringify(parsed)}` }, (h) => h.setFilter(v, d, parsed));
});

onSubmit('navigate-form', ({ path }) => {
  const p = String(path ?? '').trim();
  if (p === '') {
    log('error', 'navigate: a path is required');
    return;
  }
  act('navigate', { path: p }, (h) => h.navigate(p));
});

$('refresh').addEventListener('click', () => act('refresh', {}, (h) => h.refresh()));

$('renew').addEventListener('click', () => {
  if (handle === undefined) {
    log('error', 'renew session: no embed (log in again first)');
    return;
  }
  const current = handle;
  manualRenewal = true;
  log('action', 'set-session (handle.setSession(): a fresh id from getSessionId)');
  let pending;
  try {
    pending = current.setSession();
  } catch (error) {
    pending = Promise.reject(error);
  } finally {
    // getSessionId is called synchronously by setSession(); later calls are automatic renewals again.
    manualRenewal = false;
  }
  pending.then(
    () => log('info', 'renew session now: done'),
    (error) => log('error', 'renew session now failed', describeError(error)),
  );
});

$('logout').addEventListener('click', async () => {
  const button = $('logout');
  button.disabled = true;
  try {
    const response = await fetch('/api/svc-logout', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customer: customer.tenant, externalId: customer.externalId }),
    });
    if (response.status !== 204) {
      const body = await response.json().catch(() => undefined);
      log('error', `log out failed (${response.status})`, body);
      return;
    }
    log('info', `logged out: every session of ${customer.externalId} revoked`);
    // SPEC set-session rule 5: revoking does not remove a running iframe, so the host removes it.
    handle?.destroy();
    handle = undefined;
    container.hidden = true;
    loggedOut.hidden = false;
    setStatus('logged out');
  } catch (error) {
    log('error', 'log out failed: the demo backend did not answer', describeError(error));
  } finally {
    button.disabled = false;
  }
});

$('login').addEventListener('click', () => {
  log('info', 'logging in again');
  mount();
});

// Switching customers signs the other viewer in: the running embed goes, and a new one loads with a session minted
// for that customer, so the dashboard shows that customer's rows only.
for (const button of switchButtons) {
  button.addEventListener('click', () => {
    const next = config.customers.find((c) => c.tenant === button.dataset.customer);
    if (next === undefined || (next === customer && handle !== undefined)) return;
    customer = next;
    showCustomer();
    listenForMentions();
    log('action', `switch customer: ${customer.label} (${customer.firstName}, tenant ${customer.tenant})`, { securityContext: { tenant: customer.tenant } });
    handle?.destroy();
    handle = undefined;
    mount();
  });
}

$('clear-log').addEventListener('click', () => logList.replaceChildren());

// ---- mentions: svc's webhook reaches this host's backend, which tells the page of the mentioned viewer ----

let mentions;

/** A toast for a few seconds: who mentioned the signed-in viewer, on which dashboard. */
function showToast(text) {
  const toast = document.createElement('div');
  toast.className = 'toast';
  toast.textContent = text;
  $('toasts').append(toast);
  setTimeout(() => toast.remove(), 8000);
}

/** "English" list of names: `Ann`, `Ann and Carl`, `Ann, Ben and Carl`. */
const names = new Intl.ListFormat('en', { style: 'long', type: 'conjunction' });

/**
 * The writer's toast for svc:event:comment: the event names the mentioned viewers by their external ids (this
 * host's own ids), and this host's backend knows their names (GET /api/people).
 */
async function toastMentioned(externalIds) {
  const query = new URLSearchParams({ customer: customer.tenant });
  for (const id of externalIds) query.append('externalId', id);
  let people = externalIds.map((externalId) => ({ externalId, name: externalId }));
  try {
    const response = await fetch(`/api/people?${query}`, { headers: { accept: 'application/json' } });
    if (response.ok) people = (await response.json()).people;
  } catch (error) {
    log('error', 'could not name the mentioned people', describeError(error));
  }
  showToast(`You mentioned ${names.format(people.map((person) => person.name))}: they are told by webhook`);
}

/** Follows the backend's notifications for the signed-in customer's viewer (one stream; a switch replaces it). */
function listenForMentions() {
  mentions?.close();
  mentions = new EventSource(`/api/notifications?customer=${encodeURIComponent(customer.tenant)}`);
  mentions.addEventListener('mention', (message) => {
    const mention = JSON.parse(message.data);
    showToast(`${mention.by} mentioned you in a comment on ${mention.dashboardTitle ?? mention.dashboardId}`);
    log('info', 'webhook: you were mentioned', mention);
  });
}

showCustomer();
listenForMentions();
mount();
