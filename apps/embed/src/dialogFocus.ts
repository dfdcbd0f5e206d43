import { useLayoutEffect } from 'react';
import type { RefObject } from 'react';

const TABBABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), iframe, [tabindex]:not([tabindex="-1"])';

/** The elements of `root` that Tab reaches, in document order (hidden ones left out). */
export function tabbables(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(TABBABLE)].filter((element) => element.getClientRects().length > 0 && !element.closest('[hidden], [inert]'));
}

/**
 * A menu opened from inside the dialog lives in <body> (ExportMenu portals it out of the widget that would clip it):
 * focus there is still the dialog's.
 */
const belongs = (dialog: HTMLElement, node: Node | null) => node !== null && (dialog.contains(node) || (node instanceof Element && node.closest('[role="menu"]') !== null));

/**
 * A modal dialog's focus (WAI-ARIA dialog pattern; issue 31 item 10): Tab and Shift+Tab cycle through the dialog's
 * tab stops and never leave it (nor the frame, for the host page), focus that lands outside it is brought back, and
 * when the dialog goes the focus returns to the element that had it when the dialog opened (the cell, mark or
 * button that was drilled), if it is still there.
 */
export function useDialogFocus(dialog: RefObject<HTMLElement | null>): void {
  // A layout effect: it reads the element that had the focus before any effect of the dialog moves it.
  useLayoutEffect(() => {
    const returnTo = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const onKeyDown = (event: KeyboardEvent) => {
      const root = dialog.current;
      if (event.key !== 'Tab' || root === null) return;
      const stops = tabbables(root);
      const active = document.activeElement;
      if (stops.length === 0) {
        event.preventDefault();
        return;
      }
      const first = stops[0]!;
      const last = stops[stops.length - 1]!;
      if (!belongs(root, active)) {
        event.preventDefault();
        (event.shiftKey ? last : first).focus();
      } else if (event.shiftKey && active === first) {
        event.preventDefault();
        last.focus();
      } else if (!event.shiftKey && active === last) {
        event.preventDefault();
        first.focus();
      }
    };
    const onFocusIn = (event: FocusEvent) => {
      const root = dialog.current;
      if (root !== null && !belongs(root, event.target as Node)) tabbables(root)[0]?.focus();
    };
    document.addEventListener('keydown', onKeyDown, true);
    document.addEventListener('focusin', onFocusIn);
    return () => {
      document.removeEventListener('keydown', onKeyDown, true);
      document.removeEventListener('focusin', onFocusIn);
      if (returnTo?.isConnected) returnTo.focus();
    };
  }, [dialog]);
}
