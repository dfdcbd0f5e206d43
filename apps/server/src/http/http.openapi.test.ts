import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';

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

  it('serves the API reference page at /docs', async () => {
    const res = await t().app.inject({ url: '/docs' });
    const page = [301, 302].includes(res.statusCode) ? await t().app.inject({ url: res.headers.location as string }) : res;
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('/api/v1/openapi.json');
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
    const app = await buildApp({ db });
    await db.close();
    const res = await app.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: { status: 503, code: 'service_unavailable' } });
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
    await app.close();
  });
});
