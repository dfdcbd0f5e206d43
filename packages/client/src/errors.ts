/** The error body every non-2xx svc answer carries. */
export interface SvcErrorBody {
  error: { status: number; code: string; message: string; field?: string; details?: SvcErrorDetail[] };
}

/** One thing at fault of several (a widget a model change would break): where, why, and whose. */
export interface SvcErrorDetail {
  field: string;
  message: string;
  publicId?: string;
  widgetId?: string;
}

/**
 * A non-2xx answer from svc, with the status, code, message and (when one field was at fault) field it sent.
 *
 * @example
 * try { await client.listWorkspace(7, { first: 0 }); } catch (e) { if (e instanceof SvcApiError) e.field; // 'first' }
 */
export class SvcApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  /** Each thing at fault, when svc names several (`error.details`). */
  readonly details: readonly SvcErrorDetail[] | undefined;

  constructor(status: number, code: string, message: string, field?: string, details?: readonly SvcErrorDetail[]) {
    super(message);
    this.name = 'SvcApiError';
    this.status = status;
    this.code = code;
    this.field = field;
    this.details = details;
  }
}

export function isSvcErrorBody(value: unknown): value is SvcErrorBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error = (value as { error: unknown }).error;
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string';
}
