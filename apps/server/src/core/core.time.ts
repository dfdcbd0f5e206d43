/** The fixed-width ISO 8601 UTC form every timestamp is stored in. */
export function isoTimestamp(date: Date): string {
  return date.toISOString();
}
