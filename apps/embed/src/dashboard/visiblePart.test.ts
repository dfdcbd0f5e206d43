import { describe, expect, it } from 'vitest';
import { dialogPlacement } from './visiblePart.js';

describe('dialogPlacement', () => {
  it('centres the dialog in the visible part of a tall frame, not in the middle of the frame', () => {
    // The demo at 420 px with autoResize: a 3,700 px frame, the viewer looking at 1,480-2,280.
    const placed = dialogPlacement({ top: 1480, height: 800 }, 3700)!;
    expect(placed.paddingTop).toBe(1496);
    expect(3700 - placed.paddingBottom).toBe(2264);
    expect(placed.maxHeight).toBe(768);
    expect(placed.paddingTop + placed.maxHeight + placed.paddingBottom).toBe(3700);
  });

  it('fills the frame, less the margins, when all of it is visible', () => {
    expect(dialogPlacement({ top: 0, height: 600 }, 600)).toEqual({ paddingTop: 16, paddingBottom: 16, maxHeight: 568 });
  });

  it('gives a dialog at least 280 px where only a sliver of the frame shows, growing into the frame', () => {
    // The frame's top 100 px show at the bottom of the host's viewport.
    expect(dialogPlacement({ top: 0, height: 100 }, 3000)).toEqual({ paddingTop: 16, paddingBottom: 3000 - 280 + 16, maxHeight: 248 });
    // Its last 100 px show at the top: the box grows upwards, inside the frame.
    expect(dialogPlacement({ top: 2900, height: 100 }, 3000)).toEqual({ paddingTop: 2720 + 16, paddingBottom: 16, maxHeight: 248 });
    // A frame shorter than that: all of it.
    expect(dialogPlacement({ top: 0, height: 100 }, 200)).toEqual({ paddingTop: 16, paddingBottom: 16, maxHeight: 168 });
  });

  it('leaves the dialog centred on the frame when nothing of it is visible', () => {
    expect(dialogPlacement(undefined, 3000)).toBeUndefined();
    expect(dialogPlacement({ top: 0, height: 0 }, 3000)).toBeUndefined();
  });
});
