import type { Kysely } from 'kysely';
import { replaceDeploymentDataSource, selectDeploymentDataSources } from '../../accounts/accounts.store.js';
import { AppError } from '../../core/core.errors.js';
import { UnsealError } from '../../core/core.sealed.js';
import type { Sealer } from '../../core/core.sealed.js';
import { parseJson } from '../../workspace/workspace.presenter.js';
import type { Database } from '../../db/db.schema.js';
import type { DataSourceConfig } from '../semantic/semantic.model.js';

/** Deployments read per page when resealing their data sources. */
const RESEAL_PAGE = 500;

/**
 * A deployment's data source as it is stored: its JSON, sealed under SVC_ENCRYPTION_KEY's first key when one is set
 * (docs/operations.md "Secrets at rest"), since a PostgreSQL source's URL may carry its password; as it is without.
 *
 * @example
 * sealDataSource({ type: 'postgres', url: 'postgres://svc:pw@db/warehouse' }, sealer); // 'svc-sealed:v1:...'
 */
export function sealDataSource(source: DataSourceConfig, sealer: Sealer): string {
  return sealer.seal(JSON.stringify(source));
}

/**
 * A deployment's data source from what is stored (the bundled demo warehouse when none is), opened in memory for
 * the warehouse to connect with. One that no key of SVC_ENCRYPTION_KEY opens is a 503 saying which key is missing:
 * the data cannot be read until the operator gives it back, and nothing falls back to another source.
 *
 * @example
 * const source = openDataSource(row.data_source, sealer); // { type: 'postgres', url: 'postgres://...' }
 */
export function openDataSource(stored: string | null, sealer: Sealer): DataSourceConfig {
  if (stored === null) return { type: 'demo' };
  let text: string;
  try {
    text = sealer.open(stored);
  } catch (error) {
    if (error instanceof UnsealError) throw new AppError('service_unavailable', `the deployment's data source cannot be read: it is ${error.message}`);
    throw error;
  }
  return parseJson<DataSourceConfig>(text) ?? { type: 'demo' };
}

/**
 * Seals the data sources not sealed with SVC_ENCRYPTION_KEY's first key (stored before a key was set, or under a key
 * listed after it), as `svc serve` starts; how many. Each is rewritten only if it is still the value read, so that
 * processes starting together, or an import meanwhile, never lose a write. Sources that do not open stay as they
 * are (their data requests say why). Nothing to do without a key. `accountIds`: only those accounts' (tests).
 */
export async function resealDataSources(db: Kysely<Database>, sealer: Sealer, accountIds?: readonly number[]): Promise<number> {
  if (!sealer.isSealing) return 0;
  let resealed = 0;
  for (let afterId = 0; ;) {
    const page = await selectDeploymentDataSources(db, afterId, RESEAL_PAGE, accountIds);
    for (const deployment of page) {
      if (!sealer.needsResealing(deployment.data_source)) continue;
      let text: string;
      try {
        text = sealer.open(deployment.data_source);
      } catch {
        continue;
      }
      if (await replaceDeploymentDataSource(db, deployment.account_id, deployment.id, deployment.data_source, sealer.seal(text))) resealed++;
    }
    if (page.length < RESEAL_PAGE) return resealed;
    afterId = page[page.length - 1]!.id;
  }
}
