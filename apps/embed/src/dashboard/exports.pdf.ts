/**
 * The PDF of a widget or of the whole dashboard (jsPDF, which svc already used, with its deflate of every stream):
 * A4 pages in reading order, each widget as what it is. Titles, text, KPIs and tables are PDF text, which a reader
 * selects, searches and copies, and a table prints every one of its rows, with its header again on each page. Charts
 * are pictures of what the screen shows (exports.image.ts), as JPEG, so that the demo dashboard is some hundreds of
 * KB instead of one 25 MB uncompressed bitmap on a single page.
 *
 * jsPDF's built-in Helvetica writes WinAnsi (Latin-1 and a few more): other characters are written as `?`, since
 * embedding a Unicode font would add hundreds of KB to every file.
 */
import { jsPDF } from 'jspdf';
import type { WidgetData } from '../api.js';
import { formatCell } from './cells.js';
import { snapshot } from './exports.image.js';

export interface PdfSource {
  title: string;
  data: WidgetData;
}

const MARGIN = 40;
/** PDF points per CSS pixel (72 / 96): a chart 600 px wide prints 450 pt wide, as the browser prints it. */
const POINTS_PER_PIXEL = 0.75;
const INK: [number, number, number] = [33, 37, 41];
const MUTED: [number, number, number] = [96, 103, 112];
const RULE: [number, number, number] = [210, 214, 220];

/** Unicode characters of WinAnsi's 0x80-0x9F, which Helvetica draws at those codes. */
const WIN_ANSI: Record<string, string> = {
  '€': '\x80', '‚': '\x82', 'ƒ': '\x83', '„': '\x84', '…': '\x85', '†': '\x86', '‡': '\x87', 'ˆ': '\x88', '‰': '\x89', 'Š': '\x8a',
  '‹': '\x8b', 'Œ': '\x8c', 'Ž': '\x8e', '‘': '\x91', '’': '\x92', '“': '\x93', '”': '\x94', '•': '\x95', '–': '\x96', '—': '\x97',
  '˜': '\x98', '™': '\x99', 'š': '\x9a', '›': '\x9b', 'œ': '\x9c', 'ž': '\x9e', 'Ÿ': '\x9f', '−': '-',
};

/** Text Helvetica can draw: Intl's narrow and thin spaces as spaces, WinAnsi's extras at their codes, anything else `?`. */
export function pdfText(text: string): string {
  return text.replace(/[\u00a0\u2007\u2009\u202f]/g, ' ').replace(/[^\n\x20-\x7e\xa0-\xff]/g, (c) => WIN_ANSI[c] ?? '?');
}

interface Cursor {
  pdf: jsPDF;
  y: number;
  readonly left: number;
  readonly width: number;
  readonly top: number;
  readonly bottom: number;
}

function newPage(cursor: Cursor): void {
  cursor.pdf.addPage();
  cursor.y = cursor.top;
}

/** Room for `height` points on this page, else the next one (unless this page is still empty). */
function ensure(cursor: Cursor, height: number): void {
  if (cursor.y + height > cursor.bottom && cursor.y > cursor.top) newPage(cursor);
}

function write(cursor: Cursor, text: string, options: { size: number; bold?: boolean; color?: [number, number, number]; gap?: number }): void {
  const { pdf } = cursor;
  pdf.setFont('helvetica', options.bold ? 'bold' : 'normal');
  pdf.setFontSize(options.size);
  pdf.setTextColor(...(options.color ?? INK));
  const lineHeight = options.size * 1.3;
  for (const line of pdf.splitTextToSize(pdfText(text), cursor.width) as string[]) {
    ensure(cursor, lineHeight);
    pdf.text(line, cursor.left, cursor.y + options.size);
    cursor.y += lineHeight;
  }
  cursor.y += options.gap ?? 0;
}

/** `text` cut to `width` points with an ellipsis. */
function fit(pdf: jsPDF, text: string, width: number): string {
  if (pdf.getTextWidth(text) <= width) return text;
  let end = text.length;
  while (end > 0 && pdf.getTextWidth(`${text.slice(0, end)}\x85`) > width) end--;
  return `${text.slice(0, end)}\x85`;
}

/** Every row of a table, formatted as its columns declare (as on screen), its header repeated on each page. */
function table(cursor: Cursor, data: WidgetData, locale: string): void {
  const { pdf } = cursor;
  const size = 8;
  const rowHeight = 13;
  const pad = 4;
  const header = data.columns.map((c) => pdfText(c.title));
  const cells = data.rows.map((row) => data.columns.map((c, j) => pdfText(formatCell(c, row[j], locale))));
  pdf.setFontSize(size);
  pdf.setFont('helvetica', 'bold');
  const natural = header.map((text) => pdf.getTextWidth(text) + 2 * pad);
  pdf.setFont('helvetica', 'normal');
  for (const row of cells.slice(0, 500)) row.forEach((text, j) => { natural[j] = Math.max(natural[j]!, pdf.getTextWidth(text) + 2 * pad); });
  const total = natural.reduce((a, b) => a + b, 0);
  // Narrower than the page: as they are; wider: each column shrinks in proportion, and long texts are cut.
  const widths = natural.map((w) => (total > cursor.width ? (w * cursor.width) / total : w));
  const numeric = data.columns.map((c) => c.type === 'number');
  const drawRow = (texts: string[], bold: boolean) => {
    pdf.setFont('helvetica', bold ? 'bold' : 'normal');
    pdf.setFontSize(size);
    pdf.setTextColor(...(bold ? MUTED : INK));
    let x = cursor.left;
    texts.forEach((text, j) => {
      const shown = fit(pdf, text, widths[j]! - 2 * pad);
      if (numeric[j]) pdf.text(shown, x + widths[j]! - pad, cursor.y + 9, { align: 'right' });
      else pdf.text(shown, x + pad, cursor.y + 9);
      x += widths[j]!;
    });
    pdf.setDrawColor(...RULE);
    pdf.setLineWidth(bold ? 0.8 : 0.3);
    pdf.line(cursor.left, cursor.y + rowHeight, x, cursor.y + rowHeight);
    cursor.y += rowHeight;
  };
  ensure(cursor, rowHeight * 2);
  drawRow(header, true);
  for (const row of cells) {
    if (cursor.y + rowHeight > cursor.bottom) {
      newPage(cursor);
      drawRow(header, true);
    }
    drawRow(row, false);
  }
  cursor.y += 10;
}

/**
 * A picture of `element` as the screen shows it, as wide as on screen (at most the page), as JPEG; `before` writes
 * what goes above it (its title), kept on the same page.
 */
async function picture(cursor: Cursor, element: HTMLElement, before: { height: number; write(): void }): Promise<void> {
  const shot = await snapshot(element, { pixelRatio: 2 });
  let width = Math.min(cursor.width, shot.width * POINTS_PER_PIXEL);
  let height = (width * shot.height) / shot.width;
  const pageRoom = cursor.bottom - cursor.top - before.height;
  if (height > pageRoom) {
    width = (width * pageRoom) / height;
    height = pageRoom;
  }
  ensure(cursor, before.height + height);
  before.write();
  cursor.pdf.addImage(shot.canvas.toDataURL('image/jpeg', 0.85), 'JPEG', cursor.left, cursor.y, width, height, undefined, 'FAST');
  cursor.y += height + 14;
}

/** The text of `element` without what is there only for the eye (▲, ▼). */
function shownText(element: Element | null): string {
  if (element === null) return '';
  const copy = element.cloneNode(true) as Element;
  for (const hidden of copy.querySelectorAll('[aria-hidden="true"]')) hidden.remove();
  return (copy.textContent ?? '').replace(/\s+/g, ' ').trim();
}

const ownTitle = (widget: HTMLElement) => widget.querySelector(':scope > .widget-header .widget-title, :scope > .widget-title, :scope > label .widget-title')?.textContent?.trim() ?? '';

/** A control's state as a line: `Category: Books`. */
function controlText(widget: HTMLElement): string | undefined {
  const select = widget.querySelector('select');
  const dates = [...widget.querySelectorAll<HTMLInputElement>('input[type="date"]')].map((input) => input.value || '…');
  const value = select !== null ? select.selectedOptions[0]?.textContent ?? '' : dates.length > 0 ? dates.join(' – ') : undefined;
  return value === undefined ? undefined : `${ownTitle(widget)}: ${value}`;
}

async function writeWidget(cursor: Cursor, widget: HTMLElement, sources: ReadonlyMap<string, PdfSource>, locale: string, level: 'widget' | 'page'): Promise<void> {
  const type = widget.dataset.widgetType;
  // A chart's frame is labelled by its title, or by its id when it has none; a text's by the word "Text".
  const title = ownTitle(widget) || (type === 'CHART' ? widget.getAttribute('aria-label') ?? '' : '');
  const size = level === 'page' ? 16 : 12;
  const heading = () => {
    if (title === '') return;
    ensure(cursor, 40);
    write(cursor, title, { size, bold: true, gap: 4 });
  };
  if (type === 'CONTAINER' || type === 'PARENT') {
    if (title !== '') write(cursor, title, { size: 14, bold: true, gap: 6 });
    return;
  }
  if (type === 'TEXT') {
    heading();
    const markdown = widget.querySelector<HTMLElement>('.markdown');
    for (const block of (markdown?.innerText ?? '').split(/\n+/).filter((line) => line.trim() !== '')) write(cursor, block, { size: 10, gap: 3 });
    cursor.y += 8;
    return;
  }
  if (type !== 'CHART') return;
  const kind = [...widget.classList].find((c) => c.startsWith('kind-'))?.slice(5);
  const source = sources.get(widget.dataset.widgetId ?? '');
  const body = widget.querySelector<HTMLElement>('.widget-body');
  const isReady = widget.dataset.state === 'ready' && source !== undefined && source.data.rows.length > 0 && body !== null;
  if (isReady && kind !== 'table' && kind !== 'kpi') {
    return picture(cursor, body, { height: title === '' ? 0 : size * 1.3 + 4, write: () => { if (title !== '') write(cursor, title, { size, bold: true, gap: 4 }); } });
  }
  heading();
  const note = widget.querySelector('.widget-note');
  if (note !== null) write(cursor, note.textContent ?? '', { size: 8, color: MUTED, gap: 2 });
  if (!isReady) {
    write(cursor, shownText(body), { size: 10, color: MUTED, gap: 10 });
    return;
  }
  if (kind === 'table') return table(cursor, source.data, locale);
  if (kind === 'kpi') {
    write(cursor, shownText(widget.querySelector('.kpi-value')), { size: 22, bold: true, gap: 2 });
    const change = shownText(widget.querySelector('.kpi-change'));
    if (change !== '') write(cursor, change, { size: 10, color: MUTED });
    cursor.y += 12;
  }
}

/** The widgets under `root` in reading order: top to bottom, then left to right, as the grid places them. */
function widgetsOf(root: HTMLElement): HTMLElement[] {
  const all = [...root.querySelectorAll<HTMLElement>('[data-widget-id]')].filter((w) => w.getBoundingClientRect().height > 0);
  const boxes = new Map(all.map((w) => [w, w.getBoundingClientRect()]));
  return all.sort((a, b) => {
    const [p, q] = [boxes.get(a)!, boxes.get(b)!];
    return Math.abs(p.top - q.top) > 4 ? p.top - q.top : p.left - q.left;
  });
}

/**
 * The PDF of `root`: a widget (its title, then its table, figure or picture), or the dashboard's `<main>` (its
 * header, its controls' choices in one line, then each widget). Every page is numbered.
 *
 * @example save(await buildPdf(main, 'Sales performance', exports, 'en-US'), 'sales-performance.pdf');
 */
export async function buildPdf(root: HTMLElement, title: string, sources: ReadonlyMap<string, PdfSource>, locale: string): Promise<Blob> {
  const pdf = new jsPDF({ unit: 'pt', format: 'a4', orientation: 'portrait', compress: true });
  pdf.setProperties({ title: pdfText(title), creator: 'svc' });
  const pageWidth = pdf.internal.pageSize.getWidth();
  const pageHeight = pdf.internal.pageSize.getHeight();
  const cursor: Cursor = { pdf, y: MARGIN, left: MARGIN, width: pageWidth - 2 * MARGIN, top: MARGIN, bottom: pageHeight - MARGIN - 14 };
  if (root.dataset.widgetId !== undefined) {
    await writeWidget(cursor, root, sources, locale, 'page');
  } else {
    write(cursor, title, { size: 18, bold: true, gap: 4 });
    const header = root.querySelector('.dashboard-header');
    for (const line of header?.querySelectorAll(':scope > .description, :scope > .meta') ?? []) write(cursor, shownText(line), { size: 9, color: MUTED, gap: 2 });
    const chips = [...(header?.querySelectorAll('.filter-chip > span') ?? [])].map((chip) => chip.textContent ?? '');
    const widgets = widgetsOf(root);
    const controls = widgets.map(controlText).filter((text): text is string => text !== undefined);
    if (chips.length > 0 || controls.length > 0) write(cursor, [...controls, ...chips].join('   ·   '), { size: 9, color: MUTED });
    cursor.y += 12;
    for (const widget of widgets) await writeWidget(cursor, widget, sources, locale, 'widget');
  }
  const pages = pdf.getNumberOfPages();
  for (let page = 1; page <= pages; page++) {
    pdf.setPage(page);
    pdf.setFont('helvetica', 'normal');
    pdf.setFontSize(8);
    pdf.setTextColor(...MUTED);
    pdf.text(pdfText(`${title} · ${page} / ${pages}`), pageWidth - MARGIN, pageHeight - MARGIN + 6, { align: 'right' });
  }
  return pdf.output('blob');
}
