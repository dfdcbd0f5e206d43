import { AppError } from '../core/core.errors.js';
import { isAdmin } from './accounts.principal.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';

/**
 * Operations for admins of the account only (DESIGN "Credentials"): Generate Session, Revoke, the embed-user admin,
 * webhook endpoints. A member's key is a 403 naming the Authorization header.
 */
export function requireAdmin(principal: PlatformUserPrincipal): void {
  if (!isAdmin(principal)) throw new AppError('forbidden', 'this needs the API key of an admin; this key belongs to a member', 'Authorization');
}
