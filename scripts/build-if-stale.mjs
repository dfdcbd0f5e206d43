#!/usr/bin/env node
// `npm run build` (and so `npm start`) rebuilds the browser bundles only when one of their inputs changed since their
// last build, as `tsc -b` does for the TypeScript projects: a bundle's last good build leaves a stamp in its dist/
// with the time it started, and the bundle is stale when the stamp is missing or an input is newer. `--force`
// rebuilds all. Usage: node scripts/build-if-stale.mjs [--force] (or npm run build -- --force)
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * @typedef {object} Bundle
 * @property {string} name what the log line calls it
 * @property {string} dir its package directory, relative to the root; the stamp is `<dir>/dist/.build-stamp`
 * @property {string[]} inputs files and directories (read recursively) whose change makes it stale, relative to the root
 * @property {string[]} command what builds it, run in the root
 */

/** Everything the lock file pins (dependency upgrades), and the shared compiler settings. */
const SHARED_INPUTS = ['package-lock.json', 'tsconfig.base.json', 'packages/protocol/src', 'packages/protocol/package.json'];

/** @type {Bundle[]} */
export const BUNDLES = [
  {
    name: '@svc/embed-sdk',
    dir: 'packages/embed-sdk',
    inputs: ['packages/embed-sdk/src', 'packages/embed-sdk/build.mjs', 'packages/embed-sdk/package.json', 'packages/embed-sdk/tsconfig.json', ...SHARED_INPUTS],
    command: ['npm', 'run', 'build', '--silent', '-w', '@svc/embed-sdk'],
  },
  {
    name: '@svc/embed',
    dir: 'apps/embed',
    inputs: ['apps/embed/src', 'apps/embed/index.html', 'apps/embed/vite.config.ts', 'apps/embed/package.json', 'apps/embed/tsconfig.json', ...SHARED_INPUTS],
    command: ['npm', 'run', 'build', '--silent', '-w', '@svc/embed'],
  },
  {
    name: '@svc/console',
    dir: 'apps/console',
    inputs: ['apps/console/src', 'apps/console/index.html', 'apps/console/vite.config.ts', 'apps/console/package.json', 'apps/console/tsconfig.json', ...SHARED_INPUTS],
    command: ['npm', 'run', 'build', '--silent', '-w', '@svc/console'],
  },
];

export const STAMP = join('dist', '.build-stamp');

/**
 * The newest modification time (ms) among the files under the given paths; a missing path counts as nothing.
 * @param {string[]} paths
 * @returns {number}
 */
export function newestMtimeMs(paths) {
  let newest = 0;
  for (const path of paths) {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      continue;
    }
    newest = Math.max(newest, stat.isDirectory()
      ? newestMtimeMs(readdirSync(path).map((entry) => join(path, entry)))
      : stat.mtimeMs);
  }
  return newest;
}

/**
 * Why the bundle must be rebuilt, or undefined when its last build is newer than all its inputs.
 * @param {string} root
 * @param {Bundle} bundle
 * @returns {string | undefined}
 */
export function staleReason(root, bundle) {
  let startedAt;
  try {
    startedAt = JSON.parse(readFileSync(join(root, bundle.dir, STAMP), 'utf8')).startedAt;
  } catch {
    return 'never built';
  }
  if (typeof startedAt !== 'number') return 'never built';
  const newest = newestMtimeMs(bundle.inputs.map((input) => join(root, input)));
  return newest > startedAt ? 'an input changed' : undefined;
}

/**
 * Builds each stale bundle (every bundle with `force`), in order; resolves to what it did, one line per bundle.
 * A failed build leaves no stamp, so the next run builds again; it throws, naming the bundle.
 *
 * @example
 * for (const line of buildIfStale(process.cwd(), BUNDLES)) console.log(line);
 * // "@svc/embed-sdk is up to date", "@svc/embed: built (an input changed)"
 * @param {string} root
 * @param {Bundle[]} bundles
 * @param {{ force?: boolean }} [options]
 * @returns {string[]}
 */
export function buildIfStale(root, bundles, options = {}) {
  const done = [];
  for (const bundle of bundles) {
    const reason = options.force === true ? 'forced' : staleReason(root, bundle);
    if (reason === undefined) {
      done.push(`${bundle.name} is up to date`);
      continue;
    }
    const stamp = join(root, bundle.dir, STAMP);
    rmSync(stamp, { force: true });
    // An input saved while the build runs is newer than this, so the next run builds again.
    const startedAt = Date.now();
    const [command, ...args] = bundle.command;
    const run = spawnSync(/** @type {string} */ (command), args, { cwd: root, stdio: 'inherit' });
    if (run.status !== 0) throw new Error(`building ${bundle.name} failed (${run.error?.message ?? `exit code ${run.status}`})`);
    mkdirSync(join(root, bundle.dir, 'dist'), { recursive: true });
    writeFileSync(stamp, `${JSON.stringify({ startedAt })}\n`);
    done.push(`${bundle.name}: built (${reason})`);
  }
  return done;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  try {
    const done = buildIfStale(root, BUNDLES, { force: process.argv.includes('--force') });
    // Silent when nothing was stale, like tsc -b: `npm start` prints its own lines.
    if (done.some((line) => !line.endsWith('is up to date'))) for (const line of done) console.log(line);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
}
