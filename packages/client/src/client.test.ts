import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../../../apps/server/test/dialects.js';
import { seedAccount } from '../../../apps/server/test/factory.js';
import { buildApp } from '../../../apps/server/src/app.js';
import { testConfig } from '../../../apps/server/test/config.js';
import { SvcApiError, SvcClient } from './index.js';

describeEachDialect('@svc/client against a real server', (t) => {
  let server: FastifyInstance;
  let client: SvcClient;
  let deploymentId: number;
  const names = Array.from({ length: 23 }, (_, i) => `Report ${String(i).padStart(2, '0')}`);

  beforeAll(async () => {
    const seeded = await seedAccount(t().db.kysely, {
      users: [{ ref: 'admin', role: 'admin' }],
      deployments: [{ ref: 'prod', name: 'P', items: names.map((name) => ({ type: 'REPORT' as const, name, createdBy: 'admin' })) }],
    });
    deploymentId = seeded.refs.prod!;
    server = await buildApp(testConfig(), { db: t().db });
    await server.listen({ port: 0, host: '127.0.0.1' });
    client = new SvcClient({ baseUrl: `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/`, apiKey: seeded.keys.admin! });
  });

  afterAll(async () => {
    await server.close();
  });

  it('iterates every item across pages, in the listing order, following endCursor while hasNextPage', async () => {
    const seen: string[] = [];
    for await (const item of client.workspaceItems(deploymentId, { first: 5, orderByField: 'name', orderByDirection: 'ASC', types: ['REPORT'] })) seen.push(item.name);
    expect(seen).toEqual(names);
  });

  it('throws SvcApiError carrying the status, code and field of the error body', async () => {
    const failure = await client.listWorkspace(deploymentId, { first: 0 }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(SvcApiError);
    expect(failure).toMatchObject({ status: 400, code: 'invalid_parameter', field: 'first' });
  });
});
