import type { ChangeFeed, Dialect } from './db.database.js';

/** How long a credential change waits for the database to tell every process (PostgreSQL NOTIFY) before answering. */
const PROPAGATION_WAIT_MS = 1000;

/**
 * On PostgreSQL, how long a change still waits once its own notification arrived: the others got it at the same
 * moment, but a process busy on a loaded machine may serve a request it already had before reading it (the
 * cross-process test saw this under a full test run on 2 cores).
 */
const PROPAGATION_GRACE_MS = 50;

/**
 * Runs a write that takes credentials away (a revoked session, a deleted API key, a demoted user), then waits
 * (bounded) until this process's change feed has seen it: on PostgreSQL the notification reaches every listening
 * process at the same moment, so when the answer leaves, the other processes have (all but surely) dropped what
 * they held and refuse the credential on their next request. `write` returns how many rows it changed; 0 waits for
 * nothing.
 *
 * @example
 * await writeAndPropagate({ changes: db.changes, dialect: 'sqlite' }, accountId, () => deleteApiKey(db.kysely, accountId, userId, keyId));
 */
export async function writeAndPropagate(ctx: { changes: ChangeFeed; dialect: Dialect }, accountId: number, write: () => Promise<number>): Promise<void> {
  const since = ctx.changes.mark();
  const changed = await write();
  if (changed === 0) return;
  const seen = await ctx.changes.awaitAccountChange(accountId, since, PROPAGATION_WAIT_MS);
  if (seen && ctx.dialect === 'postgres') await new Promise((resolve) => setTimeout(resolve, PROPAGATION_GRACE_MS));
}
