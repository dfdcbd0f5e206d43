import { parentPort, workerData } from 'node:worker_threads';

/**
 * The data bench's timed client, on a thread of its own (bench/data/data.bench.ts runs it as a worker): the server
 * under test keeps its event loop and heap to itself, and the client's fetch work and garbage collection are not
 * counted as the server's. For each case, one untimed ask, then `iterations` pairs: a forced ask (the result cache
 * skipped, so the answer is read from its rollup or the data source) and a plain one (which must come from the
 * cache). Plain JavaScript: a worker thread does not inherit tsx's loader.
 */
/** @typedef {{ base: string, publicId: string, timezone: string, iterations: number, label: string, cases: Array<{ name: string, widget: string, token: string }> }} ClientJob */
/** @typedef {Record<string, { source: string, cold: number[], cached: number[] }>} ClientResult */

/**
 * @param {ClientJob} job
 * @param {string} widget
 * @param {string} token
 * @param {boolean} force
 * @returns {Promise<{ ms: number, source: string }>}
 */
async function ask(job, widget, token, force) {
  const started = performance.now();
  const res = await fetch(`${job.base}/api/v1/embed/dashboard/${job.publicId}/widgets/${widget}/data`, {
    method: 'POST', headers: { authorization: `Embed-Token ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ timezone: job.timezone, ...(force ? { force: true } : {}) }),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${widget}: ${res.status} ${text}`);
  return { ms, source: JSON.parse(text).source };
}

/**
 * @param {ClientJob} job
 * @returns {Promise<ClientResult>}
 */
async function run(job) {
  /** @type {ClientResult} */
  const result = {};
  for (const { name, widget, token } of job.cases) {
    const { source } = await ask(job, widget, token, true);
    const cold = [];
    const cached = [];
    for (let i = 0; i < job.iterations; i++) {
      cold.push((await ask(job, widget, token, true)).ms);
      const hit = await ask(job, widget, token, false);
      if (hit.source !== 'cache') throw new Error(`${name}: a repeated ask came from ${hit.source}, not the cache`);
      cached.push(hit.ms);
      process.stderr.write(`\r${job.label} ${name}: ${i + 1}/${job.iterations}   `);
    }
    result[name] = { source, cold, cached };
  }
  return result;
}

if (parentPort !== null) {
  const port = parentPort;
  run(workerData).then((result) => port.postMessage({ result }), (error) => port.postMessage({ error: error instanceof Error ? error.message : String(error) }));
}
