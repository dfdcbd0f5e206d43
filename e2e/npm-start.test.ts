import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, it } from 'vitest';
import type { TestContext } from 'vitest';

/**
 * `npm start` after its build: apps/demo-host/start.js as a process, running svc from apps/server/dist as a user
 * gets it. No browser: what is checked is what it prints.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const START = 'apps/demo-host/start.js';

interface Started {
  child: ChildProcess;
  /** Everything printed on stdout so far. */
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stdout matches, with the match. */
  waitFor: (pattern: RegExp) => Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

/** Runs start.js on a fresh database in a new folder, or on the database of `dir` (a second start). */
function startDemo(onTestFinished: TestContext['onTestFinished'], args: string[], env: Record<string, string> = {}, dir = mkdtempSync(join(tmpdir(), 'svc-npm-start-'))): Started & { dir: string } {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, SVC_DEMO_HOST_PORT: '0', SVC_DEMO_WAREHOUSE: join(dir, 'warehouse.db'), ...env };
  for (const name of ['SVC_LOG_LEVEL', 'SVC_DEMO_LOGS', 'SVC_PORT', 'SVC_DATABASE_URL']) if (!(name in env)) delete childEnv[name];
  const child = spawn(process.execPath, [START, '--db', `sqlite:${join(dir, 'svc.db')}`, ...args], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiting: Array<() => void> = [];
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const check of waiting) check();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const waitFor = (pattern: RegExp) => new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} within 30 s; stdout: ${stdout}; stderr: ${stderr}`)), 30_000);
    const check = () => {
      const match = pattern.exec(stdout);
      if (match === null) return;
      clearTimeout(timer);
      resolve(match);
    };
    waiting.push(check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`start.js exited; stdout: ${stdout}; stderr: ${stderr}`));
    });
    check();
  });
  return { child, stdout: () => stdout, stderr: () => stderr, waitFor, exited, dir };
}

beforeAll(() => {
  // What `npm start` runs first (the TypeScript part; tsc -b is incremental), so that dist/ is the source's.
  const tsc = spawnSync(process.execPath, [fileURLToPath(import.meta.resolve('typescript/bin/tsc')), '-b', 'apps/server', 'packages/protocol'], { cwd: ROOT, encoding: 'utf8' });
  if (tsc.status !== 0) throw new Error(`tsc -b failed: ${tsc.stdout}${tsc.stderr}`);
}, 120_000);

describe.concurrent('npm start (apps/demo-host/start.js) prints human lines', { timeout: 60_000 }, () => {
  it('prints the listening address, the ready-to-paste curl and the demo host, and no JSON log line; Ctrl-C exits 0', async ({ expect, onTestFinished }) => {
    const demo = startDemo(onTestFinished, ['--port', '0']);
    await demo.waitFor(/^demo host: http:\/\/localhost:\d+ /m);
    const curl = /^ {2}curl -s -H 'Authorization: Bearer (\S+)' '(http:\/\/127\.0\.0\.1:\d+\/api\/v1\/deployments\/\d+\/workspace)'$/m.exec(demo.stdout());
    expect(curl, demo.stdout()).not.toBeNull();
    const answer = await fetch(curl![2]!, { headers: { authorization: `Bearer ${curl![1]}` } });
    expect(answer.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const lines = demo.stdout().split('\n').filter((line) => line !== '');
    expect(lines.filter((line) => line.startsWith('{')), demo.stdout()).toEqual([]);
    expect(lines[0]).toMatch(/^svc listening on http:\/\/127\.0\.0\.1:\d+ \(database sqlite:/);
    demo.child.kill('SIGINT');
    expect(await demo.exited).toBe(0);
    expect(demo.stderr()).toBe('');
  });

  it('shows each request as one human line with SVC_LOG_LEVEL=info', async ({ expect, onTestFinished }) => {
    const demo = startDemo(onTestFinished, ['--port', '0'], { SVC_LOG_LEVEL: 'info' });
    const [, svcUrl] = await demo.waitFor(/^svc listening on (http:\S+)/m);
    await demo.waitFor(/^demo host: /m);
    await fetch(`${svcUrl}/healthz?probe=1`);
    await demo.waitFor(/^svc: GET \/healthz\?probe=1 -> 200 \(\d+ ms\)$/m);
    expect(demo.stdout()).toMatch(/^svc: GET \/readyz -> 200 \(\d+ ms\)$/m);
    expect(demo.stdout().split('\n').filter((line) => line.startsWith('{'))).toEqual([]);
  });

  it('passes svc\'s JSON log lines through as they are with SVC_DEMO_LOGS=json', async ({ expect, onTestFinished }) => {
    const demo = startDemo(onTestFinished, ['--port', '0'], { SVC_DEMO_LOGS: 'json' });
    await demo.waitFor(/^demo host: /m);
    const records = demo.stdout().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { msg: string; req?: { url: string } });
    expect(records.some((record) => record.msg === 'incoming request' && record.req?.url === '/readyz'), demo.stdout()).toBe(true);
    expect(demo.stdout()).toMatch(/^ {2}curl -s /m);
  });

  it('enables the mention toasts on a second start: the endpoint of the first is deleted without a Content-Type, and one endpoint is left', { timeout: 120_000 }, async ({ expect, onTestFinished }) => {
    // The demo host replaces the endpoint an earlier start registered on its port, so both starts need the same one.
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const hostPort = String((free.address() as AddressInfo).port);
    await new Promise<void>((resolve) => free.close(() => resolve()));
    const env = { SVC_DEMO_HOST_PORT: hostPort };
    const first = startDemo(onTestFinished, ['--port', '0'], env);
    await first.waitFor(/^demo host: /m);
    first.child.kill('SIGINT');
    await first.exited;

    const second = startDemo(onTestFinished, ['--port', '0'], env, first.dir);
    const [, svcUrl] = await second.waitFor(/^svc listening on (http:\S+)/m);
    await second.waitFor(/^demo host: /m);
    // Before the fix: "demo host: no mention toasts: svc answered 400 to /api/v1/webhooks/endpoints/1: request body
    // is empty but Content-Type is application/json", and the first start's endpoint stayed, with its lost secret.
    expect(second.stderr()).toBe('');
    const listed = await fetch(`${svcUrl}/api/v1/webhooks/endpoints`, { headers: { authorization: 'Bearer svc_demo_admin_key_0001' } });
    const { items } = (await listed.json()) as { items: Array<{ id: number; url: string; enabled: boolean }> };
    expect(items.map(({ id, url, enabled }) => ({ id, url, enabled }))).toEqual([{ id: 2, url: `http://127.0.0.1:${hostPort}/api/svc-webhook`, enabled: true }]);

    // And a toast comes: Ann's page hears of a comment that mentions her (svc -> webhook -> demo host -> page).
    const controller = new AbortController();
    onTestFinished(() => controller.abort());
    const stream = await fetch(`http://127.0.0.1:${hostPort}/api/notifications?customer=customer-a`, { signal: controller.signal });
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let received = '';
    const until = async (pattern: RegExp) => {
      while (!pattern.test(received)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the notification stream ended without ${pattern}: ${received}`);
        received += value;
      }
    };
    await until(/event: ready\ndata: \{"webhooks":true\}/);
    const admin = { authorization: 'Bearer svc_demo_admin_key_0001', 'content-type': 'application/json' };
    const { deploymentId } = (await (await fetch(`${svcUrl}/api/v1/embed/dashboard/sales-performance`, { headers: admin })).json()) as { deploymentId: number };
    const minted = await fetch(`${svcUrl}/api/v1/embed/generate-session`, { method: 'POST', headers: admin, body: JSON.stringify({ deploymentId, externalId: 'cara-1', embedTenantName: 'customer-a', username: 'cara', firstName: 'Cara' }) });
    const { sessionId } = (await minted.json()) as { sessionId: string };
    const { token } = (await (await fetch(`${svcUrl}/api/v1/embed/session/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId }) })).json()) as { token: string };
    const posted = await fetch(`${svcUrl}/api/v1/embed/dashboard/sales-performance/comments`, {
      method: 'POST', headers: { authorization: `Embed-Token ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ body: '@ann, look at March' }),
    });
    expect(posted.status).toBe(201);
    await until(/event: mention\ndata: .*"by":"Cara"/);
  });

  it('exits 1 with svc\'s one sentence when svc\'s port is in use, and adds nothing to it', async ({ expect, onTestFinished }) => {
    const holder = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const { port } = holder.address() as AddressInfo;
    const demo = startDemo(onTestFinished, ['--port', String(port)]);
    expect(await demo.exited).toBe(1);
    expect(demo.stderr()).toBe(`svc serve: port ${port} on 127.0.0.1 is already in use: stop the process that holds it, or choose another port with --port (0 picks a free one)\n`);
    expect(demo.stdout()).toBe('');
  });

  it('exits 1 with one sentence naming SVC_DEMO_HOST_PORT when the demo host\'s port is in use', async ({ expect, onTestFinished }) => {
    const holder = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const { port } = holder.address() as AddressInfo;
    const demo = startDemo(onTestFinished, ['--port', '0'], { SVC_DEMO_HOST_PORT: String(port) });
    expect(await demo.exited).toBe(1);
    expect(demo.stderr()).toBe(`demo host: port ${port} is already in use: stop the process that holds it, or choose another port with SVC_DEMO_HOST_PORT (0 picks a free one)\n`);
  });
});
