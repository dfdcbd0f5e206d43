import type { DataScope } from './data.scope.js';
import { modelMeta } from './semantic/semantic.meta.js';
import type { ModelMeta } from './semantic/semantic.meta.js';

// What a viewer may build queries with: the model's meta as the scope's access policies show it. Cube's `/v1/meta`
// (issue 36) and the embed's explore meta (issue 35) answer it; the authors' meta (deployments/) is the whole model.

/**
 * The model's meta under the scope's policies, in Cube's `/v1/meta` shape: a hidden member is not there at all, a
 * view with no visible member is left out, and pre-aggregations (their names and members) are not shown.
 */
export function visibleMeta(scope: DataScope): ModelMeta {
  const views = [...scope.model.views.values()];
  const meta = modelMeta(views);
  const cubes = meta.cubes.flatMap((cube, i) => {
    const view = views[i]!;
    const sees = (member: { name: string }) => scope.access.canSee({ name: member.name, view });
    const measures = cube.measures.filter(sees);
    const dimensions = cube.dimensions.filter(sees);
    if (measures.length === 0 && dimensions.length === 0) return [];
    const shown = new Set([...measures, ...dimensions].map((m) => m.name));
    return [{
      ...cube, measures, dimensions,
      drillMembers: cube.drillMembers.filter((name) => shown.has(name)),
      preAggregations: [],
    }];
  });
  return { cubes };
}
