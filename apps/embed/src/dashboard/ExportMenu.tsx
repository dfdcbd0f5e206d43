import type { WidgetData } from '../api.js';
import { useDashboardData } from './data.js';
import type { RenderedChart } from './vega.js';

export interface ExportMenuProps {
  widgetId: string;
  title: string;
  data: WidgetData;
  frame: React.RefObject<HTMLElement | null>;
  chart: React.RefObject<RenderedChart | undefined>;
}

/** A widget's exports (shown only with `allowExport=true`): the file is made here; the host hears `download`. */
export function ExportMenu({ widgetId, title, data, frame, chart }: ExportMenuProps) {
  const { t, onDownload, onError } = useDashboardData();
  const run = (format: 'csv' | 'xlsx' | 'png' | 'pdf') => {
    import('./exports.js').then(async (exports) => {
      const body = frame.current?.querySelector<HTMLElement>('.widget-body') ?? frame.current!;
      if (format === 'csv') return onDownload({ format, target: 'widget', widgetId, title, rowCount: exports.downloadCsv({ title, data }) });
      if (format === 'xlsx') return onDownload({ format, target: 'widget', widgetId, title, rowCount: await exports.downloadXlsx([{ title, data }], title) });
      await (format === 'png' ? exports.downloadPng : exports.downloadPdf)(body, title, chart.current);
      return onDownload({ format, target: 'widget', widgetId, title });
    }).catch((error: unknown) => onError(error, 'download'));
  };
  return (
    <div className="export-menu" role="group" aria-label={t('exportWidget', { title })} data-export-skip="true">
      {(['csv', 'xlsx', 'png', 'pdf'] as const).map((format) => (
        <button key={format} type="button" className="export" data-format={format} onClick={() => run(format)} aria-label={t('exportAs', { title, format: format.toUpperCase() })}>
          {format.toUpperCase()}
        </button>
      ))}
    </div>
  );
}
