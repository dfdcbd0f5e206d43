import { describe, expect, it } from 'vitest';
import { withoutPolicies } from '../policy/policy.query.js';
import { SemanticModel } from '../semantic/semantic.model.js';
import type { Manifest, RollupTarget } from '../preagg/preagg.store.js';
import { DEMO_SEMANTIC_VIEWS } from '../warehouse/warehouse.demo.js';
import { planQuery } from './plan.query.js';
import type { PlanSettings } from './plan.query.js';

/**
 * A plan is made once and given again while nothing it depends on changes (issue 32's benchmark: cached widget
 * requests plan before they look in the cache). Anything that could change the statement makes a new plan: the
 * query, its row filters, the zone, the local date (relative ranges), the current builds.
 */
describe('planQuery keeps its plans', () => {
  const model = new SemanticModel(DEMO_SEMANTIC_VIEWS);
  const noon = new Date('2026-03-10T12:00:00Z');
  /** A rollup store whose only current build is `by_status` (of the demo's rollups), with `buildId`. */
  const store = (buildId: string) => ({
    currentBuild: (target: RollupTarget): Manifest | undefined => (target.rollup.name === 'by_status' ? ({ buildId, rows: 10, files: [] } as unknown as Manifest) : undefined),
  });
  const settings = (over: Partial<PlanSettings> = {}): PlanSettings => ({
    dialect: 'sqlite', timezone: 'UTC', now: noon, rowCap: 100, accountId: 1, deploymentId: 1, source: { type: 'demo' }, ...over,
  });
  const query = { measures: ['orders.count'], timeDimensions: [{ dimension: 'orders.created_at', dateRange: 'last 7 days', granularity: 'day' as const }] };

  it('gives the same plan for the same query and settings, even a moment later the same day', () => {
    const first = planQuery(withoutPolicies(model, query), settings());
    const again = planQuery(withoutPolicies(model, structuredClone(query)), settings({ now: new Date('2026-03-10T23:59:59Z') }));
    expect(again).toBe(first);
  });

  it('plans anew for another day, zone, query or row cap, each with its own statement', () => {
    const first = planQuery(withoutPolicies(model, query), settings());
    const nextDay = planQuery(withoutPolicies(model, query), settings({ now: new Date('2026-03-11T00:00:01Z') }));
    expect(nextDay).not.toBe(first);
    expect(nextDay.compiled.parameters).not.toEqual(first.compiled.parameters);
    // 12:00 UTC on the 10th is already the 11th in Kiritimati (UTC+14).
    const kiritimati = planQuery(withoutPolicies(model, query), settings({ timezone: 'Pacific/Kiritimati' }));
    expect(kiritimati).not.toBe(first);
    expect(planQuery(withoutPolicies(model, { ...query, measures: ['orders.revenue'] }), settings())).not.toBe(first);
    expect(planQuery(withoutPolicies(model, query), settings({ rowCap: 5 })).compiled.limit).toBe(5);
  });

  it('plans anew when the current build changes, and on another model object', () => {
    const rollups = DEMO_SEMANTIC_VIEWS[0]!.preAggregations!.map((p) => p.name);
    expect(rollups).toContain('by_status');
    const q = { measures: ['orders.count'], dimensions: ['orders.status'], timeDimensions: [{ dimension: 'orders.created_at', granularity: 'day' as const, dateRange: ['2025-01-01', '2025-01-31'] }] };
    const onA = planQuery(withoutPolicies(model, q), settings({ rollups: store('a') }));
    expect(onA.kind).toBe('rollup');
    expect(planQuery(withoutPolicies(model, q), settings({ rollups: store('a') }))).toBe(onA);
    const onB = planQuery(withoutPolicies(model, q), settings({ rollups: store('b') }));
    expect(onB).not.toBe(onA);
    expect(onB.compiled.sql).toContain('b_b');
    expect(planQuery(withoutPolicies(new SemanticModel(DEMO_SEMANTIC_VIEWS), q), settings({ rollups: store('a') }))).not.toBe(onA);
  });
});
