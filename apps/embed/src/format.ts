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
