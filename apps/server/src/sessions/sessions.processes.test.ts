import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { startSvcServe } from '../../test/svc-process.js';
import type { SvcProcess } from '../../test/svc-process.js';

/**
 * DESIGN "Credentials": a revoked session's token is refused on its next request on every server process that
 * shares the database. Two real `svc serve` processes on one database: A mints, exchanges and revokes; B, which
 * has the session in its memory from earlier requests, must refuse the token on the very next request.
 */
describeEachDialect('embed session revocation across processes', (t) => {
  let a: SvcProcess;
  let b: SvcProcess;
  let s: SeededAccount;
  let publicId: string;

  beforeAll(async () => {
    publicId = `xp-${Math.random().toString(36).slice(2, 10)}`;
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'W', createdBy: 'alice', dashboard: { publicId, status: 'published', allowEmbed: true } }] }],
    });
    [a, b] = await Promise.all([startSvcServe(t().url), startSvcServe(t().url)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const post = (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const read = (base: string, token: string) => fetch(`${base}/api/v1/embed/dashboard/${publicId}`, { headers: { authorization: `Embed-Token ${token}` } });

  /** A session minted and exchanged on A, its token warmed on B. */
  async function warmedToken(externalId: string): Promise<{ sessionId: string; token: string }> {
    const minted = await post(a.url, '/api/v1/embed/generate-session', { deploymentId: s.refs.prod, externalId }, bearer(s.keys.alice!));
    expect(minted.status).toBe(200);
    const { sessionId } = (await minted.json()) as { sessionId: string };
    const exchanged = await post(a.url, '/api/v1/embed/session/token', { sessionId });
    expect(exchanged.status).toBe(200);
    const { token } = (await exchanged.json()) as { token: string };
    for (let i = 0; i < 3; i++) expect((await read(b.url, token)).status).toBe(200);
    return { sessionId, token };
  }

  it('refuses a session revoked on A on the next request to B', async () => {
    for (let round = 0; round < 5; round++) {
      const { sessionId, token } = await warmedToken(`cross-${round}`);
      expect((await post(a.url, '/api/v1/embed/session/revoke', { sessionId }, bearer(s.keys.alice!))).status).toBe(204);
      expect((await read(b.url, token)).status).toBe(401);
      expect((await read(a.url, token)).status).toBe(401);
    }
  });

  it('refuses every session of a viewer logged out on B on the next request to A', async () => {
    const first = await warmedToken('logout-cross');
    const second = await warmedToken('logout-cross');
    for (const { token } of [first, second]) expect((await read(a.url, token)).status).toBe(200);
    expect((await post(b.url, '/api/v1/embed/session/revoke', { externalId: 'logout-cross' }, bearer(s.keys.alice!))).status).toBe(204);
    for (const { token } of [first, second]) expect((await read(a.url, token)).status).toBe(401);
  });
});
