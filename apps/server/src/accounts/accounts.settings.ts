import type { ServiceContext } from '../db/db.context.js';
import { AppError } from '../core/core.errors.js';
import { parseJsonObject } from '../core/core.json.js';
import type { PlatformUserPrincipal } from '../core/core.principal.js';
import { recordChange } from '../audit/audit.store.js';
import { requireAdmin } from './accounts.policy.js';
import { findAccountSettingsText, findEmbedAccountSettings, normalizeOrigin, updateAccountSettings } from './accounts.store.js';
import type { AccountSettings, UpdateAccountSettingsBody } from './accounts.admin.schema.js';

// Issue 33 part 4: the account settings the embed reads (allowed origins, comments, time zone, locale), for its
// admins (docs/authoring.md "Account settings"). Settings the API does not name (allowPrivateWebhookUrls, set
// by the import file, an operator's choice) are kept as they are.

export async function readAccountSettings(ctx: ServiceContext, principal: PlatformUserPrincipal): Promise<AccountSettings> {
  requireAdmin(principal);
  return findEmbedAccountSettings(ctx.db, principal.accountId);
}

/** The body's values checked and written as the embed reads them: exact origins, an IANA zone, a BCP 47 locale. */
function checked(body: UpdateAccountSettingsBody): Partial<AccountSettings> {
  const out: Partial<AccountSettings> = {};
  if (body.allowedEmbedOrigins !== undefined) {
    out.allowedEmbedOrigins = body.allowedEmbedOrigins.map((value, i) => {
      const origin = normalizeOrigin(value);
      if (origin === undefined) throw AppError.at('invalid_body', `allowedEmbedOrigins[${i}]`, `is not an origin (scheme://host[:port], no path): ${JSON.stringify(value)}`);
      return origin;
    });
    out.allowedEmbedOrigins = [...new Set(out.allowedEmbedOrigins)];
  }
  if (body.allowEmbedComments !== undefined) out.allowEmbedComments = body.allowEmbedComments;
  if (body.timezone !== undefined) out.timezone = body.timezone === null ? null : checkedZone(body.timezone);
  if (body.locale !== undefined) out.locale = body.locale === null ? null : checkedLocale(body.locale);
  return out;
}

function checkedZone(zone: string): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    throw AppError.at('invalid_body', 'timezone', `is not an IANA time zone: ${JSON.stringify(zone)}`);
  }
}

function checkedLocale(locale: string): string {
  try {
    const [canonical] = Intl.getCanonicalLocales(locale);
    if (canonical !== undefined) return canonical;
  } catch {
    // answered below
  }
  throw AppError.at('invalid_body', 'locale', `is not a BCP 47 locale: ${JSON.stringify(locale)}`);
}

/** Changes the settings named in the body; each embed reads them on its next load, in every process. */
export async function changeAccountSettings(ctx: ServiceContext, principal: PlatformUserPrincipal, body: UpdateAccountSettingsBody): Promise<AccountSettings> {
  requireAdmin(principal);
  const changes = checked(body);
  const at = ctx.now().toISOString();
  await ctx.db.transaction().execute(async (trx) => {
    const stored = parseJsonObject(await findAccountSettingsText(trx, principal.accountId));
    const before = await findEmbedAccountSettings(trx, principal.accountId);
    await updateAccountSettings(trx, principal.accountId, JSON.stringify({ ...stored, ...changes }));
    const detail = Object.fromEntries(Object.entries(changes).map(([key, to]) => [key, { from: before[key as keyof AccountSettings], to }]));
    await recordChange(trx, principal, at, { action: 'account.settings.update', targetType: 'account', targetId: principal.accountId, detail });
  });
  return findEmbedAccountSettings(ctx.db, principal.accountId);
}
