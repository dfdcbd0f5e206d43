/** The size of what the embed shows: `svc:event:content-size`. */
export interface ContentSize {
  height: number;
  width: number;
}

/**
 * Calls `onSize` with the height of `root`'s content (the bottom of its grandchildren: the surface's own elements
 * inside `.embed`), now and after every change, at most once a frame. It measures the content, never the viewport
 * or `root` itself (`.embed` is at least as tall as the iframe), so that a host which sets the iframe's height to
 * the answer causes no new answer: there is no loop, and the height can shrink as well as grow.
 *
 * @example
 * const stop = observeContentSize(document.getElementById('root')!, (size) => channel.emit('svc:event:content-size', size));
 */
export function observeContentSize(root: HTMLElement, onSize: (size: ContentSize) => void): () => void {
  let last: ContentSize | undefined;
  let pending: { frame: number; timer: ReturnType<typeof setTimeout> } | undefined;
  const observed = new Set<Element>();

  const measure = () => {
    if (pending !== undefined) {
      cancelAnimationFrame(pending.frame);
      clearTimeout(pending.timer);
      pending = undefined;
    }
    const top = root.getBoundingClientRect().top;
    let bottom = 0;
    for (const element of observed) {
      const box = element.getBoundingClientRect();
      const margin = parseFloat(getComputedStyle(element).marginBottom) || 0;
      bottom = Math.max(bottom, box.bottom - top + margin);
    }
    const size = { height: Math.ceil(bottom), width: Math.round(root.getBoundingClientRect().width) };
    if (last !== undefined && last.height === size.height && last.width === size.width) return;
    last = size;
    onSize(size);
  };
  // One measure per frame however many changes; a frame the browser does not paint gets no animation frame (a host
  // that hides it): a timer stands in.
  const schedule = () => {
    if (pending === undefined) pending = { frame: requestAnimationFrame(measure), timer: setTimeout(measure, 100) };
  };

  const resizes = new ResizeObserver(schedule);
  const sync = () => {
    const current = new Set(root.querySelectorAll(':scope > * > *'));
    for (const element of observed) {
      if (!current.has(element)) {
        resizes.unobserve(element);
        observed.delete(element);
      }
    }
    for (const element of current) {
      if (!observed.has(element)) {
        resizes.observe(element);
        observed.add(element);
      }
    }
    schedule();
  };
  // A new surface, a status line replaced by the dashboard: the elements to measure change.
  const mutations = new MutationObserver(sync);
  mutations.observe(root, { childList: true, subtree: true });
  sync();
  return () => {
    mutations.disconnect();
    resizes.disconnect();
    if (pending !== undefined) {
      cancelAnimationFrame(pending.frame);
      clearTimeout(pending.timer);
    }
  };
}
