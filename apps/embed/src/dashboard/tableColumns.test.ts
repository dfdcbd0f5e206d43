import { describe, expect, it } from 'vitest';
import type { ResultColumn } from '../api.js';
import { tableColumnTemplate } from './tableColumns.js';

const name: ResultColumn = { name: 'customers.name', member: 'customers.name', title: 'Name', type: 'string', kind: 'dimension' };
const city: ResultColumn = { name: 'customers.city', member: 'customers.city', title: 'City', type: 'string', kind: 'dimension' };
const revenue: ResultColumn = { name: 'orders.revenue', member: 'orders.revenue', title: 'Revenue', type: 'number', kind: 'measure', format: { type: 'currency', decimalPlaces: 2 } };
const orders: ResultColumn = { name: 'orders.count', member: 'orders.count', title: 'Orders', type: 'number', kind: 'measure' };

/** Each column's `minmax(<min>ch, <weight>fr)`, read back. */
const tracks = (template: string) => [...template.matchAll(/minmax\((\d+)ch, (\d+)fr\)/g)].map((m) => ({ min: Number(m[1]), weight: Number(m[2]) }));

describe('tableColumnTemplate', () => {
  const rows = [['Matteo Rossi', 'Chicago', 28280.49, 66], ['Priya Natarajan', 'Vancouver', 25437.15, 7]];

  it('never lets a figure column be narrower than its longest value, so no figure is clipped', () => {
    const [, , revenueTrack, ordersTrack] = tracks(tableColumnTemplate([name, city, revenue, orders], rows, 'en-US'));
    expect(revenueTrack!.min).toBeGreaterThanOrEqual('$28,280.49'.length);
    expect(ordersTrack!.min).toBeGreaterThanOrEqual(2);
    // ...but a two-digit count no longer holds ten characters that names need.
    expect(ordersTrack!.min).toBeLessThan(5);
  });

  it('keeps at least 7 characters of a long text before its ellipsis, and only its own length when shorter', () => {
    const [nameTrack, cityTrack] = tracks(tableColumnTemplate([name, city], [['Priya Natarajan', 'Rome']], 'en-US'));
    expect(nameTrack!.min).toBe(7);
    expect(cityTrack!.min).toBe(4);
  });

  it('shares the width in proportion to the longest value or title, capped at 40 characters', () => {
    const [nameTrack, cityTrack, , ordersTrack] = tracks(tableColumnTemplate([name, city, revenue, orders], rows, 'en-US'));
    expect(nameTrack!.weight).toBe('Priya Natarajan'.length);
    expect(cityTrack!.weight).toBe('Vancouver'.length);
    expect(ordersTrack!.weight).toBe('Orders'.length);
    expect(tracks(tableColumnTemplate([name], [['x'.repeat(300)]], 'en-US'))[0]!.weight).toBe(40);
  });

  it('gives one track per column, the same whatever row is shown (rows are virtual)', () => {
    expect(tracks(tableColumnTemplate([name, city, revenue, orders], [], 'en-US'))).toHaveLength(4);
  });
});
