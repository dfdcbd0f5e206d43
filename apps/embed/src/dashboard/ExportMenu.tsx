import { useEffect, useId, useRef, useState } from 'react';
import type { KeyboardEvent, RefObject } from 'react';
import { createPortal } from 'react-dom';
import type { WidgetData } from '../api.js';
import { useDashboardData } from './data.js';

export interface ExportMenuProps {
  widgetId: string;
  title: string;
  data: WidgetData;
  /** The widget as it shows: what its PNG is a picture of. */
  frame: RefObject<HTMLElement | null>;
  /**
   * One more item after the formats (issue 35: "Explore", settings.explore create), so that a chart keeps at most two
   * tab stops, this menu's button and its content.
   */
  extra?: { label: string; onSelect(): void } | undefined;
}

const FORMATS = ['csv', 'xlsx', 'png', 'pdf'] as const;
type ExportFormat = (typeof FORMATS)[number];

/**
 * A widget's exports (shown only with `allowExport=true`) behind one button, as Metabase and Looker do (issue 22):
 * the WAI-ARIA menu button. Enter, Space or ArrowDown open the menu on its first item, ArrowUp on its last;
 * arrows, Home and End move; Escape closes it and gives the focus back to the button; Tab or a click elsewhere
 * closes it. The file is made here; the host hears `download`.
 */
export function ExportMenu({ widgetId, title, data, frame, extra }: ExportMenuProps) {
  const { t, onDownload, onError, exports: sources, format: formatters } = useDashboardData();
  const [open, setOpen] = useState(false);
  // In <body>, fixed under the button: a widget clips what overflows it (and the grid moves widgets by transforms).
  const [place, setPlace] = useState({ top: 0, right: 0 });
  const menuId = useId();
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const items = () => [...(menu.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]') ?? [])];

  const show = (focus: 'first' | 'last') => {
    const box = button.current!.getBoundingClientRect();
    setPlace({ top: box.bottom + 2, right: document.documentElement.clientWidth - box.right });
    setOpen(true);
    // The items are in the DOM (hidden) already: focus one once the menu shows.
    requestAnimationFrame(() => {
      const all = items();
      (focus === 'first' ? all[0] : all[all.length - 1])?.focus();
    });
  };
  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };

  useEffect(() => {
    if (!open) return;
    const onPointer = (event: PointerEvent) => {
      if (!menu.current?.contains(event.target as Node) && !button.current?.contains(event.target as Node)) setOpen(false);
    };
    // The menu is placed once: a scroll or a resize closes it rather than leave it behind.
    const onMove = () => setOpen(false);
    document.addEventListener('pointerdown', onPointer);
    window.addEventListener('scroll', onMove, true);
    window.addEventListener('resize', onMove);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      window.removeEventListener('scroll', onMove, true);
      window.removeEventListener('resize', onMove);
    };
  }, [open]);

  const run = (format: ExportFormat) => {
    close(true);
    import('./exports.js').then(async (exports) => {
      if (format === 'csv') return onDownload({ format, target: 'widget', widgetId, title, rowCount: exports.downloadCsv({ title, data }) });
      if (format === 'xlsx') return onDownload({ format, target: 'widget', widgetId, title, rowCount: await exports.downloadXlsx([{ title, data }], title) });
      // The whole widget, title included, as the viewer sees it (the menu's button is left out).
      if (format === 'png') await exports.downloadPng(frame.current!, title);
      else await exports.downloadPdf(frame.current!, title, new Map([...sources, [widgetId, { title, data }]]), formatters.locale);
      return onDownload({ format, target: 'widget', widgetId, title });
    }).catch((error: unknown) => onError(error, 'download'));
  };

  const onButtonKey = (event: KeyboardEvent<HTMLElement>) => {
    if (event.key === 'ArrowDown' || event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      show('first');
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      show('last');
    }
  };
  const onMenuKey = (event: KeyboardEvent<HTMLElement>) => {
    const all = items();
    const at = all.indexOf(document.activeElement as HTMLButtonElement);
    const move = (index: number) => {
      event.preventDefault();
      all[(index + all.length) % all.length]?.focus();
    };
    if (event.key === 'ArrowDown') move(at + 1);
    else if (event.key === 'ArrowUp') move(at - 1);
    else if (event.key === 'Home') move(0);
    else if (event.key === 'End') move(all.length - 1);
    else if (event.key === 'Escape') {
      event.preventDefault();
      close(true);
    } else if (event.key === 'Tab') close(false);
  };

  return (
    <div className="export-menu" data-export-skip="true">
      <button ref={button} type="button" className="export-trigger" aria-haspopup="menu" aria-expanded={open} aria-controls={menuId}
        aria-label={t('exportWidget', { title })} onClick={() => (open ? close(false) : show('first'))} onKeyDown={onButtonKey}>
        {t('exportMenu')} <span aria-hidden="true">▾</span>
      </button>
      {createPortal(<div ref={menu} id={menuId} role="menu" className="export-items" data-export-for={widgetId} aria-label={t('exportWidget', { title })} hidden={!open} style={place} onKeyDown={onMenuKey}>
        {FORMATS.map((format) => (
          <button key={format} type="button" role="menuitem" tabIndex={-1} className="export" data-format={format} onClick={() => run(format)}
            aria-label={t('exportAs', { title, format: format.toUpperCase() })}>
            {format.toUpperCase()}
          </button>
        ))}
        {extra !== undefined ? (
          <button type="button" role="menuitem" tabIndex={-1} className="export-extra" onClick={() => { close(true); extra.onSelect(); }}>{extra.label}</button>
        ) : null}
      </div>, document.body)}
    </div>
  );
}
