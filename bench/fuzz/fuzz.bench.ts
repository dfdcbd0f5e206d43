import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openDatabase } from '../../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../../apps/server/src/db/db.migrations.js';
import { FuzzHarness, rawRequests, seedFor } from '../../apps/server/test/fuzz.js';
import type { FuzzOperation, FuzzProblem, FuzzReport } from '../../apps/server/test/fuzz.js';
import { benchDialects, freshDatabase, machine, writeResults } from '../harness.js';
import type { BenchDialect } from '../harness.js';

/** Problems kept in the results file (all are counted). */
const KEPT_PROBLEMS = 300;

interface DialectRun {
  dialect: BenchDialect;
  cases: number;
  seconds: number;
  casesPerSecond: number;
  /** Fixture sets seeded: each round of generated cases runs on fresh accounts, so the snapshots stay small. */
  rounds: number;
  /** Database snapshots compared after refused requests. */
  verifications: number;
  byStatus: Record<string, number>;
  byOperation: Record<string, Record<string, number>>;
  problemCount: number;
  /** Problems by operation and reason (the reason's text up to its first colon). */
  problemSummary: Record<string, number>;
  /**
   * The first problems, each with the seed and case index that replay it: `harness.sample(operation, n, seed)[caseIndex]`
   * for a generated case, `[...harness.nastyCases(), ...rawRequests(harness.fixtures)][caseIndex]` for a hand-written one
   * (its seed is `--seed`).
   */
  problems: FuzzProblem[];
  health: Array<{ how: string; status: number }>;
}

function addReport(total: FuzzReport, report: FuzzReport): void {
  total.sent += report.sent;
  total.verifications += report.verifications;
  for (const [status, count] of Object.entries(report.byStatus)) total.byStatus[status] = (total.byStatus[status] ?? 0) + count;
  for (const [operation, statuses] of Object.entries(report.byOperation)) {
    const into = (total.byOperation[operation] ??= {});
    for (const [status, count] of Object.entries(statuses)) into[status] = (into[status] ?? 0) + count;
  }
  total.problems.push(...report.problems);
}

/**
 * Waits until no connection to the database of `url` is left (at most 10 s). Closing a pool resolves before its
 * clients' connections are gone, and dropping the database WITH (FORCE) under a client still closing makes that
 * client emit an error nobody listens to any more, which ends the process.
 */
async function awaitDisconnected(adminUrl: string, url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    for (let waited = 0; waited < 10_000; waited += 50) {
      const { rows } = await client.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [name]);
      if (rows[0]?.n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await client.end();
  }
}

/** Deletions last, so that the rows they may remove are there for the other operations of the round. */
const deletionsLast = (operations: readonly FuzzOperation[]) => [...operations.filter((o) => o.method !== 'DELETE'), ...operations.filter((o) => o.method === 'DELETE')];

async function runDialect(dialect: BenchDialect, adminUrl: string, options: { cases: number; seed: number; roundSize: number }): Promise<DialectRun> {
  const database = await freshDatabase(dialect, adminUrl);
  const warehouseDir = mkdtempSync(join(tmpdir(), 'svc-fuzz-warehouse-'));
  const db = openDatabase(database.url);
  try {
    await migrateToLatest(db);
    const harness = await FuzzHarness.start(db, { verify: 'batch', demoWarehousePath: join(warehouseDir, 'demo-warehouse.db') });
    try {
      const total: FuzzReport = { sent: 0, byStatus: {}, byOperation: {}, verifications: 0, problems: [] };
      const started = performance.now();
      // Round 1 opens with every hand-written case once (nasty requests of each operation, stray routes, raw bytes).
      const handWritten = [...harness.nastyCases(), ...rawRequests(harness.fixtures)].slice(0, options.cases);
      addReport(total, await harness.run(handWritten, options.seed));
      let rounds = 1;
      for (let round = 1; total.sent < options.cases; round++) {
        if (round > 1) {
          await harness.refreshFixtures();
          rounds++;
        }
        const operations = deletionsLast(harness.operations);
        const roundCases = Math.min(options.roundSize, options.cases - total.sent);
        const perOperation = Math.max(1, Math.floor(roundCases / operations.length));
        for (const [i, operation] of operations.entries()) {
          const left = options.cases - total.sent;
          if (left <= 0) break;
          const count = Math.min(left, i === operations.length - 1 ? roundCases - perOperation * (operations.length - 1) : perOperation);
          if (count <= 0) continue;
          const seed = seedFor(options.seed + round, operation.id);
          addReport(total, await harness.run(harness.sample(operation, count, seed), seed));
        }
        const seconds = (performance.now() - started) / 1000;
        process.stderr.write(`[${dialect}] round ${round}: ${total.sent}/${options.cases} cases, ${total.problems.length} problems, ${Math.round(total.sent / seconds)} cases/s\n`);
      }
      const seconds = (performance.now() - started) / 1000;
      const problemSummary: Record<string, number> = {};
      for (const problem of total.problems) {
        const key = `${problem.operation}: ${problem.reason.split(':')[0]}`;
        problemSummary[key] = (problemSummary[key] ?? 0) + 1;
      }
      return {
        dialect, cases: total.sent, seconds: Math.round(seconds * 10) / 10, casesPerSecond: Math.round(total.sent / seconds), rounds,
        verifications: total.verifications, byStatus: total.byStatus, byOperation: total.byOperation,
        problemCount: total.problems.length, problemSummary, problems: total.problems.slice(0, KEPT_PROBLEMS), health: await harness.health(),
      };
    } finally {
      await harness.close();
    }
  } finally {
    await db.close();
    if (dialect === 'postgres') await awaitDisconnected(adminUrl, database.url);
    await database.drop();
    rmSync(warehouseDir, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- fuzz [--cases 100000] [--dialects sqlite,postgres] [--seed 20261123] [--round 2000]`
 * The fuzz engine of apps/server/test/fuzz.ts (the one the CI test runs, fewer cases) over a fresh database per
 * dialect: every hand-written case once, then requests generated from the OpenAPI document, spread evenly over the
 * operations, in rounds of `--round` cases on freshly seeded accounts. The database is compared with its last
 * snapshot before every request that may write after a refusal. Counts per status and per operation, the
 * duration and every problem (with the seed and case index that replay it) go to bench/results/fuzz.json; the
 * process exits non-zero when there was any problem.
 */
export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      cases: { type: 'string', default: '100000' },
      dialects: { type: 'string', default: 'sqlite,postgres' },
      seed: { type: 'string', default: '20261123' },
      round: { type: 'string', default: '2000' },
    },
  });
  const options = { cases: Number(values.cases), seed: Number(values.seed), roundSize: Number(values.round) };
  for (const [name, value] of Object.entries(options)) {
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name === 'roundSize' ? 'round' : name} must be a positive integer`);
  }
  const { dialects, adminUrl } = await benchDialects(values.dialects);
  const runs: DialectRun[] = [];
  for (const dialect of dialects) runs.push(await runDialect(dialect, adminUrl, options));
  const path = writeResults('fuzz', { benchmark: 'fuzz', date: new Date().toISOString(), machine: machine(), options, runs });
  const summary = runs.map((run) => ({
    dialect: run.dialect, cases: run.cases, seconds: run.seconds, casesPerSecond: run.casesPerSecond, rounds: run.rounds, verifications: run.verifications,
    byStatus: run.byStatus, problemCount: run.problemCount, problemSummary: run.problemSummary, health: run.health,
  }));
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\nresults written to ${path}\n`);
  if (runs.some((run) => run.problemCount > 0 || run.health.some((h) => h.status !== 200))) process.exitCode = 1;
}
