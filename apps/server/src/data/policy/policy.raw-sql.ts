import { AppError } from '../../core/core.errors.js';
import type { WarehouseDialect } from '../semantic/semantic.model.js';
import { parseReference, readReference, SQL_REFERENCE } from './policy.access.js';
import type { ModelAccess } from './policy.access.js';

/** A dashboard's raw SQL, as the policies see it: its text, and whether it binds the session's references. */
export interface RawSql {
  /** The report snapshot it belongs to, named in a refusal. */
  reportId: number;
  sqlQuery: string;
  /** `meta.policyAware: true`: its `{securityContext.x}` references are bound, so it stands in for row filters. */
  policyAware: boolean;
}

/**
 * A snapshot's raw SQL with its references bound. SQL cannot be filtered by svc, so a viewer whom any view's
 * policy restricts gets a 403, unless the snapshot declares itself policy-aware (`meta.policyAware: true`): its
 * `{securityContext.x}` references then become bound parameters, and a reference the session lacks (or a list,
 * which one parameter cannot hold) refuses the widget rather than run it unbound. Policy-aware SQL stands in for
 * row filters only: a viewer from whom a policy hides members is refused it too, since SQL may read any column.
 */
export function bindRawSql(access: ModelAccess, raw: RawSql, dialect: WarehouseDialect): { statement: string; parameters: unknown[] } {
  const { reportId, sqlQuery, policyAware } = raw;
  if (policyAware && access.hidesMembers) {
    throw new AppError('forbidden', `report snapshot ${reportId} is raw SQL, which may read any column, and a policy hides members from you`, 'widgetId');
  }
  if (!policyAware) {
    if (access.restricted) {
      throw new AppError('forbidden', `report snapshot ${reportId} is raw SQL, which access policies cannot filter, and a policy restricts what you may read`, 'widgetId');
    }
    return { statement: sqlQuery, parameters: [] };
  }
  const parameters: unknown[] = [];
  const postgres = dialect === 'postgres';
  const statement = sqlQuery.replace(SQL_REFERENCE, (text) => {
    const reference = parseReference(text);
    const values = reference === undefined || reference === 'malformed' ? undefined : readReference(reference, access.subject);
    if (values === undefined || values.length !== 1) {
      throw new AppError('forbidden', `report snapshot ${reportId} needs ${text.replace(/\s+/g, '')} as one value, and this session ${values === undefined ? 'has none' : 'holds a list'}`, 'widgetId');
    }
    parameters.push(values[0]);
    return postgres ? `$${parameters.length}` : '?';
  });
  return { statement, parameters };
}
