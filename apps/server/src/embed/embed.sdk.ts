import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../core/core.errors.js';

/** Where `npm run build` puts the SDK's files for pages without a bundler (packages/embed-sdk/build.mjs). */
export const SDK_DIST = fileURLToPath(new URL('../../../../packages/embed-sdk/dist/browser/', import.meta.url));
/** The SDK's package.json: its version names the immutable paths. */
const SDK_PACKAGE = fileURLToPath(new URL('../../../../packages/embed-sdk/package.json', import.meta.url));

/** The files served under /sdk/: the ES module and the IIFE for a plain <script> tag (global `SvcEmbed`). */
export const SDK_FILES = ['embed-sdk.js', 'embed-sdk.iife.js'] as const;

const ONE_YEAR_S = 365 * 24 * 3600;
/**
 * The stable alias follows svc's upgrades (its embed and its SDK change together), so a browser keeps it for
 * five minutes and then asks again (a 304 when nothing changed).
 */
const ALIAS_MAX_AGE_S = 300;

interface SdkFile {
  body: Buffer;
  etag: string;
}

/** Where the SDK's built files and package.json are (tests point them elsewhere to check a missing build). */
export interface SdkAssets {
  distDir?: string;
  packageFile?: string;
}

/** The version of @svc/embed-sdk that the built files are: the immutable paths are `/sdk/v<version>/<file>`. */
export function sdkVersion(packageFile: string = SDK_PACKAGE): string {
  return (JSON.parse(readFileSync(packageFile, 'utf8')) as { version: string }).version;
}

/**
 * Serves @svc/embed-sdk from svc itself (issue 31 item 12), for host pages without a bundler:
 * - `/sdk/v<version>/embed-sdk.js` and `/sdk/v<version>/embed-sdk.iife.js`: immutable, cached for a year;
 * - `/sdk/embed-sdk.js` and `/sdk/embed-sdk.iife.js`: the stable alias of the same bytes, cached five minutes, with
 *   an ETag.
 * Any origin may load them (`Access-Control-Allow-Origin: *` for a module script, which is a CORS request, and
 * `Cross-Origin-Resource-Policy: cross-origin` for a classic script, which is not): they are public code, and the
 * host pages that load them are on other origins by definition. Another version's path is a 404 naming the one
 * served. Not API: the routes are not in the OpenAPI document.
 *
 * @example
 * // <script src="http://127.0.0.1:3000/sdk/embed-sdk.iife.js"></script> then SvcEmbed.embed({ ... })
 * await app.register(sdkRoutes());
 */
export function sdkRoutes(assets: SdkAssets = {}): FastifyPluginAsyncTypebox {
  const distDir = assets.distDir ?? SDK_DIST;
  return async (app) => {
    const files = new Map<string, SdkFile>();
    for (const name of SDK_FILES) {
      const path = join(distDir, name);
      if (!existsSync(path)) continue;
      const body = readFileSync(path);
      files.set(name, { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
    }
    const version = files.size === 0 ? undefined : sdkVersion(assets.packageFile);

    const answer = (request: FastifyRequest, reply: FastifyReply, name: string, cacheControl: string) => {
      const file = files.get(name);
      if (file === undefined) {
        if (files.size === 0 && (SDK_FILES as readonly string[]).includes(name)) {
          throw new AppError('service_unavailable', 'the SDK is not built: run npm run build');
        }
        throw new AppError('not_found', `no SDK file ${name}: svc serves ${SDK_FILES.join(' and ')}`);
      }
      reply
        .header('content-type', 'text/javascript; charset=utf-8')
        .header('cache-control', cacheControl)
        .header('etag', file.etag)
        .header('access-control-allow-origin', '*')
        // svc's other answers say same-origin (http.security-headers.ts), which would block a classic <script>.
        .header('cross-origin-resource-policy', 'cross-origin');
      const known = request.headers['if-none-match']?.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
      if (known?.includes(file.etag) === true) return reply.status(304).send();
      return reply.send(file.body);
    };

    const hide = { schema: { hide: true } };
    app.get<{ Params: { file: string } }>('/sdk/:file', hide, (request, reply) =>
      answer(request, reply, request.params.file, `public, max-age=${ALIAS_MAX_AGE_S}`));
    app.get<{ Params: { version: string; file: string } }>('/sdk/:version/:file', hide, (request, reply) => {
      if (version !== undefined && request.params.version !== `v${version}`) {
        throw new AppError('not_found', `svc serves @svc/embed-sdk ${version} only: /sdk/v${version}/${request.params.file}, or the alias /sdk/${request.params.file}`);
      }
      return answer(request, reply, request.params.file, `public, max-age=${ONE_YEAR_S}, immutable`);
    });
  };
}
