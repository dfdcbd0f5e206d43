import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PassThrough } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { exemptFromHandlerTimeout } from '../http/http.in-flight.js';
import { sendCachedPage } from '../http/http.page-cache.js';
import type { PageCache } from '../http/http.page-cache.js';
import { requireCommenter } from './comments.policy.js';
import type { Commenter } from './comments.policy.js';
import type { EmbedPrincipal } from '../core/core.principal.js';
import {
  Comment, CommentIdParams, CommentParams, CommentStreamHeaders, EditCommentBody, MentionableUserList, MentionableUsersQuery, PostCommentBody, PostedComment, ResolveBody,
  Thread, ThreadList, ThreadListQuery, commentErrorResponses,
} from './comments.schema.js';
import {
  deleteComment, editComment, listMentionableUsers, openThreadList, parseLastEventId, postComment, resolveThread,
} from './comments.service.js';
import type { CommentContext } from './comments.service.js';
import type { CommentStreamHub, StreamSink } from './comments.stream.js';
import { Described, NoContent } from '../core/core.schema.js';

const security: Record<string, string[]>[] = [{ embedToken: [] }, { bearerAuth: [] }];
const tags = ['Embed comments'];

const commenterOf = (request: FastifyRequest): Commenter => requireCommenter(request.principal, request.headers.authorization !== undefined);

/** The answer of the stream, as the OpenAPI document describes it. */
const EventStream = {
  description: 'Server-Sent Events, until svc ends the stream (`stream.end`) or the client leaves: first `stream.ready` (or `stream.reset`), '
    + 'then `comment.created`, `comment.edited`, `comment.deleted`, `thread.resolved` and `thread.reopened`, each with an `id` to resume from, '
    + 'and a heartbeat comment line when idle. The events and their JSON are in docs/comments.md, "Live updates".',
  content: { 'text/event-stream': { schema: Type.String({ description: 'Lines of `id:`, `event:` and `data:` (one line of JSON), each event ended by a blank line' }) } },
};

/**
 * SPEC part B: the six comment endpoints under `/api/v1/embed/dashboard/{publicId}/comments`, and issue 23's live
 * stream of their events (`.../comments/stream`).
 */
export function commentRoutes(ctx: CommentContext, cache: PageCache, streams: CommentStreamHub): FastifyPluginAsyncTypebox {
  return async (app) => {
    const base = '/api/v1/embed/dashboard/:publicId/comments';

    app.get(base, {
      schema: {
        operationId: 'listDashboardComments', tags, security,
        summary: "List the caller's embed tenant's threads on a dashboard, newest first, each with all of its replies",
        params: CommentParams, querystring: ThreadListQuery,
        response: { 200: Described(ThreadList, 'One page of threads, each root with all of its replies'), ...commentErrorResponses },
      },
    }, async (request, reply) => {
      // A viewer's panel polls its list: while the dashboard's threads in the tenant stand still, the page is
      // served from memory after two small reads (the dashboard, the version).
      const page = await openThreadList(ctx, commenterOf(request), request.params.publicId, request.query);
      return sendCachedPage(reply, cache, page.key, page.version, page.read);
    });

    app.post(base, {
      schema: {
        operationId: 'postDashboardComment', tags, security,
        summary: 'Start a thread, or reply to a thread root (parentId); the author is the session\'s embed user',
        params: CommentParams, body: PostCommentBody,
        response: { 201: Described(PostedComment, 'The comment as stored (a new thread, or a reply), with the embed users it mentions'), ...commentErrorResponses },
      },
    }, async (request, reply) => {
      const comment = await postComment(ctx, commenterOf(request), request.params.publicId, request.body);
      return reply.status(201).send(comment);
    });

    app.get(`${base}/mentionable-users`, {
      schema: {
        operationId: 'listMentionableUsers', tags, security,
        summary: "The embed users of the caller's embed tenant, by username, optionally searched by username or email",
        params: CommentParams, querystring: MentionableUsersQuery,
        response: { 200: Described(MentionableUserList, 'One page of the embed users the caller may mention, by username'), ...commentErrorResponses },
      },
    }, async (request) => listMentionableUsers(ctx, commenterOf(request), request.params.publicId, request.query));

    app.patch(`${base}/:commentId`, {
      schema: {
        operationId: 'editDashboardComment', tags, security,
        summary: 'Replace the body of your own comment',
        params: CommentIdParams, body: EditCommentBody,
        response: { 200: Described(Comment, 'The comment with its new text'), ...commentErrorResponses },
      },
    }, async (request) => editComment(ctx, commenterOf(request), request.params.publicId, request.params.commentId, request.body));

    app.delete(`${base}/:commentId`, {
      schema: {
        operationId: 'deleteDashboardComment', tags, security,
        summary: 'Delete your own comment; deleting a thread root deletes the whole thread',
        params: CommentIdParams,
        response: { 204: Described(NoContent, 'The comment is deleted (a root: its whole thread)'), ...commentErrorResponses },
      },
    }, async (request, reply) => {
      await deleteComment(ctx, commenterOf(request), request.params.publicId, request.params.commentId);
      return reply.status(204).send(null);
    });

    app.post(`${base}/:commentId/resolve`, {
      schema: {
        operationId: 'resolveDashboardThread', tags, security,
        summary: 'Resolve (resolved: true) or re-open (false) a thread you started',
        params: CommentIdParams, body: ResolveBody,
        response: { 200: Described(Thread, 'The thread with its new state'), ...commentErrorResponses },
      },
    }, async (request) => resolveThread(ctx, commenterOf(request), request.params.publicId, request.params.commentId, request.body.resolved));

    app.get(`${base}/stream`, {
      schema: {
        operationId: 'streamDashboardComments', tags, security,
        summary: "Live events of the caller's embed tenant's threads on a dashboard (Server-Sent Events), resumable with Last-Event-ID",
        params: CommentParams, headers: CommentStreamHeaders,
        response: { 200: EventStream, ...commentErrorResponses },
      },
    }, async (request, reply) => {
      const commenter = commenterOf(request);
      const lastEventId = parseLastEventId(request.headers['last-event-id']);
      // commenterOf admits embed tokens only.
      const principal = request.principal as EmbedPrincipal;
      const out = new PassThrough();
      // Fastify destroys the stream when the client goes away; a write after that is dropped, not thrown.
      out.on('error', () => undefined);
      const sink: StreamSink = {
        write: (text) => {
          if (!out.destroyed && !out.writableEnded) out.write(text);
        },
        backlog: () => out.readableLength + out.writableLength + reply.raw.writableLength,
        end: () => {
          out.end();
        },
      };
      const close = await streams.open({ commenter, sessionId: principal.sessionId, tokenExpiresAt: principal.tokenExpiresAt }, request.params.publicId, lastEventId, sink);
      if (reply.raw.destroyed) close();
      else reply.raw.once('close', close);
      exemptFromHandlerTimeout(reply);
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-store')
        // A stream takes its connection along when it ends: the client reconnects anyway, and a keep-alive
        // connection would be handed back to the client's pool just as svc closed it (the next request then fails
        // with "other side closed"), or would hold a drain until it timed out.
        .header('connection', 'close')
        // nginx buffers proxied answers unless told not to.
        .header('x-accel-buffering', 'no')
        // The schema types the answer as the text it is; Fastify pipes the stream that carries it.
        .send(out as never);
    });
  };
}
