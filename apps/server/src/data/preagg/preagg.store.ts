import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/db.schema.js';
import { findDeploymentData, selectDeploymentsWithPreAggregations } from '../../accounts/accounts.store.js';
import { AppError } from '../../core/core.errors.js';
import { Sealer } from '../../core/core.sealed.js';
import { parseJson } from '../../workspace/workspace.presenter.js';
import { compileSemanticQuery } from '../compiler/compiler.query.js';
import { withoutPolicies } from '../policy/policy.query.js';
import type { WarehouseDialect } from '../semantic/semantic.model.js';
import { DEMO_SEMANTIC_VIEWS } from '../warehouse/warehouse.demo.js';
import { SemanticModel } from '../semantic/semantic.model.js';
import type { DataSourceConfig, SemanticMeasure, SemanticView } from '../semantic/semantic.model.js';
import { definitionHash, rollupColumns, timezonesOf } from './preagg.definitions.js';
import type { RollupColumns } from './preagg.definitions.js';
import type { PreAggregation } from '../semantic/semantic.model.js';
import type { SemanticQuery } from '../semantic/semantic.query.js';
import { openDataSource } from '../warehouse/warehouse.sources.js';
import type { Warehouse } from '../warehouse/warehouse.js';
import { parseInterval } from '../cache/cache.results.js';

/**
 * Built pre-aggregations: Parquet files in a directory every process can read (preagg.definitions.ts says what they
 * hold and which queries they answer). A build writes its files into a directory of its own and then replaces the
 * rollup's `current.json` by a rename, so a reader sees the last complete build and never a part of one; a build
 * killed half-way leaves its files unreferenced and the previous build current. Each process reads the files of
 * the current build into a table of its own in-memory DuckDB, once per build.
 */

/** One rollup of one deployment in one time zone: what is built, and where. */
export interface RollupTarget {
  accountId: number;
  deploymentId: number;
  source: DataSourceConfig;
  model: SemanticModel;
  view: SemanticView;
  rollup: PreAggregation;
  timezone: string;
}

export interface Manifest {
  /** The definition it was built under (preagg.definitions.ts definitionHash): another one is never read. */
  definition: string;
  buildId: string;
  /** ISO 8601: when the build started reading the data source. */
  builtAt: string;
  /** The value of the rollup's refresh SQL when built, if it has one. */
  refreshValue: string | null;
  rows: number;
  /** Files of the build, relative to the rollup's directory, one per partition (or one). */
  files: Array<{ partition: string; file: string; rows: number }>;
  /** Milliseconds the build took. */
  buildMs: number;
}

const slug = (text: string) => text.replace(/[^A-Za-z0-9_-]/g, '_');
const rollupName = (target: Pick<RollupTarget, 'view' | 'rollup'>) => `${target.view.name}.${target.rollup.name}`;

/** Every rollup × time zone of a deployment's views. */
export function rollupTargets(accountId: number, deploymentId: number, source: DataSourceConfig, model: SemanticModel): RollupTarget[] {
  // A rollup without a time dimension is the same in every zone: built once, in its first.
  return [...model.views.values()].flatMap((view) => (view.preAggregations ?? []).flatMap((rollup) => (rollup.timeDimension === undefined ? timezonesOf(rollup).slice(0, 1) : timezonesOf(rollup)).map((timezone) => ({
    accountId, deploymentId, source, model, view, rollup, timezone,
  }))));
}

export class RollupStore {
  readonly dir: string;
  #instance: Promise<DuckDBInstance> | undefined;
  #readerConnection: Promise<DuckDBConnection> | undefined;
  readonly #manifests = new Map<string, { checkedAt: number; mtimeMs: number; manifest: Manifest | undefined }>();
  /** Tables loaded from builds: build id -> table, and per rollup directory the build loaded last. */
  readonly #loaded = new Map<string, Promise<string>>();
  readonly #current = new Map<string, string>();

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  directoryOf(target: Pick<RollupTarget, 'accountId' | 'deploymentId' | 'view' | 'rollup' | 'timezone'>): string {
    return join(this.dir, String(target.accountId), String(target.deploymentId), slug(rollupName(target)), slug(target.timezone));
  }

  async #db(): Promise<DuckDBInstance> {
    this.#instance ??= (async () => {
      mkdirSync(this.dir, { recursive: true });
      // Loaded on first use: DuckDB's native library takes most of a second to load, and most servers never need it.
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
      const setup = await instance.connect();
      // Rollup queries read wall-clock buckets as UTC; the files of this store are the only ones DuckDB may touch.
      await setup.run(`SET TimeZone = 'UTC'`);
      await setup.run(`SET allowed_directories = ['${this.dir.replace(/'/g, "''")}/']`);
      await setup.run('SET enable_external_access = false');
      await setup.run('SET lock_configuration = true');
      setup.closeSync();
      return instance;
    })();
    return this.#instance;
  }

  /** The rollup's current build, read again at most once a second (a build of another process may replace it). */
  manifest(target: RollupTarget, now = Date.now()): Manifest | undefined {
    const directory = this.directoryOf(target);
    const known = this.#manifests.get(directory);
    if (known !== undefined && now - known.checkedAt < 1000) return known.manifest;
    const path = join(directory, 'current.json');
    let mtimeMs = -1;
    try {
      mtimeMs = statSync(path).mtimeMs;
    } catch {
      // Not built.
    }
    let manifest = known?.mtimeMs === mtimeMs ? known.manifest : undefined;
    if (mtimeMs >= 0 && known?.mtimeMs !== mtimeMs) {
      try {
        manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
      } catch {
        manifest = undefined;
      }
    }
    // A forced read (now = Infinity) leaves the next ordinary read its usual once-a-second check.
    this.#manifests.set(directory, { checkedAt: Number.isFinite(now) ? now : Date.now(), mtimeMs, manifest });
    return manifest;
  }

  /** The current build if it was made under the rollup's present definition. */
  currentBuild(target: RollupTarget, now?: number): Manifest | undefined {
    const manifest = this.manifest(target, now);
    return manifest?.definition === definitionHash(target.source, target.model, target.view, target.rollup, target.timezone) ? manifest : undefined;
  }

  /** The in-memory table holding a build's rows (read from its files on first use). */
  async table(target: RollupTarget, manifest: Manifest): Promise<string> {
    let loading = this.#loaded.get(manifest.buildId);
    if (loading === undefined) {
      const directory = this.directoryOf(target);
      const table = `b_${manifest.buildId}`;
      loading = (async () => {
        const db = await this.#reader();
        const files = manifest.files.map((f) => `'${join(directory, f.file).replace(/'/g, "''")}'`);
        await db.run(`CREATE OR REPLACE TABLE "${table}" AS SELECT * FROM read_parquet([${files.join(', ')}])`);
        const previous = this.#current.get(directory);
        this.#current.set(directory, manifest.buildId);
        if (previous !== undefined && previous !== manifest.buildId) {
          this.#loaded.delete(previous);
          await db.run(`DROP TABLE IF EXISTS "b_${previous}"`);
        }
        return table;
      })();
      this.#loaded.set(manifest.buildId, loading);
      loading.catch(() => this.#loaded.delete(manifest.buildId));
    }
    return loading;
  }

  async #reader(): Promise<DuckDBConnection> {
    this.#readerConnection ??= (async () => (await this.#db()).connect())();
    return this.#readerConnection;
  }

  /** Runs a compiled rollup query; rows as plain values, at most `maxRows + 1`. */
  async run(statement: string, parameters: readonly unknown[], maxRows: number): Promise<unknown[][]> {
    const db = await this.#reader();
    const result = await db.runAndReadAll(statement, parameters as never);
    const rows = result.getRowsJS() as unknown[][];
    return rows.slice(0, maxRows + 1).map((row) => row.map((value) => (typeof value === 'bigint' ? Number(value) : value)));
  }

  /**
   * Writes a build: the rows of the build query, as one Parquet file per partition (or one file), into a fresh
   * directory, then makes it current by renaming a new `current.json` over the old one. Builds older than the
   * previous one are removed (a reader of another process may still hold the previous one).
   */
  async write(target: RollupTarget, build: {
    rows: unknown[][]; columns: string[]; types: string[]; builtAt: Date; refreshValue: string | null; buildMs: number;
    /** An incremental build: the previous build's partitions it keeps as they are (copied into the new build). */
    carried?: { from: Manifest; partitions: readonly string[] };
  }): Promise<Manifest> {
    const directory = this.directoryOf(target);
    const buildId = `${build.builtAt.getTime().toString(36)}${randomBytes(5).toString('hex')}`;
    const buildDir = join(directory, buildId);
    mkdirSync(buildDir, { recursive: true });
    const instance = await this.#db();
    const db = await instance.connect();
    const staging = `s_${buildId}`;
    try {
      await db.run(`CREATE TABLE "${staging}" (${build.columns.map((c, i) => `"${c}" ${build.types[i]}`).join(', ')})`);
      const appender = await db.createAppender(staging);
      for (const row of build.rows) {
        for (const [i, value] of row.entries()) {
          if (value === null || value === undefined) appender.appendNull();
          else if (build.types[i] === 'DOUBLE') appender.appendDouble(Number(value));
          else if (build.types[i] === 'BOOLEAN') appender.appendBoolean(value === true || value === 1);
          else appender.appendVarchar(String(value));
        }
        appender.endRow();
      }
      appender.closeSync();
      const partitioned = target.rollup.partitionGranularity !== undefined && build.columns.includes('t');
      const keyOf = partitionKey(target.rollup.partitionGranularity);
      const partitions = partitioned ? [...new Set(build.rows.map((row) => keyOf(row[build.columns.indexOf('t')])))].sort() : ['all'];
      const files: Manifest['files'] = [];
      for (const kept of build.carried?.from.files.filter((f) => build.carried!.partitions.includes(f.partition)) ?? []) {
        const file = `${buildId}/${slug(kept.partition)}.parquet`;
        copyFileSync(join(directory, kept.file), join(directory, file));
        files.push({ ...kept, file });
      }
      const select = build.columns.map((c) => (c === 't' ? `CAST("t" AS TIMESTAMP) AS "t"` : `"${c}"`)).join(', ');
      for (const partition of partitions) {
        const file = `${buildId}/${slug(partition)}.parquet`;
        const where = partitioned ? ` WHERE ${partition === 'none' ? '"t" IS NULL' : `substr("t", 1, ${partition.length}) = '${partition}'`}` : '';
        const rows = partitioned ? build.rows.filter((row) => keyOf(row[build.columns.indexOf('t')]) === partition).length : build.rows.length;
        await db.run(`COPY (SELECT ${select} FROM "${staging}"${where}) TO '${join(directory, file).replace(/'/g, "''")}' (FORMAT parquet)`);
        files.push({ partition, file, rows });
      }
      const manifest: Manifest = {
        definition: definitionHash(target.source, target.model, target.view, target.rollup, target.timezone),
        buildId, builtAt: build.builtAt.toISOString(), refreshValue: build.refreshValue, rows: files.reduce((sum, f) => sum + f.rows, 0), files, buildMs: build.buildMs,
      };
      const previous = readBuildId(join(directory, 'current.json'));
      const temporary = join(directory, `current.json.${process.pid}.${buildId}`);
      writeFileSync(temporary, JSON.stringify(manifest));
      renameSync(temporary, join(directory, 'current.json'));
      this.#manifests.delete(directory);
      removeOldBuilds(directory, [buildId, previous, this.#current.get(directory)]);
      return manifest;
    } finally {
      await db.run(`DROP TABLE IF EXISTS "${staging}"`).catch(() => undefined);
      db.closeSync();
    }
  }

  close(): void {
    void this.#readerConnection?.then((db) => db.closeSync(), () => undefined);
    void this.#instance?.then((db) => db.closeSync(), () => undefined);
    this.#instance = undefined;
    this.#readerConnection = undefined;
    this.#loaded.clear();
  }
}

/** A time bucket's partition: `2024-03` (month), `2024-Q1`-like prefixes as text, `2024` (year); `none` for NULL. */
export function partitionKey(granularity: PreAggregation['partitionGranularity']): (bucket: unknown) => string {
  return (bucket) => {
    if (typeof bucket !== 'string') return 'none';
    if (granularity === 'year') return bucket.slice(0, 4);
    if (granularity === 'quarter') return `${bucket.slice(0, 4)}-${String(Math.floor((Number(bucket.slice(5, 7)) - 1) / 3) * 3 + 1).padStart(2, '0')}`;
    return bucket.slice(0, 7);
  };
}

/** The build id a manifest file names, if it is there and readable. */
function readBuildId(path: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as Manifest).buildId;
  } catch {
    return undefined;
  }
}

/**
 * Removes every build directory but the ones kept: the new build, the one it replaced (a reader of another process
 * may still be loading it) and the one this process has loaded. A killed build's directory, never made current, is
 * removed by the next build, as is any older one.
 */
function removeOldBuilds(directory: string, keep: ReadonlyArray<string | undefined>): void {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    if (entry.isDirectory() && !keep.includes(entry.name)) rmSync(join(directory, entry.name), { recursive: true, force: true });
  }
}

/**
 * The query a build runs on the data source: the rollup's dimensions, its time bucket in the target's zone, and
 * its measures, an average as its sum and its count (the only parts that re-aggregate). No access policy: the
 * rollup holds every row, and each viewer's policy filters it when read.
 */
export function buildQuery(target: RollupTarget): { model: SemanticModel; query: SemanticQuery; columns: RollupColumns; names: string[]; kinds: Array<'dimension' | 'time' | 'measure'> } {
  const { view, rollup } = target;
  const columns = rollupColumns(view, rollup);
  const extra: SemanticMeasure[] = [];
  const measures: string[] = [];
  const names: string[] = [];
  for (const measure of columns.measures) {
    const declared = view.measures.find((m) => `${view.name}.${m.name}` === measure.member)!;
    if (declared.type === 'avg') {
      const parts = [{ ...declared, name: `__svc_${measure.column}_sum`, type: 'sum' as const }, { ...declared, name: `__svc_${measure.column}_count`, type: 'count' as const }];
      extra.push(...parts);
      measures.push(...parts.map((p) => `${view.name}.${p.name}`));
      names.push(`${measure.column}__sum`, `${measure.column}__count`);
    } else {
      measures.push(measure.member);
      names.push(measure.column);
    }
  }
  const views = [...target.model.views.values()].map((v) => (v === view ? { ...v, measures: [...v.measures, ...extra] } : v));
  const query: SemanticQuery = {
    measures,
    dimensions: columns.dimensions.map((d) => d.member),
    ...(columns.time !== undefined ? { timeDimensions: [{ dimension: columns.time.member, granularity: rollup.granularity! }] } : {}),
  };
  const kinds = [...columns.dimensions.map(() => 'dimension' as const), ...(columns.time !== undefined ? ['time' as const] : [])];
  return {
    model: new SemanticModel(views), query, columns,
    names: [...columns.dimensions.map((d) => d.column), ...(columns.time !== undefined ? ['t'] : []), ...names],
    kinds: [...kinds, ...names.map(() => 'measure' as const)],
  };
}

/** Most rows a build may read from the data source. */
export const BUILD_ROW_CAP = 20_000_000;

export interface BuildSettings {
  warehouse: Warehouse;
  dialect: WarehouseDialect;
  timeoutMs: number;
  now(): Date;
}

/**
 * Runs a rollup's build query on its data source and writes the build. An incremental rollup with a current build
 * reads only the partitions of its update window (from the start of the partition holding `now - updateWindow`,
 * and the rows without a time) and keeps the older partitions of the current build as they are, as Cube does.
 * `full` rebuilds every partition (`svc preagg build --force`).
 */
export async function buildRollup(store: RollupStore, target: RollupTarget, settings: BuildSettings, refreshValue: string | null, options: { full?: boolean } = {}): Promise<Manifest> {
  const started = Date.now();
  const builtAt = settings.now();
  const plan = buildQuery(target);
  const { rollup } = target;
  const previous = rollup.refresh?.incremental === true && options.full !== true ? store.currentBuild(target, Number.POSITIVE_INFINITY) : undefined;
  let carried: { from: Manifest; partitions: string[] } | undefined;
  if (previous !== undefined && rollup.partitionGranularity !== undefined && rollup.timeDimension !== undefined) {
    const window = parseInterval(rollup.refresh?.updateWindow ?? '1 second') ?? 1000;
    const from = windowStart(builtAt.getTime() - window, rollup.partitionGranularity, target.timezone);
    plan.query.filters = [{ or: [{ member: rollup.timeDimension, operator: 'afterOrOnDate', values: [from] }, { member: rollup.timeDimension, operator: 'notSet' }] }];
    carried = { from: previous, partitions: previous.files.map((f) => f.partition).filter((p) => p !== 'none' && p < from.slice(0, p.length)) };
  }
  const compiled = compileSemanticQuery(withoutPolicies(plan.model, plan.query), { dialect: settings.dialect, timezone: target.timezone, now: builtAt, rowCap: BUILD_ROW_CAP });
  const { rows } = await settings.warehouse.run(compiled.sql, compiled.parameters, { maxRows: BUILD_ROW_CAP, timeoutMs: settings.timeoutMs });
  if (rows.length > BUILD_ROW_CAP) throw new AppError('invalid_query', `pre-aggregation ${rollupName(target)} would hold more than ${BUILD_ROW_CAP} rows: give it fewer dimensions or a coarser granularity`);
  const types = plan.names.map((name, i) => {
    if (name === 't') return 'VARCHAR';
    if (plan.kinds[i] !== 'dimension') return 'DOUBLE';
    const values = rows.map((row) => row[i]).filter((v) => v !== null && v !== undefined);
    if (values.length > 0 && values.every((v) => typeof v === 'number')) return 'DOUBLE';
    if (values.length > 0 && values.every((v) => typeof v === 'boolean')) return 'BOOLEAN';
    return 'VARCHAR';
  });
  return store.write(target, { rows, columns: plan.names, types, builtAt, refreshValue, buildMs: Date.now() - started, ...(carried !== undefined ? { carried } : {}) });
}

/** The first day (`YYYY-MM-DD`, wall-clock in the zone) of the partition holding an instant. */
function windowStart(epochMs: number, granularity: NonNullable<PreAggregation['partitionGranularity']>, timezone: string): string {
  const wall = new Date(epochMs).toLocaleString('sv-SE', { timeZone: timezone }).slice(0, 10);
  const key = partitionKey(granularity)(`${wall}T00:00:00.000`);
  return granularity === 'year' ? `${key}-01-01` : `${key}-01`;
}

/** Why a build is due, or undefined when the current one stands. */
export function dueReason(store: RollupStore, target: RollupTarget, now: Date, refreshValue: string | null): string | undefined {
  const current = store.manifest(target, Number.POSITIVE_INFINITY);
  if (current === undefined) return 'never built';
  if (current.definition !== definitionHash(target.source, target.model, target.view, target.rollup, target.timezone)) return 'its definition changed';
  const refresh = target.rollup.refresh;
  if (refresh?.sql !== undefined) return refreshValue !== current.refreshValue ? 'its refresh SQL changed value' : undefined;
  const every = parseInterval(refresh?.every ?? '1 hour') ?? 3_600_000;
  return now.getTime() - Date.parse(current.builtAt) >= every ? `built more than ${refresh?.every ?? '1 hour'} ago` : undefined;
}

/** A deployment that declares pre-aggregations: its data source opened, or why it cannot be (never another source). */
export type RollupDeployment = { accountId: number; deploymentId: number; model: SemanticModel } & (
  | { source: DataSourceConfig; sourceError?: undefined }
  | { source?: undefined; sourceError: string }
);

/**
 * Deployments that declare pre-aggregations, with their data source (opened with `sealer`: SVC_ENCRYPTION_KEY) and
 * model (every account: the builder's work list). One whose source does not open is listed with the reason, so
 * that its builds fail visibly while the others go on.
 */
export async function deploymentsWithRollups(db: Kysely<Database>, sealer: Sealer = new Sealer([])): Promise<RollupDeployment[]> {
  return (await selectDeploymentsWithPreAggregations(db)).map((row) => rollupDeploymentOf(row.account_id, row.id, row, sealer));
}

/** One deployment of the account as the builder sees it (its rollups may be none), or undefined when the account has no such deployment. */
export async function rollupDeployment(db: Kysely<Database>, accountId: number, deploymentId: number, sealer: Sealer = new Sealer([])): Promise<RollupDeployment | undefined> {
  const row = await findDeploymentData(db, accountId, deploymentId);
  if (row === undefined) return undefined;
  // As the builder's work list (selectDeploymentsWithPreAggregations): a model that declares none has none to build.
  if (row.semantic_views === null || !row.semantic_views.includes('"preAggregations"')) return { accountId, deploymentId, model: new SemanticModel([]), sourceError: 'none' } satisfies RollupDeployment;
  return rollupDeploymentOf(accountId, deploymentId, row, sealer);
}

function rollupDeploymentOf(accountId: number, deploymentId: number, row: { data_source: string | null; semantic_views: string | null }, sealer: Sealer): RollupDeployment {
  const deployment = { accountId, deploymentId, model: new SemanticModel(parseJson<SemanticView[]>(row.semantic_views) ?? DEMO_SEMANTIC_VIEWS) };
  try {
    return { ...deployment, source: openDataSource(row.data_source, sealer) };
  } catch (error) {
    return { ...deployment, sourceError: error instanceof Error ? error.message : String(error) };
  }
}
