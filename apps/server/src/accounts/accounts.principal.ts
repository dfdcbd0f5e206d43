import type { PlatformUserPrincipal } from '../core/core.principal.js';

// The principal types are defined in core/core.principal.ts (http/ names them and imports no feature). data/ still
// imports them from here; its restructuring moves those imports, and then this re-export goes.
export type { AnonymousPrincipal, EmbedAccessContext, EmbedPrincipal, PlatformUserPrincipal, Principal } from '../core/core.principal.js';

export function isAdmin(principal: Pick<PlatformUserPrincipal, 'role'>): boolean {
  return principal.role === 'admin';
}
