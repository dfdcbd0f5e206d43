import { isAdmin } from '../accounts/accounts.principal.js';
import { AppError } from '../core/core.errors.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';

// Who may do what with a deployment's model (issue 33; docs/authoring.md "Who may do what"). Another account's
// deployment is a 404 before any of these is asked (deployments.service `requireDeployment`).

type Caller = Pick<PlatformUserPrincipal, 'role'>;

/** Every platform user of the account lists the deployments and reads their meta: what authors write dashboards with. */
export function canReadMeta(_caller: Caller): boolean {
  return true;
}

/** The model itself (each view's SQL, the data source) is the admins': a view's SQL can name tables members never see. */
export function canReadModel(caller: Caller): boolean {
  return isAdmin(caller);
}

/** A member never changes the model (issue 33). */
export function canReplaceModel(caller: Caller): boolean {
  return isAdmin(caller);
}

/** 403 naming the Authorization header unless `allowed` (the answer of accounts.policy `requireAdmin`, word for word). */
export function requireModelAccess(principal: PlatformUserPrincipal, allowed: (caller: Caller) => boolean): void {
  if (!allowed(principal)) throw new AppError('forbidden', 'this needs the API key of an admin; this key belongs to a member', 'Authorization');
}
