import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fastifyCookie from '@fastify/cookie';
import fastifyStatic from '@fastify/static';
import Fastify from 'fastify';
import semver from 'semver';
import { describe, it } from 'vitest';

const ROOT = new URL('../../../../', import.meta.url);
const rootPackage = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', ROOT), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: unknown } | string[] }>;
};

describe('the Node versions svc supports (package.json engines)', () => {
  const oldest = semver.minVersion(rootPackage.engines.node)!.version;

  it('is the range this process runs in', ({ expect }) => {
    expect(semver.satisfies(process.versions.node, rootPackage.engines.node)).toBe(true);
  });

  it(`admits every package npm ci installs: none declares a Node that excludes ${oldest} (npm would warn EBADENGINE)`, ({ expect }) => {
    const refusing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (path === '' || typeof range !== 'string') continue;
      if (!semver.satisfies(oldest, range)) refusing.push(`${path}@${entry.version}: node ${range}`);
    }
    expect(refusing).toEqual([]);
  });
});

// package.json "overrides" holds cookie at 1.x and content-disposition at 2.x (both CommonJS, Node >= 18) under
// dependents that ask for the ESM-only, Node >= 22 majors: these run the calls those dependents make.
describe('the overridden dependencies, called as their dependents call them', () => {
  it('cookie: app.inject sends cookies (light-my-request) and @fastify/cookie reads and sets them', async ({ expect }) => {
    const app = Fastify();
    await app.register(fastifyCookie);
    app.get('/', async (request, reply) => {
      reply.setCookie('svc_console', 'ses x/1', { httpOnly: true, sameSite: 'none', secure: true, path: '/' });
      return { cookies: request.cookies };
    });
    try {
      const res = await app.inject({ url: '/', cookies: { svc_console: 'a b;c', other: 'é' } });
      expect(res.json()).toEqual({ cookies: { svc_console: 'a b;c', other: 'é' } });
      expect(res.headers['set-cookie']).toBe('svc_console=ses%20x%2F1; Path=/; HttpOnly; Secure; SameSite=None');
      expect(res.cookies).toEqual([expect.objectContaining({ name: 'svc_console', value: 'ses x/1' })]);
    } finally {
      await app.close();
    }
  });

  it('content-disposition: @fastify/static names a download, with a non-ASCII file name too', async ({ expect, onTestFinished }) => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-static-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'orders.csv'), 'id\n1\n');
    const app = Fastify();
    await app.register(fastifyStatic, { root: dir, serve: false });
    app.get('/ascii', (_request, reply) => reply.download('orders.csv', 'orders 2025.csv'));
    app.get('/accented', (_request, reply) => reply.download('orders.csv', 'bénéfices.csv'));
    try {
      const ascii = await app.inject({ url: '/ascii' });
      expect(ascii.statusCode).toBe(200);
      expect(ascii.body).toBe('id\n1\n');
      expect(ascii.headers['content-disposition']).toBe('attachment; filename="orders 2025.csv"');
      const accented = await app.inject({ url: '/accented' });
      expect(accented.headers['content-disposition']).toBe('attachment; filename="b?n?fices.csv"; filename*=UTF-8\'\'b%C3%A9n%C3%A9fices.csv');
    } finally {
      await app.close();
    }
  });
});
