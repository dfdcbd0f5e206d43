import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describeEachDialect } from '../../test/dialects.js';
import { bearer, seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { importFile, ImportError } from '../import/import.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { EMBED_DIST } from './embed.routes.js';
import { bootScriptHashes, renderEmbedHtml } from './embed.service.js';

const PASSWORD = 'correct horse battery staple';
const ORIGINS_A = ['https://host-a.test', 'http://localhost:5173'];
const ORIGINS_B = ['https://host-b.test'];

/** The built page's boot script (index.html), the one inline script the policy allows, by its hash. */
const bootScript = (html: string): string => {
  const match = /<script id="svc-boot">([\s\S]*?)<\/script>/.exec(html);
  if (!match) throw new Error('no svc-boot script in the page: run npm run build');
  return match[1]!;
};
const BOOT_HASH = `sha256-${createHash('sha256').update(bootScript(readFileSync(join(EMBED_DIST, 'index.html'), 'utf8'))).digest('base64')}`;

/** The whole policy for a page framed by `ancestors` (a space-separated list, or 'none'). */
const cspFor = (ancestors: string) => [
  "default-src 'self'", `script-src 'self' '${BOOT_HASH}'`, "style-src 'self' 'unsafe-inline'", "img-src 'self' data: blob:", "connect-src 'self'",
  "font-src 'self' data:", "object-src 'none'", "frame-src 'self'", "child-src 'self'", "base-uri 'none'", "form-action 'none'",
  `frame-ancestors ${ancestors}`,
].join('; ');

/** The `frame-ancestors` sources of a response, or undefined when the directive is missing. */
const frameAncestors = (res: LightMyRequestResponse): string | undefined =>
  /(?:^|; )frame-ancestors ([^;]*)/.exec(String(res.headers['content-security-policy'] ?? ''))?.[1];

/** The JSON the page carries in `<script id="svc-embed-config">`, parsed. */
const embedConfig = (html: string): unknown => {
  const match = /<script id="svc-embed-config" type="application\/json">(.*?)<\/script>/s.exec(html);
  if (!match) throw new Error('no svc-embed-config script in the page');
  return JSON.parse(match[1]!);
};

/** One hashed file of the built embed runtime, by extension. */
const builtAsset = (extension: string): string => {
  const name = readdirSync(join(EMBED_DIST, 'assets')).find((file) => file.endsWith(extension));
  if (name === undefined) throw new Error(`apps/embed/dist/assets holds no ${extension} file: run npm run build`);
  return name;
};

/** A writable stream that keeps each log line. */
const collectLines = (lines: string[]) => new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  },
});

/**
 * The embed runtime's pages (issue 6): which account's allowedEmbedOrigins frame a page, the headers every page
 * carries, the hashed assets, a missing build, origins that may never reach the policy, and the session id kept
 * out of the logs.
 */
describeEachDialect('embed pages', (t) => {
  let app: FastifyInstance;
  let a: SeededAccount;
  let b: SeededAccount;
  let bare: SeededAccount;
  let aliceEmail: string;
  let ids: { a: string; b: string; bare: string };

  beforeAll(async () => {
    app = t().app;
    const suffix = uniqueSuffix();
    ids = { a: `page-a-${suffix}`, b: `page-b-${suffix}`, bare: `page-bare-${suffix}` };
    const workbook = (publicId: string) => ({
      ref: 'wb', type: 'WORKBOOK' as const, name: 'Sales', createdBy: 'alice',
      dashboard: { publicId, status: 'published' as const, allowEmbed: true },
    });
    aliceEmail = `alice-${suffix}@embed.test`;
    a = await seedAccount(t().db.kysely, {
      settings: { allowedEmbedOrigins: ORIGINS_A },
      users: [{ ref: 'alice', role: 'admin', email: aliceEmail, password: PASSWORD }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [workbook(ids.a)] }],
    });
    b = await seedAccount(t().db.kysely, {
      settings: { allowedEmbedOrigins: ORIGINS_B },
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [workbook(ids.b)] }],
    });
    bare = await seedAccount(t().db.kysely, {
      users: [{ ref: 'alice', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [workbook(ids.bare)] }],
    });
  });

  /** A fresh session id (not redeemed) minted by the account's admin. */
  const mintSessionId = async (account: SeededAccount): Promise<string> => {
    const res = await app.inject({
      method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(account.keys.alice!),
      payload: { deploymentId: account.refs.prod, externalId: `viewer-${uniqueSuffix()}` },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().sessionId as string;
  };

  /** The console cookie of account A's admin. */
  const consoleCookie = async (): Promise<string> => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: aliceEmail, password: PASSWORD } });
    expect(res.statusCode, res.body).toBe(200);
    const cookie = res.cookies.find((c) => c.name === 'svc_console');
    if (cookie === undefined) throw new Error('login set no svc_console cookie');
    return cookie.value;
  };

  describe('frame-ancestors', () => {
    it('reads a repeated session parameter by its first value, as the page does, and never falls back to the cookie then', async () => {
      const sessionId = await mintSessionId(b);
      const cookie = await consoleCookie();
      const res = await app.inject({ url: `/embed/chat?session=${sessionId}&session=ses_other`, cookies: { svc_console: cookie } });
      expect(res.headers['content-security-policy']).toBe(cspFor(ORIGINS_B.join(' ')));
    });

    it("lists exactly the allowedEmbedOrigins of the session id's account", async () => {
      const sessionId = await mintSessionId(a);
      const res = await app.inject({ url: `/embed/dashboard/${ids.a}?session=${sessionId}` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-security-policy']).toBe(cspFor('https://host-a.test http://localhost:5173'));
    });

    it("keeps the session account's origins after the session id was redeemed and after it was revoked", async () => {
      const sessionId = await mintSessionId(a);
      const exchanged = await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId } });
      expect(exchanged.statusCode, exchanged.body).toBe(200);
      // On account B's publicId, so that only the session id can name account A.
      expect(frameAncestors(await app.inject({ url: `/embed/dashboard/${ids.b}?session=${sessionId}` }))).toBe(ORIGINS_A.join(' '));
      const revoked = await app.inject({ method: 'POST', url: '/api/v1/embed/session/revoke', headers: bearer(a.keys.alice!), payload: { sessionId } });
      expect(revoked.statusCode, revoked.body).toBeLessThan(300);
      expect(frameAncestors(await app.inject({ url: `/embed/dashboard/${ids.b}?session=${sessionId}` }))).toBe(ORIGINS_A.join(' '));
      expect(frameAncestors(await app.inject({ url: `/embed/chat?session=${sessionId}` }))).toBe(ORIGINS_A.join(' '));
    });

    it("frames a session of account A on a publicId of account B by A's origins", async () => {
      const sessionId = await mintSessionId(a);
      expect(frameAncestors(await app.inject({ url: `/embed/dashboard/${ids.b}?session=${sessionId}` }))).toBe(ORIGINS_A.join(' '));
    });

    it("lets nobody frame a page whose session id and publicId are both unknown: frame-ancestors 'none'", async () => {
      const res = await app.inject({ url: `/embed/dashboard/unknown-${uniqueSuffix()}?session=ses_${uniqueSuffix()}unknown` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-security-policy']).toBe(cspFor("'none'"));
      expect(frameAncestors(await app.inject({ url: '/embed/dashboard/x?session=not-a-session-id' }))).toBe("'none'");
    });

    it("falls back to the publicId's account when the session id is unknown or absent", async () => {
      expect(frameAncestors(await app.inject({ url: `/embed/dashboard/${ids.b}` }))).toBe(ORIGINS_B.join(' '));
      expect(frameAncestors(await app.inject({ url: `/embed/dashboard/${ids.b}?session=ses_${uniqueSuffix()}unknown` }))).toBe(ORIGINS_B.join(' '));
    });

    it("frames /embed/d/<deploymentId>/... by the deployment's account, and an unknown or malformed deployment by nobody", async () => {
      const res = await app.inject({ url: `/embed/d/${a.refs.prod}/app/workbook/${a.refs.wb}` });
      expect(res.statusCode).toBe(200);
      expect(frameAncestors(res)).toBe(ORIGINS_A.join(' '));
      expect(frameAncestors(await app.inject({ url: `/embed/d/${b.refs.prod}/app` }))).toBe(ORIGINS_B.join(' '));
      expect(frameAncestors(await app.inject({ url: '/embed/d/2147483647/app' }))).toBe("'none'");
      expect(frameAncestors(await app.inject({ url: '/embed/d/abc/app' }))).toBe("'none'");
      expect(frameAncestors(await app.inject({ url: '/embed/d/99999999999/app' }))).toBe("'none'");
    });

    it("frames a private embed (/embed/chat with the console cookie) by the signed-in user's account, only when no session param is sent", async () => {
      const cookie = await consoleCookie();
      const signedIn = await app.inject({ url: '/embed/chat', cookies: { svc_console: cookie } });
      expect(signedIn.statusCode).toBe(200);
      expect(frameAncestors(signedIn)).toBe(ORIGINS_A.join(' '));
      expect(frameAncestors(await app.inject({ url: '/embed/app/workbook/1', cookies: { svc_console: cookie } }))).toBe(ORIGINS_A.join(' '));
      expect(frameAncestors(await app.inject({ url: '/embed/chat' }))).toBe("'none'");
      expect(frameAncestors(await app.inject({ url: '/embed/chat', cookies: { svc_console: 'cs_forged' } }))).toBe("'none'");
      // A session param (even an unknown one) means a signed embed: the cookie is not consulted.
      expect(frameAncestors(await app.inject({ url: `/embed/chat?session=ses_${uniqueSuffix()}unknown`, cookies: { svc_console: cookie } }))).toBe("'none'");
      const ofB = await mintSessionId(b);
      expect(frameAncestors(await app.inject({ url: `/embed/chat?session=${ofB}`, cookies: { svc_console: cookie } }))).toBe(ORIGINS_B.join(' '));
    });

    it("lets nobody frame the pages of an account with no allowedEmbedOrigins, by publicId or by session", async () => {
      expect(frameAncestors(await app.inject({ url: `/embed/dashboard/${ids.bare}` }))).toBe("'none'");
      const sessionId = await mintSessionId(bare);
      expect(frameAncestors(await app.inject({ url: `/embed/dashboard/${ids.a}?session=${sessionId}` }))).toBe("'none'");
      expect(frameAncestors(await app.inject({ url: `/embed/d/${bare.refs.prod}/app` }))).toBe("'none'");
    });

    it('drops a stored origin that is not exactly an origin, so it never reaches the policy', async () => {
      const stored = await seedAccount(t().db.kysely, {
        users: [{ ref: 'alice', role: 'admin' }],
        deployments: [{ ref: 'prod', name: 'Prod' }],
      });
      const accountId = (await t().db.kysely.selectFrom('deployments').select('account_id').where('id', '=', stored.refs.prod!).executeTakeFirstOrThrow()).account_id;
      const allowedEmbedOrigins = [
        'https://ok.test', 'https://bad.test/path', 'https://x.test; script-src *', "'none'", '*', 'javascript:alert(1)',
        'https://user:pw@creds.test', 'https://q.test?x=1', 42, null,
      ];
      await t().db.kysely.updateTable('accounts').set({ settings: JSON.stringify({ allowedEmbedOrigins }) }).where('id', '=', accountId).execute();
      const res = await app.inject({ url: `/embed/d/${stored.refs.prod}/app` });
      expect(frameAncestors(res)).toBe('https://ok.test');
      expect(res.headers['content-security-policy']).toBe(cspFor('https://ok.test'));
      expect(embedConfig(res.body)).toEqual({ allowedOrigins: ['https://ok.test'] });
    });

    it('writes an origin as the browser reports it: lowercase, default port left out; a port out of range is dropped', async () => {
      const stored = await seedAccount(t().db.kysely, {
        settings: { allowedEmbedOrigins: ['https://A.test:443', 'http://d.test:80', 'http://e.test:8080', 'https://b.test:99999'] },
        users: [{ ref: 'alice', role: 'admin' }],
        deployments: [{ ref: 'prod', name: 'Prod' }],
      });
      expect(frameAncestors(await app.inject({ url: `/embed/d/${stored.refs.prod}/app` }))).toBe('https://a.test http://d.test http://e.test:8080');
    });
  });

  describe('page headers and body', () => {
    it.each([
      ['/embed/dashboard/any'], ['/embed/chat'], ['/embed/app'], ['/embed/app/workbook/12'], ['/embed/d/1/app/workbook/2'],
    ])('answers %s with HTML that is never cached and never sends a referrer', async (url) => {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toMatch(/frame-ancestors /);
      expect(res.body).toMatch(/^<!doctype html>/i);
    });

    it("carries the framing account's origins as inert JSON in the page's head", async () => {
      const res = await app.inject({ url: `/embed/dashboard/${ids.a}` });
      expect(embedConfig(res.body)).toEqual({ allowedOrigins: ORIGINS_A });
      expect(res.body.indexOf('id="svc-embed-config"')).toBeLessThan(res.body.indexOf('</head>'));
      expect(embedConfig((await app.inject({ url: '/embed/chat' })).body)).toEqual({ allowedOrigins: [] });
    });

    it('allows the boot script by its hash and no other inline script: the config JSON is inert', async () => {
      const res = await app.inject({ url: `/embed/dashboard/${ids.a}` });
      const policy = String(res.headers['content-security-policy']);
      expect(/(?:^|; )script-src ([^;]*)/.exec(policy)?.[1]).toBe(`'self' '${BOOT_HASH}'`);
      expect(bootScript(res.body)).toContain('/api/v1/embed/session/token');
      expect(bootScriptHashes(res.body)).toEqual([BOOT_HASH]);
      expect(/(?:^|; )script-src [^;]*unsafe/.test(policy)).toBe(false);
    });

    it('serves a hashed script under /embed/assets/ with a year of immutable caching', async () => {
      const script = await app.inject({ url: `/embed/assets/${builtAsset('.js')}` });
      expect(script.statusCode).toBe(200);
      expect(script.headers['content-type']).toMatch(/^(text|application)\/javascript/);
      expect(script.headers['cache-control']).toMatch(/max-age=31536000/);
      expect(script.headers['cache-control']).toMatch(/immutable/);
      const style = await app.inject({ url: `/embed/assets/${builtAsset('.css')}` });
      expect(style.statusCode).toBe(200);
      expect(style.headers['content-type']).toMatch(/^text\/css/);
    });

    it('answers 404 for an unknown asset, a path out of the assets folder and an unknown embed page', async () => {
      expect((await app.inject({ url: '/embed/assets/index-nope.js' })).statusCode).toBe(404);
      expect((await app.inject({ url: '/embed/assets/../index.html' })).statusCode).toBe(404);
      expect((await app.inject({ url: '/embed/assets/%2e%2e/index.html' })).statusCode).toBe(404);
      expect((await app.inject({ url: '/embed/nope' })).statusCode).toBe(404);
    });

    it('answers 503 with an HTML page (still framed by the account) when the embed runtime is not built', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-embed-empty-'));
      const unbuilt = await buildApp(testConfig(), { db: t().db, embedDistDir: `${dir}/` });
      try {
        const res = await unbuilt.inject({ url: `/embed/dashboard/${ids.a}` });
        expect(res.statusCode).toBe(503);
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.body).toContain('npm run build');
        expect(frameAncestors(res)).toBe(ORIGINS_A.join(' '));
        expect((await unbuilt.inject({ url: '/embed/chat' })).statusCode).toBe(503);
        expect((await unbuilt.inject({ url: `/embed/assets/${builtAsset('.js')}` })).statusCode).toBe(404);
      } finally {
        await unbuilt.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('allowedEmbedOrigins in the import file', () => {
    const importOrigins = (settings: Record<string, unknown>) => importFile(t().db.kysely, {
      accounts: [{ name: 'Origins', tenantName: `o-${uniqueSuffix()}`, settings }],
    });

    it.each([
      ['https://host.test/path'],
      ['https://host.test/'],
      ['https://host.test; script-src *'],
      ['https://host.test https://other.test'],
      ['*'],
      ['ftp://host.test'],
      ['https://user@host.test'],
    ])('refuses the origin %j, naming its JSON path', async (origin) => {
      const refused = importOrigins({ allowedEmbedOrigins: ['https://ok.test', origin] });
      await expect(refused).rejects.toBeInstanceOf(ImportError);
      await expect(refused).rejects.toMatchObject({ path: '$.accounts[0].settings.allowedEmbedOrigins[1]' });
    });

    it('refuses a timezone or locale that is not a non-empty string, naming it', async () => {
      await expect(importOrigins({ timezone: 3 })).rejects.toMatchObject({ path: '$.accounts[0].settings.timezone' });
      await expect(importOrigins({ locale: '' })).rejects.toMatchObject({ path: '$.accounts[0].settings.locale' });
    });

    it('accepts exact origins, with a port', async () => {
      await expect(importOrigins({ allowedEmbedOrigins: ['https://ok.test', 'http://localhost:5173'], timezone: 'Europe/Paris', locale: 'fr-FR' }))
        .resolves.toBeDefined();
    });
  });

  describe('GET /api/v1/embed/session', () => {
    let withDefaults: SeededAccount;

    beforeAll(async () => {
      withDefaults = await seedAccount(t().db.kysely, {
        settings: { allowEmbedComments: true, timezone: 'Europe/Paris', locale: 'fr-FR' },
        users: [{ ref: 'alice', role: 'admin' }],
        deployments: [{ ref: 'prod', name: 'Prod' }],
      });
    });

    /** The current session as the embed runtime reads it, for a session minted with `body`. */
    const currentSession = async (account: SeededAccount, body: Record<string, unknown>) => {
      const minted = await app.inject({
        method: 'POST', url: '/api/v1/embed/generate-session', headers: bearer(account.keys.alice!),
        payload: { deploymentId: account.refs.prod, externalId: `viewer-${uniqueSuffix()}`, ...body },
      });
      expect(minted.statusCode, minted.body).toBe(200);
      const exchanged = await app.inject({ method: 'POST', url: '/api/v1/embed/session/token', payload: { sessionId: minted.json().sessionId } });
      expect(exchanged.statusCode, exchanged.body).toBe(200);
      const res = await app.inject({ url: '/api/v1/embed/session', headers: { authorization: `Embed-Token ${exchanged.json().token}` } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().session as Record<string, unknown>;
    };

    it("returns the session's embedTheme as given, extra keys included", async () => {
      const embedTheme = { primaryColor: '#112233', borderRadius: 4, font: 'Inter', density: 'compact' };
      const session = await currentSession(withDefaults, { embedTheme });
      expect(session).toMatchObject({ mode: 'signed', deploymentId: withDefaults.refs.prod, embedTheme, allowEmbedComments: true });
      expect((await currentSession(withDefaults, {})).embedTheme).toEqual({});
    });

    it("takes the defaults from the session's settings first, then the account's, else null", async () => {
      expect((await currentSession(withDefaults, { settings: { timezone: 'America/New_York', locale: 'en-US' } })).defaults)
        .toEqual({ timezone: 'America/New_York', locale: 'en-US' });
      expect((await currentSession(withDefaults, { settings: { timezone: 'Asia/Tokyo' } })).defaults).toEqual({ timezone: 'Asia/Tokyo', locale: 'fr-FR' });
      expect((await currentSession(withDefaults, { settings: { locale: 'de-DE', allowAi: true } })).defaults).toEqual({ timezone: 'Europe/Paris', locale: 'de-DE' });
      expect((await currentSession(withDefaults, {})).defaults).toEqual({ timezone: 'Europe/Paris', locale: 'fr-FR' });
      expect((await currentSession(a, {})).defaults).toEqual({ timezone: null, locale: null });
    });

    it('describes a signed-in platform user (console cookie) as a private embed', async () => {
      const cookie = await consoleCookie();
      const res = await app.inject({ url: '/api/v1/embed/session', cookies: { svc_console: cookie } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({
        session: {
          mode: 'private', deploymentId: null, embedTenant: null, embedUserId: null, userId: a.refs.alice,
          allowEmbedComments: false, embedTheme: {}, defaults: { timezone: null, locale: null }, commentEventText: false, explore: 'none', filters: {}, lockedFilters: [],
        },
      });
    });

    it('answers { session: null } for an API key, no credential, or a forged cookie', async () => {
      for (const headers of [bearer(a.keys.alice!), {}]) {
        const res = await app.inject({ url: '/api/v1/embed/session', headers });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ session: null });
      }
      expect((await app.inject({ url: '/api/v1/embed/session', cookies: { svc_console: 'cs_forged' } })).json()).toEqual({ session: null });
    });
  });

  describe('logs', () => {
    it('never writes the session query parameter of an embed URL into a log line', async () => {
      const lines: string[] = [];
      const logged = await buildApp(testConfig(), { db: t().db, logger: { level: 'info', stream: collectLines(lines) } });
      try {
        const first = await logged.inject({ url: '/embed/dashboard/x?session=ses_secret123' });
        expect(first.statusCode).toBe(200);
        await logged.inject({ url: '/embed/chat?theme=dark&session=ses_secret456&lang=fr' });
        await logged.inject({ url: '/embed/nope?session=ses_secret789' });
        // However the name is spelt: percent-encoded, or in capitals.
        await logged.inject({ url: '/embed/chat?%73ession=ses_secretA&SESSION=ses_secretB' });
        const all = lines.join('\n');
        expect(lines.length).toBeGreaterThan(4);
        expect(all).not.toMatch(/ses_secret/);
        const urls = lines.map((line) => (JSON.parse(line) as { req?: { url?: string } }).req?.url).filter((url) => url !== undefined);
        expect(urls).toContain('/embed/dashboard/x?session=[Redacted]');
        expect(urls).toContain('/embed/chat?theme=dark&session=[Redacted]&lang=fr');
        expect(urls).toContain('/embed/chat?%73ession=[Redacted]&SESSION=[Redacted]');
      } finally {
        await logged.close();
      }
    });
  });
});

describe('embed page HTML', () => {
  it('escapes < in the config JSON so that no value can end its script element', () => {
    const hostile = '</script><script>alert(1)</script>';
    const html = renderEmbedHtml('<!doctype html><html><head><title>x</title></head><body></body></html>', { allowedOrigins: [hostile] });
    expect(html).not.toContain('</script><script>alert(1)');
    expect(html).toContain('\\u003c/script>');
    const json = /<script id="svc-embed-config" type="application\/json">(.*?)<\/script><\/head>/.exec(html)?.[1];
    expect(JSON.parse(json!)).toEqual({ allowedOrigins: [hostile] });
  });
});
