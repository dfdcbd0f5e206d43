import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import type { Sealer } from '../../core/core.sealed.js';
import { TimerLoop } from '../../core/core.timer-loop.js';
import type { Db } from '../../db/db.database.js';
import { withAdvisoryLock } from '../../db/db.locks.js';
import { parseInterval } from '../cache/cache.results.js';
import { buildRollup, deploymentsWithRollups, dueReason, rollupDeployment, rollupTargets } from './preagg.store.js';
import type { Manifest, RollupDeployment, RollupStore, RollupTarget } from './preagg.store.js';
import type { WarehouseRegistry } from '../warehouse/warehouse.registry.js';
import { dialectOf } from '../semantic/semantic.model.js';

/**
 * Who builds pre-aggregations, and when. Every process may: `svc serve` checks every few seconds which rollups are
 * due (never built, definition changed, refresh interval passed, refresh SQL changed value) and builds them one at
 * a time, off the request path; `svc preagg build` does the same once. One build of a rollup at a time across
 * processes: on PostgreSQL a session advisory lock on the shared database (released by the server when the
 * holder's connection dies, so a killed builder never blocks the next), on SQLite a lock file beside the builds
 * (whose holder is checked: a dead process's lock is taken over).
 */
export interface BuilderContext {
  db: Db;
  warehouses: WarehouseRegistry;
  store: RollupStore;
  /** Longest a build's statement may run on the data source. */
  timeoutMs: number;
  now(): Date;
  /** Opens the deployments' data sources sealed at rest (SVC_ENCRYPTION_KEY); default: no key, so none sealed. */
  sealer?: Sealer;
}

export interface BuildReport {
  rollup: string;
  deploymentId: number;
  timezone: string;
  status: 'built' | 'fresh' | 'locked' | 'failed';
  reason?: string;
  manifest?: Manifest;
  error?: string;
}

/** Longest a build's statement may run on the data source (a rollup reads every row; a widget's query has 30 s). */
export const ROLLUP_BUILD_TIMEOUT_MS = 600_000;

/** The value of a rollup's refresh SQL now, or null when it has none. */
async function refreshValueOf(ctx: BuilderContext, target: RollupTarget): Promise<string | null> {
  const refreshSql = target.rollup.refresh?.sql;
  if (refreshSql === undefined) return null;
  const { rows } = await ctx.warehouses.get(target.source).run(refreshSql, [], { maxRows: 1, timeoutMs: ctx.timeoutMs });
  return JSON.stringify(rows[0] ?? null);
}

/** Builds every due rollup (every one with `force`), of one deployment or all; one report per rollup and time zone. */
export async function buildDue(ctx: BuilderContext, options: { force?: boolean; deploymentId?: number } = {}): Promise<BuildReport[]> {
  const reports: BuildReport[] = [];
  for (const deployment of await deploymentsWithRollups(ctx.db.kysely, ctx.sealer)) {
    if (options.deploymentId !== undefined && deployment.deploymentId !== options.deploymentId) continue;
    if (deployment.source === undefined) {
      reports.push(...unopenedTargets(deployment).map((target) => ({ ...target, status: 'failed' as const, error: deployment.sourceError })));
      continue;
    }
    for (const target of rollupTargets(deployment.accountId, deployment.deploymentId, deployment.source, deployment.model)) {
      const report: BuildReport = { rollup: `${target.view.name}.${target.rollup.name}`, deploymentId: target.deploymentId, timezone: target.timezone, status: 'fresh' };
      reports.push(report);
      try {
        const refreshValue = await refreshValueOf(ctx, target);
        const reason = options.force === true ? 'asked to' : dueReason(ctx.store, target, ctx.now(), refreshValue);
        if (reason === undefined) continue;
        report.reason = reason;
        const built = await withBuildLock(ctx, target, async () => {
          // Another process may have built it between the check above and the lock: checked again, holding it.
          if (options.force !== true && dueReason(ctx.store, target, ctx.now(), refreshValue) === undefined) return 'fresh' as const;
          return buildRollup(ctx.store, target, {
            warehouse: ctx.warehouses.get(target.source), dialect: dialectOf(target.source), timeoutMs: ctx.timeoutMs, now: ctx.now,
          }, refreshValue, { full: options.force === true });
        });
        if (built === undefined) report.status = 'locked';
        else if (built === 'fresh') delete report.reason;
        else Object.assign(report, { status: 'built', manifest: built });
      } catch (error) {
        Object.assign(report, { status: 'failed', error: error instanceof Error ? error.message : String(error) });
      }
    }
  }
  return reports;
}

/** A rollup × time zone's current build and whether a build is due, and when the next one is. */
export interface RollupStatus {
  deploymentId: number;
  rollup: string;
  timezone: string;
  manifest?: Manifest;
  /** Why a build is due now; undefined when it is up to date. */
  due?: string;
  /** When it falls due by its `refresh.every` (default 1 hour) while up to date; undefined with a refresh SQL (due when its value changes). */
  nextDueAt?: string;
  /** The bytes of its build's files, when they could be read. */
  sizeBytes?: number;
}

/** Each rollup × time zone's current build and whether a build is due (`svc preagg status`). */
export async function rollupStatus(ctx: BuilderContext, deploymentId?: number): Promise<RollupStatus[]> {
  const statuses = [];
  for (const deployment of await deploymentsWithRollups(ctx.db.kysely, ctx.sealer)) {
    if (deploymentId !== undefined && deployment.deploymentId !== deploymentId) continue;
    statuses.push(...await statusesOf(ctx, deployment));
  }
  return statuses;
}

/** The statuses of one deployment of the account (the admin API's `listPreAggregations`); undefined when the account has no such deployment. */
export async function deploymentRollupStatus(ctx: BuilderContext, accountId: number, deploymentId: number): Promise<RollupStatus[] | undefined> {
  const deployment = await rollupDeployment(ctx.db.kysely, accountId, deploymentId, ctx.sealer);
  return deployment === undefined ? undefined : statusesOf(ctx, deployment);
}

async function statusesOf(ctx: BuilderContext, deployment: RollupDeployment): Promise<RollupStatus[]> {
  if (deployment.source === undefined) {
    return unopenedTargets(deployment).map((target) => ({ ...target, due: `its data source cannot be read (${deployment.sourceError})` }));
  }
  const statuses: RollupStatus[] = [];
  for (const target of rollupTargets(deployment.accountId, deployment.deploymentId, deployment.source, deployment.model)) {
    let due: string | undefined;
    try {
      due = dueReason(ctx.store, target, ctx.now(), await refreshValueOf(ctx, target));
    } catch (error) {
      due = `its refresh SQL failed (${error instanceof Error ? error.message : String(error)})`;
    }
    const manifest = ctx.store.manifest(target, Number.POSITIVE_INFINITY);
    const status: RollupStatus = { deploymentId: target.deploymentId, rollup: `${target.view.name}.${target.rollup.name}`, timezone: target.timezone, manifest, due };
    if (manifest !== undefined) {
      const every = target.rollup.refresh?.sql === undefined ? parseInterval(target.rollup.refresh?.every ?? '1 hour') : undefined;
      if (due === undefined && every !== undefined) status.nextDueAt = new Date(Date.parse(manifest.builtAt) + every).toISOString();
      const sizeBytes = sizeOf(ctx.store.directoryOf(target), manifest);
      if (sizeBytes !== undefined) status.sizeBytes = sizeBytes;
    }
    statuses.push(status);
  }
  return statuses;
}

/** The bytes of a build's files; undefined when one cannot be read (another process replaced the build meanwhile). */
function sizeOf(directory: string, manifest: Manifest): number | undefined {
  try {
    return manifest.files.reduce((total, f) => total + statSync(join(directory, f.file)).size, 0);
  } catch {
    return undefined;
  }
}

/** The rollups × time zones of a deployment whose data source does not open, named as the reports name them. */
function unopenedTargets(deployment: RollupDeployment): Array<{ rollup: string; deploymentId: number; timezone: string }> {
  // The targets' source is never used: they are only named.
  return rollupTargets(deployment.accountId, deployment.deploymentId, { type: 'demo' }, deployment.model)
    .map((target) => ({ rollup: `${target.view.name}.${target.rollup.name}`, deploymentId: deployment.deploymentId, timezone: target.timezone }));
}

/** Runs `build` holding the rollup's build lock; undefined when another process holds it. */
async function withBuildLock<T>(ctx: BuilderContext, target: RollupTarget, build: () => Promise<T>): Promise<T | undefined> {
  const name = `svc-rollup:${target.deploymentId}:${target.view.name}.${target.rollup.name}:${target.timezone}`;
  if (ctx.db.dialect === 'postgres') return withAdvisoryLock(ctx.db, name, build);
  const lock = join(ctx.store.directoryOf(target), 'build.lock');
  if (!takeLockFile(lock)) return undefined;
  try {
    return await build();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Creates the lock file, or takes it over from a process of this host that is gone (or a holder silent for an hour). */
function takeLockFile(path: string): boolean {
  mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${hostname()} ${process.pid}`);
      closeSync(fd);
      return true;
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      if (!lockIsStale(path)) return false;
      rmSync(path, { force: true });
    }
  }
  return false;
}

function lockIsStale(path: string): boolean {
  try {
    const [host, pid] = readFileSync(path, 'utf8').split(' ');
    if (host === hostname()) {
      try {
        process.kill(Number(pid), 0);
        return false;
      } catch (error) {
        return (error as { code?: string }).code === 'ESRCH';
      }
    }
    return Date.now() - statSync(path).mtimeMs > 3_600_000;
  } catch {
    return true;
  }
}

const failureKey = (r: Pick<RollupStatus, 'deploymentId' | 'rollup' | 'timezone'>) => `${r.deploymentId}:${r.rollup}:${r.timezone}`;

export interface RollupSchedulerOptions {
  /** How often the builder checks what is due (ms); default 10 s. */
  intervalMs?: number;
  /** Each check's reports: what was built, fresh, locked or failed. */
  onReport?: (reports: BuildReport[]) => void;
  /** A check that threw (the builder's own fault, not a failed build, which is a report): logged, and the loop goes on. */
  onError?: (error: unknown) => void;
}

/**
 * The background builder of `svc serve`: checks at once on start, then every `intervalMs`, and builds what is due,
 * one build at a time; reads go on from the current builds meanwhile. The ticking is core's `TimerLoop`, the same
 * as the webhook dispatcher's and the comment stream hub's.
 */
export class RollupScheduler {
  readonly #loop: TimerLoop;
  /** This process's last failed build of each rollup × time zone (cleared by its next build). */
  readonly #failures = new Map<string, { error: string; at: string }>();

  constructor(ctx: BuilderContext, options: RollupSchedulerOptions = {}) {
    const onReport = options.onReport ?? (() => undefined);
    this.#loop = new TimerLoop({
      intervalMs: options.intervalMs ?? parseInterval('10 seconds')!,
      run: async () => {
        const reports = await buildDue(ctx);
        for (const report of reports) {
          const key = failureKey(report);
          if (report.status === 'failed') this.#failures.set(key, { error: report.error ?? 'failed', at: ctx.now().toISOString() });
          else if (report.status === 'built') this.#failures.delete(key);
        }
        onReport(reports);
      },
      onError: options.onError ?? (() => undefined),
    });
  }

  /** The last failure of this process's builds of a rollup × time zone since it last built, if any. */
  lastFailure(status: Pick<RollupStatus, 'deploymentId' | 'rollup' | 'timezone'>): { error: string; at: string } | undefined {
    return this.#failures.get(failureKey(status));
  }

  /** Starts the loop with a check at once. */
  start(): void {
    this.#loop.start();
    this.#loop.wake();
  }

  /** Stops checking and waits for a build in progress. */
  async stop(): Promise<void> {
    await this.#loop.stop();
  }
}
