import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import type { TestContext } from 'vitest';
import { BUNDLES, buildIfStale, STAMP } from './build-if-stale.mjs';
import type { Bundle } from './build-if-stale.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * A root with one bundle whose build appends a line to build.log and writes dist/out.js: `fails` makes the next
 * build exit 1.
 */
function fixture(onTestFinished: TestContext['onTestFinished']): { root: string; bundle: Bundle; builds: () => number; touch: (path: string) => void } {
  const root = mkdtempSync(join(tmpdir(), 'svc-build-'));
  onTestFinished(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'pkg/src'), { recursive: true });
  writeFileSync(join(root, 'pkg/src/index.ts'), 'export const x = 1;\n');
  writeFileSync(join(root, 'shared.json'), '{}\n');
  const anHourAgo = new Date(Date.now() - 3_600_000);
  for (const path of ['pkg/src/index.ts', 'shared.json']) utimesSync(join(root, path), anHourAgo, anHourAgo);
  const script = [
    "const fs = require('node:fs');",
    "fs.appendFileSync('build.log', 'built\\n');",
    "if (fs.existsSync('fails')) process.exit(1);",
    "fs.rmSync('pkg/dist', { recursive: true, force: true });",
    "fs.mkdirSync('pkg/dist');",
    "fs.writeFileSync('pkg/dist/out.js', fs.readFileSync('pkg/src/index.ts'));",
  ].join(' ');
  const bundle: Bundle = { name: 'pkg', dir: 'pkg', inputs: ['pkg/src', 'shared.json', 'pkg/missing-input.json'], command: [process.execPath, '-e', script] };
  const builds = () => (existsSync(join(root, 'build.log')) ? readFileSync(join(root, 'build.log'), 'utf8').split('\n').length - 1 : 0);
  // Saved now: later than the start of any build before (a build spawns a process, well over 1 ms), not later than the next.
  const touch = (path: string) => {
    const at = new Date();
    utimesSync(join(root, path), at, at);
  };
  return { root, bundle, builds, touch };
}

describe('scripts/build-if-stale.mjs: npm start rebuilds a browser bundle only when an input changed', () => {
  it('builds a bundle never built, then skips it while no input is newer than its last build', ({ expect, onTestFinished }) => {
    const { root, bundle, builds } = fixture(onTestFinished);
    expect(buildIfStale(root, [bundle])).toEqual(['pkg: built (never built)']);
    expect(readFileSync(join(root, 'pkg/dist/out.js'), 'utf8')).toBe('export const x = 1;\n');
    expect(buildIfStale(root, [bundle])).toEqual(['pkg is up to date']);
    expect(buildIfStale(root, [bundle])).toEqual(['pkg is up to date']);
    expect(builds()).toBe(1);
  });

  it('rebuilds when a file deep in an input directory, or an input file, is newer than the last build', ({ expect, onTestFinished }) => {
    const { root, bundle, builds, touch } = fixture(onTestFinished);
    buildIfStale(root, [bundle]);
    writeFileSync(join(root, 'pkg/src/index.ts'), 'export const x = 2;\n');
    touch('pkg/src/index.ts');
    expect(buildIfStale(root, [bundle])).toEqual(['pkg: built (an input changed)']);
    expect(readFileSync(join(root, 'pkg/dist/out.js'), 'utf8')).toBe('export const x = 2;\n');
    touch('shared.json');
    expect(buildIfStale(root, [bundle])).toEqual(['pkg: built (an input changed)']);
    expect(buildIfStale(root, [bundle])).toEqual(['pkg is up to date']);
    expect(builds()).toBe(3);
  });

  it('rebuilds when its dist/ was removed, and every bundle with force', ({ expect, onTestFinished }) => {
    const { root, bundle, builds } = fixture(onTestFinished);
    buildIfStale(root, [bundle]);
    rmSync(join(root, 'pkg/dist'), { recursive: true });
    expect(buildIfStale(root, [bundle])).toEqual(['pkg: built (never built)']);
    expect(buildIfStale(root, [bundle], { force: true })).toEqual(['pkg: built (forced)']);
    expect(builds()).toBe(3);
  });

  it('leaves no stamp after a failed build, so the next run builds again', ({ expect, onTestFinished }) => {
    const { root, bundle, builds, touch } = fixture(onTestFinished);
    buildIfStale(root, [bundle]);
    touch('pkg/src/index.ts');
    writeFileSync(join(root, 'fails'), '');
    expect(() => buildIfStale(root, [bundle])).toThrow('building pkg failed (exit code 1)');
    expect(existsSync(join(root, 'pkg', STAMP))).toBe(false);
    rmSync(join(root, 'fails'));
    expect(buildIfStale(root, [bundle])).toEqual(['pkg: built (never built)']);
    expect(builds()).toBe(3);
  });

  it('names inputs that exist in this repository, covering each bundle\'s sources and config', ({ expect }) => {
    for (const bundle of BUNDLES) {
      const missing = bundle.inputs.filter((input) => !existsSync(join(ROOT, input)));
      expect({ bundle: bundle.name, missing }).toEqual({ bundle: bundle.name, missing: [] });
      expect(bundle.inputs).toEqual(expect.arrayContaining([`${bundle.dir}/src`, `${bundle.dir}/package.json`, 'package-lock.json', 'packages/protocol/src']));
    }
  });
});
