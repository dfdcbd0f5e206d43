import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Frame, Page } from 'playwright-core';
import { expect } from 'vitest';

/** axe-core's browser bundle, read once; evaluated in the page (CDP evaluation is not subject to the page's CSP). */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  /** One entry per element: its selector and axe's summary of what is wrong. */
  nodes: Array<{ target: string; summary: string }>;
}

/** The impacts issue 31 item 11 holds at zero. */
export const BLOCKING_IMPACTS = ['serious', 'critical'];

/**
 * Runs axe-core (WCAG 2.0/2.1/2.2 A and AA rules and axe's best practices) on a page or a frame, without descending
 * into iframes (an embed is checked in its own frame, where its own styles apply).
 */
export async function runAxe(target: Page | Frame): Promise<AxeViolation[]> {
  const loaded = await target.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe === 'object');
  if (!loaded) await target.evaluate(AXE_SOURCE);
  return target.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[]; failureSummary?: string }> }> }> } }).axe;
    const result = await axe.run(document, {
      iframes: false,
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.map(String).join(' '), summary: (n.failureSummary ?? '').replace(/\s+/g, ' ').slice(0, 300) })),
    }));
  });
}

/** The serious and critical violations only. */
export const blocking = (violations: readonly AxeViolation[]) => violations.filter((v) => BLOCKING_IMPACTS.includes(v.impact ?? ''));

/** Counts by impact and by rule (`rule: elements`), for a report. */
export function countViolations(violations: readonly AxeViolation[]): { byImpact: Record<string, number>; byRule: Record<string, number> } {
  const byImpact: Record<string, number> = {};
  const byRule: Record<string, number> = {};
  for (const v of violations) {
    byImpact[v.impact ?? 'unknown'] = (byImpact[v.impact ?? 'unknown'] ?? 0) + v.nodes.length;
    byRule[`${v.id} (${v.impact ?? '?'})`] = v.nodes.length;
  }
  return { byImpact, byRule };
}

/** A violation list as readable text (rule, impact, the first few elements), for a failing assertion's message. */
export const describeViolations = (violations: readonly AxeViolation[]) => violations.map((v) =>
  `${v.id} [${v.impact}] ${v.help}\n${v.nodes.slice(0, 5).map((n) => `  ${n.target}: ${n.summary}`).join('\n')}`).join('\n');

/** Fails the test when axe finds a serious or critical violation on a page (`name` says which, in the failure). */
export async function expectNoBlocking(target: Page | Frame, name: string): Promise<void> {
  const violations = blocking(await runAxe(target));
  expect(violations, `axe on the ${name} page:\n${describeViolations(violations)}`).toEqual([]);
}
