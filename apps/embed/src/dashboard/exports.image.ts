/**
 * A picture of part of the page as the viewer sees it, drawn by the browser itself: the element is copied with every
 * computed style written inline (SVG marks included), put in an SVG `<foreignObject>`, and that SVG drawn on a
 * canvas at the wanted pixel ratio.
 *
 * html-to-image, used before, copied an `<svg>` without the styles of its marks (the Sankey's flows came out as solid
 * black shapes), could not read a sandboxed `<iframe>` (the HTML widget came out blank), drew the scroll bars of a
 * scrolled table, and shrank every font by up to 1.1 px (columns then cut differently). Each is handled here:
 * - SVG marks get their painted properties inline;
 * - an HTML widget's frame is copied from a twin frame, same-origin but still without scripts, made for the picture;
 * - a scroller is clipped at its scroll position, without scroll bars: the rows in view are the rows shown;
 * - fonts keep their computed sizes.
 * Nothing leaves the browser: the fonts are the system's (styles.css has no web font), and no image is fetched.
 */

export interface SnapshotOptions {
  /** Device pixels per CSS pixel (default: the screen's, at least 2, so that a picture prints sharp). */
  pixelRatio?: number;
  /** What fills the corners the element leaves transparent (default: the page's background). */
  background?: string;
  /** `image/png` (default) or `image/jpeg` (the PDF's charts). */
  type?: 'image/png' | 'image/jpeg';
  quality?: number;
}

export interface Snapshot {
  canvas: HTMLCanvasElement;
  /** The element's size in CSS pixels. */
  width: number;
  height: number;
}

/** The painted properties of an SVG mark (its geometry is in its attributes, which the copy keeps). */
const SVG_PROPERTIES = [
  'fill', 'fill-opacity', 'fill-rule', 'stroke', 'stroke-width', 'stroke-opacity', 'stroke-dasharray', 'stroke-dashoffset',
  'stroke-linecap', 'stroke-linejoin', 'stroke-miterlimit', 'opacity', 'visibility', 'display', 'color', 'font-family',
  'font-size', 'font-weight', 'font-style', 'font-variant-numeric', 'letter-spacing', 'text-anchor', 'dominant-baseline',
  'alignment-baseline', 'paint-order', 'shape-rendering', 'text-rendering', 'mix-blend-mode', 'clip-path', 'mask', 'white-space', 'text-decoration-line',
];

const SVG_NS = 'http://www.w3.org/2000/svg';
const isElement = (node: Node): node is Element => node.nodeType === Node.ELEMENT_NODE;
const tag = (node: Element) => node.localName.toLowerCase();

function styleOf(element: Element): CSSStyleDeclaration {
  return (element.ownerDocument.defaultView ?? window).getComputedStyle(element);
}

/**
 * Whether a block's height is its content's: a block in normal flow whose page gave it no height of its own. Its
 * computed height, written inline, would stop its last child's bottom margin from collapsing through it, and move
 * everything after it up by that margin.
 */
function isContentHeight(source: Element, computed: CSSStyleDeclaration): boolean {
  if (!(source instanceof HTMLElement) || source.style.height !== '') return false;
  if (!['block', 'list-item', 'flow-root'].includes(computed.display) || !['static', 'relative'].includes(computed.position)) return false;
  const parent = source.parentElement;
  return parent === null || !/flex|grid/.test(styleOf(parent).display);
}

/** Every computed property as one inline style (a picture has no style sheet); no animation, so the first frame is the last. */
function inlineStyle(source: Element, target: Element, isMark: boolean): void {
  const computed = styleOf(source);
  let text = '';
  if (isMark) {
    for (const name of SVG_PROPERTIES) text += `${name}:${computed.getPropertyValue(name)};`;
  } else {
    const skip = isContentHeight(source, computed) ? new Set(['height', 'block-size']) : undefined;
    for (let i = 0; i < computed.length; i++) {
      const name = computed.item(i);
      if (skip?.has(name)) continue;
      text += `${name}:${computed.getPropertyValue(name)};`;
    }
  }
  target.setAttribute('style', `${text}animation:none;transition:none;`);
}

/** An HTML widget's frame, copied from a twin (`allow-same-origin` lets svc read it; without `allow-scripts` nothing in it runs). */
async function copyFrame(frame: HTMLIFrameElement): Promise<Element> {
  const box = frame.getBoundingClientRect();
  const twin = document.createElement('iframe');
  twin.setAttribute('sandbox', 'allow-same-origin');
  twin.setAttribute('aria-hidden', 'true');
  twin.tabIndex = -1;
  twin.style.cssText = `position:fixed;left:-100000px;top:0;width:${box.width}px;height:${box.height}px;border:0;visibility:hidden`;
  const loaded = new Promise<void>((resolve) => twin.addEventListener('load', () => resolve(), { once: true }));
  twin.srcdoc = frame.srcdoc;
  document.body.append(twin);
  try {
    await loaded;
    const body = twin.contentDocument?.body;
    const holder = document.createElement('div');
    inlineStyle(frame, holder, false);
    holder.style.overflow = 'hidden';
    if (body !== undefined && body !== null) {
      const copy = document.createElement('div');
      inlineStyle(body, copy, false);
      copy.style.visibility = 'visible';
      // The frame's canvas: its <html>'s background (transparent over the widget unless the author set one).
      copy.style.backgroundColor = styleOf(twin.contentDocument!.documentElement).backgroundColor;
      copy.style.minHeight = '100%';
      for (const child of body.childNodes) {
        const cloned = await copyNode(child, false);
        if (cloned !== null) copy.append(cloned);
      }
      holder.append(copy);
    }
    return holder;
  } finally {
    twin.remove();
  }
}

/** A copy of `source` with its computed styles inline, as it shows: skipped parts kept in place but unseen, scrollers clipped where they are scrolled to. */
async function copyNode(source: Node, inSvg: boolean, hidden = false): Promise<Node | null> {
  if (source.nodeType === Node.TEXT_NODE) return source.cloneNode(false);
  if (!isElement(source)) return null;
  const name = tag(source);
  if (name === 'script' || name === 'style' || name === 'link' || name === 'template') return null;
  if (name === 'iframe') return copyFrame(source as HTMLIFrameElement);
  const target = source.cloneNode(false) as Element;
  const isMark = inSvg && name !== 'svg';
  inlineStyle(source, target, isMark);
  // Left out, but its room kept, children and all: the rest stays where the screen has it.
  const isHidden = hidden || (!isMark && source instanceof HTMLElement && source.dataset.exportSkip === 'true');
  if (isHidden) target.setAttribute('style', `${target.getAttribute('style') ?? ''}visibility:hidden;`);
  if (name === 'input') target.setAttribute('value', (source as HTMLInputElement).value);
  if (name === 'textarea') target.textContent = (source as HTMLTextAreaElement).value;
  const childrenInSvg = inSvg || source.namespaceURI === SVG_NS;
  for (const child of source.childNodes) {
    const cloned = await copyNode(child, childrenInSvg, isHidden);
    if (cloned !== null) target.append(cloned);
  }
  if (name === 'select') {
    const value = (source as HTMLSelectElement).value;
    for (const option of target.querySelectorAll('option')) option.toggleAttribute('selected', option.value === value);
  }
  const style = styleOf(source);
  if (!isMark && /auto|scroll|overlay/.test(`${style.overflowX} ${style.overflowY}`)) {
    // A picture cannot scroll: it shows what the scroller shows, without its bars.
    const html = target as HTMLElement;
    html.style.overflow = 'hidden';
    const { scrollLeft, scrollTop } = source as HTMLElement;
    if (scrollLeft !== 0 || scrollTop !== 0) {
      for (const child of html.children) (child as HTMLElement).style.translate = `${-scrollLeft}px ${-scrollTop}px`;
    }
  }
  return target;
}

/**
 * The element drawn on a canvas as it shows on screen.
 *
 * @example const { canvas } = await snapshot(widget); canvas.toBlob(save, 'image/png');
 */
export async function snapshot(element: HTMLElement, options: SnapshotOptions = {}): Promise<Snapshot> {
  const box = element.getBoundingClientRect();
  const width = box.width;
  const height = box.height;
  const ratio = options.pixelRatio ?? Math.max(2, window.devicePixelRatio || 1);
  const copy = (await copyNode(element, false)) as HTMLElement;
  // Where the element sits is the page's business, not the picture's.
  Object.assign(copy.style, { margin: '0', position: 'relative', left: '0', top: '0', right: 'auto', bottom: 'auto', transform: 'none', translate: 'none', width: `${width}px`, height: `${height}px`, boxSizing: 'border-box' });
  const markup = new XMLSerializer().serializeToString(copy);
  const svg = `<svg xmlns="${SVG_NS}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><foreignObject x="0" y="0" width="${width}" height="${height}">${markup}</foreignObject></svg>`;
  const image = new Image();
  image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  const context = canvas.getContext('2d')!;
  context.fillStyle = options.background ?? getComputedStyle(document.body).backgroundColor;
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  return { canvas, width, height };
}

/** The element as a PNG (or JPEG) file's bytes. */
export async function snapshotBlob(element: HTMLElement, options: SnapshotOptions = {}): Promise<Blob> {
  const { canvas } = await snapshot(element, options);
  const type = options.type ?? 'image/png';
  return new Promise((resolve, reject) => canvas.toBlob((blob) => (blob === null ? reject(new Error('the picture could not be encoded')) : resolve(blob)), type, options.quality));
}
