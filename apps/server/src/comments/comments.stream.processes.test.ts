import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { SseStream } from '../../test/sse.js';
import type { SseEvent } from '../../test/sse.js';
import { startSvcServe } from '../../test/svc-process.js';
import type { SvcProcess } from '../../test/svc-process.js';

/**
 * Issue 23 across processes: two real `svc serve` processes on one database (PostgreSQL: LISTEN/NOTIFY; SQLite: one
 * file, commits noticed by polling). A comment written through one reaches a stream held by the other; a stream
 * resumes on the other process with nothing missed; a revocation on one ends the stream on the other.
 */
describeEachDialect('live comment stream across processes', (t) => {
  let a: SvcProcess;
  let b: SvcProcess;
  let s: SeededAccount;
  let publicIds: string[];

  beforeAll(async () => {
    const suffix = uniqueSuffix();
    publicIds = Array.from({ length: 4 }, (_, i) => `xs-${i}-${suffix}`);
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{
        ref: 'prod', name: 'Prod',
        items: publicIds.map((publicId, i) => ({ ref: `wb-${i}`, type: 'WORKBOOK' as const, name: `W${i}`, createdBy: 'alice', dashboard: { publicId, status: 'published' as const, allowEmbed: true } })),
      }],
    });
    // A short idle timeout: fetch leaves a spare connection behind an aborted stream, which SIGTERM's drain would
    // otherwise wait for (see comments.stream.test.ts).
    const env = { SVC_COMMENT_STREAM_HEARTBEAT_MS: '500', SVC_IDLE_TIMEOUT_MS: '2000' };
    [a, b] = await Promise.all([startSvcServe(t().url, env), startSvcServe(t().url, env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const send = (base: string, method: string, path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${base}${path}`, body === undefined
      ? { method, headers }
      : { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const comments = (publicId: string, rest = '') => `/api/v1/embed/dashboard/${publicId}/comments${rest}`;

  /** A viewer's session minted and exchanged on `on`. */
  async function viewer(on: SvcProcess, externalId: string): Promise<{ headers: Record<string, string>; userId: number }> {
    const minted = await send(on.url, 'POST', '/api/v1/embed/generate-session', { deploymentId: s.refs.prod, externalId, embedTenantName: 'customer-a' }, bearer(s.keys.alice!));
    expect(minted.status).toBe(200);
    const exchanged = await send(on.url, 'POST', '/api/v1/embed/session/token', { sessionId: ((await minted.json()) as { sessionId: string }).sessionId }, {});
    const headers = { authorization: `Embed-Token ${((await exchanged.json()) as { token: string }).token}` };
    const current = (await (await fetch(`${on.url}/api/v1/embed/session`, { headers })).json()) as { session: { embedUserId: number } };
    return { headers, userId: current.session.embedUserId };
  }
  const open = async (on: SvcProcess, who: { headers: Record<string, string> }, publicId: string, lastEventId?: string) => {
    const stream = await SseStream.open(`${on.url}${comments(publicId, '/stream')}`, { ...who.headers, ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) });
    expect(stream.status, stream.body).toBe(200);
    return { stream, first: await stream.next() };
  };
  const write = async (on: SvcProcess, who: { headers: Record<string, string> }, method: string, path: string, body?: unknown) => {
    const res = await send(on.url, method, path, body, who.headers);
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    return res.status === 204 ? undefined : (await res.json()) as { id: number };
  };
  const dataOf = (event: SseEvent) => JSON.parse(event.data) as Record<string, unknown>;

  it('delivers every event written through one process to a stream held by the other', async () => {
    const publicId = publicIds[0]!;
    const ann = await viewer(a, 'ann');
    const { stream, first } = await open(b, ann, publicId);
    expect(first.event).toBe('stream.ready');
    const root = (await write(a, ann, 'POST', comments(publicId), { body: 'posted on A' }))!;
    const created = await stream.next();
    expect(created.event).toBe('comment.created');
    expect(dataOf(created)).toMatchObject({ threadId: root.id, comment: { id: root.id, body: 'posted on A', isOwn: true, userId: ann.userId } });
    await write(a, ann, 'PATCH', comments(publicId, `/${root.id}`), { body: 'edited on A' });
    expect(dataOf(await stream.next())).toMatchObject({ comment: { id: root.id, body: 'edited on A' } });
    await write(a, ann, 'POST', comments(publicId, `/${root.id}/resolve`), { resolved: true });
    expect((await stream.next()).event).toBe('thread.resolved');
    await write(a, ann, 'POST', comments(publicId, `/${root.id}/resolve`), { resolved: false });
    expect((await stream.next()).event).toBe('thread.reopened');
    await write(a, ann, 'DELETE', comments(publicId, `/${root.id}`));
    expect(dataOf(await stream.next())).toEqual({ threadId: root.id, commentId: root.id });
    stream.close();
  });

  it('resumes on the other process after a dropped connection, with nothing missed, then goes on live', async () => {
    const publicId = publicIds[1]!;
    const ben = await viewer(b, 'ben');
    const { stream } = await open(b, ben, publicId);
    await write(a, ben, 'POST', comments(publicId), { body: 'seen' });
    await stream.next();
    stream.close();
    const missed = [];
    for (const body of ['missed 1', 'missed 2', 'missed 3']) missed.push((await write(b, ben, 'POST', comments(publicId), { body }))!.id);
    const { stream: again, first } = await open(a, ben, publicId, stream.lastEventId);
    expect(first).toMatchObject({ event: 'stream.ready', id: stream.lastEventId });
    const replayed = [await again.next(), await again.next(), await again.next()];
    expect(replayed.map((event) => (dataOf(event).comment as { id: number }).id)).toEqual(missed);
    expect(await again.drain(300)).toEqual([]);
    const live = (await write(b, ben, 'POST', comments(publicId), { body: 'live, from B' }))!;
    expect(dataOf(await again.next())).toMatchObject({ comment: { id: live.id } });
    again.close();
  });

  it('ends a stream on one process when its session is revoked through the other', async () => {
    const publicId = publicIds[2]!;
    const cid = await viewer(a, 'cid');
    const { stream } = await open(b, cid, publicId);
    const revoked = await send(a.url, 'POST', '/api/v1/embed/session/revoke', { externalId: 'cid', embedTenantName: 'customer-a' }, bearer(s.keys.alice!));
    expect(revoked.status).toBe(204);
    expect(await stream.next(4000)).toEqual({ event: 'stream.end', id: undefined, data: JSON.stringify({ reason: 'revoked' }) });
    expect(await stream.waitForEnd()).toBe(true);
  });
});
