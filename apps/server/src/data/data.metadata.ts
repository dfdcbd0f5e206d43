import { AccountCache } from '../db/db.account-cache.js';
import { findDeploymentData, findEmbedAccountSettings } from '../accounts/accounts.store.js';
import { parseJson, presentReportSnapshot } from '../workspace/workspace.presenter.js';
import type { DashboardConfig, ReportSnapshot } from '../workspace/workspace.dashboard-schema.js';
import { findDashboardByPublicId, selectReportSnapshots } from '../dashboards/dashboards.store.js';
import type { DashboardRow } from '../dashboards/dashboards.store.js';
import type { ServiceContext } from '../db/db.context.js';
import type { ChangeFeed } from '../db/db.database.js';

/** A deployment's stored data source and semantic views, as text. */
export interface DeploymentData {
  data_source: string | null;
  semantic_views: string | null;
}

/** A dashboard row held in memory, with its config parsed once. Shared by every request: never changed. */
export type HeldDashboard = DashboardRow & { readonly parsedConfig: DashboardConfig };

/**
 * What every widget request reads besides its answer: the dashboard, its report snapshots, the deployment's data
 * source and model, and the account's time zone. Each is kept in memory while the database's change feed vouches
 * that nothing of the account changed since it was read, exactly as credentials are (docs/decisions.md, "Widget
 * metadata in memory"): on SQLite any commit of any process drops everything; on PostgreSQL a write of this process
 * does, and another process's write to accounts, deployments, dashboards or report_snapshots notifies the account
 * (migration 0009). What is not found is not kept. `maxEntries` 0 reads the database every time.
 */
export class MetadataReads {
  readonly #held: AccountCache<{ accountId: number; value: unknown }>;

  constructor(feed: ChangeFeed, maxEntries: number) {
    this.#held = new AccountCache(feed, maxEntries);
  }

  /** The dashboard with this public id in the account, with its config parsed. */
  dashboard(ctx: ServiceContext, accountId: number, publicId: string): Promise<HeldDashboard | undefined> {
    return this.#read(`d:${accountId}:${publicId}`, accountId, async () => {
      const row = await findDashboardByPublicId(ctx.db, accountId, publicId);
      return row === undefined ? undefined : { ...row, parsedConfig: parseJson<DashboardConfig>(row.config) ?? {} };
    });
  }

  /** The dashboard's report snapshots as the API presents them, in their order. */
  snapshots(ctx: ServiceContext, accountId: number, dashboardId: number): Promise<ReportSnapshot[]> {
    return this.#read(`s:${accountId}:${dashboardId}`, accountId, async () => (await selectReportSnapshots(ctx.db, accountId, [dashboardId])).map(presentReportSnapshot)) as Promise<ReportSnapshot[]>;
  }

  deployment(ctx: ServiceContext, accountId: number, deploymentId: number): Promise<DeploymentData | undefined> {
    return this.#read(`m:${accountId}:${deploymentId}`, accountId, () => findDeploymentData(ctx.db, accountId, deploymentId));
  }

  /** The account's default time zone as stored (null: none). */
  timezone(ctx: ServiceContext, accountId: number): Promise<string | null> {
    return this.#read(`t:${accountId}`, accountId, async () => (await findEmbedAccountSettings(ctx.db, accountId)).timezone) as Promise<string | null>;
  }

  async #read<T>(key: string, accountId: number, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const loaded = await this.#held.resolve(key, async () => {
      const value = await load();
      return value === undefined ? undefined : { accountId, value };
    });
    return loaded?.value as T | undefined;
  }
}
