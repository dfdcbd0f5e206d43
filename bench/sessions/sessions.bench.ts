import autocannon from 'autocannon';
import pg from 'pg';
import { importFile } from '../../apps/server/src/import/import.js';
import { openDatabase } from '../../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../../apps/server/src/db/db.migrations.js';
import { benchFlags, machine, median, startSvc, summarize, withFreshDatabase, withServers, writeResults } from '../harness.js';
import type { BenchDialect } from '../harness.js';

const ADMIN_KEY = 'svc_bench_sessions_admin_0001';
type Dialect = BenchDialect;

interface DialectResult {
  dialect: Dialect;
  pairs: { seconds: number; workers: number; pairsPerSecond: number; pairP50Ms: number; pairP99Ms: number; baselinePairsPerSecond: number; ratio: number };
  auth: { seconds: number; rounds: number; connections: number; tokens: number; withTokenRps: number; withoutAuthRps: number; ratio: number; overheadPercent: number };
  /** PostgreSQL only: index scans of embed_sessions during the authenticated runs, per token per second. */
  sessionLookupsPerTokenSecond?: number;
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** `workers` loops, each doing `pair()` back to back for `seconds`; pairs per second and per-pair latency. */
async function loop(seconds: number, workers: number, pair: (worker: number, i: number) => Promise<void>): Promise<{ perSecond: number; p50: number; p99: number }> {
  const samples: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: workers }, async (_, worker) => {
    for (let i = 0; performance.now() < deadline; i++) {
      const started = performance.now();
      await pair(worker, i);
      samples.push(performance.now() - started);
    }
  }));
  const s = summarize(samples);
  return { perSecond: Math.round(samples.length / seconds), p50: s.p50, p99: s.p99 };
}

/** Requests per second of `requests` in turn; every answer must have the status `expected`. */
async function throughput(url: string, requests: Array<{ headers: Record<string, string> }>, seconds: number, connections: number, expected: number): Promise<number> {
  const result = await autocannon({ url, duration: seconds, connections, requests: requests.map((r) => ({ method: 'GET', headers: r.headers })) });
  const answered = (result.statusCodeStats as Record<string, { count: number }> | undefined)?.[String(expected)]?.count ?? 0;
  const total = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
  if (result.errors > 0 || answered !== total) throw new Error(`autocannon on ${url}: ${total - answered} answers other than ${expected}, ${result.errors} errors`);
  return Math.round(result.requests.average);
}

async function sessionIndexScans(url: string): Promise<number> {
  // A busy backend reports its statistics at most once a second, an idle one within 10 s (PGSTAT_IDLE_INTERVAL):
  // wait that out so the reading holds every scan made before it.
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ n: string }>(`select coalesce(idx_scan, 0) + coalesce(seq_scan, 0) as n from pg_stat_user_tables where relname = 'embed_sessions'`);
  await client.end();
  return Number(rows[0]?.n ?? 0);
}

async function runDialect(dialect: Dialect, adminUrl: string, options: { seconds: number; rounds: number; workers: number; connections: number; tokens: number }): Promise<DialectResult> {
  return withFreshDatabase(dialect, adminUrl, async (database) => {
    const db = openDatabase(database.url);
    await migrateToLatest(db);
    const { refs } = await importFile(db.kysely, { accounts: [{
      ref: 'acme', name: 'Acme', tenantName: 'acme',
      users: [{ ref: 'admin', email: 'admin@acme.test', role: 'admin', apiKeys: [ADMIN_KEY] }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [{ ref: 'wb', type: 'WORKBOOK', name: 'W', createdBy: 'admin', dashboard: { publicId: 'bench', status: 'published', allowEmbed: true } }] }],
    }] });
    await db.close();
    return withServers([startSvc(database.url)], async ([server]) => {
      const admin = { authorization: `Bearer ${ADMIN_KEY}` };
      const mintAndExchange = async (worker: number, i: number) => {
        const minted = await postJson(`${server.url}/api/v1/embed/generate-session`, { deploymentId: refs.prod, externalId: `viewer-${worker}-${i % 50}` }, admin);
        if (minted.status !== 200) throw new Error(`generate-session answered ${minted.status}: ${JSON.stringify(minted.json)}`);
        const exchanged = await postJson(`${server.url}/api/v1/embed/session/token`, { sessionId: minted.json.sessionId });
        if (exchanged.status !== 200) throw new Error(`exchange answered ${exchanged.status}: ${JSON.stringify(exchanged.json)}`);
      };
      // The baseline: two requests per pair that touch neither the database nor a key.
      const healthPair = async () => {
        for (let k = 0; k < 2; k++) {
          const res = await fetch(`${server.url}/healthz`);
          await res.arrayBuffer();
        }
      };
      await loop(2, options.workers, mintAndExchange);
      const baseline = await loop(options.seconds, options.workers, healthPair);
      const pairs = await loop(options.seconds, options.workers, mintAndExchange);

      const tokens: string[] = [];
      for (let i = 0; i < options.tokens; i++) {
        const minted = await postJson(`${server.url}/api/v1/embed/generate-session`, { deploymentId: refs.prod, externalId: `reader-${i}` }, admin);
        tokens.push((await postJson(`${server.url}/api/v1/embed/session/token`, { sessionId: minted.json.sessionId })).json.token as string);
      }
      // The platform API refuses an embed token (403) and a request without credentials (401) in the handler's
      // first line, before any database work. The request without one carries the same bytes under another header
      // name, so the two differ only in verifying the token and checking its session.
      const url = `${server.url}/api/v1/deployments/${refs.prod}/workspace`;
      const withToken = tokens.map((token) => ({ headers: { authorization: `Embed-Token ${token}` } }));
      const withoutAuth = tokens.map((token) => ({ headers: { 'x-credential': `Embed-Token ${token}` } }));
      const check = await fetch(url, { headers: withToken[0]!.headers });
      if (check.status !== 403) throw new Error(`the bench token did not authenticate: ${check.status} ${await check.text()}`);
      await throughput(url, withToken, 2, options.connections, 403);
      const scansBefore = dialect === 'postgres' ? await sessionIndexScans(database.url) : 0;
      // Alternated rounds, and the median of each side: one run on two shared cores swings by 10-15%.
      const withoutRuns: number[] = [];
      const withRuns: number[] = [];
      for (let round = 0; round < options.rounds; round++) {
        withoutRuns.push(await throughput(url, withoutAuth, options.seconds, options.connections, 401));
        withRuns.push(await throughput(url, withToken, options.seconds, options.connections, 403));
      }
      const scansAfter = dialect === 'postgres' ? await sessionIndexScans(database.url) : 0;
      process.stderr.write(`[${dialect}] req/s without a credential ${withoutRuns.join(' / ')}; with a token ${withRuns.join(' / ')}\n`);
      const withoutAuthRps = Math.round(median(withoutRuns));
      const withTokenRps = Math.round(median(withRuns));
      const ratio = Math.round((withTokenRps / withoutAuthRps) * 1000) / 1000;
      const result: DialectResult = {
        dialect,
        pairs: {
          seconds: options.seconds, workers: options.workers, pairsPerSecond: pairs.perSecond, pairP50Ms: pairs.p50, pairP99Ms: pairs.p99,
          baselinePairsPerSecond: baseline.perSecond, ratio: Math.round((pairs.perSecond / baseline.perSecond) * 1000) / 1000,
        },
        auth: {
          seconds: options.seconds, rounds: options.rounds, connections: options.connections, tokens: options.tokens, withTokenRps, withoutAuthRps, ratio,
          overheadPercent: Math.round((withoutAuthRps / withTokenRps - 1) * 1000) / 10,
        },
      };
      if (dialect === 'postgres') {
        // Every token is read at most once a second over the rounds if the goal holds (the rounds without a
        // credential read nothing of embed_sessions).
        result.sessionLookupsPerTokenSecond = Math.round(((scansAfter - scansBefore) / (options.tokens * options.rounds * options.seconds)) * 1000) / 1000;
      }
      process.stderr.write(`[${dialect}] ${JSON.stringify(result)}\n`);
      return result;
    });
  });
}

/**
 * `npm run bench -- sessions [--dialects sqlite,postgres] [--seconds 10] [--workers 10] [--connections 10] [--tokens 20] [--rounds 4]`
 * Generate + exchange pairs per second (against pairs of /healthz requests, same run), and the cost of embed-token
 * authentication: a platform API call refused with 403 for a valid embed token against the same call refused with
 * 401 for want of credentials (neither handler reads the database).
 */
export async function main(args: string[]): Promise<void> {
  const { dialects, adminUrl, flags: values } = await benchFlags(args, { dialects: 'sqlite,postgres', seconds: '10', workers: '10', connections: '10', tokens: '20', rounds: '4' });
  const options = { seconds: Number(values.seconds), rounds: Number(values.rounds), workers: Number(values.workers), connections: Number(values.connections), tokens: Number(values.tokens) };
  const runs: DialectResult[] = [];
  for (const dialect of dialects) runs.push(await runDialect(dialect, adminUrl, options));
  const path = writeResults('sessions', { benchmark: 'sessions', date: new Date().toISOString(), machine: machine(), runs });
  process.stdout.write(`${JSON.stringify(runs, null, 2)}\nresults written to ${path}\n`);
}
