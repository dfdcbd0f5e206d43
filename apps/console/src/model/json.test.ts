import { describe, expect, it } from 'vitest';
import { jsonSyntaxProblem } from './json.js';

describe('the model editor\'s JSON check', () => {
  it('passes JSON, and names the line and column of a syntax error', () => {
    expect(jsonSyntaxProblem('[{"name": "orders"}]')).toBeUndefined();
    const problem = jsonSyntaxProblem('[\n  {"name": "orders"},\n  {"name": }\n]');
    expect(problem).toMatch(/line 3 column 12/);
    expect(jsonSyntaxProblem('')).toMatch(/value expected/);
    expect(jsonSyntaxProblem('[1,]')).toMatch(/line 1 column 4: a value expected/);
    expect(jsonSyntaxProblem('{"a": 1} // no')).toMatch(/comments are not JSON/);
  });
});
