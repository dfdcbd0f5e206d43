import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { importFile } from '../src/import/import.js';
import type { ImportAccount } from '../src/import/import.js';
import type { Sealer } from '../src/core/core.sealed.js';
import type { Database } from '../src/db/db.schema.js';

/** A short random suffix: factories make unique data so tests never clean up and can run in parallel. */
export function uniqueSuffix(): string {
  return randomBytes(5).toString('hex');
}

export interface SeededAccount {
  refs: Record<string, number>;
  /** The plain API key of each user ref that was given `apiKey: true`. */
  keys: Record<string, string>;
  tenantName: string;
}

type UserSpec = Omit<NonNullable<ImportAccount['users']>[number], 'apiKeys' | 'email'> & { ref: string; email?: string };

/**
 * Imports one fresh account through the real import path. Users get unique emails and an API key each;
 * publicIds are used as given: pass unique ones (a suffix from uniqueSuffix()), since they are unique across accounts.
 *
 * @example
 * const { refs, keys } = await seedAccount(db, { users: [{ ref: 'alice', role: 'admin' }], deployments: [...] });
 */
export async function seedAccount(
  db: Kysely<Database>,
  account: Omit<ImportAccount, 'name' | 'tenantName' | 'users'> & { users: UserSpec[] },
  /** Seals the deployments' data sources, as SVC_ENCRYPTION_KEY does (default: no key). */
  sealer?: Sealer,
): Promise<SeededAccount> {
  const suffix = uniqueSuffix();
  const tenantName = `t-${suffix}`;
  const keys: Record<string, string> = {};
  const users = account.users.map((user) => {
    const key = `svc_test_${user.ref}_${suffix}_${uniqueSuffix()}`;
    keys[user.ref] = key;
    return { ...user, email: user.email ?? `${user.ref}-${suffix}@test.invalid`, apiKeys: [key] };
  });
  const { refs } = await importFile(db, { accounts: [{ ...account, name: `Account ${suffix}`, tenantName, users }] }, new Date(), sealer);
  return { refs, keys, tenantName };
}

/** `Authorization` header for an API key. */
export function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` };
}
