import { readFileSync } from 'node:fs';
import { formatHelp, parseCommand, synopsis, UsageError } from './cli.args.js';
import type { CommandSpec, OptionSpec } from './cli.args.js';
import { exportAccounts } from './import/import.export.js';
import { importFile, ImportError } from './import/import.js';
import { promote, PromoteError } from './import/import.promote.js';
import { generateApiKey } from './accounts/accounts.keys.js';
import { digestSecret } from './core/core.digest.js';
import { findFirstDeploymentOfTenant, hasAnyAccount, insertApiKeyForEmail } from './accounts/accounts.store.js';
import { buildApp } from './app.js';
import { describeSettingsForHelp, loadConfig, readSetting } from './core/core.config.js';
import type { Config } from './core/core.config.js';
import { Sealer } from './core/core.sealed.js';
import { ensureDemoWarehouseSqlite } from './data/warehouse/warehouse.demo.js';
import { resealDataSources } from './data/warehouse/warehouse.sources.js';
import { describeDatabaseUrl, openDatabase, whyDatabaseIsUnreachable } from './db/db.database.js';
import type { Db } from './db/db.database.js';
import { migrateToLatest } from './db/db.migrations.js';
import { compactNameSearchIndex } from './db/db.search-index.js';
import { buildDue, rollupStatus, ROLLUP_BUILD_TIMEOUT_MS } from './data/preagg/preagg.scheduler.js';
import type { BuilderContext } from './data/preagg/preagg.scheduler.js';
import { RollupStore } from './data/preagg/preagg.store.js';
import { WarehouseRegistry } from './data/warehouse/warehouse.registry.js';

const DB_OPTION: OptionSpec = { type: 'string', value: 'URL', description: `sqlite:PATH or postgres://... (default ${loadConfig({}).databaseUrl}, or SVC_DATABASE_URL)` };

const SERVE: CommandSpec = {
  name: 'serve',
  summary: 'Brings the database schema up to date, then serves the API. Logs are JSON lines (pino) on stdout.',
  positionals: [],
  options: {
    port: { type: 'string', value: 'PORT', description: 'port to listen on, 0 for a free one (default 3000, or SVC_PORT)' },
    host: { type: 'string', value: 'HOST', description: 'address to listen on (default 127.0.0.1, or SVC_HOST)' },
    db: DB_OPTION,
    demo: { type: 'boolean', description: 'load the demo account into an empty database and print a curl line to try it' },
  },
  more: `Flags win over the environment. Environment (docs/operations.md "Configuration"):\n${describeSettingsForHelp()}`,
};

const IMPORT: CommandSpec = {
  name: 'import',
  summary: 'Loads accounts from an import file in one transaction (apps/server/demo/demo.json is an example); prints {"refs":{...}}.\nA bad file is refused whole, naming the JSON path of the first bad entry, and nothing is written.',
  positionals: [{ name: 'FILE.json', description: 'the import file' }],
  options: { db: DB_OPTION },
};

const EXPORT: CommandSpec = {
  name: 'export',
  summary: 'Prints the accounts (or one) as an import file on stdout: what svc import reads (docs/import.md "Export").\nAPI keys and passwords are left out; a PostgreSQL password is shown as ****, which svc import refuses until it is given back.',
  positionals: [],
  options: { account: { type: 'string', value: 'TENANT', description: 'only the account of this tenant name' }, db: DB_OPTION },
};

const PROMOTE: CommandSpec = {
  name: 'promote',
  summary: 'Applies one account of an export file to a running svc through its authoring API (docs/import.md "Promoting from staging to production");\nprints what it did as one JSON object. Changed models and dashboards are replaced and published over the revisions read; unchanged ones are left.',
  positionals: [{ name: 'FILE.json', description: 'a file written by svc export' }],
  options: {
    url: { type: 'string', value: 'URL', required: true, description: 'the svc to promote into, e.g. https://analytics.example.com' },
    account: { type: 'string', value: 'TENANT', description: 'the account of the file to promote (its tenantName), when the file holds several' },
    'dry-run': { type: 'boolean', description: 'print what would be created, changed and left, and change nothing' },
    force: { type: 'boolean', description: 'replace a model even when it breaks a published dashboard of production (?force=true)' },
  },
  more: 'Environment: SVC_API_KEY, an API key of an admin of the production account (an environment variable, not a flag: a command line shows in ps).',
};

const MIGRATE: CommandSpec = {
  name: 'migrate',
  summary: 'Brings the database schema up to date (serve does it too, at start).',
  positionals: [],
  options: { db: DB_OPTION },
};

const KEYS_CREATE: CommandSpec = {
  name: 'keys create',
  summary: 'Creates an API key for a platform user and prints it once; only its digest is stored.',
  positionals: [],
  options: {
    user: { type: 'string', value: 'EMAIL', required: true, description: 'the platform user\'s email' },
    account: { type: 'string', value: 'TENANT', description: 'the account\'s tenant name, when several accounts have a user with this email' },
    db: DB_OPTION,
  },
};

const PREAGG_BUILD: CommandSpec = {
  name: 'preagg build',
  summary: 'Builds the pre-aggregations that are due (every one with --force), one at a time, and prints a line for each; exit 1 if one failed.\nA rollup another process is building is skipped ("locked").',
  positionals: [],
  options: {
    deployment: { type: 'string', value: 'ID', description: 'only this deployment\'s' },
    force: { type: 'boolean', description: 'build even those whose current build stands, every partition of an incremental one too' },
    db: DB_OPTION,
  },
};

const PREAGG_STATUS: CommandSpec = {
  name: 'preagg status',
  summary: 'Prints each pre-aggregation\'s current build (when, rows, files) and whether a build is due.',
  positionals: [],
  options: { deployment: { type: 'string', value: 'ID', description: 'only this deployment\'s' }, db: DB_OPTION },
};

const COMMANDS = [SERVE, IMPORT, EXPORT, PROMOTE, MIGRATE, KEYS_CREATE, PREAGG_BUILD, PREAGG_STATUS];

const USAGE = `usage: svc <command> [options]

commands:
${COMMANDS.map((spec) => `  ${synopsis(spec).slice('svc '.length)}\n      ${spec.summary.split('\n')[0]}`).join('\n')}

svc <command> --help (or svc help <command>) prints a command's options; svc serve --help the environment too.
`;

/** A failure the user can act on: main prints it as one line, `svc <command>: <message>` (or alone), and exits 1. */
class CliError extends Error {
  constructor(message: string, readonly standalone = false) {
    super(message);
    this.name = 'CliError';
  }
}

/** The demo account loaded by `serve --demo` into an empty database. */
export const DEMO_FILE = new URL('../demo/demo.json', import.meta.url);
export const DEMO_API_KEY = 'svc_demo_admin_key_0001';

function databaseUrl(flag: string | boolean | undefined, config: Config): string {
  return typeof flag === 'string' ? flag : config.databaseUrl;
}

/** Opens the database and brings its schema up to date; a database that cannot be reached is one CliError. */
async function openMigrated(url: string): Promise<Db> {
  const db = openDatabase(url);
  const unreachable = await whyDatabaseIsUnreachable(db);
  if (unreachable !== undefined) {
    await db.close().catch(() => undefined);
    throw new CliError(`cannot reach the database ${describeDatabaseUrl(url)} (${unreachable})`);
  }
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  return db;
}

async function withDatabase<T>(url: string, run: (db: Db) => Promise<T>): Promise<T> {
  const db = await openMigrated(url);
  try {
    return await run(db);
  } finally {
    await db.close();
  }
}

/** Parses a command's arguments; undefined when it printed the help instead. */
function parseOrHelp(spec: CommandSpec, args: string[]) {
  const parsed = parseCommand(spec, args);
  if (!parsed.help) return parsed;
  process.stdout.write(formatHelp(spec));
  return undefined;
}

/** The sentence for an error of listen(2), with what to do about it. */
function listenFailure(error: unknown, host: string, port: number): CliError | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return new CliError(`port ${port} on ${host} is already in use: stop the process that holds it, or choose another port with --port (0 picks a free one)`);
  }
  if (code === 'EACCES') return new CliError(`no permission to listen on port ${port}: ports below 1024 need privileges, so choose another with --port`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new CliError(`cannot listen on ${host}: it is not an address of this machine (check --host or SVC_HOST)`);
  }
  return undefined;
}

async function serve(args: string[]): Promise<number> {
  const parsed = parseOrHelp(SERVE, args);
  if (parsed === undefined) return 0;
  const { values } = parsed;
  const config = loadConfig();
  const port = typeof values.port === 'string' ? Number(values.port) : config.port;
  if (typeof values.port === 'string' && (values.port.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new UsageError('serve', `--port must be an integer from 0 to 65535, got "${values.port}"`);
  }
  const host = typeof values.host === 'string' ? values.host : config.host;
  const url = databaseUrl(values.db, config);
  const db = await openMigrated(url);
  const sealer = new Sealer(config.encryptionKeys);
  if (values.demo === true) {
    await loadDemoIfEmpty(db, sealer);
    // The demo dashboards read the bundled warehouse: written now (once), not on the first viewer's request.
    ensureDemoWarehouseSqlite(config.data.demoWarehousePath);
  }

  // The one Config of this process: it delivers webhooks and builds pre-aggregations as SVC_WEBHOOK_DELIVERY and
  // SVC_PREAGG_REFRESH say (both on unless set false).
  const app = await buildApp(config, { db, logger: { level: config.logLevel } });
  // Data sources stored before SVC_ENCRYPTION_KEY was set, or under a key now listed second, are sealed under its
  // first key before this process serves (the webhook secrets are resealed by its dispatcher as it starts).
  try {
    const resealed = await resealDataSources(db.kysely, sealer);
    if (resealed > 0) app.log.info({ resealed }, 'data sources sealed under the first key of SVC_ENCRYPTION_KEY');
  } catch (error) {
    await app.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
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
  let address: string;
  try {
    address = await app.listen({ port, host });
  } catch (error) {
    await app.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw listenFailure(error, host, port) ?? error;
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  const demo = values.demo === true ? await findFirstDeploymentOfTenant(db.kysely, 'demo') : undefined;
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

async function loadDemoIfEmpty(db: Db, sealer: Sealer): Promise<void> {
  if (await hasAnyAccount(db.kysely)) return;
  await importInto(db, JSON.parse(readFileSync(DEMO_FILE, 'utf8')), sealer);
}

/**
 * An import, with data sources sealed by `sealer` (SVC_ENCRYPTION_KEY), then the upkeep every import ends with
 * (docs/decisions.md, "search index upkeep on SQLite").
 */
async function importInto(db: Db, input: unknown, sealer: Sealer): Promise<{ refs: Record<string, number> }> {
  const imported = await importFile(db.kysely, input, new Date(), sealer);
  await compactNameSearchIndex(db.kysely, db.dialect);
  return imported;
}

async function runImport(args: string[]): Promise<number> {
  const parsed = parseOrHelp(IMPORT, args);
  if (parsed === undefined) return 0;
  const path = parsed.positionals[0]!;
  const input = readImportFile(path);
  const config = loadConfig();
  const sealer = new Sealer(config.encryptionKeys);
  try {
    const result = await withDatabase(databaseUrl(parsed.values.db, config), (db) => importInto(db, input, sealer));
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof ImportError) throw new CliError(`${path} is refused at ${error.message}; nothing was written`);
    throw error;
  }
}

async function runExport(args: string[]): Promise<number> {
  const parsed = parseOrHelp(EXPORT, args);
  if (parsed === undefined) return 0;
  const config = loadConfig();
  const tenant = parsed.values.account as string | undefined;
  const file = await withDatabase(databaseUrl(parsed.values.db, config), (db) => exportAccounts(db.kysely, new Sealer(config.encryptionKeys), tenant));
  if (tenant !== undefined && file.accounts.length === 0) throw new CliError(`there is no account with tenant name "${tenant}"`);
  process.stdout.write(`${JSON.stringify(file, null, 2)}\n`);
  return 0;
}

async function runPromote(args: string[]): Promise<number> {
  const parsed = parseOrHelp(PROMOTE, args);
  if (parsed === undefined) return 0;
  const path = parsed.positionals[0]!;
  const url = String(parsed.values.url);
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError('promote', `--url must be an http:// or https:// URL, got "${url}"`);
  const apiKey = readSetting('SVC_API_KEY');
  if (apiKey === undefined || apiKey.trim() === '') {
    throw new CliError('SVC_API_KEY is not set: give it an API key of an admin of the production account (svc keys create there); it is read from the environment, never from the command line');
  }
  const file = readImportFile(path);
  try {
    const result = await promote({
      file, url, apiKey: apiKey.trim(), dryRun: parsed.values['dry-run'] === true, force: parsed.values.force === true,
      ...(typeof parsed.values.account === 'string' ? { tenant: parsed.values.account } : {}),
    });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (!(error instanceof PromoteError)) throw error;
    const lines = [`svc promote: ${error.message}`];
    if (error.answer !== undefined) lines.push(`svc answered: ${JSON.stringify(error.answer)}`);
    if (error.done !== undefined) {
      const applied = error.done.deployments.filter((d) => d.action !== 'none').length + error.done.dashboards.filter((d) => d.action !== 'none').length;
      lines.push(applied === 0 ? 'nothing was changed before the error' : `changed before the error (each change is kept, with its audit entry): ${JSON.stringify({ deployments: error.done.deployments, dashboards: error.done.dashboards })}`);
    } else {
      lines.push('nothing was changed');
    }
    process.stderr.write(`${lines.join('\n')}\n`);
    return 1;
  }
}

/** The import file's JSON; a file that is missing, unreadable or not JSON is one CliError naming it. */
function readImportFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT') throw new CliError(`the file ${path} does not exist`);
    if (code === 'EISDIR') throw new CliError(`${path} is a directory, not an import file`);
    if (code === 'EACCES') throw new CliError(`no permission to read ${path}`);
    throw new CliError(`cannot read ${path} (${messageOf(error)})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${path} is not valid JSON (${messageOf(error)})`);
  }
}

async function runMigrate(args: string[]): Promise<number> {
  const parsed = parseOrHelp(MIGRATE, args);
  if (parsed === undefined) return 0;
  const url = databaseUrl(parsed.values.db, loadConfig());
  await withDatabase(url, async () => undefined);
  process.stdout.write(`database ${describeDatabaseUrl(url)} is up to date\n`);
  return 0;
}

async function runKeys(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    process.stdout.write(`usage: ${synopsis(KEYS_CREATE)}\n\n${KEYS_CREATE.summary}\nsvc keys create --help prints its options.\n`);
    return 0;
  }
  if (sub === undefined) throw new UsageError('keys', 'the subcommand is missing (the one subcommand is create)');
  if (sub !== 'create') throw new UsageError('keys', `unknown subcommand "${sub}" (the one subcommand is create)`);
  const parsed = parseOrHelp(KEYS_CREATE, rest);
  if (parsed === undefined) return 0;
  const { user, account, db: dbFlag } = parsed.values;
  const key = generateApiKey();
  const created = await withDatabase(databaseUrl(dbFlag, loadConfig()), (db) =>
    insertApiKeyForEmail(db.kysely, String(user), typeof account === 'string' ? account : undefined, digestSecret(key), new Date().toISOString(), key.slice(-4)),
  );
  if (created === 'none') throw new CliError(`no platform user has the email ${user}`);
  if (created === 'ambiguous') throw new CliError(`several accounts have a user with the email ${user}: pass --account TENANT to choose one`);
  process.stdout.write(`${key}\n`);
  process.stderr.write('store this key now: it is shown once and kept only as a digest\n');
  return 0;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `--deployment ID` as a positive integer. */
function deploymentFlag(command: string, value: string | boolean | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const id = Number(value);
  if (!Number.isInteger(id) || id < 1) throw new UsageError(command, `--deployment must be a deployment id (a positive integer), got "${value}"`);
  return id;
}

/** What the builders need outside the server: the database, the data sources, the store, the settings. */
async function withBuilder<T>(url: string, config: Config, run: (ctx: BuilderContext) => Promise<T>): Promise<T> {
  return withDatabase(url, async (db) => {
    const warehouses = new WarehouseRegistry({ timeoutMs: config.data.timeoutMs, demoPath: () => ensureDemoWarehouseSqlite(config.data.demoWarehousePath) });
    const store = new RollupStore(config.data.preAggregationDir);
    try {
      return await run({ db, warehouses, store, timeoutMs: ROLLUP_BUILD_TIMEOUT_MS, now: () => new Date(), sealer: new Sealer(config.encryptionKeys) });
    } finally {
      store.close();
      await warehouses.close();
    }
  });
}

async function runPreagg(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h' || sub === undefined) {
    const out = sub === undefined ? process.stderr : process.stdout;
    out.write(`usage: ${synopsis(PREAGG_BUILD)}\n       ${synopsis(PREAGG_STATUS)}\n\n${PREAGG_BUILD.summary}\n${PREAGG_STATUS.summary}\n`);
    return sub === undefined ? 1 : 0;
  }
  if (sub !== 'build' && sub !== 'status') throw new UsageError('preagg', `unknown subcommand "${sub}" (the subcommands are build and status)`);
  const spec = sub === 'build' ? PREAGG_BUILD : PREAGG_STATUS;
  const parsed = parseOrHelp(spec, rest);
  if (parsed === undefined) return 0;
  const deploymentId = deploymentFlag(spec.name, parsed.values.deployment);
  const config = loadConfig();
  const url = databaseUrl(parsed.values.db, config);
  if (sub === 'status') {
    const lines = await withBuilder(url, config, async (ctx) => (await rollupStatus(ctx, deploymentId)).map((s) => {
      const built = s.manifest === undefined ? 'not built' : `built ${s.manifest.builtAt} in ${s.manifest.buildMs} ms: ${s.manifest.rows} rows, ${s.manifest.files.length} file(s)`;
      return `deployment ${s.deploymentId} ${s.rollup} (${s.timezone}): ${built}; ${s.due === undefined ? 'up to date' : `due: ${s.due}`}`;
    }));
    process.stdout.write(lines.length === 0 ? 'no deployment declares pre-aggregations\n' : `${lines.join('\n')}\n`);
    return 0;
  }
  const reports = await withBuilder(url, config, (ctx) => buildDue(ctx, { force: parsed.values.force === true, deploymentId }));
  for (const r of reports) {
    const what = `deployment ${r.deploymentId} ${r.rollup} (${r.timezone})`;
    const line = r.status === 'built' ? `built ${what} (${r.reason}) in ${r.manifest!.buildMs} ms: ${r.manifest!.rows} rows, ${r.manifest!.files.length} file(s)`
      : r.status === 'fresh' ? `up to date: ${what}`
        : r.status === 'locked' ? `skipped ${what}: another process is building it`
          : `failed ${what}: ${r.error}`;
    process.stdout.write(`${line}\n`);
  }
  if (reports.length === 0) process.stdout.write('no deployment declares pre-aggregations\n');
  return reports.some((r) => r.status === 'failed') ? 1 : 0;
}

const HELP_OF: Record<string, CommandSpec> = {
  serve: SERVE, import: IMPORT, export: EXPORT, promote: PROMOTE, migrate: MIGRATE, keys: KEYS_CREATE, 'keys create': KEYS_CREATE, 'preagg build': PREAGG_BUILD, 'preagg status': PREAGG_STATUS,
};

async function runCommand(command: string | undefined, args: string[]): Promise<number> {
  switch (command) {
    case 'serve':
      return serve(args);
    case 'import':
      return runImport(args);
    case 'export':
      return runExport(args);
    case 'promote':
      return runPromote(args);
    case 'migrate':
      return runMigrate(args);
    case 'keys':
      return runKeys(args);
    case 'preagg':
      return runPreagg(args);
    case 'help': {
      const spec = args.length === 0 ? undefined : HELP_OF[args.join(' ')];
      if (args.length > 0 && spec === undefined) throw new CliError(`svc help: there is no command "${args.join(' ')}"; svc --help lists them`, true);
      process.stdout.write(spec === undefined ? USAGE : formatHelp(spec));
      return 0;
    }
    case undefined:
      process.stderr.write(USAGE);
      return 1;
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      throw new CliError(`svc: unknown command "${command}"; the commands are ${COMMANDS.map((spec) => spec.name).join(', ')} (svc --help describes them)`, true);
  }
}

/** Runs one `svc` command; resolves to the process exit code. */
/**
 * Runs one `svc` command; resolves to the process exit code. Every failure the user can act on is printed as one
 * line on stderr, `svc <command>: <sentence>`, with exit code 1.
 *
 * @example
 * process.exitCode = await main(['migrate', '--db', 'sqlite:./data/svc.db']);
 */
export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    return await runCommand(command, args);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`svc ${error.command}: ${error.message}; svc ${error.command} --help shows the usage\n`);
    } else if (error instanceof CliError && error.standalone) {
      process.stderr.write(`${error.message}\n`);
    } else {
      process.stderr.write(`svc ${command}: ${messageOf(error)}\n`);
    }
    return 1;
  }
}
