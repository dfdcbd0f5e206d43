import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, inject, it } from 'vitest';
import type { TestContext } from 'vitest';
import { uniqueSuffix } from '../test/factory.js';
import { runSvc, spawnSvc as startSvc } from '../test/svc-process.js';
import { importFile } from './import/import.js';
import type { ImportFile } from './import/import.js';
import { digestSecret } from './core/core.digest.js';
import { buildApp } from './app.js';
import { testConfig } from '../test/config.js';
import { openDatabase } from './db/db.database.js';
import type { Db } from './db/db.database.js';
import { migrateToLatest } from './db/db.migrations.js';
import { NAME_SEARCH_TABLES } from './db/db.schema.js';

const DEMO_KEY = 'svc_demo_admin_key_0001';
const postgresUrl = inject('postgresUrl');

const TABLES = [
  'accounts', 'users', 'groups', 'group_members', 'api_keys', 'deployments', 'workspace_items', 'item_ancestors', 'item_grants',
  'item_views', 'item_favorites', 'dashboards', 'report_snapshots', 'embed_tenants', 'embed_users',
] as const;

/** The rows the example file below adds to each table. */
const EXAMPLE_ROWS = {
  accounts: 1, users: 2, groups: 1, group_members: 1, api_keys: 2, deployments: 1, workspace_items: 3, item_ancestors: 5,
  item_grants: 1, item_views: 1, item_favorites: 1, dashboards: 1, report_snapshots: 1, embed_tenants: 1, embed_users: 1,
};

/**
 * The number of segments of an FTS5 index, read from its structure record (row 10 of its `_data` table: a 4-byte
 * cookie, then the number of levels and the number of segments as SQLite varints).
 */
async function ftsSegments(db: Db, table: string): Promise<number> {
  const row = await sql<{ block: Buffer }>`select block from ${sql.table(`${table}_data`)} where id = 10`.execute(db.kysely);
  const block = row.rows[0]!.block;
  let offset = 4;
  const varint = () => {
    let value = 0;
    for (let k = 0; k < 9; k++) {
      const byte = block[offset++]!;
      if (k === 8) return value * 256 + byte;
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    return value;
  };
  varint();
  return varint();
}


/** The DESIGN.md import file example, with the names that must be unique in a database suffixed. */
function exampleFile(s: string): ImportFile {
  return {
    accounts: [{
      ref: 'acme', name: 'Acme', tenantName: `acme-${s}`,
      settings: { allowEmbedComments: true, allowedEmbedOrigins: ['http://localhost:5173'] },
      users: [
        { ref: 'alice', email: 'alice@acme.test', firstName: 'Alice', role: 'admin', password: 'optional, for the console', apiKeys: [`svc_alice_test_key_${s}`] },
        { ref: 'bob', email: 'bob@acme.test', role: 'member', apiKeys: [`svc_bob_test_key_${s}`] },
      ],
      groups: [{ ref: 'sales', name: 'Sales', members: ['bob'] }],
      deployments: [{
        ref: 'prod', name: 'Production',
        items: [{
          ref: 'f-sales', type: 'FOLDER', name: 'Sales', createdBy: 'alice', grants: [{ group: 'sales' }],
          children: [
            {
              ref: 'wb-q1', type: 'WORKBOOK', name: 'Q1 review', createdBy: 'alice', createdAt: '2026-01-05T10:00:00Z', updatedAt: '2026-02-01T09:00:00Z',
              dashboard: {
                publicId: `q1-review-${s}`, status: 'published', allowEmbed: true, title: 'Q1 review', config: {},
                reportSnapshots: [{ report: 'rp-1' }],
              },
            },
            { ref: 'rp-1', type: 'REPORT', name: 'Pipeline', createdBy: 'bob' },
          ],
        }],
        views: [{ user: 'bob', item: 'wb-q1', at: '2026-03-01T12:00:00Z' }],
        favorites: [{ user: 'bob', item: 'rp-1' }],
      }],
      embedTenants: [{ name: 'customer-a', users: [{ ref: 'ann', externalId: 'ann-1', username: 'ann', email: 'ann@a.test', firstName: 'Ann' }] }],
    }],
  };
}

/** A fresh directory with an SQLite URL in it, removed when the test ends. */
function tempDir(onTestFinished: TestContext['onTestFinished']): { dir: string; dbUrl: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, dbUrl: `sqlite:${join(dir, 'svc.db')}` };
}

function writeJson(dir: string, name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

/** Opens the database the child wrote (after it exited), runs `use`, and closes it. */
async function withDatabase<T>(url: string, use: (db: Db) => Promise<T>): Promise<T> {
  const db = openDatabase(url);
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

async function countRows(db: Db): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(db.kysely);
    counts[table] = Number(rows[0]?.n);
  }
  return counts;
}

/** Seeds a database in this process, through the import, so that a command under test finds data. */
async function seed(url: string, files: ImportFile[]): Promise<Array<Record<string, number>>> {
  return withDatabase(url, async (db) => {
    await migrateToLatest(db);
    const refs: Array<Record<string, number>> = [];
    for (const file of files) refs.push((await importFile(db.kysely, file)).refs);
    return refs;
  });
}

// Each run starts a Node process that compiles the TypeScript source (about 2 s of CPU): the runs go concurrently,
// each in a directory of its own, with room for a loaded machine.
describe.concurrent('the svc command, run as a child process', { timeout: 60_000 }, () => {
  describe('svc import', () => {
    it('prints {"refs":{...}} with the id of every ref on stdout and exits 0', async ({ expect, onTestFinished }) => {
      const { dir, dbUrl } = tempDir(onTestFinished);
      const s = uniqueSuffix();
      const run = await runSvc(['import', writeJson(dir, 'acme.json', exampleFile(s)), '--db', dbUrl]);
      expect(run.code, run.stderr).toBe(0);
      const printed = JSON.parse(run.stdout) as { refs: Record<string, number> };
      expect(Object.keys(printed)).toEqual(['refs']);
      expect(Object.keys(printed.refs).sort()).toEqual(['acme', 'alice', 'ann', 'bob', 'f-sales', 'prod', 'rp-1', 'sales', 'wb-q1']);
      await withDatabase(dbUrl, async (db) => {
        const account = await db.kysely.selectFrom('accounts').select(['id', 'tenant_name']).executeTakeFirstOrThrow();
        expect(account).toEqual({ id: printed.refs.acme, tenant_name: `acme-${s}` });
        const alice = await db.kysely.selectFrom('users').select('email').where('id', '=', printed.refs.alice!).executeTakeFirstOrThrow();
        expect(alice.email).toBe('alice@acme.test');
        expect(await countRows(db)).toEqual(EXAMPLE_ROWS);
      });
    });

    it('leaves each SQLite name index in one segment after every import, so a search probes one b-tree per trigram', async ({ expect, onTestFinished }) => {
      const { dir, dbUrl } = tempDir(onTestFinished);
      for (const name of ['first.json', 'second.json']) {
        const run = await runSvc(['import', writeJson(dir, name, exampleFile(uniqueSuffix())), '--db', dbUrl]);
        expect(run.code, run.stderr).toBe(0);
      }
      await withDatabase(dbUrl, async (db) => {
        // Each import's transaction writes a segment of its own; without the merge the second import leaves two.
        for (const table of Object.values(NAME_SEARCH_TABLES)) expect({ table, segments: await ftsSegments(db, table) }).toEqual({ table, segments: 1 });
        const found = await sql<{ id: number }>`select rowid as id from ${sql.table(NAME_SEARCH_TABLES.others)} where ${sql.table(NAME_SEARCH_TABLES.others)} match '"q1 review"'`.execute(db.kysely);
        expect(found.rows).toHaveLength(2);
      });
    });

    it('exits 1 naming the JSON path on stderr for a bad file, writes nothing, and a later good file imports alone', async ({ expect, onTestFinished }) => {
      const { dir, dbUrl } = tempDir(onTestFinished);
      const bad = exampleFile(uniqueSuffix());
      delete (bad.accounts[0]!.users![1] as { role?: string }).role;
      const refused = await runSvc(['import', writeJson(dir, 'bad.json', bad), '--db', dbUrl]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^svc import: \S+bad\.json is refused at \$\.accounts\[0\]\.users\[1\]\.role: .+; nothing was written\n$/);
      expect(refused.stdout).toBe('');

      const good = await runSvc(['import', writeJson(dir, 'good.json', exampleFile(uniqueSuffix())), '--db', dbUrl]);
      expect(good.code, good.stderr).toBe(0);
      await withDatabase(dbUrl, async (db) => expect(await countRows(db)).toEqual(EXAMPLE_ROWS));
    });

    it('exits 1 for a file that collides with the database inside the transaction, and writes none of its accounts', async ({ expect, onTestFinished }) => {
      const { dir, dbUrl } = tempDir(onTestFinished);
      const existing = exampleFile(uniqueSuffix());
      await seed(dbUrl, [existing]);
      const file = exampleFile(uniqueSuffix());
      // a fresh account first, then one whose tenantName is taken: the first must not be written either
      file.accounts.push({ ref: 'other', name: 'Other', tenantName: existing.accounts[0]!.tenantName });
      const run = await runSvc(['import', writeJson(dir, 'collides.json', file), '--db', dbUrl]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('$.accounts[1].tenantName');
      await withDatabase(dbUrl, async (db) => expect(await countRows(db)).toEqual(EXAMPLE_ROWS));
    });

    it('exits 1 for a file that is not JSON, saying so, and writes nothing', async ({ expect, onTestFinished }) => {
      const { dir, dbUrl } = tempDir(onTestFinished);
      const path = join(dir, 'broken.json');
      writeFileSync(path, '{ "accounts": [ { "name": "Acme", ');
      const run = await runSvc(['import', path, '--db', dbUrl]);
      expect(run.code).toBe(1);
      expect(run.stderr.startsWith(`svc import: ${path} is not valid JSON (`), run.stderr).toBe(true);
      expect(run.stderr.split('\n')).toHaveLength(2);
      expect(run.stdout).toBe('');
      const accounts = existsSync(join(dir, 'svc.db'))
        ? await withDatabase(dbUrl, async (db) => (await countRows(db)).accounts)
        : 0;
      expect(accounts).toBe(0);
    });

    it('exits 1 for a file that does not exist, naming it', async ({ expect, onTestFinished }) => {
      const { dir, dbUrl } = tempDir(onTestFinished);
      const path = join(dir, 'missing.json');
      const run = await runSvc(['import', path, '--db', dbUrl]);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`svc import: the file ${path} does not exist\n`);
      expect(existsSync(join(dir, 'svc.db'))).toBe(false);
    });

    it.skipIf(postgresUrl === null)('imports into PostgreSQL given by --db postgres://..., and refuses a bad file there writing nothing', async ({ expect, onTestFinished }) => {
      const { dir } = tempDir(onTestFinished);
      const s = uniqueSuffix();
      const bad = exampleFile(s);
      bad.accounts[0]!.deployments![0]!.views![0]!.item = 'wb-q2';
      const refused = await runSvc(['import', writeJson(dir, 'bad.json', bad), '--db', postgresUrl!]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('$.accounts[0].deployments[0].views[0].item');
      const tenantOf = async (db: Db) =>
        db.kysely.selectFrom('accounts').select('id').where('tenant_name', '=', `acme-${s}`).executeTakeFirst();
      await withDatabase(postgresUrl!, async (db) => {
        expect(await tenantOf(db)).toBeUndefined();
        const keys = await db.kysely.selectFrom('api_keys').select('id').where('digest', '=', digestSecret(`svc_alice_test_key_${s}`)).execute();
        expect(keys).toEqual([]);
      });

      const run = await runSvc(['import', writeJson(dir, 'good.json', exampleFile(s)), '--db', postgresUrl!]);
      expect(run.code, run.stderr).toBe(0);
      const { refs } = JSON.parse(run.stdout) as { refs: Record<string, number> };
      await withDatabase(postgresUrl!, async (db) => {
        expect((await tenantOf(db))?.id).toBe(refs.acme);
        const users = await db.kysely.selectFrom('users').select('email').where('account_id', '=', refs.acme!).orderBy('email').execute();
        expect(users.map((u) => u.email)).toEqual(['alice@acme.test', 'bob@acme.test']);
      });
    });
  });

  describe('svc migrate', () => {
    it('exits 0 and leaves an empty database with every table, and again when it is up to date', async ({ expect, onTestFinished }) => {
      const { dbUrl } = tempDir(onTestFinished);
      const first = await runSvc(['migrate', '--db', dbUrl]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain('up to date');
      const again = await runSvc(['migrate', '--db', dbUrl]);
      expect(again.code, again.stderr).toBe(0);
      await withDatabase(dbUrl, async (db) => {
        expect(Object.values(await countRows(db))).toEqual(TABLES.map(() => 0));
      });
    });
  });

  describe('svc keys create', () => {
    it('prints a new svc_ key once on stdout, stores only its digest, and the key authenticates against the API', async ({ expect, onTestFinished }) => {
      const { dbUrl } = tempDir(onTestFinished);
      const [refs] = await seed(dbUrl, [exampleFile(uniqueSuffix())]);
      const run = await runSvc(['keys', 'create', '--user', 'alice@acme.test', '--db', dbUrl]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^svc_[0-9A-Za-z]{40,}\n$/);
      const key = run.stdout.trim();
      expect(run.stderr).not.toContain(key);

      const db = openDatabase(dbUrl);
      const app = await buildApp(testConfig(), { db });
      try {
        const rows = await db.kysely.selectFrom('api_keys').select(['user_id', 'digest']).where('digest', '=', digestSecret(key)).execute();
        expect(rows).toEqual([{ user_id: refs!.alice, digest: digestSecret(key) }]);
        const everything = JSON.stringify(await db.kysely.selectFrom('api_keys').selectAll().execute());
        expect(everything).not.toContain(key);

        const url = `/api/v1/deployments/${refs!.prod}/workspace`;
        const ok = await app.inject({ url, headers: { authorization: `Bearer ${key}` } });
        expect(ok.statusCode, ok.body).toBe(200);
        expect((ok.json() as { items: Array<{ name: string }> }).items.map((i) => i.name)).toEqual(['Sales']);
        const forged = await app.inject({ url, headers: { authorization: `Bearer ${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}` } });
        expect(forged.statusCode).toBe(401);
      } finally {
        await app.close();
        await db.close();
      }
    });

    it('exits 1 for an email that belongs to no platform user, and stores no key', async ({ expect, onTestFinished }) => {
      const { dbUrl } = tempDir(onTestFinished);
      await seed(dbUrl, [exampleFile(uniqueSuffix())]);
      const run = await runSvc(['keys', 'create', '--user', 'nobody@acme.test', '--db', dbUrl]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('nobody@acme.test');
      await withDatabase(dbUrl, async (db) => expect((await countRows(db)).api_keys).toBe(EXAMPLE_ROWS.api_keys));
    });

    it('exits 1 for an email of several accounts until --account names one, then keys that account\'s user', async ({ expect, onTestFinished }) => {
      const { dbUrl } = tempDir(onTestFinished);
      const second = exampleFile(uniqueSuffix());
      const [, refs] = await seed(dbUrl, [exampleFile(uniqueSuffix()), second]);
      const ambiguous = await runSvc(['keys', 'create', '--user', 'bob@acme.test', '--db', dbUrl]);
      expect(ambiguous.code).toBe(1);
      expect(ambiguous.stdout).toBe('');
      expect(ambiguous.stderr).toContain('--account');

      const run = await runSvc(['keys', 'create', '--user', 'bob@acme.test', '--account', second.accounts[0]!.tenantName, '--db', dbUrl]);
      expect(run.code, run.stderr).toBe(0);
      await withDatabase(dbUrl, async (db) => {
        const row = await db.kysely.selectFrom('api_keys').select('user_id').where('digest', '=', digestSecret(run.stdout.trim())).executeTakeFirstOrThrow();
        expect(row.user_id).toBe(refs!.bob);
        expect((await countRows(db)).api_keys).toBe(2 * EXAMPLE_ROWS.api_keys + 1);
      });
    });
  });

  describe('svc serve --demo', () => {
    it('loads the demo into an empty database and prints a curl line whose URL answers 200 with items for the demo key', async ({ expect, onTestFinished }) => {
      const { dbUrl } = tempDir(onTestFinished);
      const child = startSvc(['serve', '--demo', '--port', '0', '--db', dbUrl]);
      onTestFinished(async () => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        }
      });
      let stdout = '';
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const curl = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no curl line within 45 s; stdout: ${stdout}; stderr: ${stderr}`)), 45_000);
        child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          const line = stdout.split('\n').find((l) => l.includes('curl'));
          if (line !== undefined) {
            clearTimeout(timer);
            resolve(line);
          }
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`svc serve exited with ${code}; stderr: ${stderr}`));
        });
      });

      expect(curl).toContain(`Authorization: Bearer ${DEMO_KEY}`);
      const url = /'(http:\/\/[^']+\/api\/v1\/deployments\/\d+\/workspace)'/.exec(curl)?.[1];
      expect(url, curl).toBeDefined();
      const res = await fetch(url!, { headers: { authorization: `Bearer ${DEMO_KEY}` } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { items: Array<{ name: string }> };
      expect(body.items.length).toBeGreaterThan(0);
      expect(body.items.map((i) => i.name)).toEqual(expect.arrayContaining(['Sales', 'Finance', 'Company overview']));
      expect((await fetch(url!)).status).toBe(401);
    // Startup writes the demo warehouse and loads the demo (about 6 s alone); under a full parallel test run, 30 s
    // was once not enough.
    }, 60_000);
  });

  describe('svc serve on a port in use', () => {
    it('exits 1 with one sentence naming the port and the --port hint, and no log line', async ({ expect, onTestFinished }) => {
      const { dbUrl } = tempDir(onTestFinished);
      const holder = createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      onTestFinished(() => new Promise<void>((resolve) => holder.close(() => resolve())));
      const { port } = holder.address() as AddressInfo;
      const run = await runSvc(['serve', '--port', String(port), '--db', dbUrl]);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`svc serve: port ${port} on 127.0.0.1 is already in use: stop the process that holds it, or choose another port with --port (0 picks a free one)\n`);
      expect(run.stdout).toBe('');
    });
  });

  describe('svc help', () => {
    // Each command answers its own --help on stdout with exit 0: its synopsis, then every option it parses.
    const HELP: Array<{ args: string[]; synopsis: string; mentions: string[] }> = [
      { args: ['serve', '--help'], synopsis: 'usage: svc serve [--port PORT] [--host HOST] [--db URL] [--demo]', mentions: ['--demo', 'SVC_LOG_LEVEL', 'SVC_PORT'] },
      { args: ['import', '--help'], synopsis: 'usage: svc import FILE.json [--db URL]', mentions: ['FILE.json', 'nothing is written'] },
      { args: ['import', 'accounts.json', '-h'], synopsis: 'usage: svc import FILE.json [--db URL]', mentions: ['--db URL'] },
      { args: ['promote', '--help'], synopsis: 'usage: svc promote FILE.json --url URL [--account TENANT] [--dry-run] [--force]', mentions: ['SVC_API_KEY', 'ps'] },
      { args: ['migrate', '--help'], synopsis: 'usage: svc migrate [--db URL]', mentions: ['--db URL'] },
      { args: ['keys', 'create', '--help'], synopsis: 'usage: svc keys create --user EMAIL [--account TENANT] [--db URL]', mentions: ['--account TENANT'] },
      { args: ['keys', '--help'], synopsis: 'usage: svc keys create --user EMAIL [--account TENANT] [--db URL]', mentions: ['svc keys create --help'] },
      { args: ['help', 'serve'], synopsis: 'usage: svc serve [--port PORT] [--host HOST] [--db URL] [--demo]', mentions: ['--host HOST'] },
      { args: ['--help'], synopsis: 'usage: svc <command> [options]', mentions: ['serve [--port PORT]', 'import FILE.json', 'migrate [--db URL]', 'keys create --user EMAIL'] },
    ];
    for (const { args, synopsis, mentions } of HELP) {
      it(`svc ${args.join(' ')} prints "${synopsis}" and exits 0`, async ({ expect }) => {
        const run = await runSvc(args);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout.split('\n')[0]).toBe(synopsis);
        for (const text of mentions) expect(run.stdout).toContain(text);
        expect(run.stderr).toBe('');
      });
    }
  });

  describe('svc with a wrong command line', () => {
    // Every mistake is one line on stderr, a sentence naming what is wrong, with exit code 1 and nothing on stdout.
    const MISTAKES: Array<{ args: string[]; says: string }> = [
      { args: ['frobnicate'], says: 'svc: unknown command "frobnicate"; the commands are serve, import, export, promote, migrate, keys create, preagg build, preagg status (svc --help describes them)' },
      { args: ['import'], says: 'svc import: FILE.json is missing; svc import --help shows the usage' },
      { args: ['import', 'a.json', 'b.json'], says: 'svc import: takes FILE.json only, got also "b.json"; svc import --help shows the usage' },
      { args: ['import', '/missing.json'], says: 'svc import: the file /missing.json does not exist' },
      { args: ['serve', '--port', '-1'], says: 'svc serve: --port must be an integer from 0 to 65535, got "-1"; svc serve --help shows the usage' },
      { args: ['serve', '--port', '65536'], says: 'svc serve: --port must be an integer from 0 to 65535, got "65536"; svc serve --help shows the usage' },
      { args: ['serve', '--port'], says: 'svc serve: --port needs a value (--port PORT); svc serve --help shows the usage' },
      { args: ['serve', '--port', '--demo'], says: 'svc serve: --port needs a value (--port PORT); svc serve --help shows the usage' },
      { args: ['serve', '--bogus'], says: 'svc serve: unknown option --bogus; svc serve --help shows the usage' },
      { args: ['serve', '--demo=yes'], says: 'svc serve: --demo takes no value; svc serve --help shows the usage' },
      { args: ['migrate', 'now'], says: 'svc migrate: takes no arguments, got "now"; svc migrate --help shows the usage' },
      { args: ['migrate', '--db', 'mysql://localhost/svc'], says: 'svc migrate: unsupported database URL (expected sqlite:PATH or postgres://...): mysql://localhost/svc' },
      { args: ['migrate', '--db', 'postgres://svc@127.0.0.1:1/svc'], says: 'svc migrate: cannot reach the database postgres://svc@127.0.0.1:1/svc (connect ECONNREFUSED 127.0.0.1:1)' },
      { args: ['promote', 'staging.json'], says: 'svc promote: --url URL is required; svc promote --help shows the usage' },
      { args: ['promote', '--url', 'https://svc.example'], says: 'svc promote: FILE.json is missing; svc promote --help shows the usage' },
      { args: ['promote', 'staging.json', '--url', 'svc.example'], says: 'svc promote: --url must be an http:// or https:// URL, got "svc.example"; svc promote --help shows the usage' },
      { args: ['promote', 'staging.json', '--url', 'https://svc.example', '--key', 'svc_x'], says: 'svc promote: unknown option --key; svc promote --help shows the usage' },
      { args: ['keys'], says: 'svc keys: the subcommand is missing (the one subcommand is create); svc keys --help shows the usage' },
      { args: ['keys', 'revoke'], says: 'svc keys: unknown subcommand "revoke" (the one subcommand is create); svc keys --help shows the usage' },
      { args: ['keys', 'create'], says: 'svc keys create: --user EMAIL is required; svc keys create --help shows the usage' },
    ];
    for (const { args, says } of MISTAKES) {
      it(`svc ${args.join(' ')} exits 1 saying: ${says}`, async ({ expect }) => {
        const run = await runSvc(args);
        expect(run.code).toBe(1);
        expect(run.stderr).toBe(`${says}\n`);
        expect(run.stdout).toBe('');
      });
    }
  });
});
