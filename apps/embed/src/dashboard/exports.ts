/**
 * Exports built in the browser, loaded on the first export: CSV (papaparse), XLSX (write-excel-file), PNG
 * (vega's own renderer for charts, html-to-image for anything else) and PDF (jsPDF around that PNG). Nothing is
 * sent to svc; the file is handed to the viewer as a download.
 */
import Papa from 'papaparse';
import writeXlsxFile from 'write-excel-file/browser';
import type { Cell, Sheet } from 'write-excel-file/browser';
import { toPng } from 'html-to-image';
import { jsPDF } from 'jspdf';
import type { WidgetData } from '../api.js';

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

/** Values as they are (numbers stay numbers), with the columns' titles as the header row. */
export function toCsv(data: WidgetData): string {
  return Papa.unparse({ fields: data.columns.map((c) => c.title), data: data.rows.map((row) => row.map((value) => (value === null ? '' : value))) });
}

export function downloadCsv(source: ExportSource): number {
  save(new Blob([`\ufeff${toCsv(source.data)}`], { type: 'text/csv;charset=utf-8' }), `${slug(source.title)}.csv`);
  return source.data.rows.length;
}

function sheetOf(source: ExportSource, name: string): Sheet<Blob> {
  const header: Cell[] = source.data.columns.map((c) => ({ value: c.title, fontWeight: 'bold' }));
  const rows: Cell[][] = source.data.rows.map((row) => row.map((value) => (value === null || value === undefined ? null : typeof value === 'number' || typeof value === 'boolean' ? value : String(value))));
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

async function pngOf(element: HTMLElement, chart: { toImageURL(type: 'png'): Promise<string> } | undefined): Promise<string> {
  if (chart !== undefined) return chart.toImageURL('png');
  const background = getComputedStyle(document.body).backgroundColor;
  return toPng(element, { pixelRatio: 2, backgroundColor: background, filter: (node) => !(node instanceof HTMLElement && node.dataset.exportSkip === 'true') });
}

/** A data: URL's bytes (the page's CSP lets fetch() reach svc only, so no fetch of data: URLs). */
function blobOf(dataUrl: string): Blob {
  const [head, body] = dataUrl.split(',', 2) as [string, string];
  const binary = atob(body);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new Blob([bytes], { type: head.slice(5).split(';')[0] });
}

export async function downloadPng(element: HTMLElement, title: string, chart?: { toImageURL(type: 'png'): Promise<string> }): Promise<void> {
  save(blobOf(await pngOf(element, chart)), `${slug(title)}.png`);
}

export async function downloadPdf(element: HTMLElement, title: string, chart?: { toImageURL(type: 'png'): Promise<string> }): Promise<void> {
  const url = await pngOf(element, chart);
  const image = new Image();
  image.src = url;
  await image.decode();
  const landscape = image.width >= image.height;
  const pdf = new jsPDF({ orientation: landscape ? 'landscape' : 'portrait', unit: 'pt', format: 'a4' });
  const pageWidth = pdf.internal.pageSize.getWidth() - 48;
  const pageHeight = pdf.internal.pageSize.getHeight() - 72;
  const scale = Math.min(pageWidth / image.width, pageHeight / image.height);
  pdf.setFontSize(14);
  pdf.text(title, 24, 32);
  pdf.addImage(url, 'PNG', 24, 48, image.width * scale, image.height * scale);
  save(pdf.output('blob'), `${slug(title)}.pdf`);
}
