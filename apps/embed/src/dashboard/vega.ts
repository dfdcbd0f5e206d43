/**
 * Charts through vega-embed, loaded lazily (vega is most of the embed's weight): a snapshot's vega or vega-lite
 * spec with the widget's rows as its data, or a spec made from the result's columns when the snapshot has none.
 * Expressions run in vega-interpreter, since the embed's CSP allows no eval.
 */
import embed from 'vega-embed';
import type { VisualizationSpec } from 'vega-embed';
import { expressionInterpreter } from 'vega-interpreter';
// Natural Earth's countries at 1:110m as TopoJSON (world-atlas, 108 KB, 38 KB gzip): a file of the build, served by
// svc under /embed/assets/ with the rest (the page's CSP lets it fetch from svc only), fetched by the first map.
import worldUrl from 'world-atlas/countries-110m.json?url';
import type { ResultColumn, WidgetData } from '../api.js';
import { d3NumberFormat, vegaNumberLocale } from '../format.js';
import { TIME_UNITS as timeUnits, followGrain } from './grain.js';

type Spec = Record<string, unknown>;

const escapeField = (name: string) => name.replace(/\./g, '\\.');

/** Every `field` naming a result column, escaped (a dot in a vega field means a nested property). */
function escapeFields(node: unknown, names: ReadonlySet<string>): unknown {
  if (Array.isArray(node)) return node.map((item) => escapeFields(item, names));
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [
    key, key === 'field' && typeof value === 'string' && names.has(value) ? escapeField(value) : escapeFields(value, names),
  ]));
}

/**
 * A snapshot's spec as the FIELD swaps of its answer (`data.fields`) make it: an encoding of a swapped member draws
 * its replacement, under the replacement's title and in its format (the spec's own, written for the old member, would
 * show orders under "Revenue" in dollars). Without this the chart reads a column the answer no longer has: empty.
 */
export function followSwaps(node: unknown, fields: Readonly<Record<string, string>>, columns: readonly ResultColumn[]): unknown {
  if (Array.isArray(node)) return node.map((item) => followSwaps(item, fields, columns));
  if (typeof node !== 'object' || node === null) return node;
  const object = node as Spec;
  const to = typeof object.field === 'string' ? fields[object.field] : undefined;
  const column = to === undefined ? undefined : columns.find((c) => c.name === to);
  const result: Spec = {};
  for (const [key, value] of Object.entries(object)) result[key] = followSwaps(value, fields, columns);
  if (to === undefined) return result;
  result.field = to;
  if (column === undefined) return result;
  const { format } = axisFormat(column);
  if (typeof result.title === 'string') result.title = column.title;
  if (typeof result.format === 'string') result.format = format;
  for (const guide of ['axis', 'legend'] as const) {
    const given = result[guide] as Spec | null | undefined;
    if (typeof given === 'object' && given !== null && typeof given.format === 'string') result[guide] = { ...given, format, ...(typeof given.title === 'string' ? { title: column.title } : {}) };
  }
  return result;
}

/** A measure's d3 format on axes and tooltips ({@link d3NumberFormat}). */
const axisFormat = (column: ResultColumn): Spec => ({ format: d3NumberFormat(column.format) });

/**
 * A chart from the columns alone: a line over time, bars by a dimension, bars coloured by a second one; a map's
 * points over the world's country outlines (`ink` is the text colour the outlines are drawn in).
 */
export function defaultSpec(data: WidgetData, kind: string | null | undefined, ink = '#888888'): Spec {
  const measures = data.columns.filter((c) => c.kind === 'measure');
  const time = data.columns.find((c) => c.type === 'time');
  const dimensions = data.columns.filter((c) => c.kind === 'dimension' && c !== time);
  const measure = measures[0];
  if (kind === 'map') {
    const latitude = data.columns.find((c) => /latitude$/.test(c.name));
    const longitude = data.columns.find((c) => /longitude$/.test(c.name));
    const label = dimensions.find((c) => c !== latitude && c !== longitude);
    return {
      projection: { type: 'equalEarth' },
      layer: [
        // The graticule and the countries are backdrop (aria: false hides them from assistive technology; as
        // unlabelled graphics they were axe's svg-img-alt): the points carry the data.
        { data: { graticule: { step: [30, 30] } }, mark: { type: 'geoshape', stroke: ink, strokeOpacity: 0.12, fill: null, aria: false } },
        {
          data: { url: worldUrl, format: { type: 'topojson', feature: 'countries' } },
          mark: { type: 'geoshape', fill: ink, fillOpacity: 0.1, stroke: ink, strokeOpacity: 0.35, strokeWidth: 0.5, aria: false },
        },
        {
          mark: { type: 'circle', opacity: 0.7, color: 'var(--svc-primary, #2f6fdd)' },
          encoding: {
            latitude: { field: latitude?.name, type: 'quantitative' },
            longitude: { field: longitude?.name, type: 'quantitative' },
            ...(measure ? { size: { field: measure.name, type: 'quantitative', title: measure.title } } : {}),
            tooltip: [...(label ? [{ field: label.name, title: label.title }] : []), ...(measure ? [{ field: measure.name, title: measure.title, type: 'quantitative' }] : [])],
          },
        },
      ],
    };
  }
  if (measure === undefined) return { mark: 'text', encoding: { text: { value: '' } } };
  const y = { field: measure.name, type: 'quantitative', title: measure.title, axis: axisFormat(measure) };
  if (time !== undefined) {
    return {
      mark: { type: 'line', point: true, tooltip: true },
      encoding: {
        x: { field: time.name, type: 'temporal', timeUnit: timeUnits[time.granularity ?? 'day'] ?? 'utcyearmonthdatehoursminutes', title: time.title },
        y,
        ...(dimensions[0] ? { color: { field: dimensions[0].name, type: 'nominal', title: dimensions[0].title } } : {}),
      },
    };
  }
  const category = dimensions[0];
  if (category === undefined) return { mark: { type: 'text', fontSize: 28 }, encoding: { text: { field: measure.name, type: 'quantitative', format: ',' } } };
  return {
    mark: { type: 'bar', tooltip: true, cornerRadiusEnd: 2 },
    encoding: {
      y: { field: category.name, type: 'nominal', sort: '-x', title: category.title },
      x: { ...y },
      ...(dimensions[1] ? { color: { field: dimensions[1].name, type: 'nominal', title: dimensions[1].title } } : {}),
    },
  };
}

export interface RenderedChart {
  finalize(): void;
  toImageURL(type: 'png' | 'svg'): Promise<string>;
  /** The marks that stand for data (those a click drills into), in reading order: for the keyboard. */
  points(): ChartMark[];
}

/** A mark of a drawn chart: its datum (keyed by column name) and the SVG element vega drew for it. */
export interface ChartMark {
  datum: Record<string, unknown>;
  element: Element | undefined;
}

/** What the scenegraph holds of a mark and its items (vega's types leave them open). */
interface SceneMark {
  marktype: string;
  role?: string;
  items?: SceneItem[];
}
interface SceneItem {
  x?: number;
  y?: number;
  datum?: Record<string, unknown>;
  bounds?: { x1: number; y1: number };
  items?: SceneMark[];
  /** The element vega's SVG renderer drew the item as. */
  _svg?: Element;
}

/** Mark types drawn one item per datum; lines and areas are one shape over many data (their points come as symbols). */
const POINT_MARKS = new Set(['rect', 'symbol', 'arc', 'shape', 'path', 'image']);

/**
 * The items of user marks (role `mark`: not axes, legends or titles) whose datum holds one of `measures`, in reading
 * order (left to right, then top to bottom): the bars, points, slices and circles that a click drills into. Item
 * bounds are relative to their group, so groups' offsets are added up.
 */
export function chartMarks(root: SceneMark, measures: ReadonlySet<string>): ChartMark[] {
  const found: Array<ChartMark & { x: number; y: number }> = [];
  const seen = new Set<unknown>();
  const walk = (mark: SceneMark, x: number, y: number) => {
    for (const item of mark.items ?? []) {
      if (mark.marktype === 'group') {
        for (const child of item.items ?? []) walk(child, x + (item.x ?? 0), y + (item.y ?? 0));
      } else if (mark.role === 'mark' && POINT_MARKS.has(mark.marktype) && item.datum !== undefined && !seen.has(item.datum)
        && Object.keys(item.datum).some((key) => measures.has(key))) {
        seen.add(item.datum);
        found.push({ datum: item.datum, element: item._svg, x: Math.round(x + (item.bounds?.x1 ?? item.x ?? 0)), y: Math.round(y + (item.bounds?.y1 ?? item.y ?? 0)) });
      }
    }
  };
  walk(root, 0, 0);
  return found.sort((a, b) => a.x - b.x || a.y - b.y).map(({ datum, element }) => ({ datum, element }));
}

/** The item clicked: its datum (keyed by column name). */
export type ChartClick = (datum: Record<string, unknown>) => void;

/**
 * Renders a chart into `element` at its size. Time buckets (local wall-clock text) reach vega as UTC instants
 * with the same fields, so that vega's UTC time units show the wall-clock period as the server bucketed it.
 */
export async function renderChart(
  element: HTMLElement, snapshotSpec: unknown, data: WidgetData, kind: string | null | undefined, dark: boolean, onClick: ChartClick, locale: string,
): Promise<RenderedChart> {
  const names = new Set(data.columns.map((c) => c.name));
  const values = data.rows.map((row) => Object.fromEntries(data.columns.map((column, i) => {
    const value = row[i];
    return [column.name, column.type === 'time' && typeof value === 'string' ? `${value.slice(0, 19)}Z` : value];
  })));
  const written = typeof snapshotSpec === 'string' ? (JSON.parse(snapshotSpec) as Spec) : (snapshotSpec as Spec | null | undefined);
  const swapped = written && data.fields ? (followSwaps(written, data.fields, data.columns) as Spec) : written;
  const given = swapped ? (followGrain(swapped, data.columns) as Spec) : swapped;
  const color = getComputedStyle(element).color;
  const base = given && Object.keys(given).length > 0 ? given : defaultSpec(data, kind, color);
  const isVega = typeof base.$schema === 'string' && /\/vega\/v\d/.test(base.$schema);
  const config = { background: null, view: { stroke: null }, axis: { labelColor: color, titleColor: color, gridOpacity: dark ? 0.2 : 0.6 }, legend: { labelColor: color, titleColor: color }, title: { color } };
  let spec: Spec;
  if (isVega) {
    const dataSets = ((base.data as Spec[] | undefined) ?? []).map((set) => (set.name === 'table' ? { ...set, values } : set));
    spec = { ...base, data: dataSets, autosize: { type: 'fit', contains: 'padding' }, width: element.clientWidth, height: element.clientHeight, config: { ...config, ...(base.config as Spec | undefined) } };
  } else {
    spec = {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      ...(escapeFields(base, names) as Spec),
      data: { values },
      width: 'container', height: 'container', autosize: { type: 'fit', contains: 'padding' },
      config: { ...config, ...(base.config as Spec | undefined) },
    };
  }
  // Numbers as the rest of the embed shows them; vega takes the locale for the views made after this call.
  const result = await embed(element, spec as VisualizationSpec, {
    actions: false, renderer: 'svg', ast: true, expr: expressionInterpreter, formatLocale: vegaNumberLocale(locale),
  });
  result.view.addEventListener('click', (_event, item) => {
    const datum = (item as { datum?: Record<string, unknown> } | null | undefined)?.datum;
    if (datum !== undefined) onClick(datum);
  });
  const measures = new Set(data.columns.filter((c) => c.kind === 'measure').map((c) => c.name));
  return {
    finalize: () => result.finalize(),
    toImageURL: (type) => result.view.toImageURL(type, 2),
    points: () => chartMarks((result.view.scenegraph() as unknown as { root: SceneMark }).root, measures),
  };
}
