import { AppError } from '../core/core.errors.js';
import type { EmbedPrincipal } from '../core/core.principal.js';
import { EXPLORE_LEVELS } from './sessions.schema.js';
import type { ExploreLevel } from './sessions.schema.js';

// Exploration in the embed (issue 35; docs/explore.md): what Generate Session's settings.explore lets a session do.
// none: today's embed; view: open the charts and views its tenant's viewers shared; create: also build and save.
// The level comes with the principal, read from the session's row when its token resolves (sessions.service).

/** A session's stored settings read as an explore level; anything but view or create is none. */
export function readExploreLevel(settings: Readonly<Record<string, unknown>>): ExploreLevel {
  return settings.explore === 'view' || settings.explore === 'create' ? settings.explore : 'none';
}

/** A 403 naming `settings.explore` unless the session's level is at least `needed`. */
export function requireExploreLevel(principal: EmbedPrincipal, needed: Exclude<ExploreLevel, 'none'>): ExploreLevel {
  const level = principal.explore ?? 'none';
  if (EXPLORE_LEVELS.indexOf(level) < EXPLORE_LEVELS.indexOf(needed)) {
    throw new AppError('forbidden', `this session was minted with settings.explore ${JSON.stringify(level)}; this needs ${JSON.stringify(needed)} or more`, 'settings.explore');
  }
  return level;
}
