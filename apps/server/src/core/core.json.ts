/**
 * A JSON object column as svc stored it (account settings, a session's theme and settings), or `{}` when the text
 * is missing, unparseable or not an object: such a column is never a reason to fail a request.
 *
 * @example
 * parseJsonObject('{"allowEmbedComments":true}'); // { allowEmbedComments: true }
 * parseJsonObject('[1]'); // {}
 */
export function parseJsonObject(json: string | null | undefined): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json ?? '{}');
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {};
  } catch {
    return {};
  }
}
