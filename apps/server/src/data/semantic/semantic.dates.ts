import { AppError } from '../../core/core.errors.js';
import { localToInstant, offsetAt } from './semantic.timezone.js';

/**
 * Dates of filters and date ranges, read in the query's time zone. A date alone means that local day: as a start
 * its first instant, as an end the whole day (Cube's inclusive `inDateRange`). A time with `Z` or an offset is
 * an absolute instant. Every bound becomes an instant in epoch seconds; intervals are half-open `[from, to)`.
 */
export interface Interval {
  from: number;
  to: number;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

interface ParsedDate {
  /** The instant the text names. */
  at: number;
  /** True when only a date was given (an end then covers the whole day). */
  dateOnly: boolean;
}

export function parseDate(text: string, timeZone: string, field: string): ParsedDate {
  const match = DATE.exec(text.trim());
  if (match === null) throw AppError.at('invalid_parameter', field, `not a date (YYYY-MM-DD, optionally with a time): ${JSON.stringify(text)}`);
  const [, y, mo, d, h, mi, s, ms, zone] = match;
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), Number((ms ?? '0').padEnd(3, '0')));
  const check = new Date(wall);
  if (check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(h ?? 0) > 23 || Number(mi ?? 0) > 59 || Number(s ?? 0) > 59) {
    throw AppError.at('invalid_parameter', field, `no such date or time: ${JSON.stringify(text)}`);
  }
  const local = Math.floor(wall / 1000);
  if (zone === undefined) return { at: localToInstant(timeZone, local), dateOnly: h === undefined };
  if (zone === 'Z') return { at: local, dateOnly: false };
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return { at: local - sign * (Number(digits.slice(0, 2)) * 3600 + Number(digits.slice(2)) * 60), dateOnly: false };
}

/** The first instant after the named date or time: the next local midnight for a date, the next second for a time. */
export function endOf(parsed: ParsedDate, timeZone: string): number {
  if (!parsed.dateOnly) return parsed.at + 1;
  const local = parsed.at + offsetAt(timeZone, parsed.at);
  return localToInstant(timeZone, local + 86_400);
}

/** Local midnight `days` after the local day of an instant. */
function localMidnight(at: number, timeZone: string, days = 0): number {
  const local = at + offsetAt(timeZone, at);
  return localToInstant(timeZone, Math.floor(local / 86_400) * 86_400 + days * 86_400);
}

type Unit = 'day' | 'week' | 'month' | 'quarter' | 'year';

/** The start of the local period holding an instant, moved by `shift` periods. */
function periodStart(at: number, unit: Unit, timeZone: string, shift: number): number {
  const local = new Date((at + offsetAt(timeZone, at)) * 1000);
  let y = local.getUTCFullYear();
  let m = local.getUTCMonth();
  let d = local.getUTCDate();
  if (unit === 'day') d += shift;
  if (unit === 'week') d += -((local.getUTCDay() + 6) % 7) + 7 * shift;
  if (unit === 'month') {
    d = 1;
    m += shift;
  }
  if (unit === 'quarter') {
    d = 1;
    m = m - (m % 3) + 3 * shift;
  }
  if (unit === 'year') {
    d = 1;
    m = 0;
    y += shift;
  }
  return localToInstant(timeZone, Date.UTC(y, m, d) / 1000);
}

const RELATIVE = /^(?:(today|yesterday)|(this|last) (week|month|quarter|year)|last (\d{1,4}) (days?|weeks?|months?|years?))$/;

/**
 * A date range: `[from, to]` dates, one date (that day, or that time), or one of Cube's relative ranges
 * (`today`, `yesterday`, `this week|month|quarter|year`, `last week|month|quarter|year`, `last N days|weeks|months|years`,
 * the last N whole periods before the current one plus the current one up to now).
 */
export function parseDateRange(range: string | string[], timeZone: string, now: Date, field: string): Interval {
  if (Array.isArray(range)) {
    const from = parseDate(range[0]!, timeZone, `${field}[0]`);
    const to = parseDate(range[1]!, timeZone, `${field}[1]`);
    const interval = { from: from.at, to: endOf(to, timeZone) };
    if (interval.to <= interval.from) throw AppError.at('invalid_parameter', field, `the range ends before it starts`);
    return interval;
  }
  const at = Math.floor(now.getTime() / 1000);
  const relative = RELATIVE.exec(range.trim().toLowerCase());
  if (relative !== null) {
    const [, day, thisOrLast, unit, count, countUnit] = relative;
    if (day === 'today') return { from: localMidnight(at, timeZone), to: localMidnight(at, timeZone, 1) };
    if (day === 'yesterday') return { from: localMidnight(at, timeZone, -1), to: localMidnight(at, timeZone) };
    if (thisOrLast !== undefined) {
      const shift = thisOrLast === 'this' ? 0 : -1;
      return { from: periodStart(at, unit as Unit, timeZone, shift), to: periodStart(at, unit as Unit, timeZone, shift + 1) };
    }
    const n = Number(count);
    if (n < 1) throw AppError.at('invalid_parameter', field, `a relative range counts at least 1 period`);
    const baseUnit = countUnit!.replace(/s$/, '') as Unit;
    return { from: periodStart(at, baseUnit, timeZone, -(n - 1)), to: periodStart(at, baseUnit, timeZone, 1) };
  }
  const single = parseDate(range, timeZone, field);
  return { from: single.at, to: endOf(single, timeZone) };
}
