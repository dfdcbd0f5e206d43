import type { Kysely } from 'kysely';
import { AppError } from '../core/core.errors.js';
import { parseJsonObject } from '../core/core.json.js';
import type { EmbedPrincipal } from '../core/core.principal.js';
import type { Database } from '../db/db.schema.js';
import { EXPLORE_LEVELS } from './sessions.schema.js';
import type { ExploreLevel } from './sessions.schema.js';
import { findSessionPresentation } from './sessions.store.js';

// Exploration in the embed (issue 35; docs/explore.md): what Generate Session's settings.explore lets a session do.
// none: today's embed; view: open the charts and views its tenant's viewers shared; create: also build and save.

/** A session's stored settings read as an explore level; anything but view or create is none. */
export function readExploreLevel(settings: Readonly<Record<string, unknown>>): ExploreLevel {
  return settings.explore === 'view' || settings.explore === 'create' ? settings.explore : 'none';
}

/** The explore level of an embed session, read from its row (scoped by account). */
export async function sessionExploreLevel(db: Kysely<Database>, principal: EmbedPrincipal): Promise<ExploreLevel> {
  const row = await findSessionPresentation(db, principal.accountId, principal.sessionId);
  return readExploreLevel(parseJsonObject(row?.settings));
}

/** A 403 naming `settings.explore` unless the session's level is at least `needed`. */
export async function requireExploreLevel(db: Kysely<Database>, principal: EmbedPrincipal, needed: Exclude<ExploreLevel, 'none'>): Promise<ExploreLevel> {
  const level = await sessionExploreLevel(db, principal);
  if (EXPLORE_LEVELS.indexOf(level) < EXPLORE_LEVELS.indexOf(needed)) {
    throw new AppError('forbidden', `this session was minted with settings.explore ${JSON.stringify(level)}; this needs ${JSON.stringify(needed)} or more`, 'settings.explore');
  }
  return level;
}
