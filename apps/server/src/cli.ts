import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { importFile, ImportError } from './import/import.js';
import { digestSecret, generateApiKey } from './accounts/accounts.keys.js';
import { findFirstDeploymentOfTenant, hasAnyAccount, insertApiKeyForEmail } from './accounts/accounts.store.js';
import { buildApp } from './app.js';
import { describeSettingsForHelp, loadConfig } from './core/core.config.js';
import { ensureDemoWarehouseSqlite } from './data/data.demo-warehouse.js';
import { describeDatabaseUrl, openDatabase } from './db/db.database.js';
import type { Db } from './db/db.database.js';
import { migrateToLatest } from './db/db.migrations.js';
import { compactNameSearchIndex } from './db/db.search-index.js';

const USAGE = `usage: svc <command> [options]

commands:
  serve [--port 3000] [--host 127.0.0.1] [--db URL] [--demo]   migrate, then serve the API
  import FILE.json [--db URL]                                 load accounts from an import file (one transaction)
  migrate [--db URL]                                          bring the database schema up to date
  keys create --user EMAIL [--account TENANT] [--db URL]      create an API key for a platform user (printed once)

--db takes sqlite:PATH (default ${loadConfig({}).databaseUrl}) or postgres://...; flags win over the environment.

environment (svc serve --help; docs/operations.md "Settings"):
${describeSettingsForHelp()}`;

/** The demo account loaded by `serve --demo` into an empty database. */
export const DEMO_FILE = new URL('../demo/demo.json', import.meta.url);
export const DEMO_API_KEY = 'svc_demo_admin_key_0001';

function databaseUrl(flag: string | undefined): string {
  return flag ?? loadConfig().databaseUrl;
}

async function withDatabase<T>(url: string, run: (db: Db) => Promise<T>): Promise<T> {
  const db = openDatabase(url);
  try {
    await migrateToLatest(db);
    return await run(db);
  } finally {
    await db.close();
  }
}

async function serve(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string' }, host: { type: 'string' }, db: { type: 'string' }, demo: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config = loadConfig();
  const port = values.port === undefined ? config.port : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer from 0 to 65535, got ${values.port}`);
  const host = values.host ?? config.host;
  const url = values.db ?? config.databaseUrl;
  const db = openDatabase(url);
  await migrateToLatest(db);
  if (values.demo) {
    await loadDemoIfEmpty(db);
    // The demo dashboards read the bundled warehouse: written now (once), not on the first viewer's request.
    ensureDemoWarehouseSqlite(config.data.demoWarehousePath);
  }

  const app = await buildApp({ db, logger: { level: config.logLevel } });
  // SIGTERM: stop accepting, let the requests in flight finish (each keep-alive socket is closed once its response is
  // out: http.in-flight.ts), then close the database and exit 0. Requests still running after SVC_SHUTDOWN_TIMEOUT_MS
  // (default 10 s) are cut off, the database is closed all the same, and the exit code says so.
  const drainMs = config.shutdownTimeoutMs;
  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      process.stderr.write(`svc: requests still in flight ${drainMs} ms after ${signal}; cutting them off\n`);
      app.server.closeAllConnections();
      const closed = setTimeout(() => process.exit(1), 2000);
      void db.close().finally(() => {
        clearTimeout(closed);
        process.exit(1);
      });
    }, drainMs);
    timer.unref();
    await app.close();
    clearTimeout(timer);
    await db.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  const address = await app.listen({ port, host });
  const demo = values.demo ? await findFirstDeploymentOfTenant(db.kysely, 'demo') : undefined;
  const lines = [`svc listening on ${address} (database ${describeDatabaseUrl(url)})`, `  API reference: ${address}/docs`];
  if (db.dialect === 'postgres' && config.rateLimitStore.redisUrl === undefined) {
    // PostgreSQL is what several processes share; their rate limits do not add up without a shared store.
    lines.push('  rate limits are counted in each process: with several processes, set SVC_REDIS_URL to share them');
  }
  if (demo !== undefined) {
    lines.push(
      '  try the workspace listing of the demo account:',
      `  curl -s -H 'Authorization: Bearer ${DEMO_API_KEY}' '${address}/api/v1/deployments/${demo}/workspace'`,
    );
  }
  // Printed for the operator, not logged: the demo key is public (it is in the demo file of the repository).
  process.stdout.write(`${lines.join('\n')}\n`);
  return new Promise<number>(() => undefined);
}

async function loadDemoIfEmpty(db: Db): Promise<void> {
  if (await hasAnyAccount(db.kysely)) return;
  await importInto(db, JSON.parse(readFileSync(DEMO_FILE, 'utf8')));
}

/** An import, then the upkeep every import ends with (docs/decisions.md, "search index upkeep on SQLite"). */
async function importInto(db: Db, input: unknown): Promise<{ refs: Record<string, number> }> {
  const imported = await importFile(db.kysely, input);
  await compactNameSearchIndex(db.kysely, db.dialect);
  return imported;
}

async function runImport(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { db: { type: 'string' } }, allowPositionals: true, strict: true });
  const [path] = positionals;
  if (path === undefined || positionals.length !== 1) throw new Error('usage: svc import FILE.json [--db URL]');
  let input: unknown;
  try {
    input = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    process.stderr.write(`$: ${path} is not readable JSON: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  try {
    const result = await withDatabase(databaseUrl(values.db), (db) => importInto(db, input));
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof ImportError) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

async function runMigrate(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { db: { type: 'string' } }, strict: true });
  const url = databaseUrl(values.db);
  await withDatabase(url, async () => undefined);
  process.stdout.write(`database ${describeDatabaseUrl(url)} is up to date\n`);
  return 0;
}

async function runKeys(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'create') throw new Error('usage: svc keys create --user EMAIL [--account TENANT] [--db URL]');
  const { values } = parseArgs({ args: rest, options: { user: { type: 'string' }, account: { type: 'string' }, db: { type: 'string' } }, strict: true });
  if (values.user === undefined) throw new Error('svc keys create: --user EMAIL is required');
  const key = generateApiKey();
  const created = await withDatabase(databaseUrl(values.db), (db) =>
    insertApiKeyForEmail(db.kysely, values.user!, values.account, digestSecret(key), new Date().toISOString()),
  );
  if (created === 'none') {
    process.stderr.write(`no platform user with email ${values.user}\n`);
    return 1;
  }
  if (created === 'ambiguous') {
    process.stderr.write(`several accounts have a user with email ${values.user}: pass --account TENANT\n`);
    return 1;
  }
  process.stdout.write(`${key}\n`);
  process.stderr.write('store this key now: it is shown once and kept only as a digest\n');
  return 0;
}

/** Runs one `svc` command; resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'serve':
      return serve(args);
    case 'import':
      return runImport(args);
    case 'migrate':
      return runMigrate(args);
    case 'keys':
      return runKeys(args);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 1 : 0;
    default:
      process.stderr.write(`unknown command "${command}"\n${USAGE}\n`);
      return 1;
  }
}
