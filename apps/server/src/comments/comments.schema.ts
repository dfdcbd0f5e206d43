import { Type } from 'typebox';
import type { Static } from 'typebox';
import { ErrorResponse, Id, MAX_ROW_ID, Nullable, PageInfo } from '../core/core.schema.js';

/** SPEC Limits: a comment body is 1 to 10,000 characters, counted in Unicode code points (docs/decisions.md). */
export const MAX_BODY_CHARACTERS = 10_000;
/** SPEC Limits: `first` of the thread list and the mentionable users. */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 200;

const Timestamp = Type.String({ format: 'date-time' });
const First = Type.Integer({ minimum: 1, description: `Page size: default ${DEFAULT_PAGE_SIZE}, above ${MAX_PAGE_SIZE} clamped to ${MAX_PAGE_SIZE}, below 1 a 400` });
const After = Type.String({ maxLength: 1024, description: 'The endCursor of the previous page. A null or absent cursor sent back is a 400, not a restart.' });
// ajv counts string length in code points, so an astral-plane character (an emoji) counts once, as SPEC counts it.
const Body = Type.String({ minLength: 1, maxLength: MAX_BODY_CHARACTERS, description: 'Stored and returned verbatim; 1 to 10,000 Unicode code points' });

export const CommentParams = Type.Object({
  publicId: Type.String({ minLength: 1, maxLength: 200 }),
});
export const CommentIdParams = Type.Object({
  publicId: Type.String({ minLength: 1, maxLength: 200 }),
  commentId: Id,
});

export const ThreadListQuery = Type.Object({
  includeResolved: Type.Optional(Type.Boolean({ description: 'Add resolved threads to the open ones' })),
  resolvedOnly: Type.Optional(Type.Boolean({ description: 'Only resolved threads; wins over includeResolved' })),
  first: Type.Optional(First),
  after: Type.Optional(After),
});
export type ThreadListQuery = Static<typeof ThreadListQuery>;

export const MentionableUsersQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 255, description: 'Case-insensitive substring of the username or the email' })),
  first: Type.Optional(First),
  after: Type.Optional(After),
});
export type MentionableUsersQuery = Static<typeof MentionableUsersQuery>;

export const PostCommentBody = Type.Object({
  body: Body,
  parentId: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ROW_ID, description: 'The thread root to reply to' })),
}, { additionalProperties: false });
export type PostCommentBody = Static<typeof PostCommentBody>;

export const EditCommentBody = Type.Object({ body: Body }, { additionalProperties: false });
export type EditCommentBody = Static<typeof EditCommentBody>;

export const ResolveBody = Type.Object({
  resolved: Type.Boolean({ description: 'true resolves the thread, false re-opens it' }),
}, { additionalProperties: false });
export type ResolveBody = Static<typeof ResolveBody>;

export const Comment = Type.Object({
  id: Type.Integer(),
  dashboardId: Type.String({ description: "The dashboard's publicId" }),
  userId: Nullable(Type.Integer({ description: 'The embed user who wrote it; null once that embed user is deleted' })),
  body: Type.String(),
  editedAt: Nullable(Timestamp),
  removedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  isOwn: Type.Boolean({ description: 'Whether the caller wrote it' }),
}, { title: 'Comment' });
export type Comment = Static<typeof Comment>;

/** Issue 23: an embed user of the caller's tenant that a comment's body mentions (`@username`). */
export const Mention = Type.Object({
  userId: Type.Integer({ description: "The embed user's id (a comment's userId)" }),
  username: Type.String(),
  externalId: Type.String({ description: "The embed user's id in your system: Generate Session's externalId" }),
}, { title: 'Mention' });

/**
 * The 201 of a post: the Comment, plus (an extension to SPEC's Comment) the embed users its body mentions, resolved
 * in the caller's embed tenant.
 */
export const PostedComment = Type.Object({
  ...Comment.properties,
  mentions: Type.Array(Mention, {
    description: "Extension to SPEC's Comment: the embed users of the caller's embed tenant that the body mentions (`@username`, case-insensitive; "
      + 'every embed user of that name), in the order of the body. The body itself is stored as sent.',
  }),
}, { title: 'PostedComment' });

export const Thread = Type.Object({
  root: Comment,
  replies: Type.Array(Comment, { description: 'Every live reply, oldest first' }),
  resolvedAt: Nullable(Timestamp),
  resolvedBy: Nullable(Type.Integer({ description: 'The embed user who resolved it' })),
}, { title: 'Thread' });
export type Thread = Static<typeof Thread>;

export const ThreadList = Type.Object({ items: Type.Array(Thread), pageInfo: PageInfo }, { title: 'ThreadList' });
export type ThreadList = Static<typeof ThreadList>;

export const MentionableUser = Type.Object({
  id: Type.Integer({ description: "Embed user id: matches a comment's userId" }),
  username: Type.String(),
  email: Nullable(Type.String()),
  firstName: Nullable(Type.String()),
}, { title: 'MentionableUser' });
export type MentionableUser = Static<typeof MentionableUser>;

export const MentionableUserList = Type.Object({ items: Type.Array(MentionableUser), pageInfo: PageInfo }, { title: 'MentionableUserList' });
export type MentionableUserList = Static<typeof MentionableUserList>;

export const commentErrorResponses = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse };

/** Issue 23: the event types of a comment stream (`event:` of each Server-Sent Event), docs/comments.md "Live updates". */
export const COMMENT_STREAM_EVENT_TYPES = [
  'comment.created', 'comment.edited', 'comment.deleted', 'thread.resolved', 'thread.reopened', 'stream.ready', 'stream.reset', 'stream.end',
] as const;
export type CommentStreamEventType = (typeof COMMENT_STREAM_EVENT_TYPES)[number];

/** `comment.created` and `comment.edited`: the comment as it is when the event is sent, and its thread's root id. */
export const StreamCommentData = Type.Object({
  threadId: Type.Integer({ description: 'The thread root: the comment itself when it starts a thread' }),
  comment: Comment,
}, { title: 'StreamCommentData' });
export type StreamCommentData = Static<typeof StreamCommentData>;

/** `comment.deleted`: which comment went (a thread root: its whole thread). Never the text. */
export const StreamDeletionData = Type.Object({ threadId: Type.Integer(), commentId: Type.Integer() }, { title: 'StreamDeletionData' });
export type StreamDeletionData = Static<typeof StreamDeletionData>;

/** `thread.resolved` (the resolution that event made) and `thread.reopened` (both null). */
export const StreamResolutionData = Type.Object({
  threadId: Type.Integer(),
  resolvedAt: Nullable(Timestamp),
  resolvedBy: Nullable(Type.Integer({ description: 'The embed user who resolved it (the thread root\'s author); null once deleted' })),
}, { title: 'StreamResolutionData' });
export type StreamResolutionData = Static<typeof StreamResolutionData>;

/** Why a stream was told to reload its list (`stream.reset`). */
export type StreamResetReason = 'too_many_missed' | 'unknown_position';
/** Why svc ended a stream (`stream.end`, the last event before the response ends). */
export type StreamEndReason = 'revoked' | 'expired' | 'forbidden' | 'shutdown' | 'too_slow';

export const CommentStreamHeaders = Type.Object({
  'Last-Event-ID': Type.Optional(Type.String({
    description: 'The `id` of the last event received on an earlier stream of this dashboard: the stream first sends what came after it '
      + '(or `stream.reset` when that is too much or too old). A whole number; absent or empty: start from now.',
  })),
});
