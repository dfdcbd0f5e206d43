import { Ajv } from 'ajv';
import type { ErrorObject } from 'ajv';
import { normalizeEmail, normalizeExternalId } from '../accounts/accounts.identity.js';
import { duckDbSourceProblem } from '../data/warehouse/warehouse.duckdb.js';
import { semanticViewsProblem } from '../data/data.views.js';
import { policyAwareSqlProblem } from '../data/policy/policy.access.js';
import { translationsProblem } from '../workspace/workspace.translations.js';
import type { ImportDashboard, ImportDeployment, ImportGrant, ImportItem } from './import.deployment-schema.js';
import { importFileSchema } from './import.schema.js';
import type { ImportAccount, ImportEmbedTenant, ImportFile, ImportGroup, ImportUser } from './import.schema.js';

/** A rejected import file: the JSON path of the first bad entry, and why. Nothing was written. */
export class ImportError extends Error {
  readonly path: string;

  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = 'ImportError';
    this.path = path;
  }
}

/** PostgreSQL text cannot hold U+0000; refuse it at its path on both databases alike. */
export function rejectNulCharacters(value: unknown, path: string): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw new ImportError(path, 'contains a NUL character, which cannot be stored');
  } else if (Array.isArray(value)) {
    value.forEach((entry, i) => rejectNulCharacters(entry, `${path}[${i}]`));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, entry] of Object.entries(value)) {
      if (key.includes('\u0000')) throw new ImportError(path, 'has a key with a NUL character');
      rejectNulCharacters(entry, `${path}.${key}`);
    }
  }
}

const validateShape = new Ajv({ allErrors: false, strict: false }).compile(importFileSchema);

/** The input as an import file, or an ImportError at the first entry that does not fit the schema. */
export function checkShape(input: unknown): ImportFile {
  if (!validateShape(input)) throw shapeError(validateShape.errors![0]!);
  return input as unknown as ImportFile;
}

/** `/accounts/0/users/1` -> `$.accounts[0].users[1]`. */
function jsonPath(pointer: string, extra?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : `${path}.${part}`), '$');
}

/** Ajv's first error as an ImportError at its JSON path. */
export function shapeError(error: ErrorObject): ImportError {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') return new ImportError(jsonPath(error.instancePath, String(params.missingProperty)), 'is required');
  if (error.keyword === 'additionalProperties') {
    return new ImportError(jsonPath(error.instancePath, String(params.additionalProperty)), 'is not a known field');
  }
  const allowed = Array.isArray(params.allowedValues) ? ` (${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')})` : '';
  return new ImportError(jsonPath(error.instancePath), `${error.message ?? 'is invalid'}${allowed}`);
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * An ISO 8601 date or date-time, normalised to the stored form. Impossible dates (2026-02-30, 24:00) are refused
 * rather than rolled over; a date-time without an offset, and a bare date, are read as UTC, so that a file means
 * the same on every machine.
 */
export function normalizeTimestamp(value: string, path: string): string {
  const match = TIMESTAMP.exec(value);
  const fail = () => new ImportError(path, `is not a valid ISO 8601 date or date-time ("${value}")`);
  if (!match) throw fail();
  const [, y, mo, d, h = '00', mi = '00', sec = '00', zone] = match;
  const parts = [y, mo, d, h, mi, sec].map(Number) as [number, number, number, number, number, number];
  const utc = new Date(Date.UTC(parts[0], parts[1] - 1, parts[2], parts[3], parts[4], parts[5]));
  const exists = utc.getUTCFullYear() === parts[0] && utc.getUTCMonth() === parts[1] - 1 && utc.getUTCDate() === parts[2]
    && utc.getUTCHours() === parts[3] && utc.getUTCMinutes() === parts[4] && utc.getUTCSeconds() === parts[5];
  if (!exists) throw fail();
  const withZone = match[4] === undefined ? `${y}-${mo}-${d}T00:00:00Z` : zone === undefined ? `${value.replace(' ', 'T')}Z` : value.replace(' ', 'T');
  const time = Date.parse(withZone);
  if (Number.isNaN(time)) throw fail();
  return new Date(time).toISOString();
}

/** An item of the file, checked, with what its write needs: its place in the tree and its normalised timestamps. */
export interface PlannedItem {
  item: ImportItem;
  path: string;
  parent: PlannedItem | null;
  depth: number;
  createdAt: string;
  updatedAt: string;
}

/** What the whole file has claimed so far: refs, tenant names, API keys and publicIds are each unique in it. */
interface FileClaims {
  now: string;
  /** Each ref, with the path that first used it. */
  refs: Map<string, string>;
  tenantNames: Set<string>;
  apiKeys: Set<string>;
  publicIds: Set<string>;
  planned: Map<ImportItem, PlannedItem>;
}

/** What the entries of one account may point at: its users and groups, by ref. */
interface AccountRefs {
  file: FileClaims;
  users: ReadonlySet<string>;
  groups: ReadonlySet<string>;
}

/** What the entries of one deployment may point at besides: its items by ref, and its dashboards to check after. */
interface DeploymentRefs extends AccountRefs {
  itemTypes: Map<string, ImportItem['type']>;
  dashboards: Array<{ dashboard: ImportDashboard; path: string }>;
}

/**
 * Checks everything that can be checked without the database, so that a bad file fails before any write, and
 * plans every item (its depth and timestamps; `now` for a missing createdAt).
 */
export function checkFile(file: ImportFile, now: string): Map<ImportItem, PlannedItem> {
  const claims: FileClaims = { now, refs: new Map(), tenantNames: new Set(), apiKeys: new Set(), publicIds: new Set(), planned: new Map() };
  file.accounts.forEach((account, a) => checkAccount(claims, account, `$.accounts[${a}]`));
  return claims.planned;
}

/** A ref names one entry of the whole file, whatever its kind. */
function claimRef(claims: FileClaims, ref: string | undefined, path: string): void {
  if (ref === undefined) return;
  const first = claims.refs.get(ref);
  if (first !== undefined) throw new ImportError(`${path}.ref`, `duplicate ref "${ref}" (first used at ${first})`);
  claims.refs.set(ref, path);
}

function requireUser(users: ReadonlySet<string>, ref: string, path: string): void {
  if (!users.has(ref)) throw new ImportError(path, `names no user of this account ("${ref}")`);
}

function checkAccount(claims: FileClaims, account: ImportAccount, ap: string): void {
  claimRef(claims, account.ref, ap);
  if (claims.tenantNames.has(account.tenantName)) throw new ImportError(`${ap}.tenantName`, `duplicate tenantName "${account.tenantName}"`);
  claims.tenantNames.add(account.tenantName);
  const users = checkUsers(claims, account.users ?? [], ap);
  const groups = checkGroups(claims, users, account.groups ?? [], ap);
  (account.deployments ?? []).forEach((deployment, d) => checkDeployment({ file: claims, users, groups }, deployment, `${ap}.deployments[${d}]`));
  checkEmbedTenants(claims, account.embedTenants ?? [], ap);
}

/** Emails are unique in the account, API keys in the file. Returns the users' refs. */
function checkUsers(claims: FileClaims, users: ImportUser[], ap: string): Set<string> {
  const refs = new Set<string>();
  const emails = new Set<string>();
  users.forEach((user, u) => {
    const up = `${ap}.users[${u}]`;
    claimRef(claims, user.ref, up);
    if (user.ref !== undefined) refs.add(user.ref);
    const email = normalizeEmail(user.email);
    if (emails.has(email)) throw new ImportError(`${up}.email`, `duplicate email "${email}" in this account`);
    emails.add(email);
    (user.apiKeys ?? []).forEach((key, k) => {
      if (claims.apiKeys.has(key)) throw new ImportError(`${up}.apiKeys[${k}]`, 'duplicate API key');
      claims.apiKeys.add(key);
    });
  });
  return refs;
}

/** A group's members are users of the same account. Returns the groups' refs. */
function checkGroups(claims: FileClaims, users: ReadonlySet<string>, groups: ImportGroup[], ap: string): Set<string> {
  const refs = new Set<string>();
  groups.forEach((group, g) => {
    const gp = `${ap}.groups[${g}]`;
    claimRef(claims, group.ref, gp);
    if (group.ref !== undefined) refs.add(group.ref);
    (group.members ?? []).forEach((member, m) => requireUser(users, member, `${gp}.members[${m}]`));
  });
  return refs;
}

/** A PostgreSQL URL whose password is svc's redaction (an exported file's). */
function redactedPassword(url: string): boolean {
  try {
    return decodeURIComponent(new URL(url).password) === '****';
  } catch {
    return false;
  }
}

function checkDeployment(account: AccountRefs, deployment: ImportDeployment, dp: string): void {
  claimRef(account.file, deployment.ref, dp);
  if (deployment.dataSource?.type === 'postgres' && redactedPassword(deployment.dataSource.url)) {
    throw new ImportError(`${dp}.dataSource.url`, 'the password is ****, as svc export writes it: put the password itself here');
  }
  if (deployment.dataSource?.type === 'duckdb') {
    const problem = duckDbSourceProblem(deployment.dataSource);
    if (problem !== undefined) throw new ImportError(`${dp}.dataSource${problem.path}`, problem.message);
  }
  if (deployment.semanticViews !== undefined) {
    const problem = semanticViewsProblem(deployment.semanticViews);
    if (problem !== undefined) throw new ImportError(`${dp}.semanticViews${problem.path}`, problem.message);
  }
  const refs: DeploymentRefs = { ...account, itemTypes: new Map(), dashboards: [] };
  planItems(refs, deployment.items ?? [], null, `${dp}.items`);
  checkReportSnapshots(refs);
  checkViewsAndFavorites(refs, deployment, dp);
}

/** Walks the item tree: refs, owners, grants, which type may hold children or a dashboard, depth, timestamps. */
function planItems(deployment: DeploymentRefs, items: ImportItem[], parent: PlannedItem | null, basePath: string): void {
  const { file } = deployment;
  items.forEach((item, i) => {
    const ip = `${basePath}[${i}]`;
    claimRef(file, item.ref, ip);
    if (item.ref !== undefined) deployment.itemTypes.set(item.ref, item.type);
    if (item.createdBy !== undefined) requireUser(deployment.users, item.createdBy, `${ip}.createdBy`);
    checkGrants(deployment, item.grants ?? [], ip);
    if (item.children !== undefined && item.type !== 'FOLDER') throw new ImportError(`${ip}.children`, 'only a FOLDER has children');
    checkDashboard(deployment, item, ip);
    const depth = parent === null ? 0 : parent.depth + 1;
    if (depth >= 64) throw new ImportError(ip, 'folders nest more than 64 levels deep');
    const createdAt = item.createdAt === undefined ? file.now : normalizeTimestamp(item.createdAt, `${ip}.createdAt`);
    const updatedAt = item.updatedAt === undefined ? createdAt : normalizeTimestamp(item.updatedAt, `${ip}.updatedAt`);
    const plan: PlannedItem = { item, path: ip, parent, depth, createdAt, updatedAt };
    file.planned.set(item, plan);
    if (item.children !== undefined) planItems(deployment, item.children, plan, `${ip}.children`);
  });
}

/** A grant names a group or a user of the same account. */
function checkGrants(account: AccountRefs, grants: ImportGrant[], ip: string): void {
  grants.forEach((grant, g) => {
    if (grant.group !== undefined && !account.groups.has(grant.group)) {
      throw new ImportError(`${ip}.grants[${g}].group`, `names no group of this account ("${grant.group}")`);
    }
    if (grant.user !== undefined) requireUser(account.users, grant.user, `${ip}.grants[${g}].user`);
  });
}

/** Only a WORKBOOK has a dashboard, and a publicId is unique in the file. Its snapshots are checked after the tree. */
function checkDashboard(deployment: DeploymentRefs, item: ImportItem, ip: string): void {
  if (item.dashboard === undefined) return;
  if (item.type !== 'WORKBOOK') throw new ImportError(`${ip}.dashboard`, 'only a WORKBOOK has a dashboard');
  const { publicIds } = deployment.file;
  if (publicIds.has(item.dashboard.publicId)) throw new ImportError(`${ip}.dashboard.publicId`, `duplicate publicId "${item.dashboard.publicId}"`);
  publicIds.add(item.dashboard.publicId);
  for (const key of ['config', 'draftConfig'] as const) {
    const config = item.dashboard[key] as { translations?: unknown; widgets?: unknown } | null | undefined;
    const widgets = (Array.isArray(config?.widgets) ? config.widgets as unknown[] : []).filter((w): w is { id: string; type: string } => typeof (w as { id?: unknown } | null)?.id === 'string');
    const problem = config === undefined || config === null ? undefined : translationsProblem({ translations: config.translations, widgets });
    if (problem !== undefined) throw new ImportError(`${ip}.dashboard.${key}.${problem.field}`, problem.message);
  }
  deployment.dashboards.push({ dashboard: item.dashboard, path: `${ip}.dashboard` });
}

/** A report snapshot names a REPORT of the same deployment, anywhere in its tree. */
function checkReportSnapshots(deployment: DeploymentRefs): void {
  for (const { dashboard, path } of deployment.dashboards) {
    (dashboard.reportSnapshots ?? []).forEach((snapshot, s) => {
      const sp = `${path}.reportSnapshots[${s}]`;
      if (deployment.itemTypes.get(snapshot.report) !== 'REPORT') {
        throw new ImportError(`${sp}.report`, `names no REPORT of this deployment ("${snapshot.report}")`);
      }
      if ((snapshot.meta as { policyAware?: unknown } | null | undefined)?.policyAware === true) {
        const problem = policyAwareSqlProblem(snapshot.sqlQuery);
        if (problem !== undefined) throw new ImportError(`${sp}.sqlQuery`, problem);
      }
    });
  }
}

/** Views and favourites name a user of the account and an item of the deployment; a view's time is a timestamp. */
function checkViewsAndFavorites(deployment: DeploymentRefs, { views, favorites }: ImportDeployment, dp: string): void {
  const requireItem = (ref: string, path: string) => {
    if (!deployment.itemTypes.has(ref)) throw new ImportError(path, `names no item of this deployment ("${ref}")`);
  };
  (views ?? []).forEach((view, v) => {
    requireUser(deployment.users, view.user, `${dp}.views[${v}].user`);
    requireItem(view.item, `${dp}.views[${v}].item`);
    normalizeTimestamp(view.at, `${dp}.views[${v}].at`);
  });
  (favorites ?? []).forEach((favorite, f) => {
    requireUser(deployment.users, favorite.user, `${dp}.favorites[${f}].user`);
    requireItem(favorite.item, `${dp}.favorites[${f}].item`);
  });
}

/** Embed tenant names are unique in the account, externalIds (normalised, not empty) in the tenant. */
function checkEmbedTenants(claims: FileClaims, tenants: ImportEmbedTenant[], ap: string): void {
  const names = new Set<string>();
  tenants.forEach((tenant, t) => {
    const tp = `${ap}.embedTenants[${t}]`;
    if (names.has(tenant.name)) throw new ImportError(`${tp}.name`, `duplicate embed tenant "${tenant.name}"`);
    names.add(tenant.name);
    const externalIds = new Set<string>();
    (tenant.users ?? []).forEach((user, u) => {
      const up = `${tp}.users[${u}]`;
      claimRef(claims, user.ref, up);
      const externalId = normalizeExternalId(user.externalId);
      if (externalId === '') throw new ImportError(`${up}.externalId`, 'is empty');
      if (externalIds.has(externalId)) throw new ImportError(`${up}.externalId`, `duplicate externalId "${externalId}" in this embed tenant`);
      externalIds.add(externalId);
    });
  });
}
