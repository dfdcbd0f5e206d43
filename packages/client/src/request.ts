import { SvcApiError, isSvcErrorBody } from './errors.js';

/**
 * One request to svc with an `Authorization` header, answered as JSON: a 204 is undefined, an error body throws
 * SvcApiError with its status, code, field and details. Both clients send their requests through it.
 */
export async function sendRequest<T>(
  fetcher: typeof fetch, url: string, authorization: string, method: string, body?: unknown, headers: Record<string, string> = {},
): Promise<T> {
  const response = await fetcher(url, {
    method,
    headers: { authorization, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return undefined as T;
  const answer: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    if (isSvcErrorBody(answer)) throw new SvcApiError(answer.error.status, answer.error.code, answer.error.message, answer.error.field, answer.error.details);
    throw new SvcApiError(response.status, 'http_error', `svc answered ${response.status}`);
  }
  return answer as T;
}
