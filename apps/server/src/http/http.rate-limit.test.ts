import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { loadConfig } from '../core/core.config.js';

const rateLimitsFromEnv = (env: NodeJS.ProcessEnv) => loadConfig(env).rateLimits;

describe('rate limits from the environment (docs/operations.md)', () => {
  it('defaults to 1200 generate-session, 300 exchange, 10 login, 1200 embed requests per session and 6000 per IP, and 60 explore queries per session a minute', () => {
    expect(rateLimitsFromEnv({})).toEqual({ generateSession: 1200, exchange: 300, login: 10, embedPerSession: 1200, embedPerIp: 6000, explorePerSession: 60, windowMs: 60_000 });
  });

  it('reads SVC_RATE_LIMIT_* and refuses a bad value by name', () => {
    expect(rateLimitsFromEnv({ SVC_RATE_LIMIT_GENERATE_SESSION: '5', SVC_RATE_LIMIT_EXCHANGE: '6', SVC_RATE_LIMIT_LOGIN: '7', SVC_RATE_LIMIT_EMBED_SESSION: '8', SVC_RATE_LIMIT_EMBED_IP: '9', SVC_RATE_LIMIT_EXPLORE: '10' }))
      .toEqual({ generateSession: 5, exchange: 6, login: 7, embedPerSession: 8, embedPerIp: 9, explorePerSession: 10, windowMs: 60_000 });
    expect(() => rateLimitsFromEnv({ SVC_RATE_LIMIT_LOGIN: '0' })).toThrow(/SVC_RATE_LIMIT_LOGIN must be a whole number/);
  });
});

describeEachDialect('the generate-session limit counts per resolved credential', (t) => {
  let app: FastifyInstance;
  let s: SeededAccount;

  beforeAll(async () => {
    app = await buildApp(testConfig({ rateLimits: { generateSession: 3 } }), { db: t().db });
    s = await seedAccount(t().db.kysely, { users: [{ ref: 'alice', role: 'admin' }, { ref: 'bert', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P' }] });
  });

  afterAll(async () => {
    await app.close();
  });

  const generate = (authorization: string) => app.inject({
    method: 'POST', url: '/api/v1/embed/generate-session', headers: { authorization }, payload: { deploymentId: s.refs.prod, externalId: `viewer-${uniqueSuffix()}` },
  });

  it('one key sent as Bearer and as Api-Key shares one count; another key has its own', async () => {
    const key = s.keys.alice!;
    expect((await generate(`Bearer ${key}`)).statusCode).toBe(200);
    expect((await generate(`Api-Key ${key}`)).statusCode).toBe(200);
    expect((await generate(`Bearer ${key}`)).statusCode).toBe(200);
    for (const scheme of ['Api-Key', 'Bearer']) {
      const refused = await generate(`${scheme} ${key}`);
      expect(refused.statusCode, `${scheme}: ${refused.body}`).toBe(429);
      expect(refused.json().error.code).toBe('too_many_requests');
    }
    expect((await generate(`Api-Key ${s.keys.bert!}`)).statusCode).toBe(200);
  });
});
