import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { fetchWidgetData } from '../api.js';
import type { WidgetData, WidgetDataRequest } from '../api.js';
import { useDialogFocus } from '../dialogFocus.js';
import type { Formatters } from '../format.js';
import type { Translate } from '../i18n.js';
import type { EmbedSession } from '../session.js';
import { formatCell } from './cells.js';
import { isNotAvailable } from './data.js';
import type { Drilldown, DownloadEvent } from './data.js';
import { NotAvailable } from './NotAvailable.js';
import { dialogPlacement, measureVisiblePart } from './visiblePart.js';
import type { DialogPlacement } from './visiblePart.js';

/**
 * The rows under a drilled mark, in a dialog over the dashboard: formatted as their columns declare, with how many
 * there are ("the first 1,000 of 5,842 rows"), and (with `allowExport`) a CSV of the rows listed.
 */
export function DrillView({ drill, publicId, session, request, t, format, allowExport, onDownload, onClose, onError }: {
  drill: Drilldown; publicId: string; session: EmbedSession; request: WidgetDataRequest; t: Translate; format: Formatters;
  allowExport: boolean; onDownload(event: DownloadEvent): void; onClose(): void; onError(error: unknown): void;
}) {
  const [data, setData] = useState<WidgetData | 'loading' | 'forbidden' | 'failed'>('loading');
  const close = useRef<HTMLButtonElement>(null);
  // Opened in the part of the frame the viewer sees (a frame fitted to its content is many screens tall), hidden
  // until measured, then focused: the focus no longer scrolls the host to the middle of the frame.
  const view = useRef<HTMLDivElement>(null);
  const [placement, setPlacement] = useState<DialogPlacement | undefined | 'measuring'>('measuring');
  useLayoutEffect(() => {
    let isCurrent = true;
    void measureVisiblePart(view.current!).then((visible) => {
      if (isCurrent) setPlacement(dialogPlacement(visible, view.current?.clientHeight ?? innerHeight));
    });
    return () => {
      isCurrent = false;
    };
  }, []);
  useEffect(() => {
    if (placement !== 'measuring') close.current?.focus();
  }, [placement]);
  useDialogFocus(view);
  useEffect(() => {
    const controller = new AbortController();
    fetchWidgetData(session, publicId, drill.widgetId, { ...request, drilldown: { member: drill.member, point: drill.point } }, controller.signal)
      .then((result) => setData(result), (error: unknown) => {
        if (controller.signal.aborted) return;
        // Rows an access policy keeps from the viewer: a state of the view, not an error (as for widgets).
        if (isNotAvailable(error)) {
          setData('forbidden');
          return;
        }
        setData('failed');
        onError(error);
      });
    return () => controller.abort();
    // One drill, one query.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [drill]);
  return (
    <div className="drill-view" role="dialog" aria-modal="true" aria-labelledby="drill-title" onKeyDown={(event) => event.key === 'Escape' && onClose()} ref={view}
      style={placement === 'measuring' ? { visibility: 'hidden' } : placement === undefined ? undefined : { paddingTop: placement.paddingTop, paddingBottom: placement.paddingBottom }}>
      <div className="drill-panel" style={placement === 'measuring' || placement === undefined ? undefined : { maxHeight: placement.maxHeight }}>
        <header>
          <h2 id="drill-title">{t('drillTitle', { title: drill.title, member: drill.member })}</h2>
          <button type="button" ref={close} onClick={onClose}>{t('back')}</button>
        </header>
        {data === 'loading' ? <p role="status">{t('loading')}</p> : data === 'forbidden' ? <NotAvailable message={t('drillForbidden')} /> : data === 'failed' ? <p role="alert">{t('widgetError')}</p> : (
          <>
            <p className="meta drill-summary">
              <span data-testid="drill-count">{data.truncated && data.totalRows !== undefined && data.totalRows > data.rows.length
                ? t('drillRowsOf', { shown: data.rows.length, total: data.totalRows })
                : t('drillRows', { count: data.rows.length })}</span>
              {allowExport ? (
                <button type="button" className="export drill-export" data-format="csv" onClick={() => {
                  const title = t('drillTitle', { title: drill.title, member: drill.member });
                  import('./exports.js').then((files) => onDownload({ format: 'csv', target: 'widget', widgetId: drill.widgetId, title, rowCount: files.downloadCsv({ title, data }) }))
                    .catch((error: unknown) => onError(error));
                }}>{t('drillCsv')}</button>
              ) : null}
            </p>
            {/* A tab stop, so that the keyboard scrolls the rows too (axe: scrollable-region-focusable). */}
            <div className="drill-table-wrap" tabIndex={0} role="region" aria-labelledby="drill-title">
              <table className="drill-table">
                <thead><tr>{data.columns.map((c) => <th key={c.name} scope="col">{c.title}</th>)}</tr></thead>
                <tbody>
                  {data.rows.map((row, i) => (
                    <tr key={i}>{data.columns.map((c, j) => <td key={c.name} className={c.type === 'number' ? 'numeric' : undefined}>{formatCell(c, row[j], format.locale)}</td>)}</tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </div>
    </div>
  );
}
