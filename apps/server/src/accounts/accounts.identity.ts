/**
 * How svc compares the identities a host gives it (DESIGN "Generate Session", the import file): an email or an
 * embed user's externalId is the same identity whatever its case and surrounding spaces, so both are stored and
 * looked up trimmed and lower-cased.
 *
 * @example
 * normalizeExternalId('  Cust-42 ') === 'cust-42';
 */
export function normalizeExternalId(externalId: string): string {
  return externalId.trim().toLowerCase();
}

/** An email as svc stores and looks it up (see normalizeExternalId). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
