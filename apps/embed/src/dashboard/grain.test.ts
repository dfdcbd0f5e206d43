import { describe, expect, it } from 'vitest';
import { followGrain } from './grain.js';

const quarter = { name: 'orders.created_at.quarter', member: 'orders.created_at', type: 'time' as const, granularity: 'quarter' };
const count = { name: 'orders.count', member: 'orders.count', type: 'number' as const };

describe('a written spec under a TIME_GRAIN choice', () => {
  it("draws the answer's column of the dimension at the grain chosen, with that grain's time unit", () => {
    const spec = { mark: { type: 'line' }, encoding: { x: { field: 'orders.created_at.month', type: 'temporal', timeUnit: 'utcyearmonth', title: 'Ordered at' }, y: { field: 'orders.count', type: 'quantitative' } } };
    expect(followGrain(spec, [quarter, count])).toEqual({
      mark: { type: 'line' },
      encoding: { x: { field: 'orders.created_at.quarter', type: 'temporal', timeUnit: 'utcyearquarter', title: 'Ordered at' }, y: { field: 'orders.count', type: 'quantitative' } },
    });
  });

  it('leaves a spec alone when its fields are columns of the answer, or name no time dimension of it', () => {
    const month = { ...quarter, name: 'orders.created_at.month', granularity: 'month' };
    const spec = { encoding: { x: { field: 'orders.created_at.month', timeUnit: 'utcyearmonth' }, color: { field: 'orders.status' }, y: { field: 'orders.created_at.weird' } } };
    expect(followGrain(spec, [month, count])).toEqual(spec);
    expect(followGrain({ encoding: { x: { field: 'customers.since.month' } } }, [quarter])).toEqual({ encoding: { x: { field: 'customers.since.month' } } });
  });
});
