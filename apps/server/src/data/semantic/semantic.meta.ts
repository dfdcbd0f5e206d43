import type { ColumnFormat, SemanticView } from './semantic.model.js';

// What a deployment's model offers an author, in the shape of Cube's `/v1/meta` (cubes with their measures,
// dimensions, segments, joins and pre-aggregations; member names `view.member`), so that tools written for Cube read
// it; svc's own facts (a column format's decimal places, a primary key, a view's drill members) ride along.

export interface MetaMember {
  name: string;
  title: string;
  shortTitle: string;
  type: string;
  /** Measures: the aggregation (`count`, `sum`, `avg`, `min`, `max`, `count_distinct`). */
  aggType?: string;
  /** Cube's format name: `currency`, `percent` or `number`. */
  format?: ColumnFormat['type'];
  decimalPlaces?: number | null;
  primaryKey?: boolean;
}

export interface MetaCube {
  name: string;
  title: string;
  type: 'view';
  measures: MetaMember[];
  dimensions: MetaMember[];
  /** svc declares no segments: always empty, kept for Cube's readers. */
  segments: MetaMember[];
  joins: Array<{ name: string; relationship: 'many_to_one' }>;
  drillMembers: string[];
  preAggregations: Array<{ name: string; measures: string[]; dimensions: string[]; timeDimension: string | null; granularity: string | null }>;
}

export interface ModelMeta {
  cubes: MetaCube[];
}

/** `created_at` -> `Created at`. */
function humanize(name: string): string {
  const words = name.replace(/_/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function formatOf(format: ColumnFormat | undefined): Pick<MetaMember, 'format' | 'decimalPlaces'> {
  return format === undefined ? {} : { format: format.type, ...(format.decimalPlaces !== undefined ? { decimalPlaces: format.decimalPlaces } : {}) };
}

/**
 * The meta of a model: every view in its order, each member titled as declared, else from its name (Cube's
 * defaults: `Orders Revenue` in full, `Revenue` short). Measures are of type `number`, as Cube's are.
 */
export function modelMeta(views: readonly SemanticView[]): ModelMeta {
  return {
    cubes: views.map((view) => {
      const viewTitle = view.title ?? humanize(view.name);
      const member = (name: string, title: string | undefined) => ({
        name: `${view.name}.${name}`,
        title: title ?? `${viewTitle} ${humanize(name).toLowerCase()}`,
        shortTitle: title ?? humanize(name),
      });
      return {
        name: view.name,
        title: viewTitle,
        type: 'view' as const,
        measures: view.measures.map((m) => ({ ...member(m.name, m.title), type: 'number', aggType: m.type, ...formatOf(m.format) })),
        dimensions: view.dimensions.map((d) => ({ ...member(d.name, d.title), type: d.type, ...formatOf(d.format), ...(d.primaryKey === true ? { primaryKey: true } : {}) })),
        segments: [],
        joins: (view.joins ?? []).map((join) => ({ name: join.view, relationship: 'many_to_one' as const })),
        drillMembers: view.drillMembers ?? view.dimensions.map((d) => `${view.name}.${d.name}`),
        preAggregations: (view.preAggregations ?? []).map((p) => ({
          name: p.name, measures: p.measures, dimensions: p.dimensions ?? [], timeDimension: p.timeDimension ?? null, granularity: p.granularity ?? null,
        })),
      };
    }),
  };
}
