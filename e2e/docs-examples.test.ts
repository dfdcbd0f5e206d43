import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFile } from '../apps/server/src/import/import.js';
import type { ImportAccount } from '../apps/server/src/import/import.js';
import { openDatabase } from '../apps/server/src/db/db.database.js';
import { migrateToLatest } from '../apps/server/src/db/db.migrations.js';
import { startSvc } from './embed-harness.js';
import type { RunningSvc } from './embed-harness.js';

// The docs' examples, run as written against the demo account (apps/server/demo/demo.json, as `npm start` loads
// it). The rules (also in README.md, "Tests"):
// - a ```sh block with `curl` runs in bash against a fresh svc (one per document, blocks in order, one shell, so a
//   variable set in one block is there in the next); the documented base URL becomes the test server's, and every
//   curl fails on a non-2xx answer;
// - a ```json block must parse; after `<!-- docs-check: import -->` it is an import file and must import;
// - `<!-- docs-check: skip: <reason> -->` before a block skips it, and the test list says so with the reason;
// - a `curl` outside a ```sh block fails, so no example escapes the check.

const ROOT = new URL('../', import.meta.url);
const DOCUMENTS = ['README.md', ...readdirSync(new URL('docs/', ROOT)).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const DEMO_FILE = new URL('apps/server/demo/demo.json', ROOT);
/** The demo account's admin key: public, it is in demo.json. */
const DEMO_ADMIN_KEY = 'svc_demo_admin_key_0001';
/** The base URLs the docs use for the svc of `npm start`. */
const DOCUMENTED_BASE = /(?:https?:\/\/)?(?:localhost|127\.0\.0\.1):3000/g;
const MARKER = /^<!-- docs-check: (skip|import)(?::\s*(.*?))?\s*-->$/;

interface Block { document: string; line: number; lang: string; text: string; mark?: { kind: 'skip' | 'import'; reason?: string } }

/** The fenced blocks of a document, each with the docs-check marker just above it, and the problems of its markup. */
function readBlocks(document: string): { blocks: Block[]; problems: string[] } {
  const lines = readFileSync(new URL(document, ROOT), 'utf8').split('\n');
  const blocks: Block[] = [];
  const problems: string[] = [];
  let open: { line: number; lang: string; body: string[]; mark?: Block['mark'] } | undefined;
  let pending: { line: number; mark: NonNullable<Block['mark']> } | undefined;
  lines.forEach((text, i) => {
    const fence = /^```(\S*)\s*$/.exec(text);
    if (open !== undefined) {
      if (fence !== null && fence[1] === '') {
        blocks.push({ document, line: open.line, lang: open.lang, text: open.body.join('\n'), ...(open.mark ? { mark: open.mark } : {}) });
        open = undefined;
      } else open.body.push(text);
      return;
    }
    if (fence !== null) {
      open = { line: i + 1, lang: fence[1]!, body: [], ...(pending ? { mark: pending.mark } : {}) };
      pending = undefined;
      return;
    }
    if (pending !== undefined) problems.push(`${document}:${pending.line}: a docs-check marker must be right above a fenced block`);
    pending = undefined;
    const marker = MARKER.exec(text.trim());
    if (marker !== null) {
      const kind = marker[1] as 'skip' | 'import';
      if (kind === 'skip' && !marker[2]) problems.push(`${document}:${i + 1}: a skip needs a reason: <!-- docs-check: skip: why -->`);
      pending = { line: i + 1, mark: { kind, ...(marker[2] ? { reason: marker[2] } : {}) } };
    } else if (text.trim().startsWith('<!-- docs-check')) problems.push(`${document}:${i + 1}: not a docs-check marker: ${text.trim()}`);
    else if (/^\s*(\$\s*)?curl\s/.test(text)) problems.push(`${document}:${i + 1}: a curl example outside a \`\`\`sh block is never checked`);
  });
  if (open !== undefined) problems.push(`${document}:${open.line}: the block is never closed`);
  if (pending !== undefined) problems.push(`${document}:${pending.line}: a docs-check marker must be right above a fenced block`);
  return { blocks, problems };
}

const read = DOCUMENTS.map(readBlocks);
const blocks = read.flatMap((r) => r.blocks);
const isCurlBlock = (b: Block) => (b.lang === 'sh' || b.lang === 'bash') && /(^|[\s($|])curl\s/m.test(b.text);
const label = (b: Block) => `${b.document}:${b.line}`;
const hasTool = (tool: string) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0;
const missingTools = ['bash', 'curl', 'jq'].filter((tool) => !hasTool(tool));
// Like the browser tests: skipped (and said so) where a tool is missing, but never under CI.
const shellSuite = missingTools.length === 0 || process.env.CI === 'true' ? describe : describe.skip;

describe('the docs examples', () => {
  it('mark every example they leave out, with a reason, and keep every curl example in a ```sh block', () => {
    expect(read.flatMap((r) => r.problems)).toEqual([]);
    // The check would pass vacuously if it found nothing.
    expect(blocks.filter(isCurlBlock).length).toBeGreaterThanOrEqual(5);
    expect(blocks.filter((b) => b.lang === 'json').length).toBeGreaterThanOrEqual(8);
  });

  describe.each(blocks.filter((b) => b.lang === 'json').map((b) => [label(b), b] as const))('```json at %s', (_, block) => {
    if (block.mark?.kind === 'skip') {
      it.skip(`is skipped: ${block.mark.reason}`, () => {});
      return;
    }
    it('is valid JSON', () => {
      expect(() => JSON.parse(block.text)).not.toThrow();
    });
    if (block.mark?.kind === 'import') {
      it('imports into an empty database', async () => {
        const db = openDatabase('sqlite::memory:');
        try {
          await migrateToLatest(db);
          const { refs } = await importFile(db.kysely, JSON.parse(block.text));
          expect(Object.keys(refs).length).toBeGreaterThan(0);
        } finally {
          await db.close();
        }
      });
    }
  });
});

const curlDocuments = [...new Set(blocks.filter(isCurlBlock).map((b) => b.document))];

shellSuite.each(curlDocuments)('the curl examples of %s, against the demo', (document) => {
  let svc: RunningSvc;
  const ours = blocks.filter((b) => b.document === document && isCurlBlock(b));
  const run = ours.filter((b) => b.mark?.kind !== 'skip');

  beforeAll(async () => {
    const demo = JSON.parse(readFileSync(DEMO_FILE, 'utf8')) as { accounts: ImportAccount[] };
    svc = await startSvc({ account: demo.accounts[0]! });
  });
  afterAll(async () => {
    await svc?.close();
  });

  for (const block of ours.filter((b) => b.mark?.kind === 'skip')) it.skip(`${label(block)} is skipped: ${block.mark!.reason}`, () => {});

  it(`run in order and answer 2xx: ${run.map(label).join(', ')}`, async () => {
    // The docs name the demo deployment by its id in a fresh database.
    expect(svc.refs.prod).toBe(1);
    const script = [
      'set -Eeu -o pipefail',
      // Every documented curl fails on a non-2xx answer, printing svc's error body.
      'curl() { command curl --silent --show-error --fail-with-body "$@"; }',
      "trap 'echo \"docs-check: failed: $BASH_COMMAND\" >&2' ERR",
      ...run.map((b) => `echo "docs-check: ${label(b)}" >&2\n${b.text.replace(DOCUMENTED_BASE, svc.origin)}`),
      'echo "docs-check: done" >&2',
    ].join('\n');
    let stderr = '';
    try {
      // Asynchronous: svc answers from this same process.
      await promisify(execFile)('bash', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
    } catch (error) {
      const failed = error as { stderr?: string; stdout?: string };
      stderr = `${failed.stderr ?? ''}\n--- stdout\n${failed.stdout ?? ''}`;
    }
    expect(stderr, 'the block after the last "docs-check: <file>:<line>" failed').toBe('');
  });
});

/** The publicIds the docs name, but those an import example of the docs defines for itself. */
function namedDashboards(): string[] {
  // A document's own dashboards: those its import blocks hold, and those its examples create through the authoring API.
  const creates = (b: Block) => b.mark?.kind === 'import' || (isCurlBlock(b) && /-X POST \S*\/api\/v1\/deployments\/\d+\/dashboards\b/.test(b.text));
  const own = new Set(blocks.filter(creates).flatMap((b) => [...b.text.matchAll(/"publicId":\s*"([A-Za-z0-9_-]+)"/g)].map((m) => m[1]!)));
  const named = DOCUMENTS.flatMap((document) => [...readFileSync(new URL(document, ROOT), 'utf8').matchAll(/(?:embed\/dashboard\/|publicId["']?:\s*["']|dashboards["']?:\s*\[\s*["'])([A-Za-z0-9_-]+)/g)].map((m) => m[1]!));
  return [...new Set(named)].filter((id) => !own.has(id)).sort();
}

describe('the dashboards the docs name, in the demo', () => {
  let svc: RunningSvc;
  beforeAll(async () => {
    const demo = JSON.parse(readFileSync(DEMO_FILE, 'utf8')) as { accounts: ImportAccount[] };
    svc = await startSvc({ account: demo.accounts[0]! });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it('are there, published and embeddable, and every CHART widget of each answers rows to a customer viewer', async () => {
    const ids = namedDashboards();
    expect(ids).toEqual(['company-overview', 'q1-review', 'sales-performance']);
    const minted = await fetch(`${svc.origin}/api/v1/embed/generate-session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ deploymentId: svc.refs.prod, externalId: 'ann-1', embedTenantName: 'customer-a', securityContext: { tenant: 'customer-a' }, dashboards: ids }),
    });
    expect(minted.status).toBe(200);
    const { sessionId } = (await minted.json()) as { sessionId: string };
    const exchanged = await fetch(`${svc.origin}/api/v1/embed/session/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId }) });
    const { token } = (await exchanged.json()) as { token: string };
    const headers = { authorization: `Embed-Token ${token}`, 'content-type': 'application/json' };
    for (const id of ids) {
      const read = await fetch(`${svc.origin}/api/v1/embed/dashboard/${id}`, { headers });
      expect(read.status, id).toBe(200);
      const dashboard = (await read.json()) as { config: { widgets: Array<{ id: string; type: string }> } };
      const charts = dashboard.config.widgets.filter((w) => w.type === 'CHART');
      expect(charts.length, id).toBeGreaterThan(0);
      for (const widget of charts) {
        const data = await fetch(`${svc.origin}/api/v1/embed/dashboard/${id}/widgets/${widget.id}/data`, { method: 'POST', headers, body: '{}' });
        const body = (await data.json()) as { rows?: unknown[] };
        expect([data.status, `${id}/${widget.id}`]).toEqual([200, `${id}/${widget.id}`]);
        expect(body.rows!.length, `${id}/${widget.id}`).toBeGreaterThan(0);
      }
    }
  });
});
