import type { EmbedTheme } from '@svc/protocol';

/**
 * The viewer-facing preferences the host can set (SPEC "Action catalog"): colour scheme, theme, locale, time
 * zone. Each `parse*` says whether a value is usable; an unusable one is ignored (and reported by the caller).
 */

export type ColorScheme = 'light' | 'dark' | 'auto';

export function parseColorScheme(value: string | undefined): ColorScheme | undefined {
  return value === 'light' || value === 'dark' || value === 'auto' ? value : undefined;
}

/**
 * The canonical form of a BCP 47 tag (`pt-br` -> `pt-BR`), or undefined when it is not one Intl can format with.
 * Intl's formatters accept exactly the tags getCanonicalLocales accepts (and fall back silently for languages they
 * lack; the tag is still honoured as far as they can), so no formatter is made here: the first one loads ICU's data.
 */
export function parseLocale(value: string | undefined | null): string | undefined {
  if (value === undefined || value === null || value.trim() === '') return undefined;
  try {
    return Intl.getCanonicalLocales(value.trim().replace(/_/g, '-'))[0];
  } catch {
    return undefined;
  }
}

/** The part of Temporal (in Chromium and Firefox, not yet everywhere) that reads and checks time zone names. */
interface TemporalTimeZones {
  Now: { timeZoneId(): string; zonedDateTimeISO(timeZone: string): { timeZoneId: string } };
}

/**
 * Temporal when the browser has it: it reads and checks a time zone name in well under a millisecond, where the
 * first Intl.DateTimeFormat of a frame loads ICU's formatting data (20-35 ms, issue 22) before App's first render.
 */
const temporal = (globalThis as { Temporal?: TemporalTimeZones }).Temporal;

// SPEC set-timezone: bare UTC offsets are ignored ("+02:00", "-0500", "UTC+2", "GMT-03:30"), even though newer
// Intl accepts some of them: a time zone is an IANA name, which knows daylight saving.
const BARE_OFFSET = /^(?:UTC|GMT)?\s*[+-]\s*\d{1,2}(?::?\d{2})?$/i;

/**
 * The IANA name in its own letter case (`europe/berlin` -> `Europe/Berlin`), or undefined for offsets and unknown
 * names. Intl also resolves some aliases (`Etc/UTC` -> `UTC`), Temporal keeps them: either is an IANA name.
 */
export function parseTimezone(value: string | undefined | null): string | undefined {
  if (value === undefined || value === null) return undefined;
  const name = value.trim();
  if (name === '' || BARE_OFFSET.test(name)) return undefined;
  try {
    if (temporal === undefined) return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
    // Temporal also takes a date-time with a zone in brackets ("2025-01-01T00:00[Europe/Berlin]"): a name only.
    const id = temporal.Now.zonedDateTimeISO(name).timeZoneId;
    return id.toLowerCase() === name.toLowerCase() ? id : undefined;
  } catch {
    return undefined;
  }
}

/** What the viewer's browser prefers: its language (when Intl can format in it) and its time zone. */
export interface BrowserPreferences {
  locale: string | undefined;
  timezone: string;
}

/**
 * The browser's own preferences, the last in each precedence (App.tsx). Called while the first reads are in flight
 * (main.tsx): without Temporal, the time zone takes the frame's first Intl.DateTimeFormat, which loads ICU's data
 * (20-35 ms in a fresh renderer process on the bench machine, issue 22).
 *
 * @example
 * browserPreferences(); // { locale: 'de-DE', timezone: 'Europe/Berlin' }
 */
export function browserPreferences(): BrowserPreferences {
  return { locale: parseLocale(navigator.language), timezone: temporal !== undefined ? temporal.Now.timeZoneId() : new Intl.DateTimeFormat().resolvedOptions().timeZone };
}

/** The first usable value, in order of precedence. */
export function firstOf<T>(...values: Array<T | undefined>): T | undefined {
  return values.find((value) => value !== undefined);
}

/** Theme values as CSS custom properties: only values the browser accepts for that property are applied. */
export function themeVariables(theme: EmbedTheme): Record<string, string> {
  const vars: Record<string, string> = {};
  const supports = (property: string, value: string) => typeof CSS !== 'undefined' && CSS.supports(property, value);
  if (typeof theme.primaryColor === 'string' && supports('color', theme.primaryColor)) vars['--svc-primary'] = theme.primaryColor;
  const radius = typeof theme.borderRadius === 'number' ? `${theme.borderRadius}px` : theme.borderRadius;
  if (typeof radius === 'string' && supports('border-radius', radius)) vars['--svc-radius'] = radius;
  if (typeof theme.font === 'string' && supports('font-family', theme.font)) vars['--svc-font'] = theme.font;
  return vars;
}

/** Applies theme variables to the document root; variables of keys not in `vars` are removed. */
export function applyThemeVariables(root: HTMLElement, vars: Record<string, string>): void {
  for (const name of ['--svc-primary', '--svc-radius', '--svc-font']) {
    if (vars[name] === undefined) root.style.removeProperty(name);
    else root.style.setProperty(name, vars[name]);
  }
}

/** A dashboard filter of SPEC set-filter: `f_<semantic_view>.<dimension>=<JSON>`; the value a scalar, a list or `{gte,lte}`. */
export interface Filter {
  view: string;
  dimension: string;
  value: unknown;
  /** The dimension's title in the model, once svc said it (a filter chip shows it). */
  title?: string;
}

const FILTER = /^f_([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;
const isScalar = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value);

/** Parses a filter URL parameter, or says why it is not one. */
export function parseFilter(parameter: string): { ok: true; filter: Filter } | { ok: false; reason: string } {
  const match = FILTER.exec(parameter);
  if (match === null) return { ok: false, reason: 'expected f_<semantic_view>.<dimension>=<JSON>' };
  let value: unknown;
  try {
    value = JSON.parse(match[3]!);
  } catch {
    return { ok: false, reason: `the value of ${match[1]}.${match[2]} is not JSON` };
  }
  const isRange = typeof value === 'object' && value !== null && !Array.isArray(value)
    && Object.keys(value).length > 0 && Object.keys(value).every((key) => (key === 'gte' || key === 'lte') && isScalar((value as Record<string, unknown>)[key]));
  if (!isScalar(value) && !(Array.isArray(value) && value.every(isScalar)) && !isRange) {
    return { ok: false, reason: `the value of ${match[1]}.${match[2]} must be a value, a list of values or {"gte","lte"}` };
  }
  return { ok: true, filter: { view: match[1]!, dimension: match[2]!, value } };
}
