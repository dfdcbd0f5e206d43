import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { findDeploymentInAccount } from '../../accounts/accounts.store.js';
import { AppError } from '../../core/core.errors.js';
import { requireAdmin } from '../../core/core.principal.js';
import { Described, ErrorResponse, Id, Nullable } from '../../core/core.schema.js';
import { requirePlatformUser } from '../../http/http.auth.js';
import { deploymentRollupStatus } from './preagg.scheduler.js';
import type { BuilderContext, RollupScheduler, RollupStatus } from './preagg.scheduler.js';

// Issue 34, the console's model page: each pre-aggregation's build status, for admins (the model itself is theirs).

const PreAggregationStatus = Type.Object({
  view: Type.String(),
  name: Type.String({ description: 'The pre-aggregation\'s name in its view' }),
  timezone: Type.String({ description: 'A rollup with a time dimension is built once per time zone it declares' }),
  built: Type.Boolean(),
  builtAt: Nullable(Type.String({ format: 'date-time', description: 'When the current build started reading the data source' })),
  buildMs: Nullable(Type.Integer()),
  rows: Nullable(Type.Integer()),
  sizeBytes: Nullable(Type.Integer({ description: "The bytes of the build's files; null when not built or not readable" })),
  partitions: Type.Array(Type.Object({ partition: Type.String(), rows: Type.Integer() }), { description: 'One per partition of the build (or one)' }),
  due: Nullable(Type.String({ description: 'Why a build is due now (never built, its definition changed, its refresh interval passed...); null when up to date' })),
  nextDueAt: Nullable(Type.String({ format: 'date-time', description: 'When it falls due by its refresh interval; null when due now or refreshed by its refresh SQL' })),
  lastError: Nullable(Type.Object({ message: Type.String(), at: Type.String({ format: 'date-time' }) }, {
    description: "This process's last failed build of it since its last build; null when none (or this process does not build)",
  })),
}, { title: 'PreAggregationStatus' });

const PreAggregationStatusList = Type.Object({ items: Type.Array(PreAggregationStatus) }, { title: 'PreAggregationStatusList' });

/** What the route needs: the builder's context (the store, the data sources) and, when this process builds, its scheduler. */
export interface PreAggregationRoutesContext extends BuilderContext {
  scheduler?: Pick<RollupScheduler, 'lastFailure'> | undefined;
}

function presentStatus(status: RollupStatus, scheduler: PreAggregationRoutesContext['scheduler']) {
  const [view, ...rest] = status.rollup.split('.');
  const failure = scheduler?.lastFailure(status);
  const manifest = status.manifest;
  return {
    view: view!, name: rest.join('.'), timezone: status.timezone, built: manifest !== undefined,
    builtAt: manifest?.builtAt ?? null, buildMs: manifest === undefined ? null : Math.round(manifest.buildMs), rows: manifest?.rows ?? null,
    sizeBytes: status.sizeBytes ?? null, partitions: (manifest?.files ?? []).map((f) => ({ partition: f.partition, rows: f.rows })),
    due: status.due ?? null, nextDueAt: status.nextDueAt ?? null, lastError: failure === undefined ? null : { message: failure.error, at: failure.at },
  };
}

/** `GET /api/v1/deployments/{id}/pre-aggregations`: what `svc preagg status` says, for one deployment of the caller's account. */
export function preAggregationRoutes(ctx: PreAggregationRoutesContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/deployments/:deploymentId/pre-aggregations', {
      schema: {
        operationId: 'listPreAggregations', tags: ['Authoring'], security: [{ bearerAuth: [] }],
        summary: "Each pre-aggregation's build status: built or not, when, its rows, size and partitions, whether and why a build is due (admins)",
        params: Type.Object({ deploymentId: Id }),
        response: {
          200: Described(PreAggregationStatusList, 'One entry per pre-aggregation and time zone, in the views\' order'),
          400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse,
        },
      },
    }, async (request, reply) => {
      const principal = requirePlatformUser(request);
      const notFound = () => new AppError('not_found', `deployment ${request.params.deploymentId} not found`, 'deploymentId');
      // Another account's deployment is a 404 before any role is looked at (deployments.service); the builds are read after.
      if ((await findDeploymentInAccount(ctx.db.kysely, principal.accountId, request.params.deploymentId)) === undefined) throw notFound();
      requireAdmin(principal);
      const statuses = await deploymentRollupStatus(ctx, principal.accountId, request.params.deploymentId);
      if (statuses === undefined) throw notFound();
      reply.header('cache-control', 'no-store');
      return { items: statuses.map((s) => presentStatus(s, ctx.scheduler)) };
    });
  };
}
