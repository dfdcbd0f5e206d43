import * as vega from 'vega';
import { describe, expect, it } from 'vitest';
import { formatNumber } from './dashboard/cells.js';
import { vegaNumberLocale } from './format.js';

// vega exports vega-format's locale(), the formatters a view draws with (its typings leave it out).
const vegaLocale = (vega as unknown as { locale(number: object, time: undefined): { format(spec: string): (value: number) => string } }).locale;

// Locales whose currency sits before or after the number, with other separators, Indian grouping and other digits.
const LOCALES = ['en-US', 'en-GB', 'de-DE', 'fr-FR', 'ja-JP', 'pt-BR', 'en-IN', 'sv-SE', 'de-CH', 'ar-EG'];
const VALUES = [1765607.7599999981, 98765.4321, -45210.5, 0, 12.345];
// d3 puts a minus sign first; these put it after the currency (de-CH: "$-45'211") or mark its direction (ar-EG), so
// only their positive amounts are the same.
const SIGN_INSIDE = new Set(['de-CH', 'ar-EG']);
const valuesOf = (locale: string) => (SIGN_INSIDE.has(locale) ? VALUES.filter((value) => value >= 0) : VALUES);

describe('one number format for KPIs, tables and chart axes', () => {
  it.each(LOCALES)('draws currency on a chart (d3 "$,.Nf" through vega) exactly as the KPI shows it, in %s', (locale) => {
    const chart = vegaLocale(vegaNumberLocale(locale), undefined);
    for (const digits of [0, 2]) {
      const axis = chart.format(`$,.${digits}f`);
      for (const value of valuesOf(locale)) expect(axis(value)).toBe(formatNumber(value, { type: 'currency', decimalPlaces: digits }, locale));
    }
  });

  it.each(LOCALES)('draws plain numbers and percentages with the KPI\'s separators and signs, in %s', (locale) => {
    const chart = vegaLocale(vegaNumberLocale(locale), undefined);
    for (const value of valuesOf(locale)) {
      expect(chart.format(',.2f')(value)).toBe(formatNumber(value, { type: 'number', decimalPlaces: 2 }, locale));
      expect(chart.format(',.1%')(value / 1000)).toBe(formatNumber(value / 1000, { type: 'percent', decimalPlaces: 1 }, locale));
    }
  });

  it('shows US dollars as en-GB reads them, US$, on both (issue 31: "US$" on KPIs, "$" on axes)', () => {
    expect(formatNumber(400000, { type: 'currency', decimalPlaces: 0 }, 'en-GB')).toBe('US$400,000');
    expect(vegaLocale(vegaNumberLocale('en-GB'), undefined).format('$,.2s')(1765607.76)).toBe('US$1.8M');
  });
});
