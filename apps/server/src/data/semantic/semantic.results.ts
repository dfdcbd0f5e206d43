import { AppError } from '../../core/core.errors.js';
import { addPeriods, formatBucket, isPeriodUnit, parseBucket, shiftInstant, truncateWall } from './semantic.calendar.js';
import { parseDateRange } from './semantic.dates.js';
import type { SemanticQuery } from './semantic.query.js';
import type { ResultColumn } from './semantic.model.js';
import type { ColumnFormat } from './semantic.model.js';

/**
 * What a report snapshot asks of its result beyond the query (SPEC ReportSnapshot): period comparisons, missing
 * rows filled in, and column formats. Each is a plain function over columns and rows.
 */
export interface QueryResult {
  columns: ResultColumn[];
  rows: unknown[][];
  truncated: boolean;
}

export interface PeriodComparison {
  measure: string;
  timeDimension: string;
  offset: { amount: number; unit: string };
  outputs?: string[] | null;
}

export const COMPARISON_OUTPUTS = ['previous', 'change', 'percentChange'] as const;

/** Checks a comparison against the query's result columns; the field names the snapshot's entry. */
export function checkComparison(comparison: PeriodComparison, columns: readonly ResultColumn[], field: string): void {
  if (!columns.some((c) => c.kind === 'measure' && c.name === comparison.measure)) {
    throw new AppError('invalid_query', `${field}.measure: ${comparison.measure} is not a measure of the snapshot's query`, `${field}.measure`);
  }
  if (!isPeriodUnit(comparison.offset.unit)) throw new AppError('invalid_query', `${field}.offset.unit: ${comparison.offset.unit} is not a period`, `${field}.offset.unit`);
  for (const [i, output] of (comparison.outputs ?? []).entries()) {
    if (!(COMPARISON_OUTPUTS as readonly string[]).includes(output)) {
      throw new AppError('invalid_query', `${field}.outputs[${i}]: one of ${COMPARISON_OUTPUTS.join(', ')}`, `${field}.outputs[${i}]`);
    }
  }
}

/**
 * Adds a comparison's columns to a result: for each row, the measure in the earlier period (`offset` before the
 * row's time bucket, or before the whole date range when the query has no granularity), the change and the
 * relative change. `previousRows` is the same query run over the shifted date range.
 */
export function applyComparison(result: QueryResult, previous: QueryResult, comparison: PeriodComparison): QueryResult {
  const measureIndex = result.columns.findIndex((c) => c.name === comparison.measure);
  const timeIndex = result.columns.findIndex((c) => c.member === comparison.timeDimension && c.granularity !== undefined);
  const keyIndexes = result.columns.map((c, i) => (c.kind === 'dimension' && i !== timeIndex ? i : -1)).filter((i) => i >= 0);
  const unit = comparison.offset.unit as Parameters<typeof addPeriods>[1];
  const keyOf = (row: unknown[], shift: number) => {
    const parts = keyIndexes.map((i) => row[i]);
    if (timeIndex >= 0) {
      const wall = parseBucket(String(row[timeIndex]));
      parts.push(wall === undefined ? null : formatBucket(addPeriods(wall, unit, shift)));
    }
    return JSON.stringify(parts);
  };
  const previousMeasure = previous.columns.findIndex((c) => c.name === comparison.measure);
  const earlier = new Map<string, unknown>();
  // A previous row's bucket moved forward by the offset meets the row it compares with.
  for (const row of previous.rows) earlier.set(keyOf(row, comparison.offset.amount), row[previousMeasure]);
  const outputs = comparison.outputs ?? ['previous', 'percentChange'];
  const measure = result.columns[measureIndex]!;
  const columns = [...result.columns];
  for (const output of outputs) {
    columns.push({
      name: `${comparison.measure}.${output}`, member: comparison.measure, title: `${measure.title} (${output})`, type: 'number', kind: 'measure',
      ...(output === 'percentChange' ? { format: { type: 'percent', decimalPlaces: 1 } } : measure.format !== undefined ? { format: measure.format } : {}),
    });
  }
  const rows = result.rows.map((row) => {
    const current = row[measureIndex];
    const before = earlier.get(keyOf(row, 0));
    const prior = typeof before === 'number' ? before : null;
    const values = outputs.map((output) => {
      if (output === 'previous') return prior;
      if (typeof current !== 'number' || prior === null) return null;
      if (output === 'change') return current - prior;
      return prior === 0 ? null : current / prior - 1;
    });
    return [...row, ...values];
  });
  return { columns, rows, truncated: result.truncated };
}

/**
 * Fills the time buckets a result lacks (SPEC ReportSnapshot `fillMissingRows`): every bucket from the range's
 * first to its last, for each combination of the other dimensions (less `excludedDimensions`, left empty in
 * filled rows). Counts and sums of a missing bucket are 0; averages, minima and maxima are null.
 */
export function fillMissingRows(
  result: QueryResult, fill: { member: string; excludedDimensions?: string[] | null }, range: { from: string; to: string } | undefined, rowCap: number,
): QueryResult {
  const timeIndex = result.columns.findIndex((c) => c.granularity !== undefined && (c.name === fill.member || c.member === fill.member));
  if (timeIndex < 0) {
    throw new AppError('invalid_query', `fillMissingRows.member: ${fill.member} is not a time dimension with a granularity in the snapshot's query`, 'fillMissingRows.member');
  }
  const granularity = result.columns[timeIndex]!.granularity!;
  const excluded = new Set(fill.excludedDimensions ?? []);
  const groupIndexes = result.columns.map((c, i) => (c.kind === 'dimension' && i !== timeIndex && !excluded.has(c.name) && !excluded.has(c.member) ? i : -1)).filter((i) => i >= 0);
  const walls = result.rows.map((row) => parseBucket(String(row[timeIndex]))).filter((w): w is number => w !== undefined);
  const first = range !== undefined ? parseBucket(range.from) : Math.min(...walls);
  const last = range !== undefined ? parseBucket(range.to) : Math.max(...walls);
  if (first === undefined || last === undefined || !Number.isFinite(first) || !Number.isFinite(last)) return result;
  const buckets: string[] = [];
  for (let wall = truncateWall(first, granularity); wall <= last && buckets.length <= rowCap; wall = addPeriods(wall, granularity, 1)) buckets.push(formatBucket(wall));
  const groups = new Map<string, unknown[]>();
  const present = new Set<string>();
  for (const row of result.rows) {
    const group = groupIndexes.map((i) => row[i]);
    const key = JSON.stringify(group);
    groups.set(key, group);
    present.add(`${key}|${String(row[timeIndex])}`);
  }
  if (groups.size === 0) groups.set('[]', []);
  const rows = [...result.rows];
  for (const [key, group] of groups) {
    for (const bucket of buckets) {
      if (present.has(`${key}|${bucket}`)) continue;
      if (rows.length >= rowCap) return { ...result, rows, truncated: true };
      rows.push(result.columns.map((column, i) => {
        if (i === timeIndex) return bucket;
        const g = groupIndexes.indexOf(i);
        if (g >= 0) return group[g];
        if (column.kind === 'dimension') return null;
        return column.measureType === 'count' || column.measureType === 'sum' || column.measureType === 'count_distinct' ? 0 : null;
      }));
    }
  }
  rows.sort((a, b) => compareValues(a[timeIndex], b[timeIndex]) || groupIndexes.reduce((order, i) => order || compareValues(a[i], b[i]), 0));
  return { ...result, rows };
}

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  return (a as number | string) < (b as number | string) ? -1 : 1;
}

/** Column formats of the snapshot's preferences override the measures' declared ones. */
export function applyColumnFormats(columns: ResultColumn[], formats: Record<string, ColumnFormat> | undefined | null): ResultColumn[] {
  if (!formats) return columns;
  return columns.map((column) => {
    const format = formats[column.name] ?? formats[column.member];
    return format === undefined ? column : { ...column, format };
  });
}

/** The date range of a query's time dimension as local bucket text, for filling rows; undefined without one. */
export function localRange(query: SemanticQuery, timeDimension: string, timezone: string, now: Date): { from: string; to: string } | undefined {
  const td = query.timeDimensions?.find((t) => t.dimension === timeDimension || `${t.dimension}.${t.granularity}` === timeDimension);
  if (td?.dateRange === undefined) return undefined;
  const interval = parseDateRange(td.dateRange, timezone, now, 'dateRange');
  const local = (at: number) => {
    const wall = parseBucket(new Date(at * 1000).toLocaleString('sv-SE', { timeZone: timezone }).replace(' ', 'T'));
    return wall === undefined ? undefined : formatBucket(wall);
  };
  const from = local(interval.from);
  const to = local(interval.to - 1);
  return from === undefined || to === undefined ? undefined : { from, to };
}

/** The query over the period `offset` before: every date range of the time dimension moved back. */
export function shiftedQuery(query: SemanticQuery, comparison: PeriodComparison, timezone: string, now: Date): SemanticQuery {
  const unit = comparison.offset.unit as Parameters<typeof addPeriods>[1];
  return {
    ...query,
    timeDimensions: query.timeDimensions?.map((td) => {
      if (td.dimension !== comparison.timeDimension || td.dateRange === undefined) return td;
      const interval = parseDateRange(td.dateRange, timezone, now, 'dateRange');
      const from = shiftInstant(interval.from, unit, -comparison.offset.amount, timezone);
      const to = shiftInstant(interval.to, unit, -comparison.offset.amount, timezone);
      // [from, to) as an inclusive range of absolute instants (an end with a time covers its second).
      return { ...td, dateRange: [new Date(from * 1000).toISOString().replace('.000Z', 'Z'), new Date((to - 1) * 1000).toISOString().replace('.000Z', 'Z')] };
    }),
  };
}
