/** Every error code the API can answer with. Adding one without a status is a compile error. */
export type AppErrorCode =
  | 'invalid_parameter'
  | 'invalid_body'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'precondition_failed'
  | 'precondition_required'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'too_many_requests'
  | 'invalid_query'
  | 'query_timeout'
  /** Issue 35: an explore query no pre-aggregation answers, on a data source marked `exploreRequiresRollup`. */
  | 'query_too_broad'
  | 'bad_gateway'
  | 'internal_error'
  | 'service_unavailable'
  | 'invalid_request'
  | 'request_timeout'
  | 'header_fields_too_large';

export const statusByCode: Record<AppErrorCode, number> = {
  invalid_parameter: 400,
  invalid_body: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  precondition_required: 428,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  too_many_requests: 429,
  invalid_query: 422,
  query_timeout: 504,
  query_too_broad: 400,
  bad_gateway: 502,
  internal_error: 500,
  service_unavailable: 503,
  invalid_request: 400,
  request_timeout: 408,
  header_fields_too_large: 431,
};

/**
 * The one error class of svc. Services throw it; the HTTP error handler turns it into the DESIGN.md error body.
 *
 * @example
 * throw new AppError('invalid_parameter', 'first must be at least 1', 'first');
 */
export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly field: string | undefined;
  /** What is wrong, without the field it is wrong at: the message of an error made by `at`, else the whole message. */
  readonly detail: string;
  /** Each thing at fault, when there are several (the widgets a model change would break): the body's `error.details`. */
  readonly details: readonly ErrorDetail[] | undefined;

  constructor(code: AppErrorCode, message: string, field?: string, detail?: string, details?: readonly ErrorDetail[]) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.field = field;
    this.detail = detail ?? message;
    this.details = details;
  }

  /**
   * An error at a field, said as `<field>: <detail>`, which keeps both parts: a caller that checks a fragment on
   * behalf of a larger document names the fragment's problem at its own path without reading the message.
   *
   * @example
   * throw AppError.at('invalid_parameter', 'query.filters[0].values[0]', '"x" is not a number');
   */
  static at(code: AppErrorCode, field: string, detail: string): AppError {
    return new AppError(code, `${field}: ${detail}`, field, detail);
  }

  get status(): number {
    return statusByCode[this.code];
  }
}

/**
 * A 412 for a change made over a revision that is no longer current (the authoring API's If-Match): `kind` is the
 * ETag's kind (`model`, `draft`), `current` the revision now.
 */
export function staleRevision(kind: string, current: number): AppError {
  return new AppError('precondition_failed', `the ${kind} changed since you read it: it is at "${kind}-${current}"; read it again and redo your change`, 'If-Match');
}

/** One thing at fault of several: where (a JSON path, a widget), and why. */
export interface ErrorDetail {
  field: string;
  message: string;
  /** The dashboard it belongs to, when it is a dashboard's. */
  publicId?: string;
  widgetId?: string;
}

/** The error body of DESIGN.md (plus `field` when one field is at fault, and `details` when several things are). */
export interface ErrorBody {
  error: { status: number; code: AppErrorCode; message: string; field?: string; details?: ErrorDetail[] };
}

export function errorBody(error: AppError): ErrorBody {
  const body: ErrorBody = { error: { status: error.status, code: error.code, message: error.message } };
  if (error.field !== undefined) body.error.field = error.field;
  if (error.details !== undefined) body.error.details = [...error.details];
  return body;
}
