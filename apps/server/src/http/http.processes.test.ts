import { createServer, request as forward } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { startSvcServe } from '../../test/svc-process.js';
import type { SvcProcess } from '../../test/svc-process.js';

/** A tiny round-robin proxy: each request goes to the next process in turn. */
async function roundRobin(targets: () => string[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const server: Server = createServer((req, res) => {
    const target = new URL(targets()[next++ % targets().length]!);
    const upstream = forward({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

interface Thread { root: { id: number; body: string }; replies: Array<{ id: number; body: string }> }

/**
 * Issue 8 "Several processes" (docs/operations.md "Several processes"): three stateless `svc serve` processes on
 * one database behind a round-robin proxy. Sessions minted on one are exchanged on another, a revocation takes
 * effect on all at once, and every process lists the same comments right after each write, whichever took it.
 */
describeEachDialect('several svc processes on one database', (t) => {
  let processes: SvcProcess[] = [];
  let proxy: { url: string; close(): Promise<void> };
  let s: SeededAccount;
  let publicId: string;

  beforeAll(async () => {
    publicId = `procs-${uniqueSuffix()}`;
    s = await seedAccount(t().db.kysely, {
      settings: { allowEmbedComments: true },
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'W', createdBy: 'admin', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
    });
    processes = await Promise.all([0, 1, 2].map(() => startSvcServe(t().url)));
    proxy = await roundRobin(() => processes.map((p) => p.url));
  }, 90_000);

  afterAll(async () => {
    await proxy?.close();
    await Promise.all(processes.map((p) => p.stop()));
  });

  const send = async (base: string, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await fetch(`${base}${path}`, { method, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, json: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown> };
  };
  const commentsPath = () => `/api/v1/embed/dashboard/${publicId}/comments`;

  /** A viewer's token: minted on one process, exchanged on another. */
  const viewer = async (mintOn: string, exchangeOn: string, externalId: string) => {
    const minted = await send(mintOn, 'POST', '/api/v1/embed/generate-session', bearer(s.keys.admin!), { deploymentId: s.refs.prod, externalId });
    expect(minted.status).toBe(200);
    const exchanged = await send(exchangeOn, 'POST', '/api/v1/embed/session/token', {}, { sessionId: minted.json.sessionId });
    expect(exchanged.status).toBe(200);
    return { sessionId: minted.json.sessionId as string, headers: { authorization: `Embed-Token ${exchanged.json.token as string}` } };
  };
  const threadsOn = async (base: string, headers: Record<string, string>) => {
    const res = await send(base, 'GET', `${commentsPath()}?first=100&includeResolved=true`, headers);
    expect(res.status).toBe(200);
    return (res.json.items as Thread[]).map((th) => ({ root: [th.root.id, th.root.body], replies: th.replies.map((r) => [r.id, r.body]) }));
  };

  it('exchanges on one process a session minted on another, and refuses a second exchange on a third', async () => {
    const minted = await send(processes[0]!.url, 'POST', '/api/v1/embed/generate-session', bearer(s.keys.admin!), { deploymentId: s.refs.prod, externalId: 'hop' });
    expect((await send(processes[1]!.url, 'POST', '/api/v1/embed/session/token', {}, { sessionId: minted.json.sessionId })).status).toBe(200);
    const again = await send(processes[2]!.url, 'POST', '/api/v1/embed/session/token', {}, { sessionId: minted.json.sessionId });
    expect(again.status).toBeGreaterThanOrEqual(400);
    expect(again.status).toBeLessThan(500);
  });

  it('lists the same comments on every process right after each write through the proxy', async () => {
    const ann = await viewer(processes[0]!.url, processes[1]!.url, 'ann');
    const ben = await viewer(processes[2]!.url, processes[0]!.url, 'ben');
    // Warm every process's page cache first, so a stale page would show.
    for (const p of processes) await threadsOn(p.url, ann.headers);
    const acknowledged: number[] = [];
    for (let i = 0; i < 6; i++) {
      const who = i % 2 === 0 ? ann : ben;
      const parentId = i % 3 === 2 ? acknowledged[0] : undefined;
      const posted = await send(proxy.url, 'POST', commentsPath(), who.headers, parentId === undefined ? { body: `note ${i}` } : { body: `note ${i}`, parentId });
      expect(posted.status).toBe(201);
      acknowledged.push(posted.json.id as number);
      const lists = await Promise.all(processes.map((p) => threadsOn(p.url, ann.headers)));
      expect(lists[1]).toEqual(lists[0]);
      expect(lists[2]).toEqual(lists[0]);
      const seen = lists[0]!.flatMap((th) => [th.root[0], ...th.replies.map((r) => r[0])]);
      for (const id of acknowledged) expect(seen).toContain(id);
    }
    // An edit through one process is what the others list next.
    const edited = await send(processes[1]!.url, 'PATCH', `${commentsPath()}/${acknowledged[0]}`, ann.headers, { body: 'edited on B' });
    expect(edited.status).toBe(200);
    for (const p of processes) expect((await threadsOn(p.url, ben.headers)).find((th) => th.root[0] === acknowledged[0])!.root[1]).toBe('edited on B');
  });

  it('refuses a revoked session on every process at once', async () => {
    const cat = await viewer(proxy.url, proxy.url, 'cat');
    for (const p of processes) expect((await send(p.url, 'GET', commentsPath(), cat.headers)).status).toBe(200);
    expect((await send(proxy.url, 'POST', '/api/v1/embed/session/revoke', bearer(s.keys.admin!), { sessionId: cat.sessionId })).status).toBe(204);
    for (const p of processes) expect((await send(p.url, 'GET', commentsPath(), cat.headers)).status).toBe(401);
  });
});
