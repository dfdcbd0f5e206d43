/** Dates and numbers as the viewer reads them: the embed's locale and time zone (SPEC set-locale, set-timezone). */
export interface Formatters {
  locale: string;
  timezone: string;
  dateTime(value: string | number | Date): string;
  number(value: number): string;
}

export function formattersFor(locale: string, timezone: string): Formatters {
  const dates = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: timezone });
  const numbers = new Intl.NumberFormat(locale);
  return {
    locale,
    timezone,
    dateTime: (value) => {
      const date = value instanceof Date ? value : new Date(value);
      return Number.isNaN(date.getTime()) ? '' : dates.format(date);
    },
    number: (value) => numbers.format(value),
  };
}
