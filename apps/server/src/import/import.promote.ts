import { checkShape, ImportError, rejectNulCharacters } from './import.check.js';
import type { ImportDashboard, ImportDeployment, ImportItem, ImportReportSnapshot } from './import.deployment-schema.js';
import type { ImportAccount } from './import.schema.js';

// `svc promote` (issue 33 part 7; docs/import.md "Promoting from staging to production"): one account of an export
// file applied to a running svc through its public authoring API, as the admin whose API key it is given. Nothing
// here opens a database: production keeps its audit log, its versions and its If-Match checks, and the CI that
// promotes needs an API key only. Plain fetch rather than @svc/client: the server package depends on no workspace
// package (its build runs before the client's), and the promotion needs If-Match on publish, which the client's
// publishDashboard does not send.
//
// Every read comes first (the plan), then the writes, each over the revision the plan read: a production changed
// in between is a 412 naming what changed, never an overwrite. Only what a file can say and the API can write is
// promoted: models, and dashboards' published state (title, description, allowEmbed, config, report snapshots).

/** What `svc promote` is given. */
export interface PromoteOptions {
  /** The export file's JSON (what `svc export` writes). */
  file: unknown;
  /** The production svc, e.g. `https://analytics.example.com`. */
  url: string;
  /** An API key of an admin of the production account. */
  apiKey: string;
  /** The tenantName of the file's account to promote; needed when the file holds several. */
  tenant?: string;
  /** Reads and plans only. */
  dryRun?: boolean;
  /** Replaces a model even when it breaks a published production dashboard (`?force=true`). */
  force?: boolean;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof fetch;
}

export type ModelAction = 'replace' | 'none';
export type DashboardAction = 'create' | 'change' | 'archive' | 'none';

export interface ModelStep {
  deployment: string;
  deploymentId: number;
  action: ModelAction;
  why: string;
  /** The model revision the plan read, and (once done) the new one. */
  fromRevision: number;
  toRevision?: number;
  /** Whether the data source is sent (it differs from production's). */
  dataSource?: boolean;
  /** Set when the change was forced: the widgets of production's published dashboards it broke. */
  forced?: Array<{ publicId?: string; widgetId?: string; field: string; message: string }>;
}

export interface DashboardStep {
  publicId: string;
  deployment: string;
  action: DashboardAction;
  why: string;
  /** Where a created dashboard goes: its folder path in the file when production has that folder, else the root. */
  folder?: string;
  /** The published version before and (once done) after. */
  fromVersion?: number | null;
  toVersion?: number;
  /** Production had an unpublished draft, which the promotion replaced. */
  replacedDraft?: boolean;
}

/** What `svc promote` prints: the plan, as done (or, with --dry-run, as it would be done). */
export interface PromoteResult {
  url: string;
  account: string;
  dryRun: boolean;
  deployments: ModelStep[];
  dashboards: DashboardStep[];
  counts: Record<'modelsReplaced' | 'created' | 'changed' | 'archived' | 'unchanged', number>;
}

/**
 * A promotion that stopped: the message names the deployment or dashboard, `answer` is the API's error body when
 * svc refused a request, and `done` what was applied before (the promotion is not one transaction: each step is).
 */
export class PromoteError extends Error {
  constructor(message: string, readonly answer?: unknown, readonly done?: PromoteResult) {
    super(message);
    this.name = 'PromoteError';
  }
}

/** A refused request: its status and the API's error body. */
class ApiError extends Error {
  constructor(readonly status: number, readonly body: unknown, readonly request: string) {
    const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    super(`${request} answered ${status}${error?.code === undefined ? '' : ` ${error.code}`}${error?.message === undefined ? '' : `: ${error.message}`}`);
    this.name = 'ApiError';
  }
}

interface Answer<T> {
  body: T;
  etag: string | undefined;
}

/** The platform API of the production svc, over HTTP, with the admin's key. */
class Api {
  readonly #base: string;
  constructor(base: string, readonly apiKey: string, readonly fetchImpl: typeof fetch) {
    this.#base = base.replace(/\/+$/, '');
  }

  async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
    const request = `${method} ${path}`;
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.#base}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.apiKey}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new PromoteError(`cannot reach ${this.#base} (${cause?.code ?? cause?.message ?? (error as Error).message})`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    if (!response.ok) throw new ApiError(response.status, parsed, request);
    return { body: parsed as T, etag: response.headers.get('etag') ?? undefined };
  }
}

// What the authoring API answers (docs/authoring.md), as far as the promotion reads it.
interface ProductionDeployment { id: number; name: string; modelRevision: number; semanticViews: unknown[]; dataSource: Record<string, unknown>; demoModel: boolean }
interface ProductionSnapshot extends Record<string, unknown> { reportId: number }
interface ProductionDashboard {
  publicId: string;
  deploymentId: number;
  status: 'draft' | 'published' | 'archived';
  published: { title: string | null; description: string | null; allowEmbed: boolean; config: Record<string, unknown>; reportSnapshots: ProductionSnapshot[]; versionNumber: number } | null;
  draft: unknown;
  draftRevision: number;
}
interface ListedItem { id: number; name: string; type: 'FOLDER' | 'WORKBOOK' | 'REPORT' }

/** Production's workspace tree of one deployment, as far as the promotion needs it: folders by path, reports' names. */
interface ProductionTree {
  folders: Map<string, number>;
  reportNames: Map<number, string>;
}

/** A dashboard of the file with where it sits: its deployment, its folder path, the names of its reports. */
interface FileDashboard {
  dashboard: ImportDashboard;
  workbookName: string;
  folderPath: string[];
  /** The path in the file, for messages: `accounts[0].deployments[0].items[2].dashboard`. */
  path: string;
}

/** A planned dashboard step with what it needs to be carried out. */
interface PlannedDashboard {
  step: DashboardStep;
  file: FileDashboard;
  deploymentId: number;
  folderId?: number;
  draftRevision?: number;
  draft?: DraftBody;
}

interface DraftBody {
  title: string | null;
  description: string | null;
  allowEmbed: boolean;
  config: Record<string, unknown>;
  reportSnapshots: Array<Record<string, unknown>>;
}

const PATH_SEPARATOR = ' / ';

/**
 * Applies one account of an export file to the svc at `url` (module comment); resolves to what was done, or throws
 * a PromoteError naming the deployment or dashboard that stopped it.
 *
 * @example
 * const result = await promote({ file, url: 'https://analytics.example.com', apiKey: process.env.SVC_API_KEY!, dryRun: true });
 * result.dashboards.filter((d) => d.action !== 'none');
 */
export async function promote(options: PromoteOptions): Promise<PromoteResult> {
  const account = accountOf(options.file, options.tenant);
  const api = new Api(options.url, options.apiKey, options.fetch ?? globalThis.fetch.bind(globalThis));
  const result: PromoteResult = {
    url: options.url, account: account.tenantName, dryRun: options.dryRun === true, deployments: [], dashboards: [],
    counts: { modelsReplaced: 0, created: 0, changed: 0, archived: 0, unchanged: 0 },
  };
  const { models, dashboards } = await plan(api, account);
  result.deployments = models.map((m) => m.step);
  result.dashboards = dashboards.map((d) => d.step);
  if (options.dryRun !== true) {
    const done: PromoteResult = { ...result, deployments: [], dashboards: [] };
    const changing = new Set(dashboards.filter((d) => d.step.action === 'change' || d.step.action === 'archive').map((d) => d.step.publicId));
    try {
      for (const model of models) {
        if (model.step.action === 'replace') await replaceModel(api, model, options.force === true, changing);
        done.deployments.push(model.step);
      }
      for (const dashboard of dashboards) {
        await applyDashboard(api, dashboard);
        done.dashboards.push(dashboard.step);
      }
    } catch (error) {
      if (error instanceof PromoteError) throw new PromoteError(error.message, error.answer, countOf(done));
      throw error;
    }
  }
  return countOf(result);
}

function countOf(result: PromoteResult): PromoteResult {
  const count = (action: DashboardAction) => result.dashboards.filter((d) => d.action === action).length;
  result.counts = {
    modelsReplaced: result.deployments.filter((d) => d.action === 'replace').length,
    created: count('create'), changed: count('change'), archived: count('archive'), unchanged: count('none'),
  };
  return result;
}

/** The file's account to promote: the one of `tenant`, else the file's only one. */
function accountOf(input: unknown, tenant: string | undefined): ImportAccount {
  let file;
  try {
    rejectNulCharacters(input, '$');
    file = checkShape(input);
  } catch (error) {
    if (error instanceof ImportError) throw new PromoteError(`the file is not an export file: ${error.message}`);
    throw error;
  }
  if (tenant !== undefined) {
    const account = file.accounts.find((a) => a.tenantName === tenant);
    if (account === undefined) throw new PromoteError(`the file has no account with tenant name "${tenant}" (it has ${file.accounts.map((a) => `"${a.tenantName}"`).join(', ') || 'none'})`);
    return account;
  }
  if (file.accounts.length !== 1) {
    throw new PromoteError(`the file holds ${file.accounts.length} accounts (${file.accounts.map((a) => `"${a.tenantName}"`).join(', ')}): choose one with --account TENANT`);
  }
  return file.accounts[0]!;
}

/** Every read of the promotion, and what each deployment and dashboard needs: nothing is written here. */
async function plan(api: Api, account: ImportAccount): Promise<{ models: Array<{ step: ModelStep; body: Record<string, unknown> }>; dashboards: PlannedDashboard[] }> {
  const listed = (await read(api, '/api/v1/deployments', 'the list of deployments')).body as { items: Array<{ id: number; name: string }> };
  const models: Array<{ step: ModelStep; body: Record<string, unknown> }> = [];
  const dashboards: PlannedDashboard[] = [];
  const seen = new Map<string, string>();
  for (const [d, deployment] of (account.deployments ?? []).entries()) {
    const target = listed.items.filter((item) => item.name === deployment.name);
    if (target.length === 0) {
      throw new PromoteError(`deployment "${deployment.name}" (accounts[].deployments[${d}]) is not in production (it has ${listed.items.map((i) => `"${i.name}"`).join(', ') || 'none'}): create it there first; svc promote matches deployments by name and does not create them`);
    }
    if (target.length > 1) throw new PromoteError(`deployment "${deployment.name}": production has ${target.length} deployments of that name, so the promotion cannot tell which one is meant`);
    const id = target[0]!.id;
    const detail = await read(api, `/api/v1/deployments/${id}`, `deployment "${deployment.name}"`);
    models.push(planModel(deployment, detail.body as ProductionDeployment));
    const tree = await readTree(api, id, deployment.name);
    for (const file of dashboardsOf(deployment, d)) {
      const other = seen.get(file.dashboard.publicId);
      if (other !== undefined) throw new PromoteError(`dashboard ${file.dashboard.publicId} is twice in the file (${other} and ${file.path})`);
      seen.set(file.dashboard.publicId, file.path);
      dashboards.push(await planDashboard(api, deployment, id, tree, file));
    }
  }
  return { models, dashboards };
}

async function read(api: Api, path: string, what: string): Promise<Answer<unknown>> {
  try {
    return await api.call('GET', path);
  } catch (error) {
    if (error instanceof ApiError) throw new PromoteError(`${what}: ${error.message}`, error.body);
    throw error;
  }
}

function planModel(deployment: ImportDeployment, production: ProductionDeployment): { step: ModelStep; body: Record<string, unknown> } {
  const base = { deployment: deployment.name, deploymentId: production.id, fromRevision: production.modelRevision };
  if (deployment.semanticViews === undefined) {
    return { step: { ...base, action: 'none', why: 'the file has no model of its own for this deployment (it runs on the demo views)' }, body: {} };
  }
  const views = !same(deployment.semanticViews, production.semanticViews);
  // A data source left out of the file keeps production's (the PUT leaves out what is not sent); one that is the
  // same as production's as the API shows it (its password redacted, ****) is not sent either, so the audit entry
  // does not say it changed. One that differs is sent: its **** password keeps production's when the rest of the
  // URL is production's, and is refused (400 at dataSource.url) otherwise: svc never stores the redaction.
  const source = deployment.dataSource !== undefined && !same(deployment.dataSource, production.dataSource);
  if (!views && !source) return { step: { ...base, action: 'none', why: 'the same model as production' }, body: {} };
  const why = [views ? 'the semantic views differ' : '', source ? 'the data source differs' : ''].filter((s) => s !== '').join(', and ');
  const body = { semanticViews: deployment.semanticViews, ...(source ? { dataSource: deployment.dataSource } : {}) };
  return { step: { ...base, action: 'replace', why, dataSource: source }, body };
}

/** Folders (by path of names) and REPORT names of production's deployment, read folder by folder. */
async function readTree(api: Api, deploymentId: number, deploymentName: string): Promise<ProductionTree> {
  const tree: ProductionTree = { folders: new Map(), reportNames: new Map() };
  const queue: Array<{ id: number | undefined; path: string[] }> = [{ id: undefined, path: [] }];
  while (queue.length > 0) {
    const folder = queue.shift()!;
    let after: string | undefined;
    for (;;) {
      const params = new URLSearchParams({ first: '200' });
      params.append('types', 'FOLDER');
      params.append('types', 'REPORT');
      if (folder.id !== undefined) params.set('folderId', String(folder.id));
      if (after !== undefined) params.set('after', after);
      const page = (await read(api, `/api/v1/deployments/${deploymentId}/workspace?${params}`, `deployment "${deploymentName}"'s workspace`)).body as {
        items: ListedItem[]; pageInfo: { hasNextPage: boolean; endCursor?: string | null };
      };
      for (const item of page.items) {
        if (item.type === 'REPORT') tree.reportNames.set(item.id, item.name);
        if (item.type === 'FOLDER') {
          const path = [...folder.path, item.name];
          const key = path.join(PATH_SEPARATOR);
          if (!tree.folders.has(key)) tree.folders.set(key, item.id);
          queue.push({ id: item.id, path });
        }
      }
      if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) break;
      after = page.pageInfo.endCursor;
    }
  }
  return tree;
}

/** The workbooks' dashboards of a deployment of the file, in the file's order, each with its folder path. */
function dashboardsOf(deployment: ImportDeployment, d: number): FileDashboard[] {
  const out: FileDashboard[] = [];
  const walk = (items: ImportItem[], folderPath: string[], base: string) => items.forEach((item, i) => {
    const path = `${base}[${i}]`;
    if (item.dashboard !== undefined) out.push({ dashboard: item.dashboard, workbookName: item.name, folderPath, path: `${path}.dashboard` });
    if (item.children !== undefined) walk(item.children, [...folderPath, item.name], `${path}.children`);
  });
  walk(deployment.items ?? [], [], `deployments[${d}].items`);
  return out;
}

/** The names of the file's items by ref, for a snapshot's `report`. */
function itemNames(deployment: ImportDeployment): Map<string, { name: string; type: string }> {
  const names = new Map<string, { name: string; type: string }>();
  const walk = (items: ImportItem[]) => items.forEach((item) => {
    if (item.ref !== undefined) names.set(item.ref, { name: item.name, type: item.type });
    walk(item.children ?? []);
  });
  walk(deployment.items ?? []);
  return names;
}

async function planDashboard(api: Api, deployment: ImportDeployment, deploymentId: number, tree: ProductionTree, file: FileDashboard): Promise<PlannedDashboard> {
  const { dashboard } = file;
  const publicId = dashboard.publicId;
  const base = { publicId, deployment: deployment.name };
  const status = dashboard.status ?? 'draft';
  let production: ProductionDashboard | undefined;
  try {
    production = (await api.call<ProductionDashboard>('GET', `/api/v1/dashboards/${encodeURIComponent(publicId)}`)).body;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.status !== 404) throw new PromoteError(`dashboard ${publicId}: ${error.message}`, error.body);
  }
  if (production !== undefined && production.deploymentId !== deploymentId) {
    throw new PromoteError(`dashboard ${publicId} is in deployment ${production.deploymentId} of production, not in "${deployment.name}" (${deploymentId}) as in the file`);
  }
  const fromVersion = production?.published?.versionNumber ?? null;
  if (status === 'draft') {
    return { step: { ...base, action: 'none', why: 'never published in the file: only published dashboards are promoted', fromVersion }, file, deploymentId };
  }
  if (status === 'archived') {
    if (production === undefined || production.status === 'archived') {
      return { step: { ...base, action: 'none', why: production === undefined ? 'archived in the file and not in production' : 'archived in both', fromVersion }, file, deploymentId };
    }
    return { step: { ...base, action: 'archive', why: 'archived in the file', fromVersion }, file, deploymentId };
  }
  const names = itemNames(deployment);
  if (production === undefined) {
    const folder = tree.folders.get(file.folderPath.join(PATH_SEPARATOR));
    const wanted = file.folderPath.length === 0 ? '(root)' : file.folderPath.join(PATH_SEPARATOR);
    const where = folder !== undefined || file.folderPath.length === 0 ? wanted : '(root)';
    const why = folder === undefined && file.folderPath.length > 0 ? `not in production; created at the root: production has no folder "${wanted}"` : 'not in production';
    return {
      step: { ...base, action: 'create', why, folder: where, fromVersion: null }, file, deploymentId,
      ...(folder === undefined ? {} : { folderId: folder }), draft: draftOf(file, names, [], tree),
    };
  }
  const draft = draftOf(file, names, production.published?.reportSnapshots ?? [], tree);
  const differs = whatDiffers(draft, production);
  const replacedDraft = production.draft !== null && production.draft !== undefined;
  if (differs.length === 0 && production.status === 'published') {
    return { step: { ...base, action: 'none', why: 'the same as production\'s published version', fromVersion }, file, deploymentId };
  }
  const why = production.published === null ? 'never published in production'
    : production.status === 'archived' ? 'archived in production, published in the file'
      : `it differs from production's published version: ${differs.join(', ')}`;
  return {
    step: { ...base, action: 'change', why, fromVersion, ...(replacedDraft ? { replacedDraft } : {}) },
    file, deploymentId, draftRevision: production.draftRevision, draft,
  };
}

/**
 * The draft that makes production show what the file shows. A snapshot names its REPORT by a ref of the file; in
 * production the dashboard's published snapshots name theirs by production's ids. A snapshot keeps the production
 * REPORT of the same name among those (the one at its own position first), so that a promotion does not make new
 * REPORT items every time; one with none is sent without `reportId`, and publishing gives it a REPORT of its own
 * beside the workbook (docs/authoring.md). Widgets name snapshots by position (`snapshotIndex`, as `svc export`
 * writes them), which means the same in both databases; a widget that still names a REPORT id of the file's
 * database (a file exported before svc wrote positions) is refused: that id means another report here.
 */
function draftOf(file: FileDashboard, names: Map<string, { name: string; type: string }>, published: readonly ProductionSnapshot[], tree: ProductionTree): DraftBody {
  const { dashboard } = file;
  const config = dashboard.config ?? {};
  const widgets = Array.isArray(config.widgets) ? (config.widgets as Array<{ id?: string; config?: { reportId?: unknown } | null }>) : [];
  for (const widget of widgets) {
    if (typeof widget.config?.reportId === 'number') {
      throw new PromoteError(`dashboard ${dashboard.publicId}: widget "${widget.id}" names report ${widget.config.reportId} by its id in the database the file was exported from, which means another report in production; export the file again with this svc (it writes config.snapshotIndex instead)`);
    }
  }
  const used = new Set<number>();
  const snapshots = (dashboard.reportSnapshots ?? []).map((snapshot, s) => {
    const report = names.get(snapshot.report);
    if (report === undefined || report.type !== 'REPORT') {
      throw new PromoteError(`dashboard ${dashboard.publicId}: reportSnapshots[${s}].report names no REPORT of the file's deployment ("${snapshot.report}")`);
    }
    const candidates = published.map((p, index) => ({ index, reportId: p.reportId })).filter((c) => !used.has(c.reportId) && tree.reportNames.get(c.reportId) === report.name);
    const match = candidates.find((c) => c.index === s) ?? candidates[0];
    if (match !== undefined) used.add(match.reportId);
    return { ...snapshotBody(snapshot), ...(match === undefined ? {} : { reportId: match.reportId }) };
  });
  return {
    title: dashboard.title ?? null, description: dashboard.description ?? null, allowEmbed: dashboard.allowEmbed ?? false, config, reportSnapshots: snapshots,
  };
}

/** A snapshot of the file as the draft takes it: without the file's ref and version, and without its null fields. */
function snapshotBody(snapshot: ImportReportSnapshot | Record<string, unknown>): Record<string, unknown> {
  const { report: _report, versionNumber: _version, id: _id, reportId: _reportId, ...rest } = snapshot as Record<string, unknown>;
  return Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== null && value !== undefined));
}

/** What of the dashboard viewers see differs between the draft and production's published version. */
function whatDiffers(draft: DraftBody, production: ProductionDashboard): string[] {
  const published = production.published;
  if (published === null) return ['the whole dashboard'];
  const differs: string[] = [];
  if (draft.title !== published.title) differs.push('title');
  if (draft.description !== published.description) differs.push('description');
  if (draft.allowEmbed !== published.allowEmbed) differs.push('allowEmbed');
  if (!same(draft.config, published.config)) differs.push('config');
  if (!same(draft.reportSnapshots.map(snapshotBody), published.reportSnapshots.map(snapshotBody))) differs.push('report snapshots');
  return differs;
}

/** Deep equality of JSON values, whatever the order of object keys. */
function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * PUT the model over the revision the plan read. A 409 (it would break published widgets) is forced only with
 * --force, or when every widget it names is on a dashboard this promotion replaces or archives next (the file
 * changes those dashboards along with the model).
 */
async function replaceModel(api: Api, model: { step: ModelStep; body: Record<string, unknown> }, force: boolean, changing: ReadonlySet<string>): Promise<void> {
  const { step, body } = model;
  const put = (forced: boolean) => api.call<{ modelRevision: number }>('PUT', `/api/v1/deployments/${step.deploymentId}/model${forced ? '?force=true' : ''}`, body, { 'if-match': `"model-${step.fromRevision}"` });
  try {
    let answer;
    try {
      answer = await put(force);
    } catch (error) {
      const details = (error as ApiError).status === 409 ? ((error as ApiError).body as { error?: { details?: ModelStep['forced'] } }).error?.details : undefined;
      if (details === undefined || details.length === 0 || !details.every((w) => w.publicId !== undefined && changing.has(w.publicId))) throw error;
      answer = await put(true);
      step.forced = details;
      step.why += `; forced: the widgets it breaks are on dashboards this promotion replaces (${[...new Set(details.map((w) => w.publicId))].join(', ')})`;
    }
    if (force && !step.forced) step.forced = [];
    step.toRevision = answer.body.modelRevision;
  } catch (error) {
    if (error instanceof PromoteError) throw new PromoteError(`deployment "${step.deployment}": ${error.message}`, error.answer);
    if (!(error instanceof ApiError)) throw error;
    const hint = error.status === 409 ? ' (svc promote --force replaces it anyway)' : error.status === 412 ? ' (someone changed the model in production since it was read: run the promotion again)' : '';
    throw new PromoteError(`deployment "${step.deployment}": the model was not replaced: ${error.message}${hint}`, error.body);
  }
}

/** Carries out one dashboard's step: create and publish, replace the draft and publish, or archive. */
async function applyDashboard(api: Api, planned: PlannedDashboard): Promise<void> {
  const { step, draft } = planned;
  const at = `/api/v1/dashboards/${encodeURIComponent(step.publicId)}`;
  try {
    if (step.action === 'archive') {
      await api.call('DELETE', at);
    } else if (step.action === 'create') {
      const title = draft!.title ?? planned.file.workbookName;
      let answer = await api.call<ProductionDashboard>('POST', `/api/v1/deployments/${planned.deploymentId}/dashboards`, {
        ...draft!, publicId: step.publicId, title, ...(planned.folderId === undefined ? {} : { folderId: planned.folderId }),
      });
      // A dashboard is created with a title (its workbook's name); one whose file has none gets its draft as the file says.
      if (draft!.title === null) answer = await api.call<ProductionDashboard>('PUT', `${at}/draft`, draft, { 'if-match': answer.etag ?? `"draft-${answer.body.draftRevision}"` });
      step.toVersion = (await api.call<ProductionDashboard>('POST', `${at}/publish`, undefined, { 'if-match': `"draft-${answer.body.draftRevision}"` })).body.published!.versionNumber;
    } else if (step.action === 'change') {
      const answer = await api.call<ProductionDashboard>('PUT', `${at}/draft`, draft, { 'if-match': `"draft-${planned.draftRevision}"` });
      step.toVersion = (await api.call<ProductionDashboard>('POST', `${at}/publish`, undefined, { 'if-match': `"draft-${answer.body.draftRevision}"` })).body.published!.versionNumber;
    }
  } catch (error) {
    if (error instanceof PromoteError) throw new PromoteError(`dashboard ${step.publicId}: ${error.message}`, error.answer);
    if (!(error instanceof ApiError)) throw error;
    const hint = error.status === 412 ? ' (someone changed it in production since it was read: run the promotion again)' : '';
    throw new PromoteError(`dashboard ${step.publicId}: ${error.message}${hint}`, error.body);
  }
}
