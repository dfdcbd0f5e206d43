import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { ServiceContext } from '../core/core.context.js';
import { sendCachedPage } from '../http/http.page-cache.js';
import type { PageCache } from '../http/http.page-cache.js';
import { requireCommenter } from './comments.policy.js';
import type { Commenter } from './comments.policy.js';
import {
  Comment, CommentIdParams, CommentParams, EditCommentBody, MentionableUserList, MentionableUsersQuery, PostCommentBody, ResolveBody, Thread, ThreadList,
  ThreadListQuery, commentErrorResponses,
} from './comments.schema.js';
import { deleteComment, editComment, listMentionableUsers, openThreadList, postComment, resolveThread } from './comments.service.js';
import { Described, NoContent } from '../core/core.schema.js';

const security: Record<string, string[]>[] = [{ embedToken: [] }, { bearerAuth: [] }];
const tags = ['Embed comments'];

const commenterOf = (request: FastifyRequest): Commenter => requireCommenter(request.principal, request.headers.authorization !== undefined);

/** SPEC part B: the six comment endpoints under `/api/v1/embed/dashboard/{publicId}/comments`. */
export function commentRoutes(ctx: ServiceContext, cache: PageCache): FastifyPluginAsyncTypebox {
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
        response: { 201: Described(Comment, 'The comment as stored: a new thread, or a reply'), ...commentErrorResponses },
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
  };
}
