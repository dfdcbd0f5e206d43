import { describe, expect, it } from 'vitest';
import { exportNumber, toCsv } from './exports.values.js';
import type { WidgetData } from '../api.js';

describe('numbers in exports', () => {
  it('rounds away the float noise of a sum: 1765607.7599999981 is written 1765607.76', () => {
    expect(exportNumber(1765607.7599999981)).toBe(1765607.76);
    expect(String(exportNumber(26614.260000000002))).toBe('26614.26');
    expect(String(exportNumber(0.1 + 0.2))).toBe('0.3');
  });

  it('keeps integers exactly, and never rounds into the integer part of a large number', () => {
    expect(exportNumber(9007199254740991)).toBe(9007199254740991);
    expect(exportNumber(123456789012345.67)).toBe(123456789012346);
    expect(exportNumber(-42)).toBe(-42);
  });

  it('keeps 12 significant digits of small and precise figures', () => {
    expect(exportNumber(0.000123456789012345)).toBe(0.000123456789012);
    expect(exportNumber(2 / 3)).toBe(0.666666666667);
  });

  it('writes a CSV of the columns\' titles and the rounded values, null as an empty cell', () => {
    const data: WidgetData = {
      columns: [
        { name: 'orders.status', member: 'orders.status', title: 'Status', type: 'string', kind: 'dimension' },
        { name: 'orders.revenue', member: 'orders.revenue', title: 'Revenue', type: 'number', kind: 'measure', format: { type: 'currency', decimalPlaces: 0 } },
      ],
      rows: [['shipped', 1765607.7599999981], [null, 0.30000000000000004]],
      truncated: false, timezone: 'UTC', ignoredFilters: [],
    };
    expect(toCsv(data)).toBe('Status,Revenue\r\nshipped,1765607.76\r\n,0.3');
  });
});
