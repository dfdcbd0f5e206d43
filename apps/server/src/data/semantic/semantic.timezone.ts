/**
 * Time zone arithmetic for SQLite, which has no time zone database: the UTC offsets of an IANA zone and the
 * instants where they change, read from the runtime's Intl (ICU) data. PostgreSQL does the same with its own
 * tz database (`AT TIME ZONE`); both follow the IANA rules, so the two dialects bucket alike.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** True for a time zone name the runtime knows (IANA names and `UTC`); bare offsets such as `+02:00` are not names. */
export function isTimeZoneName(value: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(value)) return false;
  try {
    formatterFor(value);
    return true;
  } catch {
    return false;
  }
}

/** The zone's offset from UTC at an instant, in seconds (Europe/Berlin in July: 7200). */
export function offsetAt(timeZone: string, epochSeconds: number): number {
  const parts = formatterFor(timeZone).formatToParts(new Date(epochSeconds * 1000));
  const field = (type: string) => Number(parts.find((part) => part.type === type)!.value);
  const local = Date.UTC(field('year'), field('month') - 1, field('day'), field('hour'), field('minute'), field('second')) / 1000;
  return local - Math.floor(epochSeconds);
}

export interface OffsetSpan {
  /** First instant (epoch seconds) of the span; the first span starts at -Infinity. */
  from: number;
  offset: number;
}

const DAY = 86_400;
const spanCache = new Map<string, OffsetSpan[]>();

/**
 * The zone's offsets from `fromYear` to `toYear` as spans ordered by start: offsets are sampled daily and each
 * change is found to the second by bisection (zones change at most a few times a year, never twice in a day).
 */
export function offsetSpans(timeZone: string, fromYear = 1970, toYear = 2060): OffsetSpan[] {
  const key = `${timeZone}|${fromYear}|${toYear}`;
  const cached = spanCache.get(key);
  if (cached !== undefined) return cached;
  const start = Date.UTC(fromYear, 0, 1) / 1000;
  const end = Date.UTC(toYear + 1, 0, 1) / 1000;
  const spans: OffsetSpan[] = [{ from: -Infinity, offset: offsetAt(timeZone, start) }];
  let previous = spans[0]!.offset;
  for (let t = start + DAY; t <= end; t += DAY) {
    const offset = offsetAt(timeZone, t);
    if (offset === previous) continue;
    let low = t - DAY;
    let high = t;
    while (high - low > 1) {
      const middle = Math.floor((low + high) / 2);
      if (offsetAt(timeZone, middle) === previous) low = middle;
      else high = middle;
    }
    spans.push({ from: high, offset });
    previous = offset;
  }
  spanCache.set(key, spans);
  return spans;
}

/** The UTC instant (epoch seconds) of a wall-clock time in the zone; in a gap the later offset applies. */
export function localToInstant(timeZone: string, localEpochSeconds: number): number {
  let guess = localEpochSeconds - offsetAt(timeZone, localEpochSeconds);
  for (let i = 0; i < 2; i++) guess = localEpochSeconds - offsetAt(timeZone, guess);
  return guess;
}
