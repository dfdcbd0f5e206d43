import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../core/core.errors.js';

/**
 * Optimistic concurrency for the authoring API (RFC 9110 "Conditional Requests"; docs/authoring.md "Concurrent
 * edits"). A resource that authors change (a deployment's model, a dashboard's draft) has a revision, a number the
 * store raises at each change; its ETag is that revision, tagged with its kind: `"model-3"`, `"draft-7"`. A change
 * names the revision it was made over in `If-Match`, and the store writes only over that revision, in one
 * conditional statement: of two authors who read revision 3, the second to write gets a 412, never a silent
 * overwrite.
 */

/** The ETag of a revision of a kind of resource: `"model-3"`. */
export function etagOf(kind: string, revision: number): string {
  return `"${kind}-${revision}"`;
}

/** Sets the ETag header of an answer. */
export function sendEtag(reply: FastifyReply, kind: string, revision: number): void {
  void reply.header('etag', etagOf(kind, revision));
}

/**
 * The revision a change is made over, from `If-Match`: a 428 without the header, a 400 for a header that names no
 * revision of this kind, `'*'` for `If-Match: *` (whatever is current: the client chose to overwrite). A weak tag
 * (`W/"model-3"`) never matches, as RFC 9110 says of If-Match: it is a 412 once compared.
 */
export function ifMatchRevision(request: FastifyRequest, kind: string): number | '*' | 'weak' {
  const header = request.headers['if-match'];
  if (header === undefined || header.trim() === '') {
    throw new AppError('precondition_required', `If-Match is required: send the ETag of the ${kind} you changed (from its GET)`, 'If-Match');
  }
  const value = header.trim();
  if (value === '*') return '*';
  if (value.startsWith('W/')) return 'weak';
  const match = new RegExp(`^"${kind}-([1-9][0-9]{0,9})"$`).exec(value);
  if (match === null) throw new AppError('invalid_parameter', `If-Match must be one ETag of a ${kind}, as its GET answered ("${kind}-<revision>")`, 'If-Match');
  return Number(match[1]);
}
