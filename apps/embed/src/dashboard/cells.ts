import type { ColumnFormat, ResultColumn, WidgetData } from '../api.js';
import { DEFAULT_CURRENCY, numberFormatOf } from '../format.js';

// A result's cells as the embed shows them (tables, KPIs, tooltips, exports), apart from data.ts's fetching and
// context: pure, so that the console's chart view (apps/embed/src/explore/ChartView.tsx) draws with them too.

/** Rows as objects keyed by column name (charts, exports). */
export function rowObjects(data: WidgetData): Array<Record<string, unknown>> {
  return data.rows.map((row) => Object.fromEntries(data.columns.map((column, i) => [column.name, row[i]])));
}

/** A number as its column format says: currency (US dollars), percent or number, by the embed's one formatter. */
export function formatNumber(value: number, format: ColumnFormat | undefined, locale: string, currency = DEFAULT_CURRENCY): string {
  return numberFormatOf(locale, format, currency).format(value);
}

/** A time bucket (`YYYY-MM-DDTHH:MM:SS.000`, local to the query's zone) as its granularity reads. */
export function formatBucket(value: string, granularity: string | undefined, locale: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(value);
  if (match === null) return value;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), Number(match[4]), Number(match[5])));
  const options: Intl.DateTimeFormatOptions = { timeZone: 'UTC' };
  if (granularity === 'year') options.year = 'numeric';
  else if (granularity === 'quarter') return `Q${Math.floor(date.getUTCMonth() / 3) + 1} ${date.getUTCFullYear()}`;
  else if (granularity === 'month') Object.assign(options, { year: 'numeric', month: 'short' });
  else if (granularity === 'week' || granularity === 'day') Object.assign(options, { dateStyle: 'medium' });
  else Object.assign(options, { dateStyle: 'medium', timeStyle: granularity === 'second' ? 'medium' : 'short' });
  return new Intl.DateTimeFormat(locale, options).format(date);
}

/**
 * A cell as its column declares: a measure, or a dimension with a format, by formatNumber; a number dimension
 * without one as written, ungrouped (an order id 10234, a year 2025), since its digits are a name, not an amount.
 */
export function formatCell(column: ResultColumn, value: unknown, locale: string): string {
  if (value === null || value === undefined) return '–';
  if (typeof value === 'number' && column.kind === 'dimension' && column.format === undefined) return new Intl.NumberFormat(locale, { useGrouping: false, maximumFractionDigits: 10 }).format(value);
  if (typeof value === 'number') return formatNumber(value, column.format, locale);
  if (column.type === 'time' && typeof value === 'string') return formatBucket(value, column.granularity, locale);
  return String(value);
}
