import { Agent, request } from 'node:http';
import { setTimeout, clearTimeout } from 'node:timers';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * The comment-stream bench's listening client, on a thread of its own (bench/comments/comments.stream.bench.ts runs it
 * as a worker), so that reading 1,000 streams neither shares the server's event loop nor the poster's: it opens one
 * `GET .../comments/stream` per token over plain node:http (one socket each), waits for every `stream.ready`, and
 * notes when each stream receives each `comment.created` (wall clock in ms, `performance.timeOrigin + now()`, which
 * every thread of the process shares). Plain JavaScript: a worker thread does not inherit tsx's loader.
 *
 * Messages in: `{ type: 'open' }`, `{ type: 'report' }`, `{ type: 'close' }`. Out: `{ type: 'opened', ms }`,
 * `{ type: 'received', commentId }` (every stream has it), `{ type: 'report', received, ended }`, `{ type: 'error', message }`.
 */
/** @typedef {{ url: string, tokens: string[], concurrency: number }} ClientJob */

/** @type {ClientJob} */
const job = workerData;
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const now = () => performance.timeOrigin + performance.now();
/** @type {Map<number, number[]>} comment id -> receipt times, one per stream */
const received = new Map();
/** @type {import('node:http').ClientRequest[]} */
const requests = [];
let ended = 0;
/** Streams whose answer's headers came, and those that sent `stream.ready` (for a stall's error message). */
let answered = 0;
let ready = 0;

/**
 * Opens one stream; resolves at its `stream.ready`.
 * @param {string} token
 * @returns {Promise<void>}
 */
function open(token) {
  return new Promise((resolve, reject) => {
    const req = request(job.url, { agent, headers: { authorization: `Embed-Token ${token}`, accept: 'text/event-stream' } }, (res) => {
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let body = '';
        res.on('data', (chunk) => { body += chunk; });
        res.on('end', () => reject(new Error(`stream answered ${res.statusCode}: ${body}`)));
        return;
      }
      answered++;
      let buffer = '';
      let endedWith = '';
      res.on('data', (chunk) => {
        const at = now();
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.includes('event: comment.created')) {
            const id = Number(/"comment":\{"id":(\d+)/.exec(block)?.[1]);
            let times = received.get(id);
            if (times === undefined) received.set(id, (times = []));
            times.push(at);
            if (times.length === job.tokens.length) parentPort?.postMessage({ type: 'received', commentId: id });
          } else if (block.includes('event: stream.ready')) {
            ready++;
            resolve();
          } else if (block.includes('event: stream.end')) {
            ended++;
            endedWith = block;
          }
        }
      });
      res.on('error', () => undefined);
      res.on('end', () => reject(new Error(`a stream ended before stream.ready: ${endedWith || 'without stream.end'}`)));
    });
    req.on('error', reject);
    req.end();
    requests.push(req);
  });
}

/** Opens every stream, `concurrency` at a time. */
async function openAll() {
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < job.tokens.length) await open(job.tokens[next++]);
  };
  let timer;
  const stalled = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`streams stalled: ${requests.length} asked, ${answered} answered, ${ready} ready`)), 60_000);
  });
  try {
    await Promise.race([Promise.all(Array.from({ length: job.concurrency }, lane)), stalled]);
  } finally {
    clearTimeout(timer);
  }
  return Math.round(performance.now() - started);
}

parentPort?.on('message', (message) => {
  const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
  if (message.type === 'open') {
    openAll().then((ms) => port.postMessage({ type: 'opened', ms }), (error) => port.postMessage({ type: 'error', message: error instanceof Error ? error.message : String(error) }));
  } else if (message.type === 'report') {
    port.postMessage({ type: 'report', received: [...received], ended });
  } else if (message.type === 'close') {
    for (const req of requests) req.destroy();
    agent.destroy();
    port.close();
  }
});
