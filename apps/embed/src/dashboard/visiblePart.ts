/** The part of the frame's viewport the viewer sees, in the frame's viewport coordinates (CSS px). */
export interface VisiblePart {
  top: number;
  height: number;
}

/**
 * Where in the frame the viewer can see, measured through `element` (which must cover the frame's viewport, as a
 * dialog's fixed backdrop does): its intersection with the top-level viewport, clipped by every frame and scroll box
 * above it. An IntersectionObserver with no root is the one browser API that tells a frame, even a cross-origin one,
 * the visible part of itself; it answers once after `observe`. Resolves undefined when the frame is not on screen
 * at all, or when no answer comes within `timeoutMs` (a frame the browser does not render).
 *
 * With the SDK's `autoResize` the frame is as tall as the dashboard, often several screens, and its viewport is all
 * of it: a dialog centred on the frame's viewport opened screens away from where the viewer clicked (y = -213 px at
 * 1920 px, -1292 px at 420 px).
 *
 * @example
 * const visible = await measureVisiblePart(backdrop); // { top: 1480, height: 800 } in a 3,700 px frame
 */
export function measureVisiblePart(element: Element, timeoutMs = 250): Promise<VisiblePart | undefined> {
  return new Promise((resolve) => {
    if (typeof IntersectionObserver === 'undefined') {
      resolve(undefined);
      return;
    }
    const observer = new IntersectionObserver((entries) => {
      const entry = entries[entries.length - 1];
      finish(entry?.isIntersecting ? { top: entry.intersectionRect.top, height: entry.intersectionRect.height } : undefined);
    });
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    const finish = (visible: VisiblePart | undefined) => {
      clearTimeout(timer);
      observer.disconnect();
      resolve(visible);
    };
    observer.observe(element);
  });
}

/** Space kept between the dialog and the edges of what the viewer sees. */
const MARGIN = 16;
/** The least height a dialog gets: where less of the frame shows, the dialog extends past it and its focused button scrolls it in. */
const MIN_HEIGHT = 280;

/** How a dialog's backdrop (a flex box over the frame's viewport, its panel centred) is padded to centre the panel in the visible part. */
export interface DialogPlacement {
  paddingTop: number;
  paddingBottom: number;
  /** The panel's largest height: the visible part, less the margins. */
  maxHeight: number;
}

/**
 * Centres a dialog in the visible part of the frame (`measureVisiblePart`), whose viewport is `viewportHeight` tall:
 * the backdrop still covers the whole frame, its padding leaves the visible part as the box the panel is centred in.
 * Undefined when nothing is visible: the dialog stays centred on the frame's viewport.
 *
 * @example
 * dialogPlacement({ top: 1480, height: 800 }, 3700) // => { paddingTop: 1496, paddingBottom: 1436, maxHeight: 768 }
 */
export function dialogPlacement(visible: VisiblePart | undefined, viewportHeight: number): DialogPlacement | undefined {
  if (visible === undefined || visible.height <= 0) return undefined;
  const height = Math.min(viewportHeight, Math.max(visible.height, MIN_HEIGHT));
  // A sliver of the frame on screen: the box grows from it into the frame, downwards while the frame has room.
  const top = Math.max(0, Math.min(visible.top, viewportHeight - height));
  return {
    paddingTop: Math.round(top + MARGIN),
    paddingBottom: Math.round(Math.max(0, viewportHeight - top - height) + MARGIN),
    maxHeight: Math.round(height - 2 * MARGIN),
  };
}
