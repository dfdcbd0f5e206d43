import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { describeEachDialect } from '../../test/dialects.js';
import { eventually } from '../../test/eventually.js';
import { bearer, seedAccount } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { SQLITE_FOREIGN_COMMITS_MS, openDatabase } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import { bumpAccountDataVersion } from '../accounts/accounts.store.js';

interface Listed {
  items: Array<{ id: number; name: string; isFavorite: boolean }>;
}

/**
 * Cached listing pages are valid only at the versions they were computed at, and the versions live in the
 * database: two processes on one database (here, two apps with their own connections and caches) see each
 * other's writes within the change feed's bound: 1 ms on SQLite, the notification's delivery on PostgreSQL
 * (docs/decisions.md, "Credential cache"); a process sees its own writes on its next request on both.
 */
describeEachDialect('workspace listing cache', (t) => {
  let s: SeededAccount;
  let secondDb: Db;
  let second: FastifyInstance;

  beforeAll(async () => {
    s = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: [
        { ref: 'r1', type: 'REPORT', name: 'First', createdBy: 'alice', updatedAt: '2026-01-02T00:00:00Z' },
        { ref: 'r2', type: 'REPORT', name: 'Second', createdBy: 'alice', updatedAt: '2026-01-01T00:00:00Z' },
      ] }],
    });
    secondDb = openDatabase(t().url);
    second = await buildApp(testConfig(), { db: secondDb });
  });

  afterAll(async () => {
    await second.close();
    await secondDb.close();
  });

  const list = async (app: FastifyInstance, user: string, query = '') => {
    const res = await app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace${query}`, headers: bearer(s.keys[user]!) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Listed;
  };
  /** On SQLite, the first listing once the 1 ms bound passed; on PostgreSQL, a listing within a second. */
  const seen = async (app: FastifyInstance, user: string, query: string, check: (listed: Listed) => boolean) => {
    if (t().dialect === 'sqlite') {
      await new Promise((resolve) => setTimeout(resolve, 2 * SQLITE_FOREIGN_COMMITS_MS));
      return check(await list(app, user, query));
    }
    return eventually(async () => check(await list(app, user, query)), 1000);
  };
  const favorite = (app: FastifyInstance, user: string, method: 'PUT' | 'DELETE') =>
    app.inject({ method, url: `/api/v1/deployments/${s.refs.prod}/workspace/${s.refs.r2}/favorite`, headers: bearer(s.keys[user]!) });

  it('serves the same bytes for the same caller and query while nothing changed', async () => {
    const a = await t().app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: bearer(s.keys.alice!) });
    const b = await t().app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: bearer(s.keys.alice!) });
    expect(b.body).toBe(a.body);
    expect(b.headers['content-type']).toContain('application/json');
  });

  it('shows a favorite set through another process within the change feed bound', async () => {
    expect((await list(t().app, 'alice')).items.find((i) => i.name === 'Second')!.isFavorite).toBe(false);
    expect((await favorite(second, 'alice', 'PUT')).statusCode).toBe(204);
    expect(await seen(t().app, 'alice', '', (l) => l.items.find((i) => i.name === 'Second')!.isFavorite)).toBe(true);
    expect((await favorite(second, 'alice', 'DELETE')).statusCode).toBe(204);
    expect(await seen(t().app, 'alice', '', (l) => !l.items.find((i) => i.name === 'Second')!.isFavorite)).toBe(true);
  });

  it('shows a favorite set through the same process on its next request', async () => {
    expect((await favorite(t().app, 'alice', 'PUT')).statusCode).toBe(204);
    expect((await list(t().app, 'alice')).items.find((i) => i.name === 'Second')!.isFavorite).toBe(true);
    expect((await favorite(t().app, 'alice', 'DELETE')).statusCode).toBe(204);
    expect((await list(t().app, 'alice')).items.find((i) => i.name === 'Second')!.isFavorite).toBe(false);
  });

  it('shows a view recorded through another process in viewer_last_viewed_at order within the change feed bound', async () => {
    const query = '?orderByField=viewer_last_viewed_at';
    expect((await list(t().app, 'bob', query)).items.map((i) => i.name)).toEqual(['Second', 'First']);
    const view = await second.inject({ method: 'POST', url: `/api/v1/deployments/${s.refs.prod}/workspace/${s.refs.r1}/view`, headers: bearer(s.keys.bob!) });
    expect(view.statusCode).toBe(204);
    expect(await seen(t().app, 'bob', query, (l) => l.items.map((i) => i.name).join() === 'First,Second')).toBe(true);
  });

  it("keeps one user's views and favorites from invalidating, or leaking into, another user's pages", async () => {
    const before = await list(t().app, 'bob');
    expect((await favorite(second, 'alice', 'PUT')).statusCode).toBe(204);
    expect(await seen(t().app, 'alice', '', (l) => l.items.find((i) => i.name === 'Second')!.isFavorite)).toBe(true);
    expect(await list(t().app, 'bob')).toEqual(before);
  });

  it('drops every cached page of the account when the account data version moves', async () => {
    await list(t().app, 'alice');
    await t().db.kysely.updateTable('workspace_items').set({ name: 'Renamed' }).where('id', '=', s.refs.r1!).execute();
    // A write made behind svc's back is not seen until a version moves (docs/decisions.md, Caching)...
    expect((await list(t().app, 'alice')).items.map((i) => i.name)).not.toContain('Renamed');
    // ...and every write through svc moves it in the same transaction.
    await bumpAccountDataVersion(t().db.kysely, (await t().db.kysely.selectFrom('users').select('account_id').where('id', '=', s.refs.alice!).executeTakeFirstOrThrow()).account_id);
    expect((await list(t().app, 'alice')).items.map((i) => i.name)).toContain('Renamed');
  });
});
