import { describe, expect, it } from 'vitest';
import { policyViews } from '../../../test/policy-warehouse.js';
import { readFileSync } from 'node:fs';
import { SemanticModel } from '../semantic/semantic.model.js';
import { semanticViewsProblem } from '../data.views.js';
import type { SemanticView } from '../semantic/semantic.model.js';
import { ModelAccess } from '../policy/policy.access.js';
import type { AccessPolicy } from '../semantic/semantic.model.js';
import { nests, preAggregationProblem } from './preagg.definitions.js';
import { matchRollup as matchPoliced } from './preagg.match.js';
import { applyPolicies, withoutPolicies } from '../policy/policy.query.js';
import type { PreAggregation } from '../semantic/semantic.model.js';
import type { SemanticQuery } from '../semantic/semantic.query.js';

/**
 * Issue 21: which query a pre-aggregation answers, and why not. The table below is the rule written out: each
 * row a query, the rollup that answers it (or none), and the reason each rollup gives when it does not. The
 * answers of matched queries are compared with the data source's in preagg.store.test.ts.
 */

const DAILY: PreAggregation = {
  name: 'daily', measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.tenant', 'orders.region', 'customers.tier'],
  timeDimension: 'orders.created_at', granularity: 'day', timezones: ['UTC', 'America/New_York'],
};
const DISTINCT: PreAggregation = {
  name: 'buyers', measures: ['orders.customers'], dimensions: ['orders.tenant'], timeDimension: 'orders.created_at', granularity: 'month', additive: false,
};

function model(policies: { orders?: AccessPolicy[] } = {}): { model: SemanticModel; orders: SemanticView } {
  const views = policyViews(policies);
  views[0]!.preAggregations = [DAILY, DISTINCT];
  const m = new SemanticModel(views);
  return { model: m, orders: m.views.get('orders')! };
}

/**
 * The matcher as these cases ask it: a query (under a viewer's access, or none), answered as the query over the
 * rollup's table and the viewer's row filters translated to its columns, or a reason.
 */
function matchRollup(m: SemanticModel, view: SemanticView, rollup: PreAggregation, query: SemanticQuery, options: { timezone: string; now: Date; access?: ModelAccess }) {
  const policed = options.access === undefined ? withoutPolicies(m, query) : applyPolicies(options.access, query);
  const match = matchPoliced(policed, view, rollup, { timezone: options.timezone, now: options.now, table: 'rollup' });
  if (!('policed' in match)) return match;
  return { rollup: match.rollup, query: match.policed.query, access: { rows: match.policed.rowFilters[0]?.rows ?? 'all' } };
}

const NOW = new Date('2026-06-15T12:00:00Z');

/** The rollup that answers, or each rollup's reason. */
function answer(query: SemanticQuery, timezone = 'UTC', access?: (m: SemanticModel) => ModelAccess): string {
  const { model: m, orders } = model(access === undefined ? {} : { orders: TENANT_POLICY });
  const reasons: string[] = [];
  for (const rollup of orders.preAggregations!) {
    const match = matchRollup(m, orders, rollup, query, { timezone, now: NOW, access: access?.(m) });
    if ('query' in match) return rollup.name;
    reasons.push(`${rollup.name}: ${match.reason}`);
  }
  return reasons.join(' | ');
}

const TENANT_POLICY: AccessPolicy[] = [
  { group: 'customer', rowLevel: { filters: [{ member: 'tenant', operator: 'equals', values: ['{securityContext.tenant}'] }] } },
  { group: 'status-bound', rowLevel: { filters: [{ member: 'status', operator: 'equals', values: ['paid'] }] } },
];
const viewer = (groups: string[]) => (m: SemanticModel) => new ModelAccess(m, { securityContext: { tenant: 'acme' }, userAttributes: {}, groups, embedTenant: null });

const TABLE: Array<[string, SemanticQuery, string, ((m: SemanticModel) => ModelAccess)?, string?]> = [
  ['a KPI re-aggregates every day', { measures: ['orders.count', 'orders.revenue'] }, 'daily'],
  ['by month: days make months', { measures: ['orders.revenue'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] }, 'daily'],
  ['by week: days make weeks', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'week' }] }, 'daily'],
  ['by hour: finer than its days', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'hour' }] },
    'daily: hour buckets are not made of its day buckets | buyers: the measure orders.count is not in it'],
  ['a joined view\'s dimension it holds', { measures: ['orders.count'], dimensions: ['customers.tier'] }, 'daily'],
  ['a dimension it lacks', { measures: ['orders.count'], dimensions: ['orders.status'] },
    'daily: the dimension orders.status is not in it | buyers: the measure orders.count is not in it'],
  ['a filter on a dimension it lacks', { measures: ['orders.count'], filters: [{ member: 'orders.status', operator: 'equals', values: ['paid'] }] },
    'daily: a filter names orders.status, which is not in it | buyers: the measure orders.count is not in it'],
  ['a filter on a dimension it holds, in an or group', { measures: ['orders.count'], filters: [{ or: [{ member: 'orders.region', operator: 'equals', values: ['north'] }, { member: 'customers.tier', operator: 'notEquals', values: ['gold'] }] }] }, 'daily'],
  ['a measure filter (HAVING)', { measures: ['orders.count'], dimensions: ['orders.tenant'], filters: [{ member: 'orders.revenue', operator: 'gt', values: [100] }] }, 'daily'],
  ['whole days in the query\'s zone', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2024-01-01', '2024-01-31'] }] }, 'daily'],
  ['a relative range of whole days', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day', dateRange: 'last 7 days' }] }, 'daily'],
  ['a range starting inside a day', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2024-01-01T12:00:00', '2024-01-31'] }] },
    'daily: the date range starts at 2024-01-01T12:00:00, inside a day of the rollup | buyers: the measure orders.count is not in it'],
  ['a time filter of whole days', { measures: ['orders.count'], filters: [{ member: 'orders.created_at', operator: 'afterOrOnDate', values: ['2024-03-01'] }] }, 'daily'],
  ['equals on the time dimension compares instants', { measures: ['orders.count'], filters: [{ member: 'orders.created_at', operator: 'equals', values: ['2024-03-01'] }] },
    'daily: a filter names orders.created_at with equals, which compares instants inside its buckets | buyers: the measure orders.count is not in it'],
  ['order and limit', { measures: ['orders.revenue'], dimensions: ['orders.tenant'], order: [['orders.revenue', 'desc']], limit: 2 }, 'daily'],
  ['ordered by the time dimension without its granularity', { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }], order: [['orders.created_at', 'desc']] }, 'daily'],
  ['distinct buyers at its grain', { measures: ['orders.customers'], dimensions: ['orders.tenant'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] }, 'buyers'],
  ['distinct buyers by year: not at its grain', { measures: ['orders.customers'], dimensions: ['orders.tenant'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'year' }] },
    'daily: the measure orders.customers is not in it | buyers: it is not additive, and answers only at its own grain (orders.tenant, orders.created_at.month)'],
  ['distinct buyers without the tenant: not at its grain', { measures: ['orders.customers'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] },
    'daily: the measure orders.customers is not in it | buyers: it is not additive, and answers only at its own grain (orders.tenant, orders.created_at.month)'],
  ['dimensions only (a FILTER control\'s values)', { dimensions: ['orders.region'] }, 'daily'],
];

describe('pre-aggregation matching', () => {
  for (const [name, query, expected, access] of TABLE) {
    it(name, () => expect(answer(query, 'UTC', access)).toBe(expected));
  }

  it('answers in a zone it is built for, and not in another', () => {
    const monthly: SemanticQuery = { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'month' }] };
    expect(answer(monthly, 'America/New_York')).toBe('daily');
    expect(answer(monthly, 'Europe/Berlin')).toBe('daily: it is not built for the time zone Europe/Berlin (UTC, America/New_York) | buyers: it is not built for the time zone Europe/Berlin (UTC)');
    // Whole days of New York, not of UTC.
    expect(answer({ measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: ['2024-01-01', '2024-01-31'] }] }, 'America/New_York')).toBe('daily');
  });

  it('answers from a rollup without a time dimension in any zone (it is the same in every one)', () => {
    const { model: m, orders } = model();
    const byTenant: PreAggregation = { name: 'by_tenant', measures: ['orders.count'], dimensions: ['orders.tenant'] };
    expect('query' in matchRollup(m, orders, byTenant, { measures: ['orders.count'], dimensions: ['orders.tenant'] }, { timezone: 'Europe/Berlin', now: NOW })).toBe(true);
    const dated = matchRollup(m, orders, byTenant, { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: 'last 7 days' }] }, { timezone: 'Europe/Berlin', now: NOW });
    expect('reason' in dated && dated.reason).toBe('the time dimension orders.created_at is not its time dimension');
  });

  it('applies a viewer\'s policy when its members are in the rollup, and refuses it otherwise', () => {
    expect(answer({ measures: ['orders.count'] }, 'UTC', viewer(['customer']))).toBe('daily');
    expect(answer({ measures: ['orders.count'] }, 'UTC', viewer(['status-bound']))).toBe(
      'daily: the access policy filters on orders.status, which is not in it | buyers: the measure orders.count is not in it',
    );
  });

  it('keeps a filter that cannot hold (a reference the session lacks) as one that matches no row in the rollup\'s query', () => {
    const { model: m, orders } = model({ orders: TENANT_POLICY });
    const lacking = new ModelAccess(m, { securityContext: {}, userAttributes: {}, groups: ['customer'], embedTenant: null });
    const match = matchRollup(m, orders, DAILY, { measures: ['orders.count'] }, { timezone: 'UTC', now: NOW, access: lacking });
    expect('query' in match && match.access.rows).toEqual([[{ never: 'the session has no securityContext.tenant' }]]);
  });

  // The import refuses a row filter on a measure; the matcher must refuse it too rather than filter the rollup's rows by it.
  it('refuses a policy whose row filter names a measure', () => {
    const { model: m, orders } = model({ orders: [{ group: '*', rowLevel: { filters: [{ member: 'orders.revenue', operator: 'gt', values: [100] }] } }] });
    const access = new ModelAccess(m, { securityContext: {}, userAttributes: {}, groups: [], embedTenant: null });
    const match = matchRollup(m, orders, DAILY, { measures: ['orders.count'] }, { timezone: 'UTC', now: NOW, access });
    expect('reason' in match && match.reason).toBe('the access policy filters on the measure orders.revenue');
  });

  it('translates the viewer\'s row filter to the rollup\'s column', () => {
    const { model: m, orders } = model({ orders: TENANT_POLICY });
    const match = matchRollup(m, orders, DAILY, { measures: ['orders.count'] }, { timezone: 'UTC', now: NOW, access: viewer(['customer'])(m) });
    expect('query' in match && match.access.rows).toEqual([[{ member: 'r.d0', operator: 'equals', values: ['acme'] }]]);
  });

  it('knows which buckets make up which', () => {
    expect(nests('day', 'month')).toBe(true);
    expect(nests('day', 'week')).toBe(true);
    expect(nests('week', 'month')).toBe(false);
    expect(nests('month', 'quarter')).toBe(true);
    expect(nests('month', 'day')).toBe(false);
    expect(nests('hour', 'day')).toBe(true);
  });
});

describe('pre-aggregation declarations', () => {
  const problem = (rollup: Partial<PreAggregation>) => {
    const views = policyViews();
    views[0]!.preAggregations = [{ name: 'r', measures: ['orders.count'], ...rollup } as PreAggregation];
    return preAggregationProblem(views[0]!, new SemanticModel(views));
  };

  it.each([
    [{ measures: ['orders.nothing'] }, '.preAggregations[0].measures[0]', /not a measure of view orders/],
    [{ measures: ['customers.count'] }, '.preAggregations[0].measures[0]', /not a measure of view orders/],
    [{ measures: ['orders.customers'] }, '.preAggregations[0].measures[0]', /count_distinct measure, which does not re-aggregate/],
    [{ dimensions: ['orders.nope'] }, '.preAggregations[0].dimensions[0]', /not a dimension/],
    [{ dimensions: ['orders.created_at'] }, '.preAggregations[0].dimensions[0]', /time dimension/],
    [{ timeDimension: 'orders.region', granularity: 'day' }, '.preAggregations[0].timeDimension', /not a time dimension/],
    [{ timeDimension: 'orders.created_at' }, '.preAggregations[0].granularity', /needs a granularity/],
    [{ granularity: 'day' }, '.preAggregations[0].granularity', /needs a timeDimension/],
    [{ timeDimension: 'orders.created_at', granularity: 'week', partitionGranularity: 'month' }, '.preAggregations[0].partitionGranularity', /week buckets do not fall within month/],
    [{ timeDimension: 'orders.created_at', granularity: 'day', refresh: { incremental: true } }, '.preAggregations[0].refresh.incremental', /partitionGranularity/],
    [{ timezones: ['Mars/Olympus'] }, '.preAggregations[0].timezones[0]', /IANA/],
  ] as Array<[Partial<PreAggregation>, string, RegExp]>)('refuses %j at its path', (rollup, path, message) => {
    const found = problem(rollup);
    expect(found?.path).toBe(path);
    expect(found?.message).toMatch(message);
  });

  it('accepts the example of docs/data.md "Pre-aggregations"', () => {
    const doc = readFileSync(new URL('../../../../../docs/data.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Pre-aggregations'));
    const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!) as SemanticView;
    const products: SemanticView = { name: 'products', table: 'products', dimensions: [{ name: 'id', type: 'number', primaryKey: true }, { name: 'category', type: 'string' }], measures: [] };
    expect(semanticViewsProblem([example, products])).toBeUndefined();
    expect(example.preAggregations).toHaveLength(2);
  });

  it('accepts a count_distinct in a rollup that is not additive, and a full declaration', () => {
    expect(problem({ measures: ['orders.customers'], additive: false })).toBeUndefined();
    expect(problem({ ...DAILY, partitionGranularity: 'month', refresh: { every: '1 hour', incremental: true, updateWindow: '7 days' } })).toBeUndefined();
  });
});
