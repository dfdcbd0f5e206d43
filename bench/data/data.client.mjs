import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * The data bench's clients, on a thread of their own (bench/data/data.bench.ts runs each as a worker): the server
 * under test keeps its event loop and heap to itself, and the clients' fetch work and garbage collection are not
 * counted as the server's. Plain JavaScript: a worker thread does not inherit tsx's loader. Three jobs:
 *
 * - `timed` (the default): for each case, one untimed ask, then `iterations` pairs: a forced ask (the result cache
 *   skipped, so the answer is read from its rollup or the data source) and a plain one (which must come from the
 *   cache). A case names a widget (its data endpoint) or carries a query (`POST /api/v1/embed/explore/query`).
 * - `explorers` (issue 35): one loop per token, each sending its own list of explore queries over and over until
 *   the parent posts `stop`; a 429 waits its Retry-After. Answers the counts by status and source, and the latency
 *   of the answered ones by source.
 * - `loads` (issue 35): `loads` dashboard loads of one viewer as the embed makes them: the dashboard, then every
 *   widget's data at once; each load once from the cache (`warm`) and once `force`d (`cold`, every widget reads its
 *   rollup or the data source). Answers the milliseconds of each.
 */
/** @typedef {{ name: string, widget?: string, query?: unknown, token: string }} ClientCase */
/** @typedef {{ kind?: 'timed', base: string, publicId: string, timezone: string, iterations: number, label: string, cases: ClientCase[] }} TimedJob */
/** @typedef {{ kind: 'explorers', base: string, timezone: string, explorers: Array<{ token: string, queries: unknown[] }> }} ExplorersJob */
/** @typedef {{ kind: 'loads', base: string, publicId: string, widgets: string[], timezone: string, token: string, loads: number, label: string }} LoadsJob */
/** @typedef {Record<string, { source: string, cold: number[], cached: number[] }>} ClientResult */
/** @typedef {{ statuses: Record<string, number>, sources: Record<string, number>, ms: Record<string, number[]>, seconds: number }} ExplorersResult */
/** @typedef {{ warm: number[], cold: number[] }} LoadsResult */

/**
 * One data request: a widget's, or an explore query's. Answers the status, the answer's source and the time taken.
 * @param {string} base
 * @param {string} publicId
 * @param {ClientCase} c
 * @param {string} timezone
 * @param {boolean} force
 * @returns {Promise<{ ms: number, status: number, source: string, text: string, retryAfter: number }>}
 */
async function post(base, publicId, c, timezone, force) {
  const url = c.query !== undefined ? `${base}/api/v1/embed/explore/query` : `${base}/api/v1/embed/dashboard/${publicId}/widgets/${c.widget}/data`;
  const body = { timezone, ...(c.query !== undefined ? { query: c.query } : {}), ...(force ? { force: true } : {}) };
  const started = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Embed-Token ${c.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  const ms = performance.now() - started;
  const source = res.status === 200 ? JSON.parse(text).source : `status ${res.status}`;
  return { ms, status: res.status, source, text, retryAfter: Number(res.headers.get('retry-after') ?? 1) };
}

/**
 * @param {TimedJob} job
 * @param {ClientCase} c
 * @param {boolean} force
 */
async function ask(job, c, force) {
  const answer = await post(job.base, job.publicId, c, job.timezone, force);
  if (answer.status !== 200) throw new Error(`${c.name}: ${answer.status} ${answer.text}`);
  return answer;
}

/**
 * @param {TimedJob} job
 * @returns {Promise<ClientResult>}
 */
async function timed(job) {
  /** @type {ClientResult} */
  const result = {};
  for (const c of job.cases) {
    const { source } = await ask(job, c, true);
    const cold = [];
    const cached = [];
    for (let i = 0; i < job.iterations; i++) {
      cold.push((await ask(job, c, true)).ms);
      const hit = await ask(job, c, false);
      if (hit.source !== 'cache') throw new Error(`${c.name}: a repeated ask came from ${hit.source}, not the cache`);
      cached.push(hit.ms);
      process.stderr.write(`\r${job.label} ${c.name}: ${i + 1}/${job.iterations}   `);
    }
    result[c.name] = { source, cold, cached };
  }
  return result;
}

let stopped = false;

/**
 * @param {ExplorersJob} job
 * @returns {Promise<ExplorersResult>}
 */
async function explorers(job) {
  /** @type {ExplorersResult} */
  const result = { statuses: {}, sources: {}, ms: {}, seconds: 0 };
  const started = performance.now();
  const loop = async (/** @type {{ token: string, queries: unknown[] }} */ explorer) => {
    for (let i = 0; !stopped; i = (i + 1) % explorer.queries.length) {
      const answer = await post(job.base, '', { name: 'explore', query: explorer.queries[i], token: explorer.token }, job.timezone, false);
      result.statuses[answer.status] = (result.statuses[answer.status] ?? 0) + 1;
      if (answer.status === 429) {
        await sleep(answer.retryAfter * 1000);
        continue;
      }
      const source = answer.source.startsWith('rollup:') ? 'rollup' : answer.source;
      result.sources[answer.source] = (result.sources[answer.source] ?? 0) + 1;
      (result.ms[source] ??= []).push(answer.ms);
    }
  };
  await Promise.all(job.explorers.map(loop));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

/**
 * @param {LoadsJob} job
 * @returns {Promise<LoadsResult>}
 */
async function loads(job) {
  /** @type {LoadsResult} */
  const result = { warm: [], cold: [] };
  const load = async (/** @type {boolean} */ force) => {
    const started = performance.now();
    const res = await fetch(`${job.base}/api/v1/embed/dashboard/${job.publicId}`, { headers: { authorization: `Embed-Token ${job.token}` } });
    if (res.status !== 200) throw new Error(`dashboard ${job.publicId}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    const answers = await Promise.all(job.widgets.map((widget) => post(job.base, job.publicId, { name: widget, widget, token: job.token }, job.timezone, force)));
    const failed = answers.find((a) => a.status !== 200);
    if (failed !== undefined) throw new Error(`a widget of ${job.publicId}: ${failed.status} ${failed.text}`);
    return performance.now() - started;
  };
  await load(false);
  for (let i = 0; i < job.loads; i++) {
    // Alternated, so that drift of the machine hits both alike.
    if (i % 2 === 0) {
      result.warm.push(await load(false));
      result.cold.push(await load(true));
    } else {
      result.cold.push(await load(true));
      result.warm.push(await load(false));
    }
    process.stderr.write(`\r${job.label}: ${i + 1}/${job.loads}   `);
  }
  return result;
}

if (parentPort !== null) {
  const port = parentPort;
  port.on('message', (message) => { if (message === 'stop') stopped = true; });
  const job = workerData;
  const run = job.kind === 'explorers' ? explorers(job) : job.kind === 'loads' ? loads(job) : timed(job);
  run.then((result) => port.postMessage({ result }), (error) => port.postMessage({ error: error instanceof Error ? error.message : String(error) }));
}
