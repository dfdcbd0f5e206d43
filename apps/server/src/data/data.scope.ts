import type { EmbedPrincipal, PlatformUserPrincipal } from '../core/core.principal.js';
import { ByteLru } from '../core/core.byte-lru.js';
import type { ServiceContext } from '../db/db.context.js';
import { AppError } from '../core/core.errors.js';
import { Sealer } from '../core/core.sealed.js';
import { parseJson } from '../workspace/workspace.presenter.js';
import { selectGroupNamesOfUser } from '../workspace/workspace.store.js';
import type { ResultCache } from './cache/cache.results.js';
import type { MetadataReads } from './data.metadata.js';
import { openDataSource } from './warehouse/warehouse.sources.js';
import { lockedFilter, ModelAccess } from './policy/policy.access.js';
import type { AccessSubject, LockedFilter } from './policy/policy.access.js';
import { viewerValueFilters } from './data.viewer.js';
import type { RollupStore } from './preagg/preagg.store.js';
import { SemanticModel } from './semantic/semantic.model.js';
import type { DataSourceConfig, SemanticView } from './semantic/semantic.model.js';
import { isTimeZoneName } from './semantic/semantic.timezone.js';
import { DEMO_SEMANTIC_VIEWS } from './warehouse/warehouse.demo.js';
import type { WarehouseRegistry } from './warehouse/warehouse.registry.js';

// The scope of a request's queries (issue 32's first step of the flow: route -> scope -> policy -> plan -> cache ->
// data source): whose data source and model, which time zone, and who the viewer is to the access policies.

/** What the data path needs beyond the service context. */
export interface DataContext extends ServiceContext {
  warehouses: WarehouseRegistry;
  /** Most rows a result carries (`truncated` tells when more matched). */
  rowCap: number;
  /** Longest a statement may run. */
  timeoutMs: number;
  /** Answers shared by every viewer of this process (cache.results.ts). */
  cache: ResultCache;
  /** Built pre-aggregations (preagg.store.ts); none: every query goes to the data source. */
  rollups?: RollupStore;
  /** The dashboards, snapshots, models and time zones widget requests read, held while unchanged (data.metadata.ts). */
  reads: MetadataReads;
  /** Opens the deployments' data sources sealed at rest (SVC_ENCRYPTION_KEY); default: no key, so none sealed. */
  sealer?: Sealer;
}

const NO_KEYS = new Sealer([]);

/**
 * Everything one request's queries run under: the deployment's data source and semantic model, the time zone,
 * and the viewer's access under the model's policies. Every query of the data path is compiled with it.
 */
export interface DataScope {
  accountId: number;
  deploymentId: number;
  source: DataSourceConfig;
  model: SemanticModel;
  timezone: string;
  access: ModelAccess;
  /** Past the result cache (the `refresh` action). */
  force: boolean;
}

const NO_ATTRIBUTES: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Who a principal is to access policies. An `externalId` session: the securityContext, groups and userAttributes
 * its Generate Session call sent, with its tenant. An `internalId` session: its securityContext and
 * userAttributes, with its platform user's groups. An API key or console session: the user's groups only. Groups
 * are read only when some view has policies.
 */
async function accessSubjectOf(ctx: ServiceContext, principal: PlatformUserPrincipal | EmbedPrincipal, model: SemanticModel): Promise<AccessSubject> {
  const hasPolicies = [...model.views.values()].some((view) => (view.accessPolicy ?? []).length > 0);
  const platformGroups = hasPolicies && principal.userId !== null ? await selectGroupNamesOfUser(ctx.db, principal.accountId, principal.userId) : [];
  if (principal.kind === 'platform-user') return { securityContext: NO_ATTRIBUTES, userAttributes: NO_ATTRIBUTES, groups: platformGroups, embedTenant: null };
  return {
    securityContext: principal.access.securityContext,
    userAttributes: principal.access.userAttributes,
    groups: principal.userId !== null ? platformGroups : principal.access.groups,
    embedTenant: principal.embedTenantName,
  };
}

/**
 * An embed session's locked filters (issue 38) as query filters. Generate Session checked them against the model;
 * one whose dimension the model no longer has matches no row (a lock is never dropped).
 */
function lockedFiltersOf(principal: PlatformUserPrincipal | EmbedPrincipal, model: SemanticModel): LockedFilter[] {
  if (principal.kind !== 'embed') return [];
  return Object.entries(principal.access.lockedFilters).flatMap(([member, value]): LockedFilter[] => {
    const [viewName, memberName] = member.split('.') as [string, string | undefined];
    const dimension = model.views.get(viewName)?.dimensions.find((d) => d.name === memberName);
    if (dimension === undefined) return [{ view: viewName, filter: { never: `the locked filter's dimension ${member} is no longer in the model` } }];
    return viewerValueFilters(member, dimension.type === 'time', value).map((filter) => lockedFilter(filter, viewName));
  });
}

/** The scope a principal's queries on a deployment run in (`timezone`: the viewer's ask, else the account's). */
export async function openDataScope(ctx: DataContext, principal: PlatformUserPrincipal | EmbedPrincipal, deploymentId: number, timezone: string | undefined, force = false): Promise<DataScope> {
  const { source, model } = await deploymentModel(ctx, principal.accountId, deploymentId);
  const [zone, subject] = await Promise.all([resolveTimezone(ctx, principal.accountId, timezone), accessSubjectOf(ctx, principal, model)]);
  return { accountId: principal.accountId, deploymentId, source, model, timezone: zone, access: new ModelAccess(model, subject, lockedFiltersOf(principal, model)), force };
}

/** The deployment's data source and semantic model: its own, or the bundled demo warehouse's. */
export async function deploymentModel(ctx: DataContext, accountId: number, deploymentId: number): Promise<{ source: DataSourceConfig; model: SemanticModel }> {
  const row = await ctx.reads.deployment(ctx, accountId, deploymentId);
  if (row === undefined) throw new AppError('not_found', `deployment ${deploymentId} not found`, 'deploymentId');
  const source = openDataSource(row.data_source, ctx.sealer ?? NO_KEYS);
  return { source, model: modelOf(row.semantic_views) };
}

/** Parsed semantic models by their stored text: every widget request reads one, and most read the same few. */
const MODELS = new ByteLru<SemanticModel>(16 * 1024 * 1024);

const DEMO_MODEL = new SemanticModel(DEMO_SEMANTIC_VIEWS);

/** The model of a deployment's stored views (the demo's when it has none), parsed once per distinct text. */
function modelOf(text: string | null): SemanticModel {
  if (text === null) return DEMO_MODEL;
  let model = MODELS.get(text);
  if (model === undefined) {
    const views = parseJson<SemanticView[]>(text);
    model = views === null ? DEMO_MODEL : new SemanticModel(views);
    // About four bytes of objects for each byte of JSON, and the key itself.
    MODELS.set(text, model, text.length * 6);
  }
  return model;
}

/** The time zone queries run in: the viewer's (an IANA name), else the account's default, else UTC. */
export async function resolveTimezone(ctx: DataContext, accountId: number, asked: string | undefined): Promise<string> {
  if (asked !== undefined) {
    if (!isTimeZoneName(asked)) throw new AppError('invalid_parameter', `timezone must be an IANA time zone name (bare UTC offsets are not), got ${JSON.stringify(asked)}`, 'timezone');
    return asked;
  }
  const timezone = await ctx.reads.timezone(ctx, accountId);
  return timezone !== null && isTimeZoneName(timezone) ? timezone : 'UTC';
}
