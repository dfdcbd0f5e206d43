#!/usr/bin/env node
// `npm start`: runs svc with its demo account (`svc serve --demo`, arguments passed through) and the demo host next
// to it, on another origin: http://localhost:3001 embeds the demo dashboard sales-performance from svc.
// It prints human lines only: svc's JSON log records become one line each, and svc logs at `warn` unless
// SVC_LOG_LEVEL says otherwise. SVC_DEMO_LOGS=json passes svc's JSON lines through as they are (at svc's own default
// level, `info`: every request).
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startDemoHost } from './server.js';

const SVC_BIN = fileURLToPath(new URL('../server/bin/svc.js', import.meta.url));
/** The demo account's admin key: public, it is in apps/server/demo/demo.json. */
const DEMO_API_KEY = 'svc_demo_admin_key_0001';
const PUBLIC_ID = 'sales-performance';
const READY_TIMEOUT_MS = 60_000;

const args = process.argv.slice(2);
const jsonLogs = process.env.SVC_DEMO_LOGS === 'json';
if (process.env.SVC_DEMO_LOGS !== undefined && !jsonLogs) {
  console.error(`SVC_DEMO_LOGS must be json (svc's JSON log lines as they are) or unset (human lines), got ${process.env.SVC_DEMO_LOGS}`);
  process.exit(1);
}
const svcAddress = svcAddressFrom(args);
const hostPort = Number(process.env.SVC_DEMO_HOST_PORT ?? 3001);
if (!Number.isInteger(hostPort) || hostPort < 0 || hostPort > 65535) {
  console.error(`demo host: SVC_DEMO_HOST_PORT must be an integer from 0 to 65535, got "${process.env.SVC_DEMO_HOST_PORT}"`);
  process.exit(1);
}

// Its own process group: a Ctrl-C reaches svc once, forwarded from here, not twice (terminal and forward).
const childEnv = { ...process.env };
if (!jsonLogs && childEnv.SVC_LOG_LEVEL === undefined) childEnv.SVC_LOG_LEVEL = 'warn';
const child = spawn(process.execPath, [SVC_BIN, 'serve', '--demo', ...args], { stdio: ['ignore', 'pipe', 'inherit'], detached: true, env: childEnv });
let listenedOn;
let ready = false;
let partial = '';
child.stdout.setEncoding('utf8').on('data', (chunk) => {
  const lines = (partial + chunk).split('\n');
  partial = lines.pop();
  for (const line of lines) {
    // svc prints "svc listening on http://127.0.0.1:3000 (...)": the address it really got (--port 0 too).
    const match = /^svc listening on (https?:\/\/\S+)/.exec(line);
    if (match !== null && listenedOn === undefined) listenedOn = browserAddress(match[1]);
    const shown = jsonLogs ? line : humanLine(line);
    if (shown !== undefined) process.stdout.write(`${shown}\n`);
  }
});
child.stdout.on('end', () => {
  const shown = partial === '' ? undefined : jsonLogs ? partial : humanLine(partial);
  if (shown !== undefined) process.stdout.write(`${shown}\n`);
});

const LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
/** The request of each request id whose completion is still to come: "GET /path". */
const requests = new Map();

/**
 * A line of svc's stdout as `npm start` shows it: its own lines as they are, a JSON log record as one human line
 * (a request as "GET /path -> 200 (3 ms)"), and undefined for a record that only opens a request.
 */
function humanLine(line) {
  let record;
  try {
    record = line.startsWith('{') ? JSON.parse(line) : undefined;
  } catch {
    record = undefined;
  }
  if (typeof record !== 'object' || record === null || typeof record.level !== 'number') return line;
  const level = LEVELS[record.level] ?? String(record.level);
  if (record.req !== undefined && record.msg === 'incoming request') {
    requests.set(record.reqId, `${record.req.method} ${record.req.url}`);
    return undefined;
  }
  if (record.res !== undefined && record.msg === 'request completed') {
    const request = requests.get(record.reqId) ?? `request ${record.reqId}`;
    requests.delete(record.reqId);
    return `svc: ${request} -> ${record.res.statusCode} (${Math.round(record.responseTime ?? 0)} ms)`;
  }
  const error = typeof record.err?.message === 'string' ? `: ${record.err.message}` : '';
  const request = record.reqId === undefined ? '' : ` (request ${record.reqId}${requests.has(record.reqId) ? `, ${requests.get(record.reqId)}` : ''})`;
  return `svc ${level}: ${record.msg ?? ''}${error}${request}`;
}

let host;
let stopping = false;
let childExited = false;
/** Set when the demo host could not start: the exit code, whatever svc's is. */
let failureCode;

child.once('exit', (code, signal) => {
  childExited = true;
  const exitCode = code ?? (stopping ? 0 : 128 + (constants.signals[signal] ?? 0));
  // Before it was ready, svc has said why on stderr; after, it stopped unexpectedly.
  if (!stopping && ready) console.error(`svc stopped unexpectedly (${code === null ? `signal ${signal}` : `exit code ${code}`}); the demo host stops too`);
  void closeHost().finally(() => process.exit(failureCode ?? exitCode));
});
child.once('error', (error) => {
  console.error(`could not start svc: ${error.message}`);
  process.exit(1);
});
// Never leave svc behind when this process ends on its own (a crash, an uncaught error).
process.once('exit', () => {
  if (!childExited) child.kill('SIGTERM');
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void closeHost();
    if (!childExited) child.kill(signal);
  });
}

async function closeHost() {
  const running = host;
  host = undefined;
  await running?.close().catch(() => undefined);
}

try {
  const svcUrl = await waitUntilReady();
  ready = true;
  const deploymentId = await demoDeploymentId(svcUrl);
  if (stopping) process.exit(0);
  host = await startDemoHost({ port: hostPort, host: '127.0.0.1', svcUrl, apiKey: DEMO_API_KEY, deploymentId, publicId: PUBLIC_ID }).catch((error) => {
    if (error?.code !== 'EADDRINUSE') throw error;
    throw new Error(`port ${hostPort} is already in use: stop the process that holds it, or choose another port with SVC_DEMO_HOST_PORT (0 picks a free one)`);
  });
  const port = new URL(host.url).port;
  console.log(`demo host: http://localhost:${port} (embeds the demo dashboard ${PUBLIC_ID} from ${svcUrl})`);
  if (port !== '3001') {
    console.log(`  note: the demo account allows embedding from http://localhost:3001 only; add http://localhost:${port} to allowedEmbedOrigins`);
  }
} catch (error) {
  // When svc stopped by itself or on a signal, its exit handler above ends this process with svc's code.
  if (!stopping && !childExited) {
    console.error(`demo host: ${error instanceof Error ? error.message : String(error)}`);
    failureCode = 1;
    stopping = true;
    child.kill('SIGTERM');
  }
}

/** Polls svc's `/readyz` until it answers 200 (at most 60 s); resolves to svc's address for the browser. */
async function waitUntilReady() {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (stopping || childExited) throw new Error('svc stopped before it was ready');
    const url = listenedOn ?? svcAddress;
    try {
      const response = await globalThis.fetch(`${url}/readyz`, { signal: globalThis.AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return url;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`svc did not answer 200 on ${listenedOn ?? svcAddress}/readyz within ${READY_TIMEOUT_MS / 1000} s`);
}

/** The demo deployment: read from the demo dashboard, which names its deployment. */
async function demoDeploymentId(svcUrl) {
  const response = await globalThis.fetch(`${svcUrl}/api/v1/embed/dashboard/${PUBLIC_ID}`, {
    headers: { authorization: `Bearer ${DEMO_API_KEY}`, accept: 'application/json' },
    signal: globalThis.AbortSignal.timeout(10_000),
  });
  const body = await response.json().catch(() => undefined);
  if (!response.ok || !Number.isInteger(body?.deploymentId)) {
    throw new Error(`could not read the demo dashboard ${PUBLIC_ID} (svc answered ${response.status}: ${body?.error?.message ?? 'no deploymentId'}); `
      + 'the demo account is loaded only into an empty database: start with a fresh --db');
  }
  return body.deploymentId;
}

/** svc's address from the passed-through `--port`/`--host` (or SVC_PORT/SVC_HOST), as the browser reaches it. */
function svcAddressFrom(argv) {
  let values = {};
  try {
    ({ values } = parseArgs({ args: argv, options: { port: { type: 'string' }, host: { type: 'string' } }, strict: false }));
  } catch {
    // svc itself reports bad arguments
  }
  const port = typeof values.port === 'string' ? values.port : process.env.SVC_PORT ?? '3000';
  const hostName = typeof values.host === 'string' ? values.host : process.env.SVC_HOST ?? '127.0.0.1';
  return browserAddress(`http://${hostName.includes(':') && !hostName.startsWith('[') ? `[${hostName}]` : hostName}:${port}`);
}

/** An address a browser can open: a wildcard listen address becomes 127.0.0.1. */
function browserAddress(address) {
  try {
    const url = new URL(address);
    if (url.hostname === '0.0.0.0' || url.hostname === '[::]') url.hostname = '127.0.0.1';
    return url.origin;
  } catch {
    return address;
  }
}
