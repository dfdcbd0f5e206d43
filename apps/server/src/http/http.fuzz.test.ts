import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { describeEachDialect } from '../../test/dialects.js';
import { FuzzHarness, diffSnapshots, formatProblems, nastyRequests, rawRequests, readOperations, seedFor, snapshotDatabase, strayRequests } from '../../test/fuzz.js';
import type { FuzzOperation, FuzzReport } from '../../test/fuzz.js';
import { buildApp } from '../app.js';
import { testConfig } from '../../test/config.js';
import { openDatabase } from '../db/db.database.js';
import { migrateToLatest } from '../db/db.migrations.js';

// Issue 8, hardening part 1: every public endpoint fuzzed from its OpenAPI schema, plus hand-written nasty
// requests. Per request: never a 5xx, every 4xx in DESIGN.md's error body, a request the published contract
// refuses (or without a usable credential) never accepted, and the database unchanged by every refused request
// (compared after each one: `verify: 'each'`). Afterwards the server is still healthy. CI runs SVC_FUZZ_RUNS
// generated requests per operation (default 30) with a fixed seed; `npm run bench -- fuzz` runs 100,000.

const SEED = Number(process.env.SVC_FUZZ_SEED ?? 20_261_123);
const RUNS = Number(process.env.SVC_FUZZ_RUNS ?? 30);
const REPLAY = `SVC_FUZZ_SEED=${SEED} SVC_FUZZ_RUNS=${RUNS} npx vitest run apps/server/src/http/http.fuzz.test.ts`;

/**
 * The operations of the document svc serves, read at collection time (an app over an in-memory database) so that
 * each gets a test of its own. Deletions go last, so that the rows they may remove are there for the others.
 */
async function documentedOperations(): Promise<FuzzOperation[]> {
  const db = openDatabase('sqlite::memory:');
  try {
    await migrateToLatest(db);
    const app = await buildApp(testConfig(), { db });
    try {
      const operations = await readOperations(app);
      return [...operations.filter((o) => o.method !== 'DELETE'), ...operations.filter((o) => o.method === 'DELETE')];
    } finally {
      await app.close();
    }
  } finally {
    await db.close();
  }
}

const operations = await documentedOperations();

const statuses = (report: FuzzReport) => Object.keys(report.byStatus).map(Number);

describeEachDialect('fuzzing every public endpoint', (t) => {
  let harness: FuzzHarness;

  beforeAll(async () => {
    harness = await FuzzHarness.start(t().db, { verify: 'each', demoWarehousePath: inject('demoWarehousePath') });
  });

  afterAll(async () => {
    await harness?.close();
  });

  it('derives requests for every operation of its OpenAPI document, the workspace, comments and session endpoints among them', () => {
    expect(harness.operations.map((o) => o.id).sort()).toEqual(operations.map((o) => o.id).sort());
    for (const id of ['workspaceObjects', 'listDashboardComments', 'postDashboardComment', 'resolveDashboardThread', 'generateEmbedSession', 'exchangeEmbedSession']) {
      expect(operations.map((o) => o.id)).toContain(id);
    }
  });

  it('sees a single changed row in its database comparison, so a refused request that wrote would fail its test', async () => {
    const db = harness.db.kysely;
    const [accountId] = harness.fixtures.accountIds;
    const before = await snapshotDatabase(db, harness.fixtures.accountIds);
    const view = await db.selectFrom('item_views').selectAll().where('account_id', '=', accountId!).executeTakeFirstOrThrow();
    const setViewedAt = (viewedAt: string) => db.updateTable('item_views').set({ viewed_at: viewedAt })
      .where('account_id', '=', view.account_id).where('user_id', '=', view.user_id).where('item_id', '=', view.item_id).execute();
    await setViewedAt('1999-01-01T00:00:00.000Z');
    try {
      const changes = diffSnapshots(before, await snapshotDatabase(db, harness.fixtures.accountIds));
      expect(changes).toHaveLength(1);
      expect(changes[0]).toMatch(/^item_views: 1 -> 1 rows; added 1 .*removed 1 /);
    } finally {
      await setViewedAt(view.viewed_at);
    }
    expect(diffSnapshots(before, await snapshotDatabase(db, harness.fixtures.accountIds))).toEqual([]);
  });

  for (const operation of operations) {
    it(`${operation.id} (${operation.method} ${operation.path}): ${RUNS} generated and the hand-written requests get no 5xx, only error-body 4xx, and refusals write nothing`, async () => {
      const op = harness.operations.find((o) => o.id === operation.id)!;
      const seed = seedFor(SEED, op.id);
      const requests = [...harness.sample(op, RUNS, seed), ...nastyRequests(op, harness.fixtures)];
      const report = await harness.run(requests, seed);
      expect(report.sent).toBe(requests.length);
      expect(report.verifications).toBeGreaterThan(0);
      // The fuzz reaches real rows and the gate both: some request of every operation succeeds, some is refused.
      expect(statuses(report).some((status) => status < 300)).toBe(true);
      expect(statuses(report).some((status) => status >= 400)).toBe(true);
      expect(formatProblems(report.problems, REPLAY)).toBe('no problems');
    });
  }

  it('answers routes that do not exist, traversal sequences in them, with a 404 in the error body', async () => {
    const report = await harness.run(strayRequests(harness.fixtures), SEED);
    expect(report.sent).toBeGreaterThan(5);
    expect(formatProblems(report.problems, REPLAY)).toBe('no problems');
  });

  it('raw bytes on a real socket (invalid UTF-8 in the URL and headers, 20 kB headers, malformed request lines) get a 4xx in the error body and never stop the server', async () => {
    const report = await harness.run(rawRequests(harness.fixtures), SEED);
    expect(report.sent).toBe(rawRequests(harness.fixtures).length);
    expect(formatProblems(report.problems, REPLAY)).toBe('no problems');
  });

  it('is still healthy afterwards: /healthz and /readyz answer 200 through inject and over the socket', async () => {
    const answers = await harness.health();
    expect(answers).toHaveLength(4);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
  });
});
