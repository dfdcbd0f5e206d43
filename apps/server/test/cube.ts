import type { SemanticView } from '../src/data/semantic/semantic.model.js';
import { DEMO_SEMANTIC_VIEWS } from '../src/data/warehouse/warehouse.demo.js';

/**
 * The Cube API tests' model (issue 36): the demo's views with a row policy on orders (each caller reads the orders
 * of its `securityContext.tenant`), a measure hidden from everyone but Analysts, who also read every row.
 */
export function cubePolicyViews(): SemanticView[] {
  return structuredClone(DEMO_SEMANTIC_VIEWS).map((view) => (view.name !== 'orders' ? view : {
    ...view, preAggregations: undefined,
    accessPolicy: [
      { group: '*', memberLevel: { includes: '*', excludes: ['average_order_value'] }, rowLevel: { filters: [{ member: 'orders.tenant', operator: 'equals', values: ['{securityContext.tenant}'] }] } },
      { group: 'Analysts', rowLevel: { allowAll: true } },
    ],
  }));
}
