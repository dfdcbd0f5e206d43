import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import * as fc from 'fast-check';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../src/app.js';
import { testConfig } from './config.js';
import type { Db } from '../src/db/db.database.js';
import { startFakeAi } from './fake-ai.js';
import type { FakeAi } from './fake-ai.js';
import { nastyRequests, strayRequests } from './fuzz.cases.js';
import { answerProblems, diffSnapshots, snapshotDatabase } from './fuzz.checks.js';
import type { DatabaseSnapshot } from './fuzz.checks.js';
import { seedFuzzFixtures } from './fuzz.fixtures.js';
import type { FuzzFixtures } from './fuzz.fixtures.js';
import { requestArbitrary } from './fuzz.requests.js';
import { readOperations } from './fuzz.schemas.js';
import type { FuzzOperation, FuzzProblem, FuzzReport, FuzzRequest } from './fuzz.types.js';
import { RAISED_RATE_LIMITS } from './limits.js';

// The fuzz engine's harness (see fuzz.ts): svc over a real database, sending requests, checking answers and
// reporting problems.

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

// ---------------------------------------------------------------------------------------------------------------
// Sending

/** An answer as the fuzzer reads it, from inject or from a socket. */
export interface FuzzAnswer {
  status: number;
  contentType: string | undefined;
  body: string;
  requestId: string | undefined;
}

/**
 * Sends raw bytes to a listening server and reads the answer until the server closes the connection (the bytes
 * say `Connection: close`); status 0 when the server closed without answering or did not answer in `timeoutMs`.
 */
export function sendRaw(port: number, bytes: Buffer, timeoutMs = 10_000): Promise<FuzzAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseRawAnswer(Buffer.concat(chunks)));
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', finish);
    // A server may answer (413, 431) and close before it has read everything sent: that is not a failure.
    socket.on('error', finish);
    // Written, not ended: Node's server drops a request whose client half-closes before the answer is ready.
    socket.write(bytes);
  });
}

function parseRawAnswer(bytes: Buffer): FuzzAnswer {
  const text = bytes.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = end === -1 ? text : text.slice(0, end);
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim();
  let body = end === -1 ? Buffer.alloc(0) : bytes.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
  if (/chunked/i.test(header('transfer-encoding') ?? '')) {
    const parts: Buffer[] = [];
    let rest = body;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = lineEnd === -1 ? 0 : parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
      if (!(size > 0)) break;
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      rest = rest.subarray(lineEnd + 2 + size + 2);
    }
    body = Buffer.concat(parts);
  }
  return { status: status ? Number(status[1]) : 0, contentType: header('content-type'), body: body.toString('utf8'), requestId: header('x-request-id') };
}

/** A request in a line for a report: method, URL (cut), credential label, payload size and start. */
export function describeRequest(request: FuzzRequest): string {
  if (request.raw !== undefined) {
    const text = request.raw.toString('latin1');
    return `raw ${request.raw.length} bytes: ${JSON.stringify(text.slice(0, 160))}${text.length > 160 ? '...' : ''}`;
  }
  const url = request.url.length > 200 ? `${request.url.slice(0, 200)}...(${request.url.length} chars)` : request.url;
  const extra = Object.entries(request.headers).filter(([name]) => name !== 'authorization' && name !== 'cookie')
    .map(([name, value]) => `${name}: ${value.length > 60 ? `${value.slice(0, 60)}...(${value.length})` : value}`);
  let payload = '';
  if (request.payload !== undefined) {
    const text = Buffer.isBuffer(request.payload) ? request.payload.toString('latin1') : request.payload;
    payload = ` body(${Buffer.byteLength(request.payload)} B) ${JSON.stringify(text.slice(0, 200))}${text.length > 200 ? '...' : ''}`;
  }
  return `${request.method} ${url} [credential ${request.credential}]${extra.length > 0 ? ` {${extra.join('; ')}}` : ''}${payload}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The harness

/** How the harness builds svc and checks the database. */
export interface FuzzHarnessOptions {
  /** Compare a database snapshot after every refused request (exact blame), or only before a request that may write. */
  verify: 'each' | 'batch';
  /** The demo warehouse file (default: the environment's, SVC_DEMO_WAREHOUSE). */
  demoWarehousePath?: string;
  /** Milliseconds an answer may take before it counts as a hang. */
  answerTimeoutMs?: number;
}

/** Derives a per-operation seed, so an operation's cases do not depend on which operations ran before it. */
export function seedFor(seed: number, name: string): number {
  let hash = 0x811c9dc5;
  for (const char of name) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
  return (seed ^ hash) >>> 0;
}

/**
 * svc built for fuzzing over a real database: generous rate limits (a 429 would still be a valid 4xx, but would
 * stop requests from reaching the code behind), a test double of the AI endpoint (a third party that cannot run
 * here), a logger that keeps each 5xx's stack, a listening socket for raw requests, and the fixtures. It sends
 * requests one at a time and checks each answer and, for refused requests, the database.
 *
 * @example
 * const harness = await FuzzHarness.start(db, { verify: 'each' });
 * const report = await harness.run(harness.operations.map((op) => harness.sample(op, 30, seedFor(1, op.id))).flat());
 * await harness.close();
 */
export class FuzzHarness {
  readonly app: FastifyInstance;
  readonly db: Db;
  readonly operations: FuzzOperation[];
  fixtures: FuzzFixtures;
  readonly port: number;
  readonly #options: FuzzHarnessOptions;
  readonly #ai: FakeAi;
  readonly #failures: Map<string, string>;
  #baseline: DatabaseSnapshot | undefined;
  #pending: FuzzRequest[] = [];
  #arbitraries = new Map<string, fc.Arbitrary<FuzzRequest>>();

  private constructor(init: { app: FastifyInstance; db: Db; operations: FuzzOperation[]; fixtures: FuzzFixtures; port: number; options: FuzzHarnessOptions; ai: FakeAi; failures: Map<string, string> }) {
    this.app = init.app;
    this.db = init.db;
    this.operations = init.operations;
    this.fixtures = init.fixtures;
    this.port = init.port;
    this.#options = init.options;
    this.#ai = init.ai;
    this.#failures = init.failures;
  }

  /** Builds svc over `db` (open and migrated), seeds the fixtures, listens on a free port of 127.0.0.1. */
  static async start(db: Db, options: FuzzHarnessOptions): Promise<FuzzHarness> {
    const ai = await startFakeAi();
    const failures = new Map<string, string>();
    const stream = {
      write(line: string) {
        const id = /"reqId":"([^"]+)"/.exec(line)?.[1];
        if (id !== undefined) failures.set(id, line.trim());
      },
    };
    const app = await buildApp(testConfig({
      rateLimits: RAISED_RATE_LIMITS,
      ai: { baseUrl: ai.baseUrl, model: 'fuzz', apiKey: 'fuzz-key', timeoutMs: 10_000 },
      ...(options.demoWarehousePath === undefined ? {} : { data: { demoWarehousePath: options.demoWarehousePath } }),
    }), { db, logger: { level: 'error', stream } });
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as AddressInfo).port;
      const operations = await readOperations(app);
      const fixtures = await seedFuzzFixtures(app, db.kysely);
      return new FuzzHarness({ app, db, operations, fixtures, port, options, ai, failures });
    } catch (error) {
      await app.close();
      await ai.close();
      throw error;
    }
  }

  /** Seeds a fresh set of fixtures (new accounts): the snapshot then covers only those, so it stays small. */
  async refreshFixtures(): Promise<void> {
    // run() ends by comparing the database, so nothing refused is left unchecked here.
    this.#pending = [];
    this.fixtures = await seedFuzzFixtures(this.app, this.db.kysely);
    this.#arbitraries.clear();
    this.#baseline = undefined;
  }

  /** `count` generated requests of one operation, the same ones for the same seed and fixtures. */
  sample(operation: FuzzOperation, count: number, seed: number): FuzzRequest[] {
    let arbitrary = this.#arbitraries.get(operation.id);
    if (arbitrary === undefined) {
      arbitrary = requestArbitrary(operation, this.fixtures);
      this.#arbitraries.set(operation.id, arbitrary);
    }
    return fc.sample(arbitrary, { seed, numRuns: count });
  }

  /** Every hand-written case: the nasty requests of each operation and the stray routes (raw ones excluded). */
  nastyCases(): FuzzRequest[] {
    return [...this.operations.flatMap((operation) => nastyRequests(operation, this.fixtures)), ...strayRequests(this.fixtures)];
  }

  /**
   * Sends `requests` in order and checks every answer; `seed` is only reported, for a replay. A refused request
   * (4xx, or a 5xx) is remembered; before the next request that may write (or after each, with `verify: 'each'`)
   * the database must equal its last snapshot.
   */
  async run(requests: readonly FuzzRequest[], seed = 0): Promise<FuzzReport> {
    const report: FuzzReport = { sent: 0, byStatus: {}, byOperation: {}, verifications: 0, problems: [] };
    this.#baseline ??= await snapshotDatabase(this.db.kysely, this.fixtures.accountIds);
    for (const [caseIndex, request] of requests.entries()) {
      const mayWrite = !SAFE_METHODS.has(request.method) && request.mustReject === undefined;
      if (mayWrite && this.#pending.length > 0) await this.#verify(report, seed);
      const answer = await this.#send(request);
      report.sent++;
      report.byStatus[answer.status] = (report.byStatus[answer.status] ?? 0) + 1;
      const perOperation = (report.byOperation[request.operation] ??= {});
      perOperation[answer.status] = (perOperation[answer.status] ?? 0) + 1;
      const problem = (reason: string): FuzzProblem => ({
        operation: request.operation, label: request.label, credential: request.credential, seed, caseIndex, request: describeRequest(request),
        status: answer.status, response: answer.body.slice(0, 300), reason,
        serverLog: answer.requestId === undefined ? undefined : this.#failures.get(answer.requestId)?.slice(0, 2000),
      });
      for (const reason of answerProblems(request, answer.status, answer.contentType, answer.body)) report.problems.push(problem(reason));
      if (answer.status === 0 || answer.status >= 400) {
        this.#pending.push(request);
        if (this.#options.verify === 'each') await this.#verify(report, seed);
      } else if (!SAFE_METHODS.has(request.method)) {
        // An accepted write: the database moved on purpose; what follows is compared with the new state. (With
        // `verify: 'batch'`, refusals still pending here go unchecked; that only happens after a request that had
        // to be refused was accepted, which is reported above.)
        this.#pending = [];
        this.#baseline = await snapshotDatabase(this.db.kysely, this.fixtures.accountIds);
      }
      if (request.raw !== undefined) {
        // Whatever the bytes did, the process must still answer.
        const health = await sendRaw(this.port, Buffer.from('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'));
        if (health.status !== 200) report.problems.push(problem(`the server stopped answering: GET /healthz then answered ${health.status}`));
      }
    }
    await this.#verify(report, seed);
    return report;
  }

  /** `/healthz` and `/readyz` through inject and over the socket: every answer must be 200. */
  async health(): Promise<Array<{ how: string; status: number }>> {
    const answers: Array<{ how: string; status: number }> = [];
    for (const url of ['/healthz', '/readyz']) {
      answers.push({ how: `inject ${url}`, status: (await this.app.inject({ url })).statusCode });
      answers.push({ how: `socket ${url}`, status: (await sendRaw(this.port, Buffer.from(`GET ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`))).status });
    }
    return answers;
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.#ai.close();
  }

  async #verify(report: FuzzReport, seed: number): Promise<void> {
    if (this.#pending.length === 0 || this.#baseline === undefined) return;
    const now = await snapshotDatabase(this.db.kysely, this.fixtures.accountIds);
    report.verifications++;
    const changes = diffSnapshots(this.#baseline, now);
    if (changes.length > 0) {
      const blamed = this.#pending;
      report.problems.push({
        operation: blamed.length === 1 ? blamed[0]!.operation : `${blamed.length} refused requests`, label: blamed.map((r) => r.label).slice(0, 5).join('; '),
        credential: blamed.map((r) => r.credential).slice(0, 5).join(', '), seed, caseIndex: -1,
        request: blamed.slice(-5).map(describeRequest).join('\n    '), status: 0, response: '',
        reason: `refused requests changed the database: ${changes.join('; ')}`,
      });
    }
    this.#pending = [];
    this.#baseline = now;
  }

  /**
   * A request to an operation that answers with an event stream: such an answer never ends by itself, so its first
   * chunk (the stream's first events) is its answer, and then the client goes away, as a closed tab does. Any other
   * answer (an error body) is read whole.
   */
  async #sendToStream(request: FuzzRequest, timeoutMs: number): Promise<FuzzAnswer> {
    const res = await this.app.inject({
      method: request.method as InjectOptions['method'], url: request.url, headers: request.headers, payload: request.payload, payloadAsStream: true,
    });
    const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : undefined;
    const requestId = typeof res.headers['x-request-id'] === 'string' ? res.headers['x-request-id'] : undefined;
    const stream = res.stream();
    const chunks: Buffer[] = [];
    const isEventStream = res.statusCode === 200 && contentType?.startsWith('text/event-stream') === true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        // `retry` first, then the stream's first event.
        if (isEventStream && Buffer.concat(chunks).toString().includes('event: ')) done();
      });
      stream.on('end', done);
      stream.on('error', done);
    });
    if (isEventStream) {
      (res.raw.res as { destroy(): void }).destroy();
      stream.destroy();
    }
    return { status: res.statusCode, contentType, body: Buffer.concat(chunks).toString(), requestId };
  }

  async #send(request: FuzzRequest): Promise<FuzzAnswer> {
    const timeoutMs = this.#options.answerTimeoutMs ?? 15_000;
    const attempt = (async (): Promise<FuzzAnswer> => {
      if (request.raw !== undefined) return sendRaw(this.port, request.raw, timeoutMs);
      if (this.operations.find((o) => o.id === request.operation)?.streams === true) return this.#sendToStream(request, timeoutMs);
      const res = await this.app.inject({ method: request.method as InjectOptions['method'], url: request.url, headers: request.headers, payload: request.payload });
      const contentType = res.headers['content-type'];
      const requestId = res.headers['x-request-id'];
      return { status: res.statusCode, contentType: typeof contentType === 'string' ? contentType : undefined, body: res.body, requestId: typeof requestId === 'string' ? requestId : undefined };
    })();
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<FuzzAnswer>((resolve) => {
      timer = setTimeout(() => resolve({ status: 0, contentType: undefined, body: `no answer in ${timeoutMs} ms`, requestId: undefined }), timeoutMs);
    });
    try {
      return await Promise.race([attempt.catch((error: unknown) => ({ status: 0, contentType: undefined, body: `inject failed: ${String(error)}`, requestId: undefined })), hang]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Problems in a few lines each, for a failed assertion, with how to replay. */
export function formatProblems(problems: readonly FuzzProblem[], replay: string, limit = 15): string {
  if (problems.length === 0) return 'no problems';
  const lines = problems.slice(0, limit).map((p, i) => [
    `#${i + 1} [${p.operation}] ${p.label} (seed ${p.seed}, case ${p.caseIndex})`,
    `    ${p.request}`,
    `    -> ${p.status} ${p.response}`,
    `    ${p.reason}`,
    ...(p.serverLog === undefined ? [] : [`    server log: ${p.serverLog.slice(0, 800)}`]),
  ].join('\n'));
  const more = problems.length > limit ? `\n... and ${problems.length - limit} more` : '';
  return `${problems.length} problem(s); replay with ${replay}\n${lines.join('\n')}${more}`;
}
