/// <reference types="node" />
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pythonLiteral, sessionSnippets, shellQuote } from './snippets.js';

// The snippets' quoting, checked by the shells and interpreters that read them (bash, node, python3); e2e/console-
// settings.test.ts runs the whole snippets against svc.

const hasPython = (() => {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const awkward = `O'Brien "quoted" $HOME \`tick\` \\ back\nnew line ünï ✓`;

describe('the Generate Session snippets', () => {
  it('quotes a shell word that bash reads back exactly, quotes, dollars and backticks included', () => {
    expect(execFileSync('bash', ['-c', `printf %s ${shellQuote(awkward)}`], { encoding: 'utf8' })).toBe(awkward);
    expect(shellQuote('plain')).toBe("'plain'");
  });

  (hasPython ? it : it.skip)(`writes Python literals that python3 reads as the same JSON${hasPython ? '' : ' (SKIPPED: no python3)'}`, () => {
    const value = { text: awkward, yes: true, no: false, none: null, n: -1.5e-7, list: [1, 'two', [], {}], nested: { a: [{ b: null }] } };
    const literal = pythonLiteral(value);
    const back = execFileSync('python3', ['-c', `import json, sys\nprint(json.dumps(${literal}, ensure_ascii=False))`], { encoding: 'utf8' });
    expect(JSON.parse(back)).toEqual(value);
  });

  it('puts the dashboard, the viewer and the security context in each, and the key only as SVC_API_KEY', () => {
    const snippets = sessionSnippets('https://svc.example.com', {
      deploymentId: 3, externalId: "o'brien-1", embedTenantName: 'customer-a', securityContext: { tenant: 'customer-a', plan: null }, publicId: 'sales-performance',
    });
    for (const text of Object.values(snippets)) {
      expect(text).toContain('https://svc.example.com/api/v1/embed/generate-session');
      expect(text).toContain('https://svc.example.com/embed/dashboard/sales-performance?session=');
      expect(text).toContain('SVC_API_KEY');
      expect(text).toContain('sales-performance');
      expect(text).toContain('customer-a');
    }
    expect(snippets.curl).toContain(`"externalId":"o'\\''brien-1"`);
    expect(snippets.python).toContain('"plan": None,');
    expect(snippets.node).toContain('"deploymentId": 3,');
  });

  it('is Node code that parses as a module', () => {
    const { node } = sessionSnippets('http://127.0.0.1:3000', { deploymentId: 1, externalId: 'x', embedTenantName: 'customer-b', securityContext: {}, publicId: 'q1-review' });
    // --check parses without running: a syntax error exits non-zero and throws here.
    expect(() => execFileSync(process.execPath, ['--input-type=module', '--check'], { input: node, stdio: ['pipe', 'ignore', 'pipe'] })).not.toThrow();
  });
});
