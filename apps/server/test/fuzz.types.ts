// The fuzz engine's shared vocabulary (see fuzz.ts): operations, requests, problems and reports.

/** A JSON Schema node of the OpenAPI document. */
export type JsonSchema = Record<string, unknown>;

/** A path or query parameter of an operation. */
export interface FuzzParameter {
  name: string;
  location: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

/** One operation of the OpenAPI document, as the fuzzer drives it. */
export interface FuzzOperation {
  /** The operationId, or `METHOD /path` for an operation without one. */
  id: string;
  method: string;
  /** The OpenAPI path template: `/api/v1/embed/dashboard/{publicId}/comments`. */
  path: string;
  parameters: FuzzParameter[];
  /** The `application/json` request body schema, when the operation takes one. */
  body: JsonSchema | undefined;
  bodyRequired: boolean;
  /** Every security alternative names a scheme: a request without a usable credential must be refused. */
  needsCredential: boolean;
  /** Its success is a stream of Server-Sent Events (`text/event-stream`), which does not end by itself. */
  streams: boolean;
}

/** One request the fuzzer sends, with what it must get back. */
export interface FuzzRequest {
  /** The operation it targets (or the hand-written case's group). */
  operation: string;
  /** How it was made: `valid`, `broken path publicId`, `nasty: 2 MB body`... */
  label: string;
  method: string;
  /** Path and query, already percent-encoded (or deliberately not). */
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** The label of the credential in `headers` (the header itself is never printed). */
  credential: string;
  /** Why the request must be refused (a 2xx is a failure), when it must. */
  mustReject?: string;
  /** Exact statuses a hand-written case must get; otherwise any status below 500. */
  expectStatus?: number[];
  /** Raw bytes for a real socket (cases inject would normalise): the request line, headers and body as sent. */
  raw?: Buffer;
}

/** A broken promise: one request and what was wrong with its answer. */
export interface FuzzProblem {
  operation: string;
  label: string;
  credential: string;
  /** Replay: the seed of the run and the index of the case in it. */
  seed: number;
  caseIndex: number;
  request: string;
  status: number;
  response: string;
  reason: string;
  /** The server's log line for a 5xx (its stack names the file and line). */
  serverLog?: string;
}

/** What a batch of requests came to. */
export interface FuzzReport {
  sent: number;
  byStatus: Record<string, number>;
  byOperation: Record<string, Record<string, number>>;
  /** Database snapshots compared after refused requests. */
  verifications: number;
  problems: FuzzProblem[];
}

/** Whether a JSON value is an object (not null, not an array). */
export const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
