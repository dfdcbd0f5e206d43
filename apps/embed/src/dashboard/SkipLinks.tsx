import type { MouseEvent, RefObject } from 'react';
import { tabbables } from '../dialogFocus.js';
import type { Translate } from '../i18n.js';

/**
 * The first tab stops of the dashboard, shown when focused (issue 31 item 10): past the header's controls to the
 * first widget, and past every widget to the comments' new-thread box (opening the panel first if it is collapsed). Each widget is one tab stop after that, so Tab goes from widget to widget.
 */
export function SkipLinks({ t, main, comments }: { t: Translate; main: RefObject<HTMLElement | null>; comments: boolean }) {
  const go = (event: MouseEvent<HTMLAnchorElement>, target: () => HTMLElement | null | undefined) => {
    event.preventDefault();
    target()?.focus();
  };
  const firstWidget = () => {
    const grid = main.current?.querySelector<HTMLElement>('.widget-grid, .app-frame');
    return grid ? tabbables(grid)[0] ?? grid : undefined;
  };
  const commentBox = () => {
    const panel = document.getElementById('comment-panel');
    const open = panel !== null && !panel.hidden && panel.getClientRects().length > 0;
    return open ? tabbables(panel).find((element) => element instanceof HTMLTextAreaElement) : undefined;
  };
  // A collapsed panel (the frame too narrow for it beside the grid) is opened first: the link promises the comments,
  // and its box takes the focus once the panel has rendered (a few frames at most); failing that, the button does.
  const goToComments = (event: MouseEvent<HTMLAnchorElement>) => {
    event.preventDefault();
    const box = commentBox();
    if (box !== undefined) return box.focus();
    const toggle = document.querySelector<HTMLElement>('[aria-controls="comment-panel"]');
    toggle?.click();
    let frames = 0;
    const focusWhenShown = () => {
      const shown = commentBox();
      if (shown !== undefined) shown.focus();
      else if ((frames += 1) < 30) requestAnimationFrame(focusWhenShown);
      else toggle?.focus();
    };
    requestAnimationFrame(focusWhenShown);
  };
  return (
    <nav className="skip-links" aria-label={t('skipLinks')}>
      <a href="#widgets" onClick={(event) => go(event, firstWidget)}>{t('skipToWidgets')}</a>
      {comments ? <a href="#comment-panel" onClick={goToComments}>{t('skipToComments')}</a> : null}
    </nav>
  );
}
