import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Static } from 'typebox';
import { requireAdmin } from '../core/core.principal.js';
import { decodeCursor, encodeCursor, fingerprintQuery, invalidCursor, isCursorId } from '../core/core.cursor.js';
import { Described, ErrorResponse, PageInfo } from '../core/core.schema.js';
import type { ServiceContext } from '../db/db.context.js';
import { requirePlatformUser } from '../http/http.auth.js';
import { selectAuditEvents } from './audit.store.js';
import type { AuditEventRow } from './audit.store.js';

const AuditEvent = Type.Object({
  id: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
  actor: Type.Object({ userId: Type.Union([Type.Integer(), Type.Null()]), email: Type.Union([Type.String(), Type.Null()]) }),
  action: Type.String({ description: 'What was done: model.replace, dashboard.create, dashboard.publish, ...' }),
  target: Type.Object({ type: Type.String(), id: Type.String() }),
  fromVersion: Type.Union([Type.Integer(), Type.Null()]),
  toVersion: Type.Union([Type.Integer(), Type.Null()]),
  detail: Type.Object({}, { additionalProperties: true }),
}, { title: 'AuditEvent' });
type AuditEvent = Static<typeof AuditEvent>;

const AuditPage = Type.Object({ items: Type.Array(AuditEvent), pageInfo: PageInfo }, { title: 'AuditPage' });

function present(row: AuditEventRow): AuditEvent {
  return {
    id: row.id, at: row.at, actor: { userId: row.actor_user_id, email: row.actor_email }, action: row.action,
    target: { type: row.target_type, id: row.target_id }, fromVersion: row.from_version, toVersion: row.to_version,
    detail: JSON.parse(row.detail) as Record<string, unknown>,
  };
}

/** `GET /api/v1/audit`: the account's authoring changes, newest first, a page at a time (admins only). */
export function auditRoutes(ctx: ServiceContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v1/audit', {
      schema: {
        operationId: 'listAuditEvents', tags: ['Authoring'], security: [{ bearerAuth: [] }],
        summary: "The account's changes made through the authoring API, newest first (admins only)",
        querystring: Type.Object({
          first: Type.Optional(Type.Integer({ minimum: 1, description: 'Page size (default 50; above 200 reads 200)' })),
          after: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'The endCursor of the previous page' })),
        }, { additionalProperties: false }),
        response: { 200: Described(AuditPage, 'A page of audit events'), 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse },
      },
    }, async (request) => {
      const principal = requirePlatformUser(request);
      requireAdmin(principal);
      const first = Math.min(request.query.first ?? 50, 200);
      const fingerprint = fingerprintQuery(['audit', principal.accountId]);
      let beforeId: number | undefined;
      if (request.query.after !== undefined) {
        const [id] = decodeCursor(request.query.after, fingerprint, 1);
        if (!isCursorId(id)) throw invalidCursor('malformed');
        beforeId = id;
      }
      const rows = await selectAuditEvents(ctx.db, principal.accountId, beforeId, first + 1);
      const page = rows.slice(0, first);
      const cursor = (row: AuditEventRow | undefined) => (row === undefined ? null : encodeCursor(fingerprint, [row.id]));
      return {
        items: page.map(present),
        pageInfo: { hasNextPage: rows.length > first, hasPreviousPage: beforeId !== undefined, startCursor: cursor(page[0]), endCursor: cursor(page.at(-1)) },
      };
    });
  };
}
