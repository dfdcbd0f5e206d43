/**
 * The values an export writes: the raw data (numbers stay numbers, with no display format), less the noise of binary
 * floating point, which a warehouse's SUM leaves in the last digits (`1765607.7599999981` for 1,765,607.76).
 */
import Papa from 'papaparse';
import type { WidgetData } from '../api.js';

/** Significant digits a non-integer keeps: far more than any figure means, far fewer than a double's 17. */
export const EXPORT_DIGITS = 12;

/**
 * A number as an export writes it: an integer exactly; any other number rounded to 12 significant digits (never into
 * its integer part) and written, by JavaScript, as the shortest decimal that reads back as that rounded value. The
 * column's display precision is not applied: a revenue column shown in whole dollars keeps its cents in the file.
 *
 * @example exportNumber(1765607.7599999981) // 1765607.76
 * @example exportNumber(0.1 + 0.2) // 0.3
 */
export function exportNumber(value: number): number {
  if (!Number.isFinite(value) || Number.isInteger(value)) return value;
  const integerDigits = Math.floor(Math.log10(Math.abs(value))) + 1;
  return Number(value.toPrecision(Math.min(100, Math.max(EXPORT_DIGITS, integerDigits))));
}

/** A cell's value for a file: numbers rounded by exportNumber, the rest as given. */
export function exportValue(value: unknown): unknown {
  return typeof value === 'number' ? exportNumber(value) : value;
}

/** The columns' titles as the header row, then the rows' values (null as an empty cell, numbers by exportNumber). */
export function toCsv(data: WidgetData): string {
  return Papa.unparse({ fields: data.columns.map((c) => c.title), data: data.rows.map((row) => row.map((value) => (value === null || value === undefined ? '' : exportValue(value)))) });
}
