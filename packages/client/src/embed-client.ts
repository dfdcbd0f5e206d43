import { sendRequest } from './request.js';
import type {
  SavedChart, SavedChartChange, SavedChartInput, SavedChartList, SavedListQuery, SavedView, SavedViewChange, SavedViewInput, SavedViewList,
} from './types.js';

export interface SvcEmbedClientOptions {
  /** The tenant host, e.g. `https://analytics.example.com`. */
  baseUrl: string;
  /** An embed token (POST /api/v1/embed/session/token), sent as `Authorization: Embed-Token <token>`. */
  embedToken: string;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof fetch;
}

/**
 * Issue 35: a typed client for an embed viewer's saved charts and saved views (docs/explore.md "Saved charts and
 * views"). It holds an embed token, so it may run in a browser; the session needs settings.explore `view` to read
 * and `create` to save.
 *
 * @example
 * const viewer = new SvcEmbedClient({ baseUrl: 'https://analytics.example.com', embedToken });
 * const chart = await viewer.createSavedChart({ title: 'Revenue by category', query: { measures: ['orders.revenue'], dimensions: ['products.category'] }, kind: 'bar', visibility: 'tenant' });
 * for await (const shared of viewer.savedCharts({ visibility: 'tenant' })) console.log(shared.title);
 */
export class SvcEmbedClient {
  readonly #baseUrl: string;
  readonly #token: string;
  readonly #fetch: typeof fetch;

  constructor(options: SvcEmbedClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#token = options.embedToken;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** One page of the caller's private saved charts and their tenant's shared ones, newest first (`listSavedCharts`). */
  async listSavedCharts(query: SavedListQuery = {}): Promise<SavedChartList> {
    return this.#call('GET', `/api/v1/embed/charts${queryString(query)}`);
  }

  /** Every saved chart the caller may see, page after page while `hasNextPage`. */
  async *savedCharts(query: Omit<SavedListQuery, 'after'> = {}): AsyncGenerator<SavedChart> {
    let after: string | undefined;
    for (;;) {
      const page = await this.listSavedCharts(after === undefined ? query : { ...query, after });
      yield* page.charts;
      if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
      after = page.pageInfo.endCursor;
    }
  }

  /** Saves a chart (private by default); its query is checked under the caller's access policies. */
  async createSavedChart(input: SavedChartInput): Promise<SavedChart> {
    return this.#call('POST', '/api/v1/embed/charts', input);
  }

  async getSavedChart(chartId: string): Promise<SavedChart> {
    return this.#call('GET', `/api/v1/embed/charts/${encodeURIComponent(chartId)}`);
  }

  /** Renames, re-shares or changes the caller's own saved chart (another's: a 403 SvcApiError). */
  async updateSavedChart(chartId: string, change: SavedChartChange): Promise<SavedChart> {
    return this.#call('PATCH', `/api/v1/embed/charts/${encodeURIComponent(chartId)}`, change);
  }

  async deleteSavedChart(chartId: string): Promise<void> {
    await this.#call('DELETE', `/api/v1/embed/charts/${encodeURIComponent(chartId)}`);
  }

  /** One page of the saved views of a dashboard the caller may see, newest first (`listSavedViews`). */
  async listSavedViews(publicId: string, query: SavedListQuery = {}): Promise<SavedViewList> {
    return this.#call('GET', `${views(publicId)}${queryString(query)}`);
  }

  /** Saves the dashboard's filters, grain, field swaps and a layout of saved charts as a named view. */
  async createSavedView(publicId: string, input: SavedViewInput): Promise<SavedView> {
    return this.#call('POST', views(publicId), input);
  }

  async getSavedView(publicId: string, viewId: string): Promise<SavedView> {
    return this.#call('GET', `${views(publicId)}/${encodeURIComponent(viewId)}`);
  }

  async updateSavedView(publicId: string, viewId: string, change: SavedViewChange): Promise<SavedView> {
    return this.#call('PATCH', `${views(publicId)}/${encodeURIComponent(viewId)}`, change);
  }

  async deleteSavedView(publicId: string, viewId: string): Promise<void> {
    await this.#call('DELETE', `${views(publicId)}/${encodeURIComponent(viewId)}`);
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return sendRequest(this.#fetch, `${this.#baseUrl}${path}`, `Embed-Token ${this.#token}`, method, body);
  }
}

const views = (publicId: string) => `/api/v1/embed/dashboard/${encodeURIComponent(publicId)}/views`;

function queryString(query: SavedListQuery): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const qs = params.toString();
  return qs ? `?${qs}` : '';
}
