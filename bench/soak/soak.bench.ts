import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { PerformanceObserver, constants, createHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import type { RecordableHistogram } from 'node:perf_hooks';
import { importFile } from '../../apps/server/src/import/import.js';
import { openDatabase } from '../../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../../apps/server/src/db/db.migrations.js';
import { benchFlags, machine, median, startSvc, withFreshDatabase, withServers, writeResults } from '../harness.js';
import type { BenchDialect, LatencySummary } from '../harness.js';

/** The token the soak's server is started with, so that the bench may read its /metrics. */
const METRICS_TOKEN = 'soak-bench-metrics';
const ADMIN_KEY = 'svc_bench_soak_admin_0001';
const DASHBOARDS = 20;
const ITEMS = 2_000;

/** One kind of request of the mix, with its share of the load. */
interface Operation {
  name: string;
  weight: number;
  run(i: number): Promise<number>;
}

interface MinuteFigures {
  minute: number; requests: number; errors: number; p50: number; p99: number;
  /** The server's RSS at the minute's end: all of it, its anonymous part and its file-backed part. */
  rssMiB: number; rssAnonMiB: number; rssFileMiB: number;
  /**
   * The server's RSS sampled every second of the minute: the median and the highest, all of it and its anonymous
   * part. One sample can land anywhere in the heap's sawtooth (50 to 134 MiB of heap in use within a run); the
   * median says where the minute's memory sat.
   */
  rssMedianMiB: number; rssMaxMiB: number; rssAnonMedianMiB: number; rssSamples: number;
  /** The server's JavaScript heap in use, and memory outside it held by JavaScript objects (buffers), from its /metrics. */
  heapUsedMiB: number; externalMiB: number;
  /** The heap V8 holds (in use or not) at the minute's end: what it has not yet given back after a peak. */
  heapTotalMiB: number;
  /** Bytes the server allocated on its JavaScript heap per request during the minute (garbage included), in KiB, from its /metrics. */
  allocatedKiBPerRequest: number;
  /** Time the server spent in garbage collection during the minute, and its longest event loop stall, from its /metrics. */
  gcMs: number; eventLoopLagMaxMs: number;
  /** Of gcMs: the young generation's scavenges (minor) and the old generation's mark-compacts (major, incremental steps included). */
  gcMinorMs: number; gcMajorMs: number;
  /**
   * CPU the server process used during the minute and the load generator (this process) used, in percent of one
   * core; and how long, in ms, some runnable task on the machine waited for a CPU (Linux PSI, system-wide). High
   * pressure with a long stall says the server was descheduled rather than holding its event loop.
   */
  serverCpuPercent: number; loadCpuPercent: number; cpuPressureMs: number;
  /**
   * The load generator's own hiccups: how late requests left against their schedule (p99 and longest, ms), and its
   * longest event loop stall. Requests due during a stall leave together when it ends, a burst the server queues.
   */
  sendDelayP99Ms: number; sendDelayMaxMs: number; loadLagMaxMs: number;
  /** Time the load generator spent in garbage collection during the minute (ms), how many collections, and of the time the major ones'. */
  loadGcMs: number; loadGcCount: number; loadGcMajorMs: number;
  /**
   * The load generator's JavaScript heap in use at the minute's end (MiB), and its requests in flight then: sent
   * and not yet answered, and of those, waiting in its HTTP agent for one of its 64 sockets.
   */
  loadHeapUsedMiB: number; loadInFlight: number; loadQueued: number;
  /** SQLite only: the database file's size (what its memory map can bring into the file-backed RSS), and its WAL's. */
  dbFileMiB?: number; walFileMiB?: number;
}

interface ServerFigures { heapUsed: number; heapTotal: number; external: number; allocatedBytes: number; gcSeconds: number; gcMinorSeconds: number; gcMajorSeconds: number; lagMaxSeconds: number }

/** Where the machine's CPU went so far: the server's CPU time and this process's (ms), and the PSI stall total (ms). */
interface CpuFigures { serverMs: number; loadMs: number; pressureMs: number }

interface DialectResult {
  dialect: BenchDialect;
  maximum: { seconds: number; workers: number; opsPerSecond: number };
  soak: {
    minutes: number; targetOpsPerSecond: number; achievedOpsPerSecond: number; requests: number; errors: number;
    errorSamples: string[]; byOperation: Record<string, LatencySummary & { errors: number }>; minutes_: MinuteFigures[];
    p99DriftLastToFirst: number; rssFirstMiB: number; rssLastMiB: number; rssGrowthPercent: number; rssAnonGrowthPercent: number;
    /** The same growth between the medians of the per-second samples of the first and the last minute. */
    rssMedianFirstMiB: number; rssMedianLastMiB: number; rssMedianGrowthPercent: number; rssAnonMedianGrowthPercent: number;
  };
}

/** One decimal place, the precision of every MiB figure. */
const tenth = (value: number) => Math.round(value * 10) / 10;
/** Bytes as MiB, one decimal. */
const mib = (bytes: number) => tenth(bytes / 1024 / 1024);

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One HTTP request on the keep-alive agent: the status and the body (a network error throws). With `drainOn`,
 * an answer of that status is read and dropped (text ''): only unexpected answers are kept, for the error report.
 */
function send(url: string, method: string, headers: Record<string, string>, body?: unknown, drainOn?: number): Promise<{ status: number; text: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      res.on('error', reject);
      if (res.statusCode === drainOn) {
        res.on('end', () => resolve({ status: res.statusCode!, text: '' }));
        res.resume();
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Resident memory of a process in MiB (Linux /proc): all of it, and its anonymous part (heap, stacks: what a leak
 * grows) apart from its file-backed part (SQLite's database file read through mmap grows with the file).
 */
function rssMiB(pid: number): { total: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const read = (name: string) => {
    const match = new RegExp(`${name}:\\s+(\\d+) kB`).exec(status);
    return match ? tenth(Number(match[1]) / 1024) : Number.NaN;
  };
  return { total: read('VmRSS'), anon: read('RssAnon'), file: read('RssFile') };
}

/** CPU time so far of the server (Linux /proc: user and system ticks) and of this process, and the PSI CPU stall total. */
function cpuFigures(pid: number): CpuFigures {
  // Fields after the command's closing parenthesis: state is the 3rd field, utime the 14th and stime the 15th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const own = process.cpuUsage();
  const pressure = existsSync('/proc/pressure/cpu') ? /^some .*total=(\d+)$/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1] : undefined;
  return { serverMs: ticks * 10, loadMs: (own.user + own.system) / 1000, pressureMs: pressure === undefined ? Number.NaN : Number(pressure) / 1000 };
}

/** The SQLite database's and its WAL's sizes; nothing for PostgreSQL. */
function databaseFiles(sqlitePath: string | undefined): { db?: { file: number; wal: number } } {
  return sqlitePath === undefined ? {} : { db: { file: fileMiB(sqlitePath), wal: fileMiB(`${sqlitePath}-wal`) } };
}

/** A file's size in MiB (0 when it does not exist). */
function fileMiB(path: string): number {
  return existsSync(path) ? mib(statSync(path).size) : 0;
}

/**
 * From the server's own `GET /metrics`: its JavaScript heap in use and external memory (MiB), its garbage
 * collection time so far (s, every kind summed) and its longest event loop stall since the previous scrape (s).
 */
async function serverFigures(base: string): Promise<ServerFigures> {
  const text = (await send(`${base}/metrics`, 'GET', { authorization: `Bearer ${METRICS_TOKEN}` })).text;
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  const gc = (kinds: RegExp) => [...text.matchAll(/^svc_nodejs_gc_duration_seconds_sum\{kind="(\w+)"[^}]*\} (\S+)$/gm)]
    .filter((m) => kinds.test(m[1]!)).reduce((sum, m) => sum + Number(m[2]), 0);
  return {
    heapUsed: mib(read('svc_nodejs_heap_size_used_bytes')), heapTotal: mib(read('svc_nodejs_heap_size_total_bytes')), external: mib(read('svc_nodejs_external_memory_bytes')),
    allocatedBytes: read('svc_nodejs_heap_allocated_bytes_total'),
    gcSeconds: gc(/./), gcMinorSeconds: gc(/^minor$/), gcMajorSeconds: gc(/^(major|incremental)$/),
    lagMaxSeconds: read('svc_nodejs_eventloop_lag_max_seconds'),
  };
}

/** The mix: workspace listings (API key), comment thread lists and comment writes (embed tokens), session pairs. */
async function buildMix(base: string, deploymentId: number, publicIds: string[]): Promise<Operation[]> {
  const admin = { authorization: `Bearer ${ADMIN_KEY}` };
  const mint = async (externalId: string) => {
    const minted = await send(`${base}/api/v1/embed/generate-session`, 'POST', admin, { deploymentId, externalId });
    if (minted.status !== 200) throw new Error(`generate-session answered ${minted.status}: ${minted.text}`);
    const exchanged = await send(`${base}/api/v1/embed/session/token`, 'POST', {}, { sessionId: (JSON.parse(minted.text) as { sessionId: string }).sessionId });
    if (exchanged.status !== 200) throw new Error(`exchange answered ${exchanged.status}: ${exchanged.text}`);
    return { authorization: `Embed-Token ${(JSON.parse(exchanged.text) as { token: string }).token}` };
  };
  const viewers = await Promise.all(Array.from({ length: 50 }, (_, i) => mint(`soak-viewer-${i}`)));
  const listings = ['', '?first=20', '?orderByField=name&orderByDirection=DESC', '?search=report', '?types=WORKBOOK&first=10'];
  const comments = (i: number) => `${base}/api/v1/embed/dashboard/${publicIds[i % publicIds.length]}/comments`;
  const status = (expected: number) => (res: { status: number; text: string }) => {
    if (res.status !== expected) throw new Error(`${res.status} ${res.text.slice(0, 200)}`);
    return res.status;
  };
  return [
    { name: 'listing', weight: 45, run: (i) => send(`${base}/api/v1/deployments/${deploymentId}/workspace${listings[i % listings.length]}`, 'GET', admin, undefined, 200).then(status(200)) },
    { name: 'comments-read', weight: 35, run: (i) => send(`${comments(i)}?first=20`, 'GET', viewers[i % viewers.length]!, undefined, 200).then(status(200)) },
    { name: 'comments-write', weight: 15, run: (i) => send(comments(i), 'POST', viewers[i % viewers.length]!, { body: `soak note ${i}` }, 201).then(status(201)) },
    { name: 'session', weight: 5, run: (i) => mint(`soak-session-${i % 500}`).then(() => 200) },
  ];
}

/** The median and highest of a minute's per-second RSS samples (NaN without samples). */
function rssOfSamples(samples: ReadonlyArray<ReturnType<typeof rssMiB>>): Pick<MinuteFigures, 'rssMedianMiB' | 'rssMaxMiB' | 'rssAnonMedianMiB' | 'rssSamples'> {
  if (samples.length === 0) return { rssMedianMiB: Number.NaN, rssMaxMiB: Number.NaN, rssAnonMedianMiB: Number.NaN, rssSamples: 0 };
  return {
    rssMedianMiB: tenth(median(samples.map((r) => r.total))), rssMaxMiB: Math.max(...samples.map((r) => r.total)),
    rssAnonMedianMiB: tenth(median(samples.map((r) => r.anon))), rssSamples: samples.length,
  };
}

/** Growth from `first` to `last` in percent, one decimal. */
function growthPercent(first: number, last: number): number {
  return Math.round(((last / first) - 1) * 1000) / 10;
}

/** Picks the operation for request number i by weight (a fixed pattern, so every run sends the same mix). */
function picker(mix: Operation[]): (i: number) => Operation {
  const slots = mix.flatMap((op) => Array.from({ length: op.weight }, () => op));
  return (i) => slots[(i * 37) % slots.length]!;
}

/** Closed loop: `workers` loops back to back for `seconds`; operations per second. */
async function maximum(mix: Operation[], seconds: number, workers: number): Promise<number> {
  const pick = picker(mix);
  let done = 0;
  let next = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: workers }, async () => {
    while (performance.now() < deadline) {
      const i = next++;
      await pick(i).run(i);
      done++;
    }
  }));
  return Math.round(done / seconds);
}

/**
 * Durations are recorded in native histograms (µs, fixed memory) rather than arrays, so that the load generator's
 * heap does not grow with the samples over a long soak. (Its GC time still flips between about 0.2 and 1.5 s a
 * minute, histograms or arrays: bench/README.md, the session 9 A/B runs.)
 */
const histogram = (): RecordableHistogram => createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });
const recordMs = (h: RecordableHistogram, ms: number) => h.record(Math.min(60_000_000, Math.max(1, Math.round(ms * 1000))));
const ms3 = (us: number) => Math.round(us) / 1000;

/** p50, p99 and mean (ms) of a histogram of µs. */
function summarizeHistogram(h: RecordableHistogram): LatencySummary {
  if (h.count === 0) return { requests: 0, p50: Number.NaN, p99: Number.NaN, mean: Number.NaN };
  return { requests: h.count, p50: ms3(h.percentile(50)), p99: ms3(h.percentile(99)), mean: ms3(h.mean) };
}

/** How late the minute's requests left against their schedule: p99 and longest, ms. */
function sendDelays(delays: RecordableHistogram): { sendDelayP99Ms: number; sendDelayMaxMs: number } {
  if (delays.count === 0) return { sendDelayP99Ms: Number.NaN, sendDelayMaxMs: Number.NaN };
  return { sendDelayP99Ms: ms3(delays.percentile(99)), sendDelayMaxMs: ms3(delays.max) };
}

/** The CPU figures of one minute from the samples at its start and its end (percent of one core; ms). */
function cpuPerMinute(end: CpuFigures | undefined, start: CpuFigures): { serverCpuPercent: number; loadCpuPercent: number; cpuPressureMs: number } {
  if (end === undefined) return { serverCpuPercent: Number.NaN, loadCpuPercent: Number.NaN, cpuPressureMs: Number.NaN };
  const percent = (ms: number) => Math.round(ms / 600);
  return { serverCpuPercent: percent(end.serverMs - start.serverMs), loadCpuPercent: percent(end.loadMs - start.loadMs), cpuPressureMs: Math.round(end.pressureMs - start.pressureMs) };
}

/**
 * Open loop at `rate` operations per second for `minutes`: requests start on schedule whether or not earlier ones
 * have answered (a slow server builds a queue, as it would with real users). Per minute: requests, errors, p50,
 * p99 and the server's RSS at the minute's end.
 */
async function soak(mix: Operation[], rate: number, minutes: number, server: { pid: number; url: string; sqlitePath?: string }) {
  const pick = picker(mix);
  const perMinute: Array<{
    latencies: RecordableHistogram; errors: number; sendDelays: RecordableHistogram; lagMaxMs: number; gcMs: number; gcCount: number; gcMajorMs: number; rssSamples: Array<ReturnType<typeof rssMiB>>;
    heapUsedMiB: number; inFlight: number; queued: number;
  }> = Array.from({ length: minutes }, () => ({
    latencies: histogram(), errors: 0, sendDelays: histogram(), lagMaxMs: Number.NaN, gcMs: 0, gcCount: 0, gcMajorMs: 0, rssSamples: [], heapUsedMiB: Number.NaN, inFlight: 0, queued: 0,
  }));
  const ownLag = monitorEventLoopDelay({ resolution: 10 });
  ownLag.enable();
  const minuteNow = () => Math.min(minutes - 1, Math.floor((performance.now() - started) / 60_000));
  const ownGc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const minute = perMinute[minuteNow()]!;
      minute.gcMs += entry.duration;
      minute.gcCount++;
      // detail.kind: NODE_PERFORMANCE_GC_MAJOR (4) or INCREMENTAL (8), against MINOR (1) and WEAKCB (16).
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR || kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) minute.gcMajorMs += entry.duration;
    }
  });
  ownGc.observe({ entryTypes: ['gc'] });
  const byOperation = new Map<string, { latencies: RecordableHistogram; errors: number }>(mix.map((op) => [op.name, { latencies: histogram(), errors: 0 }]));
  const rss: Array<ReturnType<typeof rssMiB> & { heap: Promise<ServerFigures>; cpu: CpuFigures; db?: { file: number; wal: number } }> = [];
  // At a minute's end: its figures of both processes, and the load generator's stall maximum restarted.
  const sample = () => {
    const minute = perMinute[rss.length]!;
    minute.lagMaxMs = ownLag.max / 1e6;
    ownLag.reset();
    minute.heapUsedMiB = mib(process.memoryUsage().heapUsed);
    minute.inFlight = inFlight.size;
    minute.queued = Object.values(agent.requests).reduce((sum, queue) => sum + (queue?.length ?? 0), 0);
    rss.push({ ...rssMiB(server.pid), heap: serverFigures(server.url), cpu: cpuFigures(server.pid), ...databaseFiles(server.sqlitePath) });
  };
  const errorSamples: string[] = [];
  const inFlight = new Set<Promise<void>>();
  // Also resets the server's event loop stall maximum, so that minute 1's starts here.
  const soakStart = serverFigures(server.url);
  const cpuStart = cpuFigures(server.pid);
  const started = performance.now();
  const end = started + minutes * 60_000;
  let sent = 0;
  let nextRss = started + 60_000;
  let nextRssSample = started + 1000;
  while (performance.now() < end) {
    const now = performance.now();
    const due = Math.floor(((now - started) / 1000) * rate);
    for (; sent < due; sent++) {
      const i = sent;
      const op = pick(i);
      const minute = minuteNow();
      const t0 = performance.now();
      recordMs(perMinute[minute]!.sendDelays, t0 - (started + (i / rate) * 1000));
      const p = op.run(i).then(
        () => {
          const ms = performance.now() - t0;
          recordMs(perMinute[minute]!.latencies, ms);
          recordMs(byOperation.get(op.name)!.latencies, ms);
        },
        (error: unknown) => {
          perMinute[minute]!.errors++;
          byOperation.get(op.name)!.errors++;
          if (errorSamples.length < 10) errorSamples.push(`${op.name}: ${String(error)}`);
        },
      ).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    // Every second, the server's RSS (a read of /proc, about 50 µs).
    if (now >= nextRssSample) {
      perMinute[minuteNow()]!.rssSamples.push(rssMiB(server.pid));
      nextRssSample += 1000;
    }
    if (now >= nextRss) {
      sample();
      nextRss += 60_000;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(inFlight);
  if (rss.length < minutes) sample();
  ownLag.disable();
  ownGc.disconnect();
  const heaps = await Promise.all(rss.map((r) => r.heap));
  const before = await soakStart;
  const since = <T,>(index: number, start: T, list: T[]) => (index === 0 ? start : list[index - 1]!);
  const ms = (seconds: number) => Math.round(seconds * 10_000) / 10;
  const minutesOut: MinuteFigures[] = perMinute.map((m, index) => {
    const s = summarizeHistogram(m.latencies);
    const memory = rss[index];
    const heap = heaps[index];
    return {
      minute: index + 1, requests: m.latencies.count + m.errors, errors: m.errors, p50: s.p50, p99: s.p99,
      rssMiB: memory?.total ?? Number.NaN, rssAnonMiB: memory?.anon ?? Number.NaN, rssFileMiB: memory?.file ?? Number.NaN,
      ...rssOfSamples(m.rssSamples),
      heapUsedMiB: heap?.heapUsed ?? Number.NaN, heapTotalMiB: heap?.heapTotal ?? Number.NaN, externalMiB: heap?.external ?? Number.NaN,
      allocatedKiBPerRequest: heap === undefined ? Number.NaN : tenth((heap.allocatedBytes - since(index, before, heaps).allocatedBytes) / 1024 / Math.max(1, m.latencies.count + m.errors)),
      gcMs: heap === undefined ? Number.NaN : ms(heap.gcSeconds - since(index, before, heaps).gcSeconds),
      gcMinorMs: heap === undefined ? Number.NaN : ms(heap.gcMinorSeconds - since(index, before, heaps).gcMinorSeconds),
      gcMajorMs: heap === undefined ? Number.NaN : ms(heap.gcMajorSeconds - since(index, before, heaps).gcMajorSeconds),
      eventLoopLagMaxMs: heap === undefined ? Number.NaN : ms(heap.lagMaxSeconds),
      ...cpuPerMinute(memory?.cpu, since(index, cpuStart, rss.map((r) => r.cpu))),
      ...sendDelays(m.sendDelays), loadLagMaxMs: tenth(m.lagMaxMs), loadGcMs: Math.round(m.gcMs), loadGcCount: m.gcCount, loadGcMajorMs: Math.round(m.gcMajorMs),
      loadHeapUsedMiB: m.heapUsedMiB, loadInFlight: m.inFlight, loadQueued: m.queued,
      ...(memory?.db === undefined ? {} : { dbFileMiB: memory.db.file, walFileMiB: memory.db.wal }),
    };
  });
  return { minutes: minutesOut, byOperation, errorSamples, sent, seconds: (performance.now() - started) / 1000 };
}

interface SoakOptions {
  minutes: number; maxSeconds: number; workers: number; fraction: number;
  /** Node.js flags for the server process only (its NODE_OPTIONS), e.g. to compare garbage collector settings. */
  serverNodeOptions: string;
  /** A fixed load in operations per second instead of `fraction` of the measured maximum (0: measure), for A/B runs. */
  rate: number;
  /** The server's SVC_PREPARED_STATEMENTS: false builds every query afresh, to measure what compiling once saves. */
  preparedStatements: boolean;
}

async function runDialect(dialect: BenchDialect, adminUrl: string, options: SoakOptions): Promise<DialectResult> {
  return withFreshDatabase(dialect, adminUrl, async (database) => {
    const db = openDatabase(database.url);
    await migrateToLatest(db);
    const publicIds = Array.from({ length: DASHBOARDS }, (_, i) => `soak-${i}`);
    // ITEMS items: a tenth folders at the root, each holding nine reports; and the dashboards' workbooks.
    const items = [
      ...Array.from({ length: ITEMS / 10 }, (_, f) => ({
        ref: `f${f}`, type: 'FOLDER' as const, name: `Folder ${f}`, createdBy: 'admin',
        children: Array.from({ length: 9 }, (_, r) => ({ ref: `r${f}-${r}`, type: 'REPORT' as const, name: `Report ${f}-${r}`, createdBy: 'admin' })),
      })),
      ...publicIds.map((publicId, i) => ({ ref: `wb${i}`, type: 'WORKBOOK' as const, name: `Dashboard ${i}`, createdBy: 'admin', dashboard: { publicId, status: 'published' as const, allowEmbed: true } })),
    ];
    const { refs } = await importFile(db.kysely, { accounts: [{
      ref: 'acme', name: 'Acme', tenantName: 'acme', settings: { allowEmbedComments: true },
      users: [{ ref: 'admin', email: 'admin@acme.test', role: 'admin', apiKeys: [ADMIN_KEY] }],
      deployments: [{ ref: 'prod', name: 'Prod', items }],
    }] });
    await db.close();
    const serverEnv = {
      SVC_METRICS_TOKEN: METRICS_TOKEN, SVC_PREPARED_STATEMENTS: String(options.preparedStatements),
      ...(options.serverNodeOptions === '' ? {} : { NODE_OPTIONS: options.serverNodeOptions }),
    };
    return withServers([startSvc(database.url, serverEnv)], async ([server]) => {
      const mix = await buildMix(server.url, refs.prod!, publicIds);
      await maximum(mix, 5, options.workers);
      // With a fixed rate the maximum is still measured (it is recorded), but it does not set the load: runs
      // compared with each other then carry the same load, whatever the machine's speed at the moment.
      const opsPerSecond = await maximum(mix, options.maxSeconds, options.workers);
      const target = options.rate > 0 ? options.rate : Math.max(1, Math.round(opsPerSecond * options.fraction));
      process.stderr.write(`[${dialect}] maximum ${opsPerSecond} ops/s; soaking at ${target} ops/s for ${options.minutes} min\n`);
      const run = await soak(mix, target, options.minutes, { pid: server.child.pid!, url: server.url, ...(database.path === undefined ? {} : { sqlitePath: database.path }) });
      const first = run.minutes[0]!;
      const last = run.minutes.at(-1)!;
      const errors = run.minutes.reduce((sum, m) => sum + m.errors, 0);
      const requests = run.minutes.reduce((sum, m) => sum + m.requests, 0);
      const result: DialectResult = {
        dialect,
        maximum: { seconds: options.maxSeconds, workers: options.workers, opsPerSecond },
        soak: {
          minutes: options.minutes, targetOpsPerSecond: target, achievedOpsPerSecond: Math.round(requests / run.seconds), requests, errors,
          errorSamples: run.errorSamples,
          byOperation: Object.fromEntries([...run.byOperation].map(([name, o]) => [name, { ...summarizeHistogram(o.latencies), errors: o.errors }])),
          minutes_: run.minutes,
          p99DriftLastToFirst: Math.round((last.p99 / first.p99) * 100) / 100,
          rssFirstMiB: first.rssMiB, rssLastMiB: last.rssMiB,
          rssGrowthPercent: growthPercent(first.rssMiB, last.rssMiB),
          rssAnonGrowthPercent: growthPercent(first.rssAnonMiB, last.rssAnonMiB),
          rssMedianFirstMiB: first.rssMedianMiB, rssMedianLastMiB: last.rssMedianMiB,
          rssMedianGrowthPercent: growthPercent(first.rssMedianMiB, last.rssMedianMiB),
          rssAnonMedianGrowthPercent: growthPercent(first.rssAnonMedianMiB, last.rssAnonMedianMiB),
        },
      };
      const { p99DriftLastToFirst, rssGrowthPercent, rssAnonGrowthPercent, rssMedianGrowthPercent, rssAnonMedianGrowthPercent } = result.soak;
      process.stderr.write(`[${dialect}] ${JSON.stringify({ errors, p99DriftLastToFirst, rssGrowthPercent, rssAnonGrowthPercent, rssMedianGrowthPercent, rssAnonMedianGrowthPercent, minutes: run.minutes })}\n`);
      return result;
    });
  });
}

/** Set in the child that runs the load generator under --generator-node-options, so that it does not start another. */
const GENERATOR_CHILD = 'SVC_BENCH_SOAK_GENERATOR_CHILD';

/**
 * The load generator runs in this process. With --generator-node-options it runs instead in a child process given
 * those Node.js flags (e.g. its own heap settings, so that its collector does not stall the schedule), the rest of
 * the arguments unchanged. The child's results file records the flags.
 */
async function inGeneratorChild(nodeOptions: string): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, ...nodeOptions.split(/\s+/).filter(Boolean), ...process.argv.slice(1)], {
    stdio: 'inherit', env: { ...process.env, [GENERATOR_CHILD]: nodeOptions },
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`the load generator's process exited with ${code}`);
}

/**
 * `npm run bench -- soak [--dialects postgres] [--minutes 10] [--fraction 0.5] [--max-seconds 20] [--workers 16] [--server-node-options=--max-semi-space-size=32] [--generator-node-options=--max-semi-space-size=64] [--prepared-statements false] [--rate 800]`
 * Measures the mix's maximum (closed loop), then runs it open loop at `fraction` of that for `minutes`, and records
 * the error count (goal 0), the p99 of the last minute over the first (goal at most 1.2) and the server's RSS
 * growth (goal at most 10%) from the first minute to the last, twice: between the medians of each minute's
 * per-second samples (rssMedianGrowthPercent, the figure judged since 2026-11-24) and between the single samples
 * at the two minutes' ends (rssGrowthPercent, the figure of earlier runs).
 */
export async function main(args: string[]): Promise<void> {
  const { dialects, adminUrl, flags: values } = await benchFlags(args, {
    dialects: 'postgres,sqlite', minutes: '10', fraction: '0.5', 'max-seconds': '20', workers: '16', 'server-node-options': '', rate: '0',
    'generator-node-options': '', 'prepared-statements': 'true',
  });
  const generatorNodeOptions = values['generator-node-options'];
  if (generatorNodeOptions !== '' && process.env[GENERATOR_CHILD] === undefined) return inGeneratorChild(generatorNodeOptions);
  const options = {
    minutes: Number(values.minutes), fraction: Number(values.fraction), maxSeconds: Number(values['max-seconds']), workers: Number(values.workers),
    serverNodeOptions: values['server-node-options'], rate: Number(values.rate), preparedStatements: values['prepared-statements'] !== 'false',
  };
  if (!Number.isInteger(options.minutes) || options.minutes < 2) throw new Error('--minutes must be a whole number of at least 2 (the first and the last minute are compared)');
  const runs: DialectResult[] = [];
  for (const dialect of dialects) runs.push(await runDialect(dialect, adminUrl, options));
  const path = writeResults('soak', {
    benchmark: 'soak', date: new Date().toISOString(), machine: machine(), serverNodeOptions: options.serverNodeOptions,
    generatorNodeOptions, generatorExecArgv: process.execArgv, preparedStatements: options.preparedStatements, runs,
  });
  process.stdout.write(`${JSON.stringify(runs.map((r) => ({ dialect: r.dialect, maximum: r.maximum, ...r.soak, minutes_: undefined })), null, 2)}\nresults written to ${path}\n`);
}
