import type { PlatformUserPrincipal } from '../core/core.principal.js';

// The principal types themselves live in core/core.principal.ts (http/ names them and imports no feature).

export function isAdmin(principal: Pick<PlatformUserPrincipal, 'role'>): boolean {
  return principal.role === 'admin';
}
