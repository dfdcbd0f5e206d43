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

/** What stands for a secret in a data source an API answers with (a PostgreSQL URL's password). */
export const REDACTED = '****';

/**
 * A data source as the authoring API shows it: a PostgreSQL URL's password is `****`; nothing else of a source is
 * secret (a file's path is the operator's, and the account's admins chose it).
 *
 * @example
 * redactDataSource({ type: 'postgres', url: 'postgres://svc:pw@db/wh' }); // { type: 'postgres', url: 'postgres://svc:****@db/wh' }
 */
export function redactDataSource(source: DataSourceConfig): DataSourceConfig {
  if (source.type !== 'postgres') return source;
  const url = parsedUrl(source.url);
  if (url === undefined || url.password === '') return source;
  url.password = REDACTED;
  return { ...source, url: url.toString() };
}

/**
 * A data source an author sends back as they read it, its redacted password given again from the current source:
 * the same URL but for the `****` password takes the current one. A `****` password anywhere else (another host,
 * user or database) is a 400: svc never stores the redaction itself as a password.
 */
export function withRedactedSecrets(next: DataSourceConfig, current: DataSourceConfig, field: string): DataSourceConfig {
  if (next.type !== 'postgres') return next;
  const url = parsedUrl(next.url);
  if (url === undefined || decodeURIComponent(url.password) !== REDACTED) return next;
  const before = current.type === 'postgres' ? parsedUrl(current.url) : undefined;
  if (before !== undefined) {
    const redacted = new URL(before.toString());
    redacted.password = REDACTED;
    if (redacted.toString() === url.toString()) return { ...next, url: before.toString() };
  }
  throw AppError.at('invalid_body', `${field}.url`, `the password is ${REDACTED}, as svc shows it, but the rest of the URL is not the current source's: send the password itself`);
}

function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
