import { useLayoutEffect, useMemo, useRef } from 'react';
import { sankey, sankeyLinkHorizontal } from 'd3-sankey';
import { useChartKeys } from './chartKeys.js';
import type { ChartProps } from './charts.js';
import { pointOf } from './charts.js';
import { formatNumber } from './cells.js';

/**
 * Flows between the values of two dimensions, sized by the first measure (d3-sankey's layout, drawn as SVG). One tab
 * stop: arrow keys move between the flows (in the layout's order: by source, then target), Enter drills into one.
 */
export function SankeyChart({ data, locale, onRendered, onDrill, label }: ChartProps) {
  const element = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => onRendered(), [onRendered]);
  const dimensions = data.columns.filter((c) => c.kind === 'dimension');
  const measure = data.columns.find((c) => c.kind === 'measure');
  const width = 600;
  const height = 320;
  const graph = useMemo(() => {
    if (dimensions.length < 2 || measure === undefined) return undefined;
    const [source, target] = [data.columns.indexOf(dimensions[0]!), data.columns.indexOf(dimensions[1]!)];
    const value = data.columns.indexOf(measure);
    const names = new Map<string, number>();
    const node = (key: string) => {
      if (!names.has(key)) names.set(key, names.size);
      return names.get(key)!;
    };
    const links = data.rows.filter((row) => typeof row[value] === 'number' && (row[value] as number) > 0)
      .map((row) => ({ source: node(`s:${String(row[source])}`), target: node(`t:${String(row[target])}`), value: row[value] as number, row }));
    const nodes = [...names.keys()].map((key) => ({ name: key.slice(2) }));
    return sankey<{ name: string }, { row: unknown[] }>().nodeWidth(12).nodePadding(8).extent([[1, 1], [width - 1, height - 1]])({ nodes, links });
  }, [data, dimensions, measure]);
  const links = graph?.links ?? [];
  const describe = (link: (typeof links)[number]) => `${(link.source as { name: string }).name} → ${(link.target as { name: string }).name}: ${formatNumber(link.value, measure?.format, locale)}`;
  const drill = (link: (typeof links)[number]) => onDrill(measure!.name, link.value, pointOf(data.columns, Object.fromEntries(data.columns.map((c, j) => [c.name, link.row[j]]))));
  const keys = useChartKeys(() => links.map((link, i) => ({ element: element.current?.querySelectorAll('.sankey-link')[i], label: describe(link), drill: () => drill(link) })));
  if (graph === undefined || measure === undefined) return <p className="widget-empty">–</p>;
  const path = sankeyLinkHorizontal();
  return (
    <div className="chart sankey-chart" ref={element} tabIndex={0} role="group" aria-label={label} onKeyDown={keys.onKeyDown} onFocus={keys.onFocus} onBlur={keys.onBlur}>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${dimensions[0]!.title} → ${dimensions[1]!.title}`}>
        {links.map((link, i) => (
          <path key={i} d={path(link) ?? undefined} className="sankey-link drillable" strokeWidth={Math.max(1, link.width ?? 1)} onClick={() => drill(link)}>
            <title>{describe(link)}</title>
          </path>
        ))}
        {graph.nodes.map((node, i) => (
          <g key={i}>
            <rect className="sankey-node" x={node.x0} y={node.y0} width={(node.x1 ?? 0) - (node.x0 ?? 0)} height={Math.max(1, (node.y1 ?? 0) - (node.y0 ?? 0))} />
            <text x={(node.x0 ?? 0) < width / 2 ? (node.x1 ?? 0) + 6 : (node.x0 ?? 0) - 6} y={((node.y0 ?? 0) + (node.y1 ?? 0)) / 2} dy="0.35em" textAnchor={(node.x0 ?? 0) < width / 2 ? 'start' : 'end'}>{node.name}</text>
          </g>
        ))}
      </svg>
      <p className="visually-hidden" aria-live="polite">{keys.announcement}</p>
    </div>
  );
}
