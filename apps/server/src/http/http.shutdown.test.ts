import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { eventually } from '../../test/eventually.js';
import { startSvcServe } from '../../test/svc-process.js';
import type { SvcProcess } from '../../test/svc-process.js';
import { openDatabase } from '../db/db.database.js';
import { migrateToLatest } from '../db/db.migrations.js';

/**
 * Issue 8 "Limits": on SIGTERM, `svc serve` stops taking connections, finishes the requests in flight, and exits 0
 * (docs/operations.md "Shutdown"). The request in flight here is a write whose body is still arriving.
 */
describe('graceful shutdown of svc serve', () => {
  let dir: string;
  let url: string;
  let s: SeededAccount;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-shutdown-'));
    url = `sqlite:${join(dir, 'svc.db')}`;
    const db = openDatabase(url);
    await migrateToLatest(db);
    s = await seedAccount(db.kysely, { users: [{ ref: 'admin', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P' }] });
    await db.close();
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a request in flight after SIGTERM, refuses new connections, and exits 0', async () => {
    const svc = await startSvcServe(url);
    const exited = new Promise<number | null>((resolve) => svc.child.once('exit', (code) => resolve(code)));
    const body = JSON.stringify({ deploymentId: s.refs.prod, externalId: 'in-flight-viewer' });
    const { port } = new URL(svc.url);
    // Half the body now, the rest after the signal.
    let newConnection: Promise<string> = Promise.resolve('not tried');
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/embed/generate-session', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${s.keys.admin}` } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => { text += chunk.toString(); });
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        svc.child.kill('SIGTERM');
        setTimeout(() => {
          // The listener is closed by now: a new connection is refused.
          newConnection = fetch(`${svc.url}/healthz`).then(() => 'answered', () => 'refused');
          req.end(body.slice(10));
        }, 300);
      }, 200);
    });
    const { status, text } = await answered;
    expect(status, text).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ sessionId: expect.any(String) });
    expect(await newConnection).toBe('refused');
    expect(await exited).toBe(0);
  }, 30_000);

  /** Resolves once the listener is closed (the drain has begun): a new connection is refused. */
  async function drainBegun(svc: SvcProcess): Promise<boolean> {
    return eventually(() => fetch(`${svc.url}/healthz`).then(() => false, () => true), 10_000);
  }

  /** The exit code, and whatever the process wrote to stderr from now on. */
  function exitOf(svc: SvcProcess): { exited: Promise<number | null>; stderr: () => string } {
    let stderr = '';
    svc.child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    return { exited: new Promise((resolve) => svc.child.once('exit', (code) => resolve(code))), stderr: () => stderr };
  }

  it('closes a pooled keep-alive connection once its in-flight answer is out, and exits 0 within the drain', async () => {
    // The drain timeout is far above the test's own: the old behaviour (wait it out, exit 1) fails on the exit code.
    const svc = await startSvcServe(url, { SVC_SHUTDOWN_TIMEOUT_MS: '20000' });
    const { exited, stderr } = exitOf(svc);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const { port } = new URL(svc.url);
    // A body is sent after the server's 100 Continue (proof that it has the request's head), all but its last bytes.
    const send = (method: string, path: string, body?: string) => {
      let finish = () => undefined as void;
      let headReceived = () => undefined as void;
      const received = new Promise<void>((resolve) => { headReceived = resolve; });
      const answer = new Promise<{ status: number; connection: string | undefined; text: string; socket: unknown }>((resolve, reject) => {
        const headers: Record<string, string | number> = { authorization: `Bearer ${s.keys.admin}` };
        if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' });
        const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => { text += chunk.toString(); });
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, text, socket: req.socket }));
        });
        req.on('error', reject);
        if (body === undefined) req.end();
        else {
          req.on('continue', () => {
            req.write(body.slice(0, -10));
            headReceived();
          });
          finish = () => { req.end(body.slice(-10)); };
        }
      });
      return { answer, received, finish: () => finish() };
    };
    // The pool's connection is opened and kept alive by a first answer.
    const first = await send('GET', '/healthz').answer;
    expect(first.status).toBe(200);
    expect(first.connection).toBe('keep-alive');
    // Then a write on the same pooled connection is in flight (its body half sent) when SIGTERM comes.
    const body = JSON.stringify({ deploymentId: s.refs.prod, externalId: 'pooled-viewer' });
    const inFlight = send('POST', '/api/v1/embed/generate-session', body);
    await inFlight.received;
    svc.child.kill('SIGTERM');
    expect(await drainBegun(svc)).toBe(true);
    inFlight.finish();
    const answered = await inFlight.answer;
    expect(answered.status, answered.text).toBe(200);
    expect(JSON.parse(answered.text)).toMatchObject({ sessionId: expect.any(String) });
    expect(answered.socket, 'the in-flight request used the pooled connection').toBe(first.socket);
    expect(answered.connection).toBe('close');
    expect(await exited, stderr()).toBe(0);
    expect(stderr()).not.toContain('still in flight');
    agent.destroy();
  }, 40_000);

  it('answers a request that arrives during the drain 503 in the error body, with Connection: close', async () => {
    const svc = await startSvcServe(url, { SVC_SHUTDOWN_TIMEOUT_MS: '20000' });
    const { exited, stderr } = exitOf(svc);
    const { port } = new URL(svc.url);
    // A connection whose request line and first header are sent before SIGTERM: not idle, so the drain keeps it.
    const socket = connect(Number(port), '127.0.0.1');
    let raw = '';
    socket.on('data', (chunk: Buffer) => { raw += chunk.toString(); });
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    svc.child.kill('SIGTERM');
    expect(await drainBegun(svc)).toBe(true);
    socket.write(`authorization: Bearer ${s.keys.admin}\r\n\r\n`);
    await ended;
    const [head, text] = raw.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    expect(head!.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(text!)).toEqual({ error: { status: 503, code: 'service_unavailable', message: expect.stringContaining('shutting down') } });
    expect(await exited, stderr()).toBe(0);
  }, 40_000);
});
