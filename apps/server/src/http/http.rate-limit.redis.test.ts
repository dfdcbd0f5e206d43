import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { seedAccount, uniqueSuffix } from '../../test/factory.js';
import type { SeededAccount } from '../../test/factory.js';
import { startSvcServe } from '../../test/svc-process.js';
import type { SvcProcess } from '../../test/svc-process.js';
import { openDatabase } from '../db/db.database.js';
import { migrateToLatest } from '../db/db.migrations.js';

const LIMIT = 4;
const redisUrl = inject('redisUrl');

/**
 * Issue 19 "State shared by several processes": with SVC_REDIS_URL the rate-limit counters live in Redis, so two
 * `svc serve` processes on one database allow each limit once between them; without it each process counts alone
 * (docs/operations.md "Rate limits"). The generate-session limit is the one counted here.
 */
(redisUrl === null ? describe.skip : describe)(`rate limits across two processes${redisUrl === null ? ' [SKIPPED: no SVC_TEST_REDIS_URL]' : ''}`, () => {
  let dir: string;
  let url: string;
  let s: SeededAccount;
  const started: SvcProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
    url = `sqlite:${join(dir, 'svc.db')}`;
    const db = openDatabase(url);
    await migrateToLatest(db);
    s = await seedAccount(db.kysely, { users: [{ ref: 'admin', role: 'admin' }], deployments: [{ ref: 'prod', name: 'P' }] });
    await db.close();
  });

  afterAll(async () => {
    await Promise.all(started.map((svc) => svc.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  const startTwo = async (env: NodeJS.ProcessEnv) => {
    const pair = await Promise.all([startSvcServe(url, env), startSvcServe(url, env)]);
    started.push(...pair);
    return pair;
  };

  /** Generate-session calls with one key, alternating between the processes; the statuses in order. */
  const alternate = async (pair: SvcProcess[], count: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      const res = await fetch(`${pair[i % 2]!.url}/api/v1/embed/generate-session`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.keys.admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ deploymentId: s.refs.prod, externalId: `viewer-${i}` }),
      });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    return statuses;
  };

  it('with SVC_REDIS_URL, two processes allow the limit once between them', async () => {
    const pair = await startTwo({ SVC_RATE_LIMIT_GENERATE_SESSION: String(LIMIT), SVC_REDIS_URL: redisUrl!, SVC_REDIS_PREFIX: `svc-test-${uniqueSuffix()}:` });
    expect(await alternate(pair, LIMIT + 2)).toEqual([200, 200, 200, 200, 429, 429]);
  }, 60_000);

  it('without it, each process counts on its own (twice the limit between two)', async () => {
    const pair = await startTwo({ SVC_RATE_LIMIT_GENERATE_SESSION: String(LIMIT) });
    expect(await alternate(pair, 2 * LIMIT + 2)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
  }, 60_000);

  it('a Redis that does not answer stops the start, naming the variable and hiding the password', async () => {
    const failed = startSvcServe(url, { SVC_REDIS_URL: 'redis://:hunter2@127.0.0.1:1' });
    const error = await failed.then(() => undefined, (reason: unknown) => reason as Error);
    expect(error?.message).toMatch(/SVC_REDIS_URL: Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1 does not answer/);
    expect(error?.message).not.toContain('hunter2');
  }, 60_000);

  const postgresUrl = inject('postgresUrl');
  (postgresUrl === null ? it.skip : it)('on PostgreSQL without SVC_REDIS_URL, the start says the limits are per process', async () => {
    const svc = await startSvcServe(postgresUrl!);
    started.push(svc);
    expect(svc.startOutput).toContain('rate limits are counted in each process: with several processes, set SVC_REDIS_URL to share them');
    const shared = await startSvcServe(postgresUrl!, { SVC_REDIS_URL: redisUrl! });
    started.push(shared);
    expect(shared.startOutput).not.toContain('rate limits are counted in each process');
  }, 60_000);
});
