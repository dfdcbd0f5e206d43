import type { FastifyInstance, InjectOptions } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../test/config.js';
import { describeEachDialect } from '../../test/dialects.js';
import { buildApp } from '../app.js';
import { openDatabase } from '../db/db.database.js';
import { expectErrorBody } from '../../test/errors.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';

interface UserJson { id: number; email: string; firstName: string | null; role: string; hasPassword: boolean }
interface GroupJson { id: number; name: string; memberIds: number[] }
interface AuditEntryJson { action: string; target: { type: string; id: string }; actor: { email: string | null }; detail: Record<string, unknown> }

/**
 * Issue 33 part 4 (docs/authoring.md "Users, groups and API keys", "Account settings"): an account's admins create,
 * read, change and delete its platform users, groups and API keys (a key shown once), and change its settings. A
 * member gets 403 on each; another account's user, group or key is a 404; bad input a 400 naming the field; each
 * change is in the audit log; a deleted key, a deleted user and a demotion take effect on the next request.
 */
describeEachDialect('users, groups, API keys and settings through the API', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;
  let other: SeededAccount;
  const admin = () => bearer(s.keys.alice!);
  const call = (method: InjectOptions['method'], url: string, payload?: unknown, headers: Record<string, string> = admin()) =>
    app.inject({ method, url, headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json' }, ...(payload !== undefined && { payload: JSON.stringify(payload) }) });
  const expectError = (res: { statusCode: number; body: string }, status: number, field?: string) => expectErrorBody({ status: res.statusCode, text: res.body }, status, field);
  const auditActions = async () => (await call('GET', '/api/v1/audit?first=200')).json<{ items: AuditEntryJson[] }>().items;

  beforeAll(async () => {
    app = t().app;
    s = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }, { ref: 'bob', role: 'member' }], deployments: [{ ref: 'prod', name: 'Prod' }] });
    other = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }], deployments: [{ ref: 'prod', name: 'Theirs' }] });
  });

  describe('platform users', () => {
    it('creates a user who signs in with the password given, lists and reads them, and records the change', async () => {
      const email = `Carol-${uniqueSuffix()}@Example.test`;
      const created = await call('POST', '/api/v1/users', { email, firstName: 'Carol', role: 'member', password: 'a long enough password' });
      expect(created.statusCode, created.body).toBe(201);
      const carol = created.json<UserJson>();
      expect(carol).toMatchObject({ email: email.toLowerCase(), firstName: 'Carol', role: 'member', hasPassword: true });
      expect(created.body).not.toContain('a long enough password');
      expect(created.body).not.toContain('scrypt');

      const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'a long enough password' } });
      expect(login.statusCode, login.body).toBe(200);
      expect((await call('GET', '/api/v1/users')).json<{ items: UserJson[] }>().items.map((u) => u.id)).toContain(carol.id);
      expect((await call('GET', `/api/v1/users/${carol.id}`)).json<UserJson>().email).toBe(email.toLowerCase());
      const entry = (await auditActions()).find((e) => e.action === 'user.create' && e.target.id === String(carol.id));
      expect(entry?.detail).toEqual({ email: email.toLowerCase(), role: 'member' });
    });

    it('refuses a taken email (409 naming email), a short password and an unknown role (400 naming the field)', async () => {
      const bob = (await call('GET', '/api/v1/users')).json<{ items: UserJson[] }>().items.find((u) => u.role === 'member')!;
      expectError(await call('POST', '/api/v1/users', { email: bob.email.toUpperCase(), role: 'member' }), 409, 'email');
      expectError(await call('POST', '/api/v1/users', { email: `x-${uniqueSuffix()}@example.test`, role: 'member', password: 'short' }), 400, 'password');
      expectError(await call('POST', '/api/v1/users', { email: `x-${uniqueSuffix()}@example.test`, role: 'owner' }), 400, 'role');
      expectError(await call('POST', '/api/v1/users', { email: 'not an email', role: 'member' }), 400, 'email');
      expectError(await call('PATCH', `/api/v1/users/${bob.id}`, {}), 400);
    });

    it('a demotion takes effect on the next request; the last admin cannot be demoted or deleted (409)', async () => {
      const email = `dora-${uniqueSuffix()}@example.test`;
      const dora = (await call('POST', '/api/v1/users', { email, role: 'admin' })).json<UserJson>();
      const key = (await call('POST', `/api/v1/users/${dora.id}/api-keys`, { name: 'dora' })).json<{ key: string }>().key;
      expect((await call('GET', '/api/v1/users', undefined, bearer(key))).statusCode).toBe(200);
      const demoted = await call('PATCH', `/api/v1/users/${dora.id}`, { role: 'member' });
      expect(demoted.statusCode, demoted.body).toBe(200);
      expectError(await call('GET', '/api/v1/users', undefined, bearer(key)), 403);

      const lone = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }] });
      const self = (await call('GET', '/api/v1/users', undefined, bearer(lone.keys.alice!))).json<{ items: UserJson[] }>().items[0]!;
      expectError(await call('PATCH', `/api/v1/users/${self.id}`, { role: 'member' }, bearer(lone.keys.alice!)), 409, 'role');
      expectError(await call('DELETE', `/api/v1/users/${self.id}`, undefined, bearer(lone.keys.alice!)), 409, 'userId');
      expect((await call('GET', `/api/v1/users/${self.id}`, undefined, bearer(lone.keys.alice!))).json<UserJson>().role).toBe('admin');
    });

    it('a new password ends the console sessions of the user; null leaves them unable to sign in', async () => {
      const email = `erin-${uniqueSuffix()}@example.test`;
      const erin = (await call('POST', '/api/v1/users', { email, role: 'member', password: 'first password here' })).json<UserJson>();
      const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'first password here' } });
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      const listing = () => app.inject({ url: `/api/v1/deployments/${s.refs.prod}/workspace`, headers: { cookie, 'x-requested-with': 'svc' } });
      expect((await listing()).statusCode).toBe(200);
      expect((await call('PATCH', `/api/v1/users/${erin.id}`, { password: 'second password here' })).statusCode).toBe(200);
      expect((await listing()).statusCode).toBe(401);
      expect((await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'second password here' } })).statusCode).toBe(200);
      const cleared = await call('PATCH', `/api/v1/users/${erin.id}`, { password: null });
      expect(cleared.json<UserJson>().hasPassword).toBe(false);
      expect((await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'second password here' } })).statusCode).toBe(401);
    });

    it('deleting a user stops their key at once and keeps the audit entry that names them', async () => {
      const email = `fred-${uniqueSuffix()}@example.test`;
      const fred = (await call('POST', '/api/v1/users', { email, role: 'member' })).json<UserJson>();
      const key = (await call('POST', `/api/v1/users/${fred.id}/api-keys`, {})).json<{ key: string }>().key;
      expect((await call('GET', '/api/v1/deployments', undefined, bearer(key))).statusCode).toBe(200);
      expect((await call('DELETE', `/api/v1/users/${fred.id}`)).statusCode).toBe(204);
      expect((await call('GET', '/api/v1/deployments', undefined, bearer(key))).statusCode).toBe(401);
      expectError(await call('GET', `/api/v1/users/${fred.id}`), 404, 'userId');
      expect((await auditActions()).find((e) => e.action === 'user.delete' && e.target.id === String(fred.id))?.detail).toEqual({ email, role: 'member' });
    });
  });

  describe('API keys', () => {
    it('shows a key once, lists it by name and last four characters, and a deleted key is refused on its next request', async () => {
      const bob = (await call('GET', '/api/v1/users')).json<{ items: UserJson[] }>().items.find((u) => u.role === 'member')!;
      const made = await call('POST', `/api/v1/users/${bob.id}/api-keys`, { name: 'CI deploy' });
      expect(made.statusCode, made.body).toBe(201);
      expect(made.headers['cache-control']).toBe('no-store');
      const { id, key, hint, name } = made.json<{ id: number; key: string; hint: string; name: string }>();
      expect(key).toMatch(/^svc_[0-9A-Za-z]{40,}$/);
      expect([hint, name]).toEqual([key.slice(-4), 'CI deploy']);
      const listed = await call('GET', `/api/v1/users/${bob.id}/api-keys`);
      expect(listed.json<{ items: Array<{ id: number; hint: string | null }> }>().items.find((k) => k.id === id)?.hint).toBe(key.slice(-4));
      expect(listed.body).not.toContain(key);
      expect(JSON.stringify(await auditActions())).not.toContain(key);

      expect((await call('GET', '/api/v1/deployments', undefined, bearer(key))).statusCode).toBe(200);
      expect((await call('DELETE', `/api/v1/users/${bob.id}/api-keys/${id}`)).statusCode).toBe(204);
      expect((await call('GET', '/api/v1/deployments', undefined, bearer(key))).statusCode).toBe(401);
      expectError(await call('DELETE', `/api/v1/users/${bob.id}/api-keys/${id}`), 404, 'keyId');
    });

    it('a key deleted through one process is refused by another on its next request, though that one held it in memory', async () => {
      const bob = (await call('GET', '/api/v1/users')).json<{ items: UserJson[] }>().items.find((u) => u.role === 'member')!;
      const { id, key } = (await call('POST', `/api/v1/users/${bob.id}/api-keys`, {})).json<{ id: number; key: string }>();
      const db = openDatabase(t().url);
      const second = await buildApp(testConfig(), { db });
      try {
        const there = async () => (await second.inject({ url: '/api/v1/deployments', headers: bearer(key) })).statusCode;
        expect(await there()).toBe(200);
        expect(await there()).toBe(200);
        expect((await call('DELETE', `/api/v1/users/${bob.id}/api-keys/${id}`)).statusCode).toBe(204);
        expect(await there()).toBe(401);
      } finally {
        await second.close();
        await db.close();
      }
    });

    it("lists a key the import wrote by its last four characters too", async () => {
      const keys = (await call('GET', `/api/v1/users/${s.refs.alice}/api-keys`)).json<{ items: Array<{ hint: string | null; name: string | null }> }>().items;
      expect(keys.map((k) => k.hint)).toEqual([s.keys.alice!.slice(-4)]);
    });

    it('never reaches another account: its user is a 404 and its keys cannot be listed, made or deleted', async () => {
      const theirs = (await call('GET', '/api/v1/users', undefined, bearer(other.keys.alice!))).json<{ items: UserJson[] }>().items[0]!;
      const theirKeys = (await call('GET', `/api/v1/users/${theirs.id}/api-keys`, undefined, bearer(other.keys.alice!))).json<{ items: Array<{ id: number }> }>().items;
      expectError(await call('GET', `/api/v1/users/${theirs.id}/api-keys`), 404, 'userId');
      expectError(await call('POST', `/api/v1/users/${theirs.id}/api-keys`, {}), 404, 'userId');
      expectError(await call('DELETE', `/api/v1/users/${theirs.id}/api-keys/${theirKeys[0]!.id}`), 404, 'keyId');
      expect((await call('GET', '/api/v1/deployments', undefined, bearer(other.keys.alice!))).statusCode).toBe(200);
      expectError(await call('PATCH', `/api/v1/users/${theirs.id}`, { role: 'member' }), 404, 'userId');
      expectError(await call('DELETE', `/api/v1/users/${theirs.id}`), 404, 'userId');
    });
  });

  describe('groups', () => {
    it('creates, renames and re-members a group; a grant to it reaches its members only while they are in it', async () => {
      const members = (await call('GET', '/api/v1/users')).json<{ items: UserJson[] }>().items;
      const bob = members.find((u) => u.role === 'member')!;
      const name = `Sales ${uniqueSuffix()}`;
      const created = await call('POST', '/api/v1/groups', { name, memberIds: [bob.id] });
      expect(created.statusCode, created.body).toBe(201);
      const group = created.json<GroupJson>();
      expect(group).toMatchObject({ name, memberIds: [bob.id] });
      expect((await call('GET', `/api/v1/groups/${group.id}`)).json<GroupJson>().memberIds).toEqual([bob.id]);
      expectError(await call('POST', '/api/v1/groups', { name }), 409, 'name');

      const renamed = await call('PATCH', `/api/v1/groups/${group.id}`, { name: `${name} EU`, memberIds: [] });
      expect(renamed.json<GroupJson>()).toMatchObject({ name: `${name} EU`, memberIds: [] });
      expect((await call('GET', '/api/v1/groups')).json<{ items: GroupJson[] }>().items.find((g) => g.id === group.id)?.memberIds).toEqual([]);
      expect((await call('DELETE', `/api/v1/groups/${group.id}`)).statusCode).toBe(204);
      expectError(await call('GET', `/api/v1/groups/${group.id}`), 404, 'groupId');
      const actions = (await auditActions()).filter((e) => e.target.type === 'group' && e.target.id === String(group.id)).map((e) => e.action);
      expect(actions).toEqual(['group.delete', 'group.update', 'group.create']);
    });

    it("refuses another account's user as a member (400 naming memberIds[i]) and another account's group (404)", async () => {
      const theirs = (await call('GET', '/api/v1/users', undefined, bearer(other.keys.alice!))).json<{ items: UserJson[] }>().items[0]!;
      const bob = (await call('GET', '/api/v1/users')).json<{ items: UserJson[] }>().items.find((u) => u.role === 'member')!;
      expectError(await call('POST', '/api/v1/groups', { name: `x ${uniqueSuffix()}`, memberIds: [bob.id, theirs.id] }), 400, 'memberIds[1]');
      const theirGroup = (await call('POST', '/api/v1/groups', { name: 'Theirs' }, bearer(other.keys.alice!))).json<GroupJson>();
      expectError(await call('GET', `/api/v1/groups/${theirGroup.id}`), 404, 'groupId');
      expectError(await call('PATCH', `/api/v1/groups/${theirGroup.id}`, { name: 'Mine now' }), 404, 'groupId');
      expectError(await call('DELETE', `/api/v1/groups/${theirGroup.id}`), 404, 'groupId');
      expect((await call('GET', `/api/v1/groups/${theirGroup.id}`, undefined, bearer(other.keys.alice!))).json<GroupJson>().name).toBe('Theirs');
    });
  });

  describe('account settings', () => {
    it('changes the settings named, keeps the rest, and the embed page answers with the new origins at once', async () => {
      const before = (await call('GET', '/api/v1/account/settings')).json<Record<string, unknown>>();
      const res = await call('PATCH', '/api/v1/account/settings', { allowedEmbedOrigins: ['https://App.Example.com:443', 'http://localhost:5173'], timezone: 'Europe/Paris', locale: 'fr-fr' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ ...before, allowedEmbedOrigins: ['https://app.example.com', 'http://localhost:5173'], timezone: 'Europe/Paris', locale: 'fr-FR' });
      const page = await app.inject({ url: `/embed/d/${s.refs.prod}/x` });
      expect(String(page.headers['content-security-policy'] ?? '')).toMatch(/frame-ancestors[^;]*https:\/\/app\.example\.com/);
      const cleared = await call('PATCH', '/api/v1/account/settings', { timezone: null, allowEmbedComments: true });
      expect(cleared.json()).toMatchObject({ timezone: null, locale: 'fr-FR', allowEmbedComments: true });
      expect((await auditActions()).find((e) => e.action === 'account.settings.update')?.detail).toEqual({ timezone: { from: 'Europe/Paris', to: null }, allowEmbedComments: { from: false, to: true } });
    });

    it('refuses what is not an origin, a time zone or a locale, naming the field, and writes nothing', async () => {
      const before = (await call('GET', '/api/v1/account/settings')).body;
      expectError(await call('PATCH', '/api/v1/account/settings', { allowedEmbedOrigins: ['https://ok.example', 'https://evil.example/path'] }), 400, 'allowedEmbedOrigins[1]');
      expectError(await call('PATCH', '/api/v1/account/settings', { timezone: 'Mars/Olympus' }), 400, 'timezone');
      expectError(await call('PATCH', '/api/v1/account/settings', { locale: 'not a locale!' }), 400, 'locale');
      expectError(await call('PATCH', '/api/v1/account/settings', { frameAncestors: '*' }), 400);
      expect((await call('GET', '/api/v1/account/settings')).body).toBe(before);
    });
  });

  it('refuses a member every operation (403 naming Authorization) and an anonymous caller (401)', async () => {
    const member = bearer(s.keys.bob!);
    const calls: Array<[InjectOptions['method'], string, unknown?]> = [
      ['GET', '/api/v1/users'], ['POST', '/api/v1/users', { email: `m-${uniqueSuffix()}@example.test`, role: 'admin' }],
      ['GET', `/api/v1/users/${s.refs.alice}`], ['PATCH', `/api/v1/users/${s.refs.bob}`, { role: 'admin' }], ['DELETE', `/api/v1/users/${s.refs.alice}`],
      ['GET', `/api/v1/users/${s.refs.bob}/api-keys`], ['POST', `/api/v1/users/${s.refs.bob}/api-keys`, {}], ['DELETE', `/api/v1/users/${s.refs.bob}/api-keys/1`],
      ['GET', '/api/v1/groups'], ['POST', '/api/v1/groups', { name: 'm' }], ['GET', '/api/v1/groups/1'], ['PATCH', '/api/v1/groups/1', { name: 'm' }], ['DELETE', '/api/v1/groups/1'],
      ['GET', '/api/v1/account/settings'], ['PATCH', '/api/v1/account/settings', { allowEmbedComments: true }],
    ];
    for (const [method, url, body] of calls) {
      expectError(await call(method, url, body, member), 403, 'Authorization');
      expectError(await call(method, url, body, {}), 401);
    }
    expect((await call('GET', `/api/v1/users/${s.refs.bob}`)).json<UserJson>().role).toBe('member');
  });
});
