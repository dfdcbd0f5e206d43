import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { startSvcServe } from '../../test/svc-process.js';
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
});
