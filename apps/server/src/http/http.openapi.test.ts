import { testConfig } from '../../test/config.js';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { toOpenApiSchema } from './http.openapi-schema.js';

type Operation = { operationId?: string; security?: unknown; responses: Record<string, { description: string }> };
const operationsOf = (document: { paths: Record<string, Record<string, Operation>> }) =>
  Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ at: `${method.toUpperCase()} ${path}`, ...operation })));

describeEachDialect('OpenAPI document and API reference', (t) => {
  it('serves an OpenAPI 3.1 document that a third-party validator accepts', async () => {
    const res = await t().app.inject({ url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const document = res.json();
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('declares the Apache-2.0 licence, the same as LICENSE and every package.json of the repository', async () => {
    const document = (await t().app.inject({ url: '/api/v1/openapi.json' })).json();
    expect(document.info.license).toEqual({ name: 'Apache License 2.0', identifier: 'Apache-2.0' });
    const root = fileURLToPath(new URL('../../../../', import.meta.url));
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    const manifests = ['package.json', 'bench/package.json', ...['apps', 'packages'].flatMap((dir) =>
      readdirSync(join(root, dir)).map((name) => join(dir, name, 'package.json')))];
    const licences = Object.fromEntries(manifests.map((path) => [path, JSON.parse(readFileSync(join(root, path), 'utf8')).license]));
    expect(Object.keys(licences).length).toBeGreaterThanOrEqual(8);
    expect(Object.values(licences).filter((licence) => licence !== 'Apache-2.0')).toEqual([]);
  });

  it('describes workspaceObjects with its tag, bearer security, parameters and response', async () => {
    const document = (await t().app.inject({ url: '/api/v1/openapi.json' })).json();
    const operation = document.paths['/api/v1/deployments/{deploymentId}/workspace'].get;
    expect(operation.operationId).toBe('workspaceObjects');
    expect(operation.tags).toEqual(['Workspace']);
    expect(operation.security).toEqual([{ bearerAuth: [] }]);
    const names = operation.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
    expect(names).toEqual(expect.arrayContaining([
      'path:deploymentId', 'query:folderId', 'query:types', 'query:orderByField', 'query:orderByDirection', 'query:search', 'query:after', 'query:first',
    ]));
    const ok = operation.responses['200'].content['application/json'].schema;
    expect(ok.required).toEqual(['items', 'pageInfo']);
    expect(ok.properties.items.items.required).toEqual(
      expect.arrayContaining(['id', 'deploymentId', 'name', 'meta', 'calculatedFields', 'createdAt', 'updatedAt', 'type']),
    );
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('describes every response in words (no "Default Response") and gives every operation an id and a 4xx', async () => {
    const document = (await t().app.inject({ url: '/api/v1/openapi.json' })).json();
    const operations = operationsOf(document);
    expect(operations.length).toBeGreaterThan(20);
    const vague = operations.flatMap((o) => Object.entries(o.responses)
      .filter(([, response]) => response.description === 'Default Response' || response.description.length < 8)
      .map(([status, response]) => `${o.at} ${status}: ${response.description}`));
    expect(vague).toEqual([]);
    expect(operations.filter((o) => o.operationId === undefined).map((o) => o.at)).toEqual([]);
    expect(operations.filter((o) => !Object.keys(o.responses).some((status) => status.startsWith('4'))).map((o) => o.at)).toEqual([]);
  });

  it('names its server, requires a credential unless an operation says otherwise, and lets the probes go without', async () => {
    const document = (await t().app.inject({ url: '/api/v1/openapi.json' })).json();
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    for (const path of ['/healthz', '/readyz']) expect(document.paths[path].get.security).toEqual([]);
    expect(document.paths['/api/v1/embed/session/token'].post.security).toEqual([]);
    expect(document.tags.filter((tag: { description?: string }) => !tag.description)).toEqual([]);
    const used = new Set(operationsOf(document).flatMap((o) => (o as { tags?: string[] }).tags ?? []));
    expect([...used].filter((tag) => !document.tags.some((t: { name: string }) => t.name === tag))).toEqual([]);
  });

  it('writes tuples as JSON Schema 2020-12 prefixItems (a query\'s order as [member, direction] pairs)', async () => {
    const document = (await t().app.inject({ url: '/api/v1/openapi.json' })).json();
    const body = document.paths['/api/v1/embed/dashboard/{publicId}/query'].post.requestBody.content['application/json'].schema;
    const pairs = body.properties.query.properties.order.anyOf[1].items;
    expect(pairs).toMatchObject({ type: 'array', prefixItems: [{ type: 'string' }, { enum: ['asc', 'desc'] }], items: false });
    expect(JSON.stringify(document)).not.toContain('additionalItems');
  });

  it('documents the 429 of the embed API limits on the routes they guard', async () => {
    const document = (await t().app.inject({ url: '/api/v1/openapi.json' })).json();
    for (const [path, method] of [['/api/v1/embed/session', 'get'], ['/api/v1/embed/dashboard/{publicId}', 'get'], ['/api/v1/embed/ai/query', 'post']] as const) {
      expect(document.paths[path][method].responses['429'].description).toContain('retry-after');
    }
  });

  it('leads the root URL, the first address npm start prints, to the API reference, and serves a favicon', async () => {
    const root = await t().app.inject({ url: '/' });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/docs');
    const reference = await t().app.inject({ url: '/docs' });
    expect([200, 301, 302]).toContain(reference.statusCode);
    for (const url of ['/favicon.ico', '/favicon.svg', '/docs/favicon.svg']) {
      const icon = await t().app.inject({ url });
      expect(icon.statusCode, url).toBe(200);
      expect(icon.headers['content-type'], url).toBe('image/svg+xml');
      expect(icon.body, url).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    }
    // Hidden from the document: they are pages for a browser, not API operations.
    const document = (await t().app.inject({ url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(document.paths).filter((path) => path === '/' || path.startsWith('/favicon'))).toEqual([]);
  });

  it('serves the API reference page at /docs, its script and fonts from svc only, under a same-origin CSP', async () => {
    const res = await t().app.inject({ url: '/docs' });
    const page = [301, 302].includes(res.statusCode) ? await t().app.inject({ url: res.headers.location as string }) : res;
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('/api/v1/openapi.json');
    // Every URL the page names is on svc (relative or rooted), none on another host.
    const urls = [...page.body.matchAll(/(?:src=|href=|url\()["']?([^"')\s>]+)/g)].map((m) => m[1]!);
    expect(urls).toEqual(expect.arrayContaining(['js/scalar.js', '/docs/fonts/inter-latin-wght-normal.woff2', '/docs/fonts/jetbrains-mono-latin-400-normal.woff2']));
    expect(urls.filter((url) => /^(https?:)?\/\//.test(url))).toEqual([]);
    expect(page.body).toContain('"withDefaultFonts": false');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.headers['content-security-policy']).toContain("font-src 'self'");

    const script = await t().app.inject({ url: '/docs/js/scalar.js' });
    expect(script.statusCode).toBe(200);
    const font = await t().app.inject({ url: '/docs/fonts/inter-latin-wght-normal.woff2' });
    expect(font.statusCode).toBe(200);
    expect(font.headers['content-type']).toBe('font/woff2');
    expect(font.rawPayload.subarray(0, 4).toString('latin1')).toBe('wOF2');
    for (const stray of ['/docs/fonts/nothing.woff2', '/docs/fonts/..%2Fpackage.json']) {
      const missing = await t().app.inject({ url: stray });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ error: { status: 404, code: 'not_found' } });
    }
  });
});

describe('the OpenAPI dialect of route schemas', () => {
  it('turns a draft-07 tuple into prefixItems, closed or open, and leaves the input and other schemas alone', () => {
    const closed = { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false, minItems: 2 };
    expect(toOpenApiSchema({ properties: { pair: closed } })).toEqual({
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false, minItems: 2 } },
    });
    expect(closed.items).toHaveLength(2);
    expect(toOpenApiSchema({ type: 'array', items: [{ type: 'string' }] })).toEqual({ type: 'array', prefixItems: [{ type: 'string' }] });
    const list = { type: 'array', items: { type: 'string' }, default: { items: ['a'] }, enum: [{ items: ['a'] }] };
    expect(toOpenApiSchema(list)).toEqual(list);
    // A property named like a value keyword is still a schema.
    expect(toOpenApiSchema({ properties: { default: { items: [{ type: 'string' }] } } })).toEqual({ properties: { default: { prefixItems: [{ type: 'string' }] } } });
  });
});

describeEachDialect('health', (t) => {
  it('answers /healthz while the process is up and /readyz while the database answers', async () => {
    expect((await t().app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await t().app.inject({ url: '/readyz' })).json()).toEqual({ status: 'ok' });
  });
});

describe('readiness without a database', () => {
  it('answers /readyz with 503 and the error body once the database is gone', async () => {
    const { openDatabase } = await import('../db/db.database.js');
    const { migrateToLatest } = await import('../db/db.migrations.js');
    const { buildApp } = await import('../app.js');
    const db = openDatabase('sqlite::memory:');
    await migrateToLatest(db);
    const app = await buildApp(testConfig(), { db });
    await db.close();
    const res = await app.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: { status: 503, code: 'service_unavailable' } });
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
    await app.close();
  });
});
