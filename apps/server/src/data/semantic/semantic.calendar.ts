import type { Granularity } from './semantic.model.js';
import { localToInstant, offsetAt } from './semantic.timezone.js';

/**
 * Calendar arithmetic on local wall-clock times, the `YYYY-MM-DDTHH:MM:SS.000` text of time buckets: truncation to
 * a granularity and moving by whole periods (a month later of January 31 is the last day of February).
 */
export type PeriodUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';

const BUCKET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/;

/** Local wall time in epoch-like milliseconds (UTC fields hold the local fields). */
export function parseBucket(text: string): number | undefined {
  const match = BUCKET.exec(text);
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, s] = match;
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
}

export function formatBucket(wall: number): string {
  return new Date(wall).toISOString().slice(0, 19) + '.000';
}

export function truncateWall(wall: number, granularity: Granularity): number {
  const date = new Date(wall);
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth();
  const d = date.getUTCDate();
  switch (granularity) {
    case 'second':
      return Math.floor(wall / 1000) * 1000;
    case 'minute':
      return Math.floor(wall / 60_000) * 60_000;
    case 'hour':
      return Math.floor(wall / 3_600_000) * 3_600_000;
    case 'day':
      return Date.UTC(y, m, d);
    case 'week':
      return Date.UTC(y, m, d - ((date.getUTCDay() + 6) % 7));
    case 'month':
      return Date.UTC(y, m, 1);
    case 'quarter':
      return Date.UTC(y, m - (m % 3), 1);
    case 'year':
      return Date.UTC(y, 0, 1);
  }
}

/** The wall time `amount` units later (negative: earlier); months clamp to the month's last day. */
export function addPeriods(wall: number, unit: PeriodUnit, amount: number): number {
  const fixed = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 } as const;
  if (unit in fixed) return wall + fixed[unit as keyof typeof fixed] * amount;
  const months = unit === 'month' ? amount : unit === 'quarter' ? 3 * amount : 12 * amount;
  const date = new Date(wall);
  const target = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1, date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds()));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(date.getUTCDate(), lastDay));
  return target.getTime();
}

/** An instant (epoch seconds) moved by whole local periods in a zone. */
export function shiftInstant(at: number, unit: PeriodUnit, amount: number, timeZone: string): number {
  if (!Number.isFinite(at)) return at;
  const wall = (at + offsetAt(timeZone, at)) * 1000;
  return localToInstant(timeZone, addPeriods(wall, unit, amount) / 1000);
}

export function isPeriodUnit(value: string): value is PeriodUnit {
  return ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'].includes(value);
}
