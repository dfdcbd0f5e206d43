import type { ResultColumn } from '../api.js';

type Spec = Record<string, unknown>;

/** vega-lite's UTC time unit of each grain (time buckets reach vega as UTC instants: vega.ts renderChart). */
export const TIME_UNITS: Readonly<Record<string, string>> = { year: 'utcyear', quarter: 'utcyearquarter', month: 'utcyearmonth', week: 'utcyearmonthdate', day: 'utcyearmonthdate', hour: 'utcyearmonthdatehours' };

/**
 * A snapshot's spec as a TIME_GRAIN choice makes it: an encoding of a time column written at one grain
 * (`orders.created_at.month`, as the console's chart builder writes it) draws the answer's column of the same
 * dimension at the grain chosen (`orders.created_at.quarter`), with that grain's time unit. Without this the chart
 * reads a column the answer no longer has: axes and no marks.
 *
 * @example
 * followGrain({ x: { field: 'o.at.month', timeUnit: 'utcyearmonth' } }, [{ name: 'o.at.quarter', member: 'o.at', type: 'time', granularity: 'quarter' }])
 * // => { x: { field: 'o.at.quarter', timeUnit: 'utcyearquarter' } }
 */
export function followGrain(node: unknown, columns: ReadonlyArray<Pick<ResultColumn, 'name' | 'member' | 'type' | 'granularity'>>): unknown {
  if (Array.isArray(node)) return node.map((item) => followGrain(item, columns));
  if (typeof node !== 'object' || node === null) return node;
  const object = node as Spec;
  const result: Spec = {};
  for (const [key, value] of Object.entries(object)) result[key] = followGrain(value, columns);
  const field = object.field;
  if (typeof field !== 'string' || columns.some((c) => c.name === field)) return result;
  const column = columns.find((c) => c.type === 'time' && c.granularity !== undefined && field.startsWith(`${c.member}.`) && TIME_UNITS[field.slice(c.member.length + 1)] !== undefined);
  if (column === undefined) return result;
  result.field = column.name;
  if (typeof result.timeUnit === 'string') result.timeUnit = TIME_UNITS[column.granularity!] ?? result.timeUnit;
  return result;
}
