/** Dates and numbers as the viewer reads them: the embed's locale and time zone (SPEC set-locale, set-timezone). */
export interface Formatters {
  locale: string;
  timezone: string;
  dateTime(value: string | number | Date): string;
  number(value: number): string;
}

/**
 * The formatters of a locale and time zone, each made on its first use: a frame's first Intl formatter loads ICU's
 * data (20-35 ms, issue 22), which App's first render, and so `ready`, does not wait for.
 */
export function formattersFor(locale: string, timezone: string): Formatters {
  let dates: Intl.DateTimeFormat | undefined;
  let numbers: Intl.NumberFormat | undefined;
  return {
    locale,
    timezone,
    dateTime: (value) => {
      const date = value instanceof Date ? value : new Date(value);
      dates ??= new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: timezone });
      return Number.isNaN(date.getTime()) ? '' : dates.format(date);
    },
    number: (value) => (numbers ??= new Intl.NumberFormat(locale)).format(value),
  };
}

/** A column's number format (SPEC Report snapshot `columnFormats`; the semantic model's member `format`). */
export interface NumberFormatSpec {
  type: 'currency' | 'percent' | 'number';
  decimalPlaces?: number | null;
}

/** The currency of `currency` formats: the semantic model names none, so every amount is in US dollars. */
export const DEFAULT_CURRENCY = 'USD';

const numberFormats = new Map<string, Intl.NumberFormat>();

/**
 * The one number formatter of the embed: KPIs, tables, tooltips, exports, and (through {@link vegaNumberLocale})
 * chart axes all format with it, so that a locale shows a currency one way everywhere (issue 31: en-GB showed
 * "US$" on KPIs and "$" on axes). Cached per locale and format: a dashboard formats thousands of cells.
 *
 * @example
 * numberFormatOf('en-GB', { type: 'currency', decimalPlaces: 0 }).format(1765607.76); // 'US$1,765,608'
 */
export function numberFormatOf(locale: string, format?: NumberFormatSpec, currency = DEFAULT_CURRENCY): Intl.NumberFormat {
  const digits = format?.decimalPlaces ?? undefined;
  const key = `${locale}|${format?.type ?? 'number'}|${digits ?? ''}|${currency}`;
  let formatter = numberFormats.get(key);
  if (formatter === undefined) {
    const fraction: Intl.NumberFormatOptions = digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits };
    const options: Intl.NumberFormatOptions = format?.type === 'currency' ? { style: 'currency', currency, ...fraction }
      : format?.type === 'percent' ? { style: 'percent', ...fraction }
        : digits === undefined ? { maximumFractionDigits: 2 } : fraction;
    formatter = new Intl.NumberFormat(locale, options);
    numberFormats.set(key, formatter);
  }
  return formatter;
}

/**
 * A column format as a d3 format, which charts draw with the viewer's locale ({@link vegaNumberLocale}): currency
 * with the column's decimal places, as its KPI and table cells show it. The embed's default charts (vega.ts) and the
 * console's chart builder (apps/embed/src/explore/builder.ts) put it on a measure's axis.
 *
 * @example d3NumberFormat({ type: 'currency', decimalPlaces: 0 }) // '$,.0f'
 */
export function d3NumberFormat(format: NumberFormatSpec | undefined): string {
  const digits = format?.decimalPlaces ?? undefined;
  if (format?.type === 'percent') return `.${digits ?? 0}%`;
  if (format?.type === 'currency') return `$,.${digits ?? 0}f`;
  if (format?.type === 'number' && digits !== undefined) return `,.${digits}f`;
  return ',.4~g';
}

/** A d3-format locale definition, as vega's `formatLocale` takes it (vega-format, d3-format's `formatLocale`). */
export type VegaNumberLocale = {
  decimal: string;
  thousands: string;
  grouping: number[];
  currency: [string, string];
  minus: string;
  percent: string;
  nan: string;
  numerals?: string[];
};

const isNumberPart = (part: Intl.NumberFormatPart) => part.type === 'integer' || part.type === 'group' || part.type === 'decimal' || part.type === 'fraction';

/** The text around the number of a formatted value: what comes before its first digit and after its last. */
function affixes(parts: Intl.NumberFormatPart[]): [string, string] {
  const first = parts.findIndex(isNumberPart);
  const last = parts.length - 1 - [...parts].reverse().findIndex(isNumberPart);
  const text = (list: Intl.NumberFormatPart[]) => list.filter((part) => part.type !== 'minusSign' && part.type !== 'plusSign').map((part) => part.value).join('');
  return [text(parts.slice(0, first)), text(parts.slice(last + 1))];
}

/**
 * Vega's number locale made from {@link numberFormatOf}'s: the same decimal and group separators, grouping, minus
 * sign, digits, percent sign, and the currency symbol on the same side. Charts then draw a d3 format such as
 * `$,.0f` (ours or an author's spec) as the KPI beside them reads: `US$400,000` in en-GB, `400.000 $` in de-DE.
 *
 * @example
 * embed(element, spec, { formatLocale: vegaNumberLocale('en-GB') });
 */
export function vegaNumberLocale(locale: string, currency = DEFAULT_CURRENCY): VegaNumberLocale {
  const plain = numberFormatOf(locale, { type: 'number', decimalPlaces: 1 }).formatToParts(-1234567890.5);
  const integers = plain.filter((part) => part.type === 'integer').map((part) => part.value.length).reverse();
  // d3 groups from the right and repeats the last size; the leftmost group is partial, so it says nothing.
  const sizes = integers.length > 1 ? integers.slice(0, -1) : [integers[0] ?? 3];
  const grouping = sizes.filter((size, i) => i === 0 || size !== sizes[i - 1]);
  const digits = numberFormatOf(locale, { type: 'number', decimalPlaces: 0 });
  const numerals = Array.from({ length: 10 }, (_, digit) => digits.format(digit));
  return {
    decimal: plain.find((part) => part.type === 'decimal')?.value ?? '.',
    thousands: plain.find((part) => part.type === 'group')?.value ?? '',
    grouping: integers.length > 1 ? grouping : [3],
    currency: affixes(numberFormatOf(locale, { type: 'currency', decimalPlaces: 0 }, currency).formatToParts(1)),
    minus: plain.find((part) => part.type === 'minusSign')?.value ?? '-',
    percent: affixes(numberFormatOf(locale, { type: 'percent', decimalPlaces: 0 }).formatToParts(0.5))[1],
    nan: 'NaN',
    ...(numerals.join('') === '0123456789' ? {} : { numerals }),
  };
}
