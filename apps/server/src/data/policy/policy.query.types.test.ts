import { describe, expect, it } from 'vitest';
import { compileSemanticQuery } from '../compiler/compiler.query.js';
import type { CompileOptions } from '../compiler/compiler.query.js';
import { matchRollup } from '../preagg/preagg.match.js';
import { SemanticModel } from '../semantic/semantic.model.js';
import type { PreAggregation } from '../semantic/semantic.model.js';
import type { SemanticQuery } from '../semantic/semantic.query.js';
import { DEMO_SEMANTIC_VIEWS } from '../warehouse/warehouse.demo.js';
import { ModelAccess } from './policy.access.js';
import { applyPolicies } from './policy.query.js';

// Issue 32: the type system, not a convention, keeps a query that has not passed the access policies out of the
// compiler and the rollup matcher. Each `@ts-expect-error` below is checked by `npm run typecheck` (this file is
// in apps/server/tsconfig.test.json): were a bare query accepted, the directive would be unused, and tsc fails.

const model = new SemanticModel(DEMO_SEMANTIC_VIEWS);
const orders = model.views.get('orders')!;
const options: CompileOptions = { dialect: 'sqlite', timezone: 'UTC', now: new Date(0), rowCap: 10 };
const daily: PreAggregation = { name: 'daily', measures: ['orders.count'], timeDimension: 'orders.created_at', granularity: 'day' };
const viewer = new ModelAccess(model, { securityContext: {}, userAttributes: {}, groups: [], embedTenant: null });

describe('only a PolicedQuery compiles (policy/policy.query.ts)', () => {
  it('refuses a bare SemanticQuery, or an object shaped like a PolicedQuery, at the compiler and the matcher', () => {
    const query: SemanticQuery = { measures: ['orders.count'] };
    // @ts-expect-error a bare SemanticQuery has not passed the access policies
    expect(() => compileSemanticQuery(query, options)).toThrow();
    // @ts-expect-error a look-alike is no PolicedQuery: only policy.query.ts makes one (the brand is a unique symbol)
    expect(compileSemanticQuery({ model, query, rowFilters: [] }, options).sql).toContain('count(*)');
    // @ts-expect-error the rollup matcher takes a PolicedQuery too
    expect(() => matchRollup(query, orders, daily, { timezone: 'UTC', now: new Date(0), table: 'b' })).toThrow();
  });

  it('compiles a query once it has passed the policies', () => {
    const policed = applyPolicies(viewer, { measures: ['orders.count'] });
    expect(compileSemanticQuery(policed, options).sql).toContain('count(*)');
    expect('policed' in matchRollup(policed, orders, daily, { timezone: 'UTC', now: new Date(0), table: 'b' })).toBe(true);
  });
});
