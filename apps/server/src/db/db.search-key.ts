/**
 * The one case folding of svc's case-insensitive searches and orders: names, usernames and emails are folded by
 * the application and stored beside the original, so that both dialects compare the same bytes (SQLite's
 * `lower()` folds ASCII only, PostgreSQL's folds by locale).
 */
export function foldSearchKey(text: string): string {
  return text.toLowerCase();
}

/** Escapes LIKE's wildcards so that `%` and `_` in a search match themselves (use with `escape '\'`). */
export function escapeLike(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}
