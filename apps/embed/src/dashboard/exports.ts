/**
 * Exports built in the browser, loaded on the first export: CSV (papaparse), XLSX (write-excel-file), PNG (the screen
 * as it shows, exports.image.ts) and PDF (jsPDF: text and tables as text, charts as pictures, exports.pdf.ts). Numbers
 * in CSV and XLSX lose their float noise (exports.values.ts). Nothing is sent to svc; the file is handed to the viewer
 * as a download.
 */
import writeXlsxFile from 'write-excel-file/browser';
import type { Cell, Sheet } from 'write-excel-file/browser';
import type { WidgetData } from '../api.js';
import { snapshotBlob } from './exports.image.js';
import { buildPdf } from './exports.pdf.js';
import { exportNumber, toCsv } from './exports.values.js';

export { toCsv };

export interface ExportSource {
  title: string;
  data: WidgetData;
}

const slug = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'export';

function save(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.rel = 'noopener';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function downloadCsv(source: ExportSource): number {
  save(new Blob([`\ufeff${toCsv(source.data)}`], { type: 'text/csv;charset=utf-8' }), `${slug(source.title)}.csv`);
  return source.data.rows.length;
}

function sheetOf(source: ExportSource, name: string): Sheet<Blob> {
  const header: Cell[] = source.data.columns.map((c) => ({ value: c.title, fontWeight: 'bold' }));
  const rows: Cell[][] = source.data.rows.map((row) => row.map((value) => (value === null || value === undefined ? null : typeof value === 'number' ? exportNumber(value) : typeof value === 'boolean' ? value : String(value))));
  return { data: [header, ...rows], sheet: name };
}

/** One sheet per source (a widget: one; the whole dashboard: each widget with data). */
export async function downloadXlsx(sources: readonly ExportSource[], title: string): Promise<number> {
  const used = new Set<string>();
  const sheets = sources.map((source, i) => {
    let name = source.title.replace(/[\\/?*[\]:]/g, ' ').slice(0, 28) || `Sheet ${i + 1}`;
    while (used.has(name)) name = `${name.slice(0, 26)} ${i + 1}`;
    used.add(name);
    return sheetOf(source, name);
  });
  save(await writeXlsxFile(sheets).toBlob(), `${slug(title)}.xlsx`);
  return sources.reduce((count, source) => count + source.data.rows.length, 0);
}

/** The element as the viewer sees it, as a PNG at the screen's pixel ratio (at least 2). */
export async function downloadPng(element: HTMLElement, title: string): Promise<void> {
  save(await snapshotBlob(element), `${slug(title)}.png`);
}

/** A widget or the dashboard as a paginated A4 PDF; `sources` holds the widgets' data, for their tables. */
export async function downloadPdf(element: HTMLElement, title: string, sources: ReadonlyMap<string, ExportSource>, locale: string): Promise<void> {
  save(await buildPdf(element, title, sources, locale), `${slug(title)}.pdf`);
}
