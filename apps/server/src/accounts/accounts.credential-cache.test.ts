import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { describeEachDialect } from '../../test/dialects.js';
import { eventually } from '../../test/eventually.js';
import type { SeededAccount } from '../../test/factory.js';
import { bearer, seedAccount } from '../../test/factory.js';
import { openDatabase } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import { AccountCache } from '../db/db.account-cache.js';
import { digestSecret } from '../core/core.digest.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { findPlatformUserByKeyDigest } from './accounts.store.js';

/**
 * docs/decisions.md "Credential cache": API keys resolve from memory while the database's change feed vouches
 * that nothing changed; a change made by this process is seen on its next request, one made by another process
 * (here, a second connection with its own feed) within the feed's bound (SQLite: 1 ms; PostgreSQL: when the
 * notification arrives), and nothing is trusted while PostgreSQL's listening connection is down.
 */
describeEachDialect('credential cache', (t) => {
  let other: Db;

  beforeAll(async () => {
    other = openDatabase(t().url);
    // The listening connection opens on the first stamp; wait until it vouches.
    await eventually(() => t().db.changes.mark() !== undefined);
  });

  afterAll(async () => {
    await other.close();
  });

  /**
   * A cache over one API key that counts its database reads, and `settle()`: resolves once a read is served from
   * memory (on PostgreSQL, the seeding's own notifications may still be on their way until then).
   */
  const keyCache = (db: Db, key: string) => {
    const digest = digestSecret(key);
    const cache = new AccountCache<PlatformUserPrincipal>(db.changes, 100);
    const counter = { loads: 0 };
    const resolve = () => cache.resolve(digest, async () => {
      counter.loads++;
      return findPlatformUserByKeyDigest(db.kysely, digest);
    });
    const settle = () => eventually(async () => {
      const before = counter.loads;
      await resolve();
      return counter.loads === before;
    });
    return { counter, resolve, settle };
  };

  const accountIdOf = async (account: SeededAccount) =>
    (await t().db.kysely.selectFrom('accounts').select('id').where('tenant_name', '=', account.tenantName).executeTakeFirstOrThrow()).id;
  const seed = () => seedAccount(t().db.kysely, {
    users: [{ ref: 'alice', role: 'admin' }],
    deployments: [{ ref: 'prod', name: 'P' }],
  });

  it('serves a known key from memory while nothing changed, and reads again after a write of this process', async () => {
    const s = await seed();
    const { counter, resolve, settle } = keyCache(t().db, s.keys.alice!);
    expect(await resolve()).toMatchObject({ kind: 'platform-user', userId: s.refs.alice });
    expect(await settle()).toBe(true);
    const settled = counter.loads;
    expect(await resolve()).toMatchObject({ userId: s.refs.alice });
    expect(counter.loads).toBe(settled);

    await t().db.kysely.updateTable('users').set({ first_name: 'Alicia' }).where('id', '=', s.refs.alice!).execute();
    await resolve();
    expect(counter.loads).toBe(settled + 1);
  });

  it("keeps a key of one account through changes to another account's credentials", async () => {
    const s = await seed();
    const unrelated = await seed();
    const { counter, resolve, settle } = keyCache(other, s.keys.alice!);
    expect(await settle()).toBe(true);
    const settled = counter.loads;
    const unrelatedAccount = await accountIdOf(unrelated);
    const mark = other.changes.mark();
    await t().db.kysely.updateTable('users').set({ first_name: 'Zed' }).where('id', '=', unrelated.refs.alice!).execute();
    // Once the cache's feed has seen the change (on PostgreSQL its notification, which names the other account;
    // SQLite cannot tell accounts apart and reads again), read.
    expect(await other.changes.awaitAccountChange(unrelatedAccount, mark, 5000)).toBe(true);
    await resolve();
    expect(counter.loads).toBe(t().dialect === 'postgres' ? settled : settled + 1);
  });

  it('never keeps an unknown key', async () => {
    const cache = new AccountCache<PlatformUserPrincipal>(t().db.changes, 100);
    let loads = 0;
    const load = async () => {
      loads++;
      return undefined;
    };
    expect(await cache.resolve('nope', load)).toBeUndefined();
    expect(await cache.resolve('nope', load)).toBeUndefined();
    expect(loads).toBe(2);
  });

  it('keeps at most its bound, least recently used out first', async () => {
    const cache = new AccountCache<{ accountId: number; key: string }>(t().db.changes, 2);
    const loaded: string[] = [];
    // An account id no row has: nothing in the database changes it.
    const load = (key: string) => async () => {
      loaded.push(key);
      return { accountId: -1, key };
    };
    for (const key of ['a', 'b', 'a', 'c', 'a', 'b']) await cache.resolve(key, load(key));
    // a and b loaded; a hit; c evicts b (least recent); a hit; b loaded again.
    expect(loaded).toEqual(['a', 'b', 'c', 'b']);
  });

  it('refuses a key revoked through this process on its next request', async () => {
    const s = await seed();
    const url = `/api/v1/deployments/${s.refs.prod}/workspace`;
    expect((await t().app.inject({ url, headers: bearer(s.keys.alice!) })).statusCode).toBe(200);
    await t().db.kysely.deleteFrom('api_keys').where('digest', '=', digestSecret(s.keys.alice!)).execute();
    expect((await t().app.inject({ url, headers: bearer(s.keys.alice!) })).statusCode).toBe(401);
  });

  it('refuses a key revoked through another process once the feed bound has passed (SQLite: 1 ms; PostgreSQL: the notification)', async () => {
    const s = await seed();
    const url = `/api/v1/deployments/${s.refs.prod}/workspace`;
    expect((await t().app.inject({ url, headers: bearer(s.keys.alice!) })).statusCode).toBe(200);
    expect((await t().app.inject({ url, headers: bearer(s.keys.alice!) })).statusCode).toBe(200);
    const mark = t().db.changes.mark();
    await other.kysely.deleteFrom('api_keys').where('digest', '=', digestSecret(s.keys.alice!)).execute();
    // What a revoking svc process does before it answers (ChangeFeed.awaitAccountChange): wait until this
    // process's feed has seen the change (SQLite: the bound SQLITE_FOREIGN_COMMITS_MS; PostgreSQL: the
    // notification). From then on the key is refused.
    expect(await t().db.changes.awaitAccountChange(await accountIdOf(s), mark, 5000)).toBe(true);
    expect((await t().app.inject({ url, headers: bearer(s.keys.alice!) })).statusCode).toBe(401);
  });

  it('sees a role changed through another process (the principal is re-read, not only its existence)', async () => {
    const s = await seed();
    const digest = digestSecret(s.keys.alice!);
    const cache = new AccountCache<PlatformUserPrincipal>(t().db.changes, 100);
    const load = () => findPlatformUserByKeyDigest(t().db.kysely, digest);
    expect((await cache.resolve(digest, load))?.role).toBe('admin');
    await other.kysely.updateTable('users').set({ role: 'member' }).where('id', '=', s.refs.alice!).execute();
    expect(await eventually(async () => (await cache.resolve(digest, load))?.role === 'member', 1000)).toBe(true);
  });

  it('trusts nothing while the PostgreSQL listening connection is down, and caches again once it is back', async () => {
    if (t().dialect !== 'postgres') {
      // SQLite reads its feed from the database file itself: there is no connection to lose.
      expect(t().db.changes.mark()).toMatch(/^\d+\.\d+$/);
      return;
    }
    const s = await seed();
    const { counter, resolve, settle } = keyCache(t().db, s.keys.alice!);
    expect(await settle()).toBe(true);
    await other.kysely.executeQuery(sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'svc-credential-listener'`.compile(other.kysely));
    expect(await eventually(() => t().db.changes.mark() === undefined)).toBe(true);
    const before = counter.loads;
    await resolve();
    await resolve();
    expect(counter.loads).toBe(before + 2);
    // The next mark after a second reconnects; from then on, hits again.
    expect(await eventually(() => t().db.changes.mark() !== undefined, 5000)).toBe(true);
    await resolve();
    const reconnected = counter.loads;
    await resolve();
    expect(counter.loads).toBe(reconnected);
  });
});
