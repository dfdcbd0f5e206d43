import { SvcApiError, isSvcErrorBody } from './errors.js';
import type { WorkspaceConnectionResponse, WorkspaceItem, WorkspaceQuery } from './types.js';

export interface SvcClientOptions {
  /** The tenant host, e.g. `https://analytics.example.com`. */
  baseUrl: string;
  /** An API key (platform API). Server-side only: never ship it to a browser. */
  apiKey: string;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof fetch;
}

/**
 * A typed client for the svc platform API.
 *
 * @example
 * const client = new SvcClient({ baseUrl: 'http://localhost:3000', apiKey: process.env.SVC_API_KEY! });
 * for await (const item of client.workspaceItems(1, { types: ['WORKBOOK'] })) console.log(item.name);
 */
export class SvcClient {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;

  constructor(options: SvcClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** One page of the workspace listing (`workspaceObjects`). */
  async listWorkspace(deploymentId: number, query: WorkspaceQuery = {}): Promise<WorkspaceConnectionResponse> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value) params.append(name, String(v));
      else params.set(name, String(value));
    }
    const qs = params.toString();
    return this.#get(`/api/v1/deployments/${deploymentId}/workspace${qs ? `?${qs}` : ''}`);
  }

  /**
   * Every item of a listing, page after page, following `endCursor` while `hasNextPage` (SPEC: loops are driven
   * by hasNextPage, never by a null cursor).
   */
  async *workspaceItems(deploymentId: number, query: Omit<WorkspaceQuery, 'after'> = {}): AsyncGenerator<WorkspaceItem> {
    let after: string | undefined;
    for (;;) {
      const page = await this.listWorkspace(deploymentId, after === undefined ? query : { ...query, after });
      yield* page.items;
      if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
      after = page.pageInfo.endCursor;
    }
  }

  async #get<T>(path: string): Promise<T> {
    const response = await this.#fetch(`${this.#baseUrl}${path}`, { headers: { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json' } });
    const body: unknown = await response.json().catch(() => undefined);
    if (!response.ok) {
      if (isSvcErrorBody(body)) throw new SvcApiError(body.error.status, body.error.code, body.error.message, body.error.field);
      throw new SvcApiError(response.status, 'http_error', `svc answered ${response.status}`);
    }
    return body as T;
  }
}
