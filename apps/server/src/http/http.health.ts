import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { isDatabaseReachable } from '../db/db.database.js';
import type { Db } from '../db/db.database.js';
import { AppError, errorBody } from '../core/core.errors.js';
import { ErrorResponse } from '../core/core.schema.js';

const Status = Type.Object({ status: Type.Literal('ok') });

/** `/healthz`: the process answers. `/readyz`: and its database does too. */
export function healthRoutes(db: Db): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/healthz', { schema: { tags: ['Operations'], summary: 'Process is up', response: { 200: Status } } }, async () => ({ status: 'ok' as const }));
    app.get('/readyz', { schema: { tags: ['Operations'], summary: 'Database is reachable', response: { 200: Status, 503: ErrorResponse } } }, async (_request, reply) => {
      if (await isDatabaseReachable(db)) return { status: 'ok' as const };
      return reply.status(503).send(errorBody(new AppError('service_unavailable', 'database is not reachable')));
    });
  };
}
