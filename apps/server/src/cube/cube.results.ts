import type { SourcedResult } from '../data/data.run.js';
import type { MetaCube, MetaMember, ModelMeta } from '../data/semantic/semantic.meta.js';
import type { CubeQueryPlan } from './cube.query.js';

// An svc answer in Cube's `load` result shape (issue 36; docs/cube.md): rows as objects keyed by member, numbers as
// strings (as Cube's drivers send them), a time dimension with a granularity under both `view.member.grain` and
// `view.member`, and the annotation @cubejs-client/core reads for titles, types and formats.

export interface CubeAnnotationEntry {
  title: string;
  shortTitle: string;
  type: string;
  format?: string;
  meta?: Record<string, unknown>;
  drillMembers?: string[];
  drillMembersGrouped?: { measures: string[]; dimensions: string[] };
  granularity?: { name: string; title: string; interval: string };
}

export interface CubeAnnotation {
  measures: Record<string, CubeAnnotationEntry>;
  dimensions: Record<string, CubeAnnotationEntry>;
  segments: Record<string, never>;
  timeDimensions: Record<string, CubeAnnotationEntry>;
}

export interface CubeResult {
  query: Record<string, unknown>;
  data: Array<Record<string, unknown>> | { members: string[]; dataset: unknown[][] };
  annotation: CubeAnnotation;
  lastRefreshTime: string;
  total?: number;
  dataSource: 'default';
  dbType: string;
  external: boolean;
  slowQuery: false;
  /** svc's own: where the answer came from (`cache`, `rollup:<view>.<name>`, `warehouse`). */
  source: string;
}

/** Members of the (policy-filtered) meta by name, for titles. */
export function membersByName(meta: ModelMeta): Map<string, { member: MetaMember; cube: MetaCube }> {
  const byName = new Map<string, { member: MetaMember; cube: MetaCube }>();
  for (const cube of meta.cubes) {
    for (const member of [...cube.measures, ...cube.dimensions]) byName.set(member.name, { member, cube });
  }
  return byName;
}

/** Cube sends numbers as text; everything else as it is. */
const cubeValue = (value: unknown): unknown => (typeof value === 'number' ? String(value) : typeof value === 'bigint' ? value.toString() : value);

const entryOf = (member: MetaMember | undefined, fallback: string, type: string): CubeAnnotationEntry => ({
  title: member?.title ?? fallback,
  shortTitle: member?.shortTitle ?? fallback,
  type,
  ...(member?.format !== undefined ? { format: member.format } : {}),
});

/** One Cube result of an svc answer: the rows after `offset`, keyed as Cube keys them. */
export function cubeResult(plan: CubeQueryPlan, result: SourcedResult, members: ReturnType<typeof membersByName>, options: { now: Date; dbType: string; total?: number }): CubeResult {
  const annotation: CubeAnnotation = { measures: {}, dimensions: {}, segments: {}, timeDimensions: {} };
  // Each column's keys in a row: a time dimension at a granularity also under its bare name (Cube's own answers).
  const keys: string[][] = [];
  for (const column of result.columns) {
    const found = members.get(column.member);
    if (column.kind === 'measure') {
      annotation.measures[column.name] = {
        ...entryOf(found?.member, column.title, 'number'),
        drillMembers: found?.cube.drillMembers ?? [],
        drillMembersGrouped: { measures: [], dimensions: found?.cube.drillMembers ?? [] },
      };
      keys.push([column.name]);
    } else if (column.granularity !== undefined) {
      const entry = entryOf(found?.member, column.title, 'time');
      annotation.timeDimensions[column.name] = { ...entry, granularity: { name: column.granularity, title: column.granularity, interval: `1 ${column.granularity}` } };
      annotation.timeDimensions[column.member] = entry;
      keys.push(column.name === column.member ? [column.name] : [column.name, column.member]);
    } else {
      annotation.dimensions[column.name] = entryOf(found?.member, column.title, column.type);
      keys.push([column.name]);
    }
  }
  const rows = result.rows.slice(plan.offset, plan.offset + plan.limit);
  const compact = plan.normalized.responseFormat === 'compact';
  const data = compact
    ? { members: result.columns.map((c) => c.name), dataset: rows.map((row) => row.map(cubeValue)) }
    : rows.map((row) => {
      const object: Record<string, unknown> = {};
      row.forEach((value, i) => {
        for (const key of keys[i]!) object[key] = cubeValue(value);
      });
      return object;
    });
  return {
    query: plan.normalized,
    data,
    annotation,
    lastRefreshTime: options.now.toISOString(),
    ...(options.total !== undefined ? { total: options.total } : {}),
    dataSource: 'default',
    dbType: options.dbType,
    external: result.source.startsWith('rollup:'),
    slowQuery: false,
    source: result.source,
  };
}
