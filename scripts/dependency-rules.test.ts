import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');
const CONFIG = join(ROOT, '.dependency-cruiser.mjs');
const run = promisify(execFile);

/** A tree of the server's shape, written to a temporary folder: each file's imports are what the case needs. */
function writeTree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-deps-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

async function cruise(root: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(DEPCRUISE, ['apps/server/src', 'apps/embed/src', '--config', CONFIG, '--output-type', 'err'], { cwd: root });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, output: failed.stdout };
  }
}

describe('the dependency rules (npm run lint: dependency-cruiser)', () => {
  const roots: string[] = [];
  afterAll(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  it('fail on an import circle, http/ or db/ importing a feature, core/ importing svc, workspace/ importing dashboards/ and dashboards/ importing data/; pass a tree that keeps its floors', async () => {
    const broken = writeTree({
      'apps/server/src/data/data.model.ts': "import { compile } from './data.compiler.js';\nexport const model = compile;\n",
      'apps/server/src/data/data.compiler.ts': "import { model } from './data.model.js';\nexport const compile = () => model;\n",
      'apps/server/src/http/http.metrics.ts': "import { compile } from '../data/data.compiler.js';\nexport const metrics = compile;\n",
      'apps/server/src/db/db.database.ts': "import { metrics } from '../http/http.metrics.js';\nimport { list } from '../workspace/workspace.store.js';\nexport const db = [metrics, list];\n",
      'apps/server/src/workspace/workspace.store.ts': 'export const list = 1;\n',
      'apps/server/src/workspace/workspace.service.ts': "import { read } from '../dashboards/dashboards.store.js';\nexport const listing = read;\n",
      'apps/server/src/dashboards/dashboards.store.ts': 'export const read = 1;\n',
      'apps/server/src/dashboards/dashboards.authoring.ts': "import { compile } from '../data/data.compiler.js';\nexport const check = compile;\n",
      'apps/server/src/core/core.context.ts': "import { db } from '../db/db.database.js';\nexport const context = db;\n",
      'apps/embed/src/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'apps/embed/src/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    });
    roots.push(broken);
    const result = await cruise(broken);
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/no-circular: apps\/server\/src\/data\/data\.(model|compiler)\.ts/);
    expect(result.output).toMatch(/no-circular: apps\/embed\/src\/[ab]\.ts/);
    expect(result.output).toContain('http-imports-no-feature: apps/server/src/http/http.metrics.ts → apps/server/src/data/data.compiler.ts');
    expect(result.output).toContain('db-imports-no-feature: apps/server/src/db/db.database.ts → apps/server/src/workspace/workspace.store.ts');
    expect(result.output).toContain('core-imports-nothing-of-svc: apps/server/src/core/core.context.ts → apps/server/src/db/db.database.ts');
    expect(result.output).toContain('workspace-imports-no-dashboards: apps/server/src/workspace/workspace.service.ts → apps/server/src/dashboards/dashboards.store.ts');
    expect(result.output).toContain('dashboards-imports-no-data: apps/server/src/dashboards/dashboards.authoring.ts → apps/server/src/data/data.compiler.ts');

    const sound = writeTree({
      'apps/server/src/core/core.errors.ts': 'export class AppError extends Error {}\n',
      'apps/server/src/db/db.database.ts': "import { AppError } from '../core/core.errors.js';\nexport const db = AppError;\n",
      'apps/server/src/http/http.errors.ts': "import { AppError } from '../core/core.errors.js';\nexport const map = AppError;\n",
      'apps/server/src/workspace/workspace.store.ts': "import { db } from '../db/db.database.js';\nexport const list = db;\n",
      'apps/server/src/app.ts': "import { list } from './workspace/workspace.store.js';\nimport { map } from './http/http.errors.js';\nexport const app = [list, map];\n",
      'apps/embed/src/main.ts': 'export const main = 1;\n',
    });
    roots.push(sound);
    expect(await cruise(sound)).toMatchObject({ code: 0 });
  }, 60_000);

  it("keep the data path's flow one way: a room imports only the rooms below it, never the orchestration at data/'s root", async () => {
    const against = writeTree({
      'apps/server/src/data/semantic/semantic.model.ts': "import { plan } from '../plan/plan.query.js';\nexport const model = plan;\n",
      'apps/server/src/data/plan/plan.query.ts': 'export const plan = 1;\n',
      'apps/server/src/data/compiler/compiler.query.ts': "import { run } from '../data.run.js';\nexport const compile = run;\n",
      'apps/server/src/data/data.run.ts': 'export const run = 1;\n',
      'apps/server/src/data/warehouse/warehouse.ts': "import { cache } from '../cache/cache.results.js';\nexport const warehouse = cache;\n",
      'apps/server/src/data/cache/cache.results.ts': 'export const cache = 1;\n',
      'apps/embed/src/main.ts': 'export const main = 1;\n',
    });
    roots.push(against);
    const result = await cruise(against);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('data-flow-semantic: apps/server/src/data/semantic/semantic.model.ts → apps/server/src/data/plan/plan.query.ts');
    expect(result.output).toContain('data-flow-compiler: apps/server/src/data/compiler/compiler.query.ts → apps/server/src/data/data.run.ts');
    expect(result.output).toContain('data-flow-warehouse: apps/server/src/data/warehouse/warehouse.ts → apps/server/src/data/cache/cache.results.ts');

    const along = writeTree({
      'apps/server/src/data/semantic/semantic.model.ts': 'export const model = 1;\n',
      'apps/server/src/data/policy/policy.query.ts': "import { model } from '../semantic/semantic.model.js';\nexport const policed = model;\n",
      'apps/server/src/data/compiler/compiler.query.ts': "import { policed } from '../policy/policy.query.js';\nexport const compile = policed;\n",
      'apps/server/src/data/preagg/preagg.match.ts': "import { compile } from '../compiler/compiler.query.js';\nexport const match = compile;\n",
      'apps/server/src/data/plan/plan.query.ts': "import { match } from '../preagg/preagg.match.js';\nimport { compile } from '../compiler/compiler.query.js';\nexport const plan = [match, compile];\n",
      'apps/server/src/data/data.run.ts': "import { plan } from './plan/plan.query.js';\nexport const run = plan;\n",
      'apps/embed/src/main.ts': 'export const main = 1;\n',
    });
    roots.push(along);
    expect(await cruise(along)).toMatchObject({ code: 0 });
  }, 60_000);
});
