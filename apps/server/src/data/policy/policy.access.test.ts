import { describe, expect, it } from 'vitest';
import { compileSemanticQuery } from '../compiler/compiler.query.js';
import { DEMO_SEMANTIC_VIEWS } from '../warehouse/warehouse.demo.js';
import { SemanticModel } from '../semantic/semantic.model.js';
import { semanticViewsProblem } from '../data.views.js';
import type { SemanticView } from '../semantic/semantic.model.js';
import { bindFilter, ModelAccess, parseReference, policyAwareSqlProblem, readReference, viewAccess } from './policy.access.js';
import type { AccessSubject } from './policy.access.js';
import type { AccessPolicy } from '../semantic/semantic.model.js';
import { applyPolicies, derivePoliced, withoutPolicies } from './policy.query.js';
import type { SemanticQuery } from '../semantic/semantic.query.js';

const subject = (over: Partial<AccessSubject> = {}): AccessSubject => ({ securityContext: {}, userAttributes: {}, groups: [], embedTenant: null, ...over });
const orders = (accessPolicy: AccessPolicy[]): SemanticView => ({ ...DEMO_SEMANTIC_VIEWS[0]!, accessPolicy });
const tenantFilter = { member: 'orders.status', operator: 'equals' as const, values: ['{securityContext.tenant}'] };

describe('access policies: references', () => {
  it('reads whole-value references of the four roots, spaces allowed inside the braces', () => {
    expect(parseReference('{securityContext.tenant_id}')).toEqual({ root: 'securityContext', path: ['tenant_id'] });
    expect(parseReference('{ userAttributes.region.code }')).toEqual({ root: 'userAttributes', path: ['region', 'code'] });
    expect(parseReference('{groups}')).toEqual({ root: 'groups', path: [] });
    expect(parseReference('plain')).toBeUndefined();
    expect(parseReference(42)).toBeUndefined();
    expect(parseReference('tenant-{securityContext.x}')).toBe('malformed');
    expect(parseReference('{securityContext.x')).toBe('malformed');
  });

  it('reads scalars and lists of scalars; a missing key, null, an object or an empty list reads nothing', () => {
    const s = subject({ securityContext: { t: 'a', n: 3, list: ['a', 'b'], empty: [], nested: { k: true }, none: null, mixed: ['a', {}] }, groups: ['g1'], embedTenant: 'acme' });
    const read = (text: string) => readReference(parseReference(text) as never, s);
    expect(read('{securityContext.t}')).toEqual(['a']);
    expect(read('{securityContext.n}')).toEqual([3]);
    expect(read('{securityContext.list}')).toEqual(['a', 'b']);
    expect(read('{securityContext.nested.k}')).toEqual([true]);
    expect(read('{groups}')).toEqual(['g1']);
    expect(read('{embedTenant}')).toEqual(['acme']);
    for (const missing of ['{securityContext.absent}', '{securityContext.empty}', '{securityContext.nested}', '{securityContext.none}', '{securityContext.mixed}', '{userAttributes.t}']) {
      expect(read(missing), missing).toBeUndefined();
    }
  });

  it("never reads an object's prototype: {securityContext.constructor} and __proto__ are missing", () => {
    const s = subject({ securityContext: { t: 'a' } });
    for (const text of ['{securityContext.constructor}', '{securityContext.__proto__}', '{securityContext.t.length}', '{securityContext.toString}']) {
      expect(readReference(parseReference(text) as never, s), text).toBeUndefined();
    }
  });

  // Own keys only also guards against prototype pollution elsewhere in the process (a JSON context has no scalar on its prototype).
  it('never reads a key that an object inherits: a polluted Object.prototype adds no value to a reference', () => {
    const prototype = Object.prototype as Record<string, unknown>;
    prototype.svcPollutedTenant = 'acme';
    try {
      const s = subject({ securityContext: JSON.parse('{"org": {}}') as Record<string, unknown>, userAttributes: {} });
      for (const text of ['{securityContext.svcPollutedTenant}', '{securityContext.org.svcPollutedTenant}', '{userAttributes.svcPollutedTenant}']) {
        expect(readReference(parseReference(text) as never, s), text).toBeUndefined();
      }
      expect(bindFilter({ member: 'status', operator: 'equals', values: ['{securityContext.svcPollutedTenant}'] }, orders([]), s)).toHaveProperty('never');
    } finally {
      delete prototype.svcPollutedTenant;
    }
  });

  it('binds a filter: a list reference becomes every item, a missing one makes the filter match nothing, a bare member gets its view', () => {
    const view = orders([]);
    expect(bindFilter({ member: 'status', operator: 'equals', values: ['{securityContext.list}', 'x'] }, view, subject({ securityContext: { list: ['a', 'b'] } })))
      .toEqual({ member: 'orders.status', operator: 'equals', values: ['a', 'b', 'x'] });
    expect(bindFilter(tenantFilter, view, subject())).toEqual({ never: 'the session has no securityContext.tenant' });
    expect(bindFilter({ or: [tenantFilter, { member: 'orders.status', operator: 'set' }] }, view, subject()))
      .toEqual({ or: [{ never: 'the session has no securityContext.tenant' }, { member: 'orders.status', operator: 'set' }] });
    expect(bindFilter({ member: 'customers.name', operator: 'equals', values: ['x'] }, view, subject())).toHaveProperty('never');
  });

  // The import refuses such a value; a policy that reached the data path some other way must still deny, not compare.
  it('binds a value with braces that is no whole reference as a filter that matches no row, never as a literal to compare', () => {
    const view = orders([]);
    const s = subject({ securityContext: { tenant: 'x' } });
    for (const value of ['t-{securityContext.tenant}', '{securityContext.tenant', '{securityContext.tenant}}']) {
      expect(bindFilter({ member: 'status', operator: 'notEquals', values: [value] }, view, s), value).toEqual({ never: `${JSON.stringify(value)} is not a reference` });
    }
  });
});

describe('access policies: how policies combine (Cube access_policy)', () => {
  it('a view without policies is open to everyone', () => {
    expect(viewAccess(orders([]), subject())).toEqual({ members: 'all', rows: 'all' });
  });

  it('policies that match nobody give no member and no row', () => {
    const access = viewAccess(orders([{ group: 'finance' }]), subject({ groups: ['sales'] }));
    expect(access.members).toEqual(new Set());
    expect(access.rows).toEqual([]);
  });

  it('matches by group, by a list of groups and by *', () => {
    const view = orders([{ groups: ['a', 'b'], memberLevel: { includes: ['count'] } }, { group: '*', memberLevel: { includes: ['revenue'] } }]);
    expect(viewAccess(view, subject({ groups: ['b'] })).members).toEqual(new Set(['orders.count', 'orders.revenue']));
    expect(viewAccess(view, subject()).members).toEqual(new Set(['orders.revenue']));
  });

  it('unions member sets: includes minus excludes of each matching policy', () => {
    const view = orders([
      { group: 'a', memberLevel: { includes: '*', excludes: ['amount', 'revenue'] } },
      { group: 'b', memberLevel: { includes: ['orders.amount'] } },
    ]);
    const a = viewAccess(view, subject({ groups: ['a'] })).members as Set<string>;
    expect(a.has('orders.count')).toBe(true);
    expect(a.has('orders.amount')).toBe(false);
    expect(a.has('orders.revenue')).toBe(false);
    const ab = viewAccess(view, subject({ groups: ['a', 'b'] })).members as Set<string>;
    expect(ab.has('orders.amount')).toBe(true);
    expect(ab.has('orders.revenue')).toBe(false);
    expect(viewAccess(orders([{ group: 'a' }, { group: 'b', memberLevel: { includes: ['count'] } }]), subject({ groups: ['a', 'b'] })).members).toBe('all');
  });

  it('ORs row filters across matching policies; a policy without rowLevel or with allowAll opens every row', () => {
    const view = orders([
      { group: 'a', rowLevel: { filters: [tenantFilter] } },
      { group: 'b', rowLevel: { filters: [{ member: 'orders.amount', operator: 'gt', values: [100] }, { member: 'orders.quantity', operator: 'gt', values: [1] }] } },
      { group: 'admins', rowLevel: { allowAll: true } },
      { group: 'plain' },
    ]);
    const s = { securityContext: { tenant: 'x' } };
    expect(viewAccess(view, subject({ ...s, groups: ['a', 'b'] })).rows).toEqual([
      [{ member: 'orders.status', operator: 'equals', values: ['x'] }],
      [{ member: 'orders.amount', operator: 'gt', values: [100] }, { member: 'orders.quantity', operator: 'gt', values: [1] }],
    ]);
    expect(viewAccess(view, subject({ ...s, groups: ['a', 'admins'] })).rows).toBe('all');
    expect(viewAccess(view, subject({ ...s, groups: ['a', 'plain'] })).rows).toBe('all');
  });
});

describe('access policies in compiled SQL', () => {
  const model = (policies: AccessPolicy[]) => new SemanticModel([orders(policies), ...DEMO_SEMANTIC_VIEWS.slice(1)]);
  const compile = (m: SemanticModel, s: AccessSubject, query: SemanticQuery) =>
    compileSemanticQuery(applyPolicies(new ModelAccess(m, s), query), { dialect: 'sqlite', timezone: 'UTC', now: new Date(0), rowCap: 100 });

  it('ANDs the row filter into WHERE as a bound parameter, never as SQL text', () => {
    const m = model([{ group: '*', rowLevel: { filters: [tenantFilter] } }]);
    const evil = "x' OR 1=1 --";
    const compiled = compile(m, subject({ securityContext: { tenant: evil } }), { measures: ['orders.count'], filters: [{ member: 'orders.quantity', operator: 'gt', values: [1] }] });
    expect(compiled.sql).toContain('"orders"."status" = ?');
    expect(compiled.sql).not.toContain(evil);
    expect(compiled.parameters).toContain(evil);
  });

  it('a missing reference compiles to a condition that holds for no row (the filter is never dropped)', () => {
    const m = model([{ group: '*', rowLevel: { filters: [tenantFilter] } }]);
    expect(compile(m, subject(), { measures: ['orders.count'] }).sql).toMatch(/WHERE \(\(1 = 0\)\)/);
  });

  // The import refuses both of these policies; the compiler is the last line, and must hold without the import.
  it('a row filter on a measure compiles to a condition that holds for no row, never to a WHERE on an aggregate', () => {
    const m = model([{ group: '*', rowLevel: { filters: [{ member: 'orders.revenue', operator: 'gt', values: [0] }] } }]);
    const compiled = compile(m, subject(), { measures: ['orders.count'], dimensions: ['orders.status'] });
    expect(compiled.sql).toMatch(/WHERE \(\(1 = 0\)\)/);
    expect(compiled.sql).not.toMatch(/sum\(/);
  });

  it('a row filter whose value with braces is no reference compiles to a condition that holds for no row', () => {
    const m = model([{ group: '*', rowLevel: { filters: [{ member: 'status', operator: 'notEquals', values: ['t-{securityContext.tenant}'] }] } }]);
    const compiled = compile(m, subject({ securityContext: { tenant: 'x' } }), { measures: ['orders.count'] });
    expect(compiled.sql).toMatch(/WHERE \(\(1 = 0\)\)/);
    expect(compiled.parameters).not.toContain('t-{securityContext.tenant}');
  });

  it("a view that gives the viewer no row list compiles to no row, even under an access that shows every member (a rollup's)", () => {
    const m = model([{ group: 'finance' }]);
    const query = { measures: ['orders.count'] };
    const compiled = compileSemanticQuery(derivePoliced(withoutPolicies(m, query), m, query, [{ view: 'orders', rows: [] }]), {
      dialect: 'sqlite', timezone: 'UTC', now: new Date(0), rowCap: 100,
    });
    expect(compiled.sql).toMatch(/WHERE 1 = 0/);
  });

  it("a joined view's policies come with it; an unused joined view's do not", () => {
    const customers: SemanticView = { ...DEMO_SEMANTIC_VIEWS[1]!, accessPolicy: [{ group: '*', rowLevel: { filters: [{ member: 'region', operator: 'equals', values: ['{userAttributes.region}'] }] } }] };
    const m = new SemanticModel([DEMO_SEMANTIC_VIEWS[0]!, customers, DEMO_SEMANTIC_VIEWS[2]!]);
    const s = subject({ userAttributes: { region: 'Europe' } });
    expect(compile(m, s, { measures: ['orders.count'], dimensions: ['customers.city'] }).sql).toContain('"customers"."region" = ?');
    expect(compile(m, s, { measures: ['orders.count'], dimensions: ['orders.status'] }).sql).not.toContain('region');
  });

  it('a hidden member is a 403 naming it, wherever the query names it', () => {
    const m = model([{ group: '*', memberLevel: { includes: '*', excludes: ['amount'] } }]);
    const queries = [
      { measures: ['orders.count'], dimensions: ['orders.amount'] },
      { measures: ['orders.count'], filters: [{ member: 'orders.amount', operator: 'gt' as const, values: [1] }] },
      { measures: ['orders.count'], filters: [{ or: [{ member: 'orders.status', operator: 'set' as const }, { member: 'orders.amount', operator: 'set' as const }] }] },
    ];
    for (const query of queries) {
      expect(() => compile(m, subject(), query)).toThrow(expect.objectContaining({ code: 'forbidden', message: expect.stringContaining('orders.amount is not available to you') }));
    }
    expect(compile(m, subject(), { measures: ['orders.count'], dimensions: ['orders.status'] }).sql).not.toContain('1 = 0');
  });
});

describe('access policies in the import: semantic checks', () => {
  const problem = (policies: AccessPolicy[]) => semanticViewsProblem([orders(policies), ...DEMO_SEMANTIC_VIEWS.slice(1)]);

  it('accepts a well-formed policy', () => {
    expect(problem([{ group: '*', memberLevel: { includes: '*', excludes: ['amount'] }, rowLevel: { filters: [tenantFilter, { or: [{ member: 'created_at', operator: 'afterDate', values: ['{securityContext.since}'] }] }] } }])).toBeUndefined();
  });

  it.each([
    [[{ memberLevel: { includes: ['count'] } }], '[0].accessPolicy[0]', 'give group'],
    [[{ group: 'a', groups: ['b'] }], '[0].accessPolicy[0]', 'not both'],
    [[{ group: '*', memberLevel: { includes: ['profit'] } }], '[0].accessPolicy[0].memberLevel.includes[0]', 'not a member of view orders'],
    [[{ group: '*', memberLevel: { excludes: ['customers.name'] } }], '[0].accessPolicy[0].memberLevel.excludes[0]', 'not a member of view orders'],
    [[{ group: '*', rowLevel: { allowAll: true, filters: [tenantFilter] } }], '[0].accessPolicy[0].rowLevel', 'allowAll'],
    [[{ group: '*', rowLevel: {} }], '[0].accessPolicy[0].rowLevel', 'allowAll'],
    [[{ group: '*', rowLevel: { filters: [{ member: 'revenue', operator: 'gt', values: [1] }] } }], '[0].accessPolicy[0].rowLevel.filters[0].member', 'is a measure'],
    [[{ group: '*', rowLevel: { filters: [{ member: 'customers.region', operator: 'equals', values: ['x'] }] } }], '[0].accessPolicy[0].rowLevel.filters[0].member', "reads that view's members"],
    [[{ group: '*', rowLevel: { filters: [{ member: 'status', operator: 'equals', values: ['{session.tenant}'] }] } }], '[0].accessPolicy[0].rowLevel.filters[0].values[0]', 'unknown root'],
    [[{ group: '*', rowLevel: { filters: [{ member: 'status', operator: 'equals', values: ['t-{securityContext.x}'] }] } }], '[0].accessPolicy[0].rowLevel.filters[0].values[0]', 'is not a reference'],
    [[{ group: '*', rowLevel: { filters: [{ and: [{ member: 'status', operator: 'contains', values: ['{securityContext}'] }] }] } }], '[0].accessPolicy[0].rowLevel.filters[0].and[0].values[0]', 'name a key'],
    [[{ group: '*', rowLevel: { filters: [{ member: 'quantity', operator: 'contains', values: ['5'] }] } }], '[0].accessPolicy[0].rowLevel.filters[0].operator', 'applies to string dimensions'],
    [[{ group: '*', rowLevel: { filters: [{ member: 'quantity', operator: 'equals', values: ['many'] }] } }], '[0].accessPolicy[0].rowLevel.filters[0].values[0]', 'is not a number'],
  ] as Array<[AccessPolicy[], string, string]>)('refuses %j at %s', (policies, path, message) => {
    const found = problem(policies);
    expect(found?.path).toBe(path);
    expect(found?.message).toContain(message);
  });

  it('a policy-aware raw SQL snapshot binds at least one well-formed reference', () => {
    expect(policyAwareSqlProblem('SELECT * FROM orders WHERE tenant = {securityContext.tenant}')).toBeUndefined();
    expect(policyAwareSqlProblem('SELECT 1')).toContain('at least one reference');
    expect(policyAwareSqlProblem('SELECT * FROM t WHERE a = {securityContext}')).toContain('name a key');
    expect(policyAwareSqlProblem(null)).toContain('needs sqlQuery');
  });
});
