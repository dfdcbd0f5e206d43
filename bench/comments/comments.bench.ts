import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { SingleBar, Presets } from 'cli-progress';
import { importFile } from '../../apps/server/src/import/import.js';
import { openDatabase } from '../../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../../apps/server/src/db/db.migrations.js';
import { encodeCursor, fingerprintQuery } from '../../apps/server/src/core/core.cursor.js';
import { T, bulkWriter } from '../bulk.js';
import type { Row } from '../bulk.js';
import { benchFlags, machine, writeResults, measureLatency, measureThroughput, startServer, startSvc, summarize, timedGet, withFreshDatabase, withServers } from '../harness.js';
import type { BenchDialect, LatencySummary } from '../harness.js';
import { runStreamBench } from './comments.stream.bench.js';
import { runWebhookBench } from './comments.webhooks.bench.js';

const BARE_SERVER = new URL('../workspace/bare-server.js', import.meta.url).pathname;
const ADMIN_KEY = 'svc_bench_comments_admin_0001';
const TENANTS = 100;
const USERS_PER_TENANT = 5;
type Dialect = BenchDialect;

const QUERIES = ['bigDefault', 'smallDefault', 'bigResolvedOnly', 'smallResolvedOnly', 'bigDeepPage'] as const;
type QueryName = (typeof QUERIES)[number];

const COMMENTS = T('comments', [
  ['id', 'int'], ['account_id', 'int'], ['embed_tenant_id', 'int'], ['dashboard_id', 'int'], ['parent_id', 'int'], ['embed_user_id', 'int'],
  ['body', 'text'], ['created_at', 'text'], ['is_resolved', 'int'], ['resolved_at', 'text'], ['resolved_by', 'int'],
]);

/** A small deterministic PRNG (mulberry32), so every run loads the same comments. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'revenue pipeline march churn forecast looks off why did the spike in region emea drop after launch can we check numbers again thanks @ann please 📈 q1 target'.split(' ');

function bodyOf(next: () => number): string {
  const length = 20 + Math.floor(next() * 180);
  let body = '';
  while (body.length < length) body += `${WORDS[Math.floor(next() * WORDS.length)]} `;
  return body.trimEnd();
}

interface Scope {
  accountId: number;
  tenantIds: number[];
  userIds: number[][];
  bigDashboardId: number;
  smallDashboardId: number;
}

/**
 * The comments of the run: `threads` threads (1-20 replies each, 10% resolved) on the big dashboard in tenant 0,
 * 100 threads of the same shape on the small dashboard in tenant 0, and `otherThreads` threads (1-5 replies) on
 * the big dashboard in each of the 99 other tenants. Roots get increasing times (a thread a minute), replies come
 * after their root.
 */
async function loadComments(target: Parameters<typeof bulkWriter>[0], scope: Scope, threads: number, otherThreads: number, onProgress: (done: number, total: number) => void): Promise<{ rows: number; bigRootIds: number[] }> {
  // The comment_streams trigger would upsert one hot row per loaded comment on PostgreSQL (minutes for a million
  // rows); a stream with no row reads as version 0, which is all a freshly loaded dashboard needs.
  const writer = bulkWriter(target, ['comments'], { skipTriggers: true });
  const next = random(42);
  const start = Date.parse('2025-01-01T00:00:00.000Z');
  let id = 0;
  let rows = 0;
  let batch: Row[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await writer.write(COMMENTS, batch);
    rows += batch.length;
    batch = [];
  };
  const bigRootIds: number[] = [];
  const plan: Array<{ tenant: number; dashboardId: number; count: number; maxReplies: number }> = [
    { tenant: 0, dashboardId: scope.bigDashboardId, count: threads, maxReplies: 20 },
    { tenant: 0, dashboardId: scope.smallDashboardId, count: 100, maxReplies: 20 },
    ...scope.tenantIds.slice(1).map((_, k) => ({ tenant: k + 1, dashboardId: scope.bigDashboardId, count: otherThreads, maxReplies: 5 })),
  ];
  const total = plan.reduce((sum, p) => sum + p.count, 0);
  let done = 0;
  for (const part of plan) {
    const tenantId = scope.tenantIds[part.tenant]!;
    const users = scope.userIds[part.tenant]!;
    for (let i = 0; i < part.count; i++) {
      const rootId = ++id;
      const rootAt = start + i * 60_000;
      const author = users[Math.floor(next() * users.length)]!;
      const resolved = next() < 0.1;
      batch.push([rootId, scope.accountId, tenantId, part.dashboardId, null, author, bodyOf(next), new Date(rootAt).toISOString(),
        resolved ? 1 : 0, resolved ? new Date(rootAt + 50_000).toISOString() : null, resolved ? author : null]);
      if (part.tenant === 0 && part.dashboardId === scope.bigDashboardId) bigRootIds.push(rootId);
      const replies = 1 + Math.floor(next() * part.maxReplies);
      for (let r = 0; r < replies; r++) {
        batch.push([++id, scope.accountId, tenantId, part.dashboardId, rootId, users[Math.floor(next() * users.length)]!, bodyOf(next),
          new Date(rootAt + (r + 1) * 1000).toISOString(), 0, null, null]);
      }
      if (batch.length >= 20_000) await flush();
      if (++done % 1000 === 0) onProgress(done, total);
    }
  }
  await flush();
  onProgress(total, total);
  await writer.finish();
  return { rows, bigRootIds };
}

interface DialectResult {
  dialect: Dialect;
  threads: number;
  commentRows: number;
  loadSeconds: number;
  latencyMs: Record<QueryName, LatencySummary>;
  /** p50 of the default list on the big dashboard over the small one's: goal ≤ 1.5. */
  defaultListRatio: number;
  resolvedOnlyRatio: number;
  listThroughput: {
    connections: number; seconds: number; responseBytes: number; threadsPerPage: number;
    bareRps: number; cachedRps: number; uncachedRps: number; cachedRatio: number; uncachedRatio: number;
  };
  otherListThroughput: Record<'bigResolvedOnly' | 'bigDeepPage', { cachedRps: number; uncachedRps: number }>;
  post: WriteResult;
  reply: WriteResult;
}

interface WriteResult {
  connections: number;
  seconds: number;
  /** Answers 201 per second: each is acknowledged after its commit. */
  acknowledgedPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

async function writeLoad(url: string, tokens: string[], bodies: (i: number) => string, seconds: number, connections: number): Promise<WriteResult> {
  const requests = Array.from({ length: 64 }, (_, i) => ({
    method: 'POST' as const,
    headers: { authorization: `Embed-Token ${tokens[i % tokens.length]}`, 'content-type': 'application/json' },
    body: bodies(i),
  }));
  const result = await autocannon({ url, duration: seconds, connections, requests });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`autocannon POST ${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { connections, seconds, acknowledgedPerSecond: Math.round(result['2xx'] / seconds), p50Ms: result.latency.p50, p99Ms: result.latency.p99 };
}

async function postJson(url: string, body: unknown, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`POST ${url} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

async function runDialect(dialect: Dialect, adminUrl: string, options: { threads: number; otherThreads: number; requests: number; rounds: number; seconds: number; connections: number }): Promise<DialectResult> {
  return withFreshDatabase(dialect, adminUrl, async (database) => {
    const db = openDatabase(database.url);
    await migrateToLatest(db);
    await importFile(db.kysely, { accounts: [{
      ref: 'acme', name: 'Acme', tenantName: 'acme', settings: { allowEmbedComments: true },
      users: [{ ref: 'admin', email: 'admin@acme.test', role: 'admin', apiKeys: [ADMIN_KEY] }],
      deployments: [{ ref: 'prod', name: 'Prod', items: [
        { ref: 'wb-big', type: 'WORKBOOK', name: 'Big', createdBy: 'admin', dashboard: { publicId: 'big', status: 'published', allowEmbed: true } },
        { ref: 'wb-small', type: 'WORKBOOK', name: 'Small', createdBy: 'admin', dashboard: { publicId: 'small', status: 'published', allowEmbed: true } },
      ] }],
      embedTenants: Array.from({ length: TENANTS }, (_, t) => ({
        name: `customer-${t}`,
        users: Array.from({ length: USERS_PER_TENANT }, (_, u) => ({ externalId: `t${t}-u${u}`, username: `user${u}`, email: `u${u}@customer-${t}.test` })),
      })),
    }] });
    const k = db.kysely;
    const accountId = (await k.selectFrom('accounts').select('id').executeTakeFirstOrThrow()).id;
    const dashboards = await k.selectFrom('dashboards').select(['id', 'public_id', 'deployment_id']).execute();
    const tenants = await k.selectFrom('embed_tenants').select(['id', 'name']).orderBy('id').execute();
    const users = await k.selectFrom('embed_users').select(['id', 'embed_tenant_id']).orderBy('id').execute();
    await db.close();
    const scope: Scope = {
      accountId,
      tenantIds: tenants.map((t) => t.id),
      userIds: tenants.map((t) => users.filter((u) => u.embed_tenant_id === t.id).map((u) => u.id)),
      bigDashboardId: dashboards.find((d) => d.public_id === 'big')!.id,
      smallDashboardId: dashboards.find((d) => d.public_id === 'small')!.id,
    };

    const started = performance.now();
    const total = options.threads + 100 + (TENANTS - 1) * options.otherThreads;
    const bar = new SingleBar({ format: `[${dialect}] loading {bar} {percentage}% | {value}/{total} threads | {duration}s`, stream: process.stderr, noTTYOutput: true, notTTYSchedule: 10_000 }, Presets.shades_classic);
    bar.start(total, 0);
    const target = dialect === 'sqlite' ? { dialect, path: database.path! } as const : { dialect, url: database.url } as const;
    const loaded = await loadComments(target, scope, options.threads, options.otherThreads, (done) => bar.update(done));
    bar.stop();
    const loadSeconds = Math.round((performance.now() - started) / 100) / 10;

    // Latency is measured with the page cache off: it is the cost of the list itself at this size. Throughput
    // is measured both ways; the cached server is svc as shipped.
    return withServers([startSvc(database.url, { SVC_LISTING_CACHE_MB: '0' }), startSvc(database.url)], async ([server, cachedServer]) => {
      const tokens: string[] = [];
      for (let u = 0; u < USERS_PER_TENANT; u++) {
        const minted = await postJson(`${server.url}/api/v1/embed/generate-session`, { deploymentId: dashboards[0]!.deployment_id, externalId: `t0-u${u}`, embedTenantName: 'customer-0' }, { authorization: `Bearer ${ADMIN_KEY}` });
        tokens.push((await postJson(`${server.url}/api/v1/embed/session/token`, { sessionId: minted.sessionId }, {})).token as string);
      }
      const headers = { authorization: `Embed-Token ${tokens[0]}` };
      const list = (publicId: string, query = '') => `${server.url}/api/v1/embed/dashboard/${publicId}/comments${query}`;
      // A page about 90% of the way down the big dashboard's open threads: its cursor is made as the server makes it.
      const fingerprint = fingerprintQuery(['threads', scope.accountId, scope.tenantIds[0], scope.bigDashboardId, 'open']);
      const deepRoot = loaded.bigRootIds[Math.floor(loaded.bigRootIds.length * 0.1)]!;
      const deepAt = await (async () => {
        const probe = openDatabase(database.url);
        try {
          return (await probe.kysely.selectFrom('comments').select('created_at').where('id', '=', deepRoot).executeTakeFirstOrThrow()).created_at;
        } finally {
          await probe.close();
        }
      })();
      const deepCursor = encodeCursor(fingerprint, [deepAt, deepRoot]);
      const targets: Record<QueryName, string> = {
        bigDefault: list('big'),
        smallDefault: list('small'),
        bigResolvedOnly: list('big', '?resolvedOnly=true'),
        smallResolvedOnly: list('small', '?resolvedOnly=true'),
        bigDeepPage: list('big', `?after=${deepCursor}`),
      };
      const samples = new Map<QueryName, number[]>();
      const perBatch = Math.max(1, Math.ceil(options.requests / options.rounds));
      for (const q of QUERIES) await measureLatency(targets[q], headers, 1, 20);
      for (let round = 0; round < options.rounds; round++) {
        for (const q of round % 2 === 0 ? QUERIES : [...QUERIES].reverse()) {
          samples.set(q, [...(samples.get(q) ?? []), ...(await measureLatency(targets[q], headers, perBatch, 0)).samples]);
        }
      }
      const latencyMs = Object.fromEntries(QUERIES.map((q) => [q, summarize(samples.get(q)!)])) as Record<QueryName, LatencySummary>;
      for (const q of QUERIES) process.stderr.write(`[${dialect}] ${q}: p50 ${latencyMs[q].p50} ms, p99 ${latencyMs[q].p99} ms\n`);

      // Throughput of the default list against a bare node:http server sending the same bytes, alternated.
      const sample = await timedGet(targets.bigDefault, headers);
      const threadsPerPage = (JSON.parse(sample.body.toString()) as { items: unknown[] }).items.length;
      const dir = mkdtempSync(join(tmpdir(), 'svc-bench-body-'));
      const bodyFile = join(dir, 'threads.json');
      writeFileSync(bodyFile, sample.body);
      const bare = await startServer(process.execPath, [BARE_SERVER, bodyFile]);
      let listThroughput: DialectResult['listThroughput'];
      const otherLists = {} as DialectResult['otherListThroughput'];
      try {
        const run = (url: string, h: Record<string, string>) => measureThroughput(url, h, options.seconds, options.connections);
        const cachedUrl = targets.bigDefault.replace(server.url, cachedServer.url);
        const bare1 = (await run(bare.url, {})).rps;
        const cached1 = (await run(cachedUrl, headers)).rps;
        const uncached1 = (await run(targets.bigDefault, headers)).rps;
        const bare2 = (await run(bare.url, {})).rps;
        const cached2 = (await run(cachedUrl, headers)).rps;
        const uncached2 = (await run(targets.bigDefault, headers)).rps;
        const bareRps = Math.round((bare1 + bare2) / 2);
        const cachedRps = Math.round((cached1 + cached2) / 2);
        const uncachedRps = Math.round((uncached1 + uncached2) / 2);
        const ratio = (rps: number) => Math.round((rps / bareRps) * 1000) / 1000;
        listThroughput = {
          connections: options.connections, seconds: options.seconds, responseBytes: sample.body.length, threadsPerPage, bareRps,
          cachedRps, uncachedRps, cachedRatio: ratio(cachedRps), uncachedRatio: ratio(uncachedRps),
        };
        // The other two lists: requests per second, from the cache (as shipped) and with it off.
        for (const q of ['bigResolvedOnly', 'bigDeepPage'] as const) {
          otherLists[q] = {
            cachedRps: (await run(targets[q].replace(server.url, cachedServer.url), headers)).rps,
            uncachedRps: (await run(targets[q], headers)).rps,
          };
        }
      } finally {
        await bare.stop();
        rmSync(dir, { recursive: true, force: true });
      }
      process.stderr.write(`[${dialect}] list throughput: ${JSON.stringify(listThroughput)} ${JSON.stringify(otherLists)}\n`);

      // Writes last, so that the lists above saw the loaded data only.
      const next = random(7);
      const post = await writeLoad(list('big'), tokens, () => JSON.stringify({ body: bodyOf(next) }), options.seconds, options.connections);
      process.stderr.write(`[${dialect}] post: ${JSON.stringify(post)}\n`);
      const parents = loaded.bigRootIds.slice(-64);
      const reply = await writeLoad(list('big'), tokens, (i) => JSON.stringify({ body: bodyOf(next), parentId: parents[i % parents.length] }), options.seconds, options.connections);
      process.stderr.write(`[${dialect}] reply: ${JSON.stringify(reply)}\n`);

      const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
      return {
        dialect, threads: options.threads, commentRows: loaded.rows, loadSeconds, latencyMs,
        defaultListRatio: ratio(latencyMs.bigDefault.p50, latencyMs.smallDefault.p50),
        resolvedOnlyRatio: ratio(latencyMs.bigResolvedOnly.p50, latencyMs.smallResolvedOnly.p50),
        listThroughput, otherListThroughput: otherLists, post, reply,
      };
    });
  });
}

/**
 * `npm run bench -- comments [--dialects sqlite,postgres] [--threads 100000] [--other-threads 200] [--requests 200]
 * [--rounds 10] [--seconds 10] [--connections 10]`
 * A dashboard with `threads` threads (1-20 replies each) in one embed tenant among 100, beside a 100-thread
 * dashboard in the same tenant: p50/p99 of the default list, resolvedOnly and a deep page; the default list's
 * throughput against a bare node:http server sending the same bytes; posts and replies acknowledged per second.
 */
/**
 * `npm run bench -- comments [--part list,stream,webhooks] [options of that part]`: `list` is the thread list and
 * posting (below), `stream` the live comment streams' fan-out (comments.stream.bench.ts), `webhooks` deliveries per
 * second (comments.webhooks.bench.ts). All by default; a part's options are given with `--part` naming it alone.
 */
export async function main(args: string[]): Promise<void> {
  const at = args.indexOf('--part');
  const parts = at === -1 ? ['list', 'stream', 'webhooks'] : (args[at + 1] ?? '').split(',');
  const rest = at === -1 ? args : [...args.slice(0, at), ...args.slice(at + 2)];
  for (const part of parts) if (!['list', 'stream', 'webhooks'].includes(part)) throw new Error(`--part: list, stream or webhooks, got ${JSON.stringify(part)}`);
  if (parts.includes('list')) await listBench(rest);
  if (parts.includes('stream')) await runStreamBench(rest);
  if (parts.includes('webhooks')) await runWebhookBench(rest);
}

async function listBench(args: string[]): Promise<void> {
  const { dialects, adminUrl, flags: values } = await benchFlags(args, {
    dialects: 'sqlite,postgres', threads: '100000', 'other-threads': '200', requests: '200', rounds: '10', seconds: '10', connections: '10',
  });
  const options = {
    threads: Number(values.threads), otherThreads: Number(values['other-threads']), requests: Number(values.requests),
    rounds: Number(values.rounds), seconds: Number(values.seconds), connections: Number(values.connections),
  };
  const results: DialectResult[] = [];
  for (const dialect of dialects) results.push(await runDialect(dialect, adminUrl, options));
  writeResults('comments', { date: new Date().toISOString(), machine: machine(), options, results });
  process.stdout.write(`${JSON.stringify(results.map((r) => ({
    dialect: r.dialect, defaultListRatio: r.defaultListRatio, resolvedOnlyRatio: r.resolvedOnlyRatio, listThroughputCachedRatio: r.listThroughput.cachedRatio, listThroughputUncachedRatio: r.listThroughput.uncachedRatio,
    postsPerSecond: r.post.acknowledgedPerSecond, repliesPerSecond: r.reply.acknowledgedPerSecond,
  })), null, 2)}\n`);
}
