import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

/**
 * SPEC A (cursors are bound to the query that made them; DESIGN.md) for the deployment (issue 18, an audit's
 * finding 2): a cursor of one deployment's listing, replayed on another deployment of the same account with the
 * same caller and the same parameters, is refused as a cursor of another listing.
 */
describeEachDialect('workspace cursors across deployments', (t) => {
  let s: SeededAccount;

  beforeAll(async () => {
    const reports = (prefix: string) => Array.from({ length: 3 }, (_, i) => ({ type: 'REPORT' as const, name: `${prefix} ${i}`, createdBy: 'alice' }));
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'a', name: 'A', items: reports('A') }, { ref: 'b', name: 'B', items: reports('B') }],
    });
  });

  const page = (deployment: number, query: string) =>
    t().app.inject({ url: `/api/v1/deployments/${deployment}/workspace?${query}`, headers: bearer(s.keys.alice!) });

  it('refuses deployment A\'s cursor on deployment B with a 400 naming after, and still takes it on A', async () => {
    const first = await page(s.refs.a!, 'first=1');
    expect(first.statusCode, first.body).toBe(200);
    const cursor = first.json().pageInfo.endCursor as string;
    const replayed = await page(s.refs.b!, `first=1&after=${encodeURIComponent(cursor)}`);
    expect(replayed.statusCode, replayed.body).toBe(400);
    expect(replayed.json()).toMatchObject({ error: { status: 400, code: 'invalid_parameter', field: 'after' } });
    const onA = await page(s.refs.a!, `first=1&after=${encodeURIComponent(cursor)}`);
    expect(onA.statusCode, onA.body).toBe(200);
    expect(onA.json().items).toHaveLength(1);
  });
});
