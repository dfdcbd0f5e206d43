import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { isDatabaseReachable } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import { AppError, errorBody } from '../core/core.errors.js';
import { ErrorResponse } from '../core/core.schema.js';

const Status = Type.Object({ status: Type.Literal('ok') }, { description: 'The probe passed' });
/** Probes take no credential; their only refusals are those of the HTTP layer (a request svc cannot read). */
const probe = { tags: ['Operations'], security: [] };

/** `/healthz`: the process answers. `/readyz`: and its database does too. */
export function healthRoutes(db: Db): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/healthz', {
      schema: { ...probe, operationId: 'checkLiveness', summary: 'Process is up', response: { 200: Status, '4xx': ErrorResponse } },
    }, async () => ({ status: 'ok' as const }));
    app.get('/readyz', {
      schema: { ...probe, operationId: 'checkReadiness', summary: 'Database is reachable', response: { 200: Status, '4xx': ErrorResponse, 503: ErrorResponse } },
    }, async (_request, reply) => {
      if (await isDatabaseReachable(db)) return { status: 'ok' as const };
      return reply.status(503).send(errorBody(new AppError('service_unavailable', 'database is not reachable')));
    });
  };
}
