import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RUNNER = 'apps/server/test/cli-runner.ts';

/** A `svc serve` child process started from the TypeScript source, and where it listens. */
export interface SvcProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process printed until it listened (its start-up lines and logs). */
  startOutput: string;
  stop(): Promise<void>;
}

/**
 * Starts `svc serve --db URL --port 0` as a process of its own (a second server sharing one database, as an
 * operator runs them) and resolves once it prints where it listens.
 */
export function startSvcServe(dbUrl: string, env: NodeJS.ProcessEnv = {}): Promise<SvcProcess> {
  // No background rollup builds or webhook deliveries unless a test asks: on the shared test database they would
  // build (and lock) the pre-aggregations of every other suite's deployments, and deliver (and so change) the
  // pending webhook deliveries of every other suite's accounts.
  const child = spawnSvc(['serve', '--db', dbUrl, '--port', '0'], { SVC_LOG_LEVEL: 'warn', SVC_PREAGG_REFRESH: 'false', SVC_WEBHOOK_DELIVERY: 'false', ...env });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`svc serve did not start within 30 s: ${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({
          url: match[1]!,
          child,
          startOutput: output,
          stop: () => new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`svc serve exited with ${code}: ${output}`));
    });
  });
}

/** What a `svc` command printed, and how it exited. */
export interface SvcRun {
  code: number | null;
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `svc ARGS` from the TypeScript source, as a child process of its own (no SVC_DATABASE_URL or SVC_PORT inherited). */
export function spawnSvc(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (env.SVC_DATABASE_URL === undefined) delete childEnv.SVC_DATABASE_URL;
  if (env.SVC_PORT === undefined) delete childEnv.SVC_PORT;
  return spawn(process.execPath, ['--import', 'tsx', RUNNER, ...args], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Waits for a started `svc` command's end. */
export function finished(child: ChildProcess): Promise<SvcRun> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs `svc ARGS` to its end. */
export function runSvc(args: string[], env: NodeJS.ProcessEnv = {}): Promise<SvcRun> {
  return finished(spawnSvc(args, env));
}
