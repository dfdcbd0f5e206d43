import type { Kysely, Transaction } from 'kysely';
import { digestSecret } from '../core/core.digest.js';
import { Sealer } from '../core/core.sealed.js';
import type { Database } from '../db/db.schema.js';
import { checkFile, checkShape, ImportError, rejectNulCharacters } from './import.check.js';
import type { ImportItem } from './import.deployment-schema.js';
import type { ImportFile } from './import.schema.js';
import { isUniqueViolation } from '../db/db.database.js';
import { hasAccountWithTenantName, hasApiKeyWithDigest, hasDashboardWithPublicId } from './import.store.js';
import { writeAccount } from './import.write.js';

export { ImportError } from './import.check.js';
export type { ImportDashboard, ImportDeployment, ImportItem, ImportReportSnapshot } from './import.deployment-schema.js';
export type { ImportAccount, ImportFile } from './import.schema.js';

/**
 * Loads an import file (DESIGN.md "The import file") in one transaction and returns the id of every ref.
 * Any error names the JSON path of the first bad entry and writes nothing. Deployments' data sources are sealed
 * with `sealer` (SVC_ENCRYPTION_KEY; default no key: stored as they are).
 *
 * @example
 * const { refs } = await importFile(db, JSON.parse(readFileSync('demo.json', 'utf8')));
 * refs.prod; // the deployment's id
 */
export async function importFile(db: Kysely<Database>, input: unknown, now: Date = new Date(), sealer: Sealer = new Sealer([])): Promise<{ refs: Record<string, number> }> {
  rejectNulCharacters(input, '$');
  const file = checkShape(input);
  const stamp = now.toISOString();
  const planned = checkFile(file, stamp);
  const refs: Record<string, number> = {};
  try {
    await db.transaction().execute(async (trx) => {
      await checkAgainstDatabase(trx, file);
      for (const account of file.accounts) await writeAccount(trx, account, planned, refs, stamp, sealer);
    });
  } catch (error) {
    // Two imports racing for one tenantName, publicId or API key both pass the check; the loser's unique
    // violation is reported like the check would have, at the path of the entry that now exists.
    if (!(error instanceof ImportError) && isUniqueViolation(error)) {
      await db.transaction().execute((trx) => checkAgainstDatabase(trx, file));
    }
    throw error;
  }
  return { refs };
}

/** Refuses what already exists in the database: tenant names, API keys, dashboard publicIds. */
async function checkAgainstDatabase(trx: Transaction<Database>, file: ImportFile): Promise<void> {
  for (const [a, account] of file.accounts.entries()) {
    const ap = `$.accounts[${a}]`;
    if (await hasAccountWithTenantName(trx, account.tenantName)) {
      throw new ImportError(`${ap}.tenantName`, `an account with tenantName "${account.tenantName}" already exists`);
    }
    for (const [u, user] of (account.users ?? []).entries()) {
      for (const [k, key] of (user.apiKeys ?? []).entries()) {
        if (await hasApiKeyWithDigest(trx, digestSecret(key))) throw new ImportError(`${ap}.users[${u}].apiKeys[${k}]`, 'this API key already exists');
      }
    }
  }
  for (const { id, path } of publicIdsOf(file)) {
    if (await hasDashboardWithPublicId(trx, id)) throw new ImportError(path, `a dashboard with publicId "${id}" already exists`);
  }
}

/** Every dashboard's publicId in the file, with its JSON path, in the file's order. */
function publicIdsOf(file: ImportFile): Array<{ id: string; path: string }> {
  const publicIds: Array<{ id: string; path: string }> = [];
  const collect = (items: ImportItem[], base: string) =>
    items.forEach((item, i) => {
      if (item.dashboard) publicIds.push({ id: item.dashboard.publicId, path: `${base}[${i}].dashboard.publicId` });
      if (item.children) collect(item.children, `${base}[${i}].children`);
    });
  file.accounts.forEach((account, a) =>
    (account.deployments ?? []).forEach((deployment, d) => collect(deployment.items ?? [], `$.accounts[${a}].deployments[${d}].items`)),
  );
  return publicIds;
}
