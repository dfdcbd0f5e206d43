import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { authorLayoutWidth } from '../dashboard/layout.js';
import { isPanelOpenAtStart, parseCommentsStart } from './panelPlacement.js';

/** The demo dashboard's layout, as apps/server/demo/demo.json has it (lg 1100 and md 900, both 12 cols). */
function demoLayout() {
  const demo = JSON.parse(readFileSync(new URL('../../../server/demo/demo.json', import.meta.url), 'utf8')) as { accounts: Array<{ deployments: Array<{ items: Array<{ ref: string; dashboard?: { config: { layout: Parameters<typeof authorLayoutWidth>[0] } } }> }> }> };
  return demo.accounts[0]!.deployments[0]!.items.find((i) => i.ref === 'wb-sales-performance')!.dashboard!.config.layout;
}

describe('authorLayoutWidth', () => {
  it("is the narrowest breakpoint, from lg down, that keeps lg's cols", () => {
    expect(authorLayoutWidth({ breakpoints: { lg: 1100, md: 900, sm: 640 }, cols: { lg: 12, md: 12, sm: 6 } })).toBe(900);
    expect(authorLayoutWidth({ breakpoints: { lg: 1100, md: 900, sm: 640 }, cols: { lg: 12, md: 10, sm: 12 } })).toBe(1100);
  });

  it("falls back on react-grid-layout's defaults (lg 1200 with 12 cols, md 10 cols)", () => {
    expect(authorLayoutWidth(undefined)).toBe(1200);
    expect(authorLayoutWidth({ cols: { md: 12 } })).toBe(996);
  });
});

describe('the comment panel at start', () => {
  it('starts collapsed in the 886 px frame of the demo host at 1280 px, where the grid beside it would lose the author layout', () => {
    expect(isPanelOpenAtStart('auto', demoLayout(), 886)).toBe(false);
  });

  it('starts open when the grid beside it is still wider than the author layout needs (the demo host at 1920 px)', () => {
    expect(isPanelOpenAtStart('auto', demoLayout(), 1526)).toBe(true);
    // 900 px of grid is md's own breakpoint, not above it: react-grid-layout would show sm.
    expect(isPanelOpenAtStart('auto', demoLayout(), 900 + 32 + 16 + 340)).toBe(false);
    expect(isPanelOpenAtStart('auto', demoLayout(), 901 + 32 + 16 + 340)).toBe(true);
  });

  it('starts collapsed at or under 720 px, where the panel leaves the row, whatever the layout needs', () => {
    expect(isPanelOpenAtStart('auto', { breakpoints: { lg: 100, md: 50, sm: 20, xs: 10 } }, 720)).toBe(false);
  });

  it('does what the host asked with open and collapsed, whatever the width', () => {
    for (const width of [320, 886, 2560]) {
      expect(isPanelOpenAtStart('open', demoLayout(), width)).toBe(true);
      expect(isPanelOpenAtStart('collapsed', demoLayout(), width)).toBe(false);
    }
  });

  it('reads auto from a missing or unknown URL value', () => {
    expect(parseCommentsStart(undefined)).toBe('auto');
    expect(parseCommentsStart('OPEN')).toBe('auto');
    expect(parseCommentsStart('collapsed')).toBe('collapsed');
  });
});
