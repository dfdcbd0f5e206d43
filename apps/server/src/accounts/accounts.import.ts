import { semanticViewsProblem } from '../data/data.model.js';
import { Ajv } from 'ajv';
import type { ErrorObject } from 'ajv';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/db.schema.js';
import { foldSearchKey } from '../db/db.search-key.js';
import { digestSecret } from './accounts.keys.js';
import { hashPassword } from './accounts.passwords.js';
import { importFileSchema } from './accounts.import-schema.js';
import type { ImportAccount, ImportDashboard, ImportFile, ImportItem } from './accounts.import-schema.js';
import { normalizeEmail, normalizeExternalId } from './accounts.identity.js';

/** A rejected import file: the JSON path of the first bad entry, and why. Nothing was written. */
export class ImportError extends Error {
  readonly path: string;

  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = 'ImportError';
    this.path = path;
  }
}

const validateShape = new Ajv({ allErrors: false, strict: false }).compile(importFileSchema);

/** `/accounts/0/users/1` -> `$.accounts[0].users[1]`. */
function jsonPath(pointer: string, extra?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : `${path}.${part}`), '$');
}

function shapeError(error: ErrorObject): ImportError {
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

interface PlannedItem {
  item: ImportItem;
  path: string;
  parent: PlannedItem | null;
  depth: number;
  createdAt: string;
  updatedAt: string;
}

/** Checks everything that can be checked without the database, so that a bad file fails before any write. */
function checkFile(file: ImportFile, now: string): Map<ImportItem, PlannedItem> {
  const refs = new Map<string, string>();
  const claimRef = (ref: string | undefined, path: string) => {
    if (ref === undefined) return;
    const first = refs.get(ref);
    if (first !== undefined) throw new ImportError(`${path}.ref`, `duplicate ref "${ref}" (first used at ${first})`);
    refs.set(ref, path);
  };
  const tenantNames = new Set<string>();
  const apiKeys = new Set<string>();
  const publicIds = new Set<string>();
  const planned = new Map<ImportItem, PlannedItem>();

  file.accounts.forEach((account, a) => {
    const ap = `$.accounts[${a}]`;
    claimRef(account.ref, ap);
    if (tenantNames.has(account.tenantName)) throw new ImportError(`${ap}.tenantName`, `duplicate tenantName "${account.tenantName}"`);
    tenantNames.add(account.tenantName);

    const userRefs = new Set<string>();
    const emails = new Set<string>();
    (account.users ?? []).forEach((user, u) => {
      const up = `${ap}.users[${u}]`;
      claimRef(user.ref, up);
      if (user.ref !== undefined) userRefs.add(user.ref);
      const email = normalizeEmail(user.email);
      if (emails.has(email)) throw new ImportError(`${up}.email`, `duplicate email "${email}" in this account`);
      emails.add(email);
      (user.apiKeys ?? []).forEach((key, k) => {
        if (apiKeys.has(key)) throw new ImportError(`${up}.apiKeys[${k}]`, 'duplicate API key');
        apiKeys.add(key);
      });
    });
    const requireUser = (ref: string, path: string) => {
      if (!userRefs.has(ref)) throw new ImportError(path, `names no user of this account ("${ref}")`);
    };

    const groupRefs = new Set<string>();
    (account.groups ?? []).forEach((group, g) => {
      const gp = `${ap}.groups[${g}]`;
      claimRef(group.ref, gp);
      if (group.ref !== undefined) groupRefs.add(group.ref);
      (group.members ?? []).forEach((member, m) => requireUser(member, `${gp}.members[${m}]`));
    });

    (account.deployments ?? []).forEach((deployment, d) => {
      const dp = `${ap}.deployments[${d}]`;
      claimRef(deployment.ref, dp);
      if (deployment.semanticViews !== undefined) {
        const problem = semanticViewsProblem(deployment.semanticViews);
        if (problem !== undefined) throw new ImportError(`${dp}.semanticViews${problem.path}`, problem.message);
      }
      const itemTypes = new Map<string, ImportItem['type']>();
      const dashboards: Array<{ dashboard: ImportDashboard; path: string }> = [];

      const walk = (items: ImportItem[], parent: PlannedItem | null, basePath: string) => {
        items.forEach((item, i) => {
          const ip = `${basePath}[${i}]`;
          claimRef(item.ref, ip);
          if (item.ref !== undefined) itemTypes.set(item.ref, item.type);
          if (item.createdBy !== undefined) requireUser(item.createdBy, `${ip}.createdBy`);
          (item.grants ?? []).forEach((grant, g) => {
            if (grant.group !== undefined && !groupRefs.has(grant.group)) {
              throw new ImportError(`${ip}.grants[${g}].group`, `names no group of this account ("${grant.group}")`);
            }
            if (grant.user !== undefined) requireUser(grant.user, `${ip}.grants[${g}].user`);
          });
          if (item.children !== undefined && item.type !== 'FOLDER') throw new ImportError(`${ip}.children`, 'only a FOLDER has children');
          if (item.dashboard !== undefined) {
            if (item.type !== 'WORKBOOK') throw new ImportError(`${ip}.dashboard`, 'only a WORKBOOK has a dashboard');
            if (publicIds.has(item.dashboard.publicId)) throw new ImportError(`${ip}.dashboard.publicId`, `duplicate publicId "${item.dashboard.publicId}"`);
            publicIds.add(item.dashboard.publicId);
            dashboards.push({ dashboard: item.dashboard, path: `${ip}.dashboard` });
          }
          const depth = parent === null ? 0 : parent.depth + 1;
          if (depth >= 64) throw new ImportError(ip, 'folders nest more than 64 levels deep');
          const createdAt = item.createdAt === undefined ? now : normalizeTimestamp(item.createdAt, `${ip}.createdAt`);
          const updatedAt = item.updatedAt === undefined ? createdAt : normalizeTimestamp(item.updatedAt, `${ip}.updatedAt`);
          const plan: PlannedItem = { item, path: ip, parent, depth, createdAt, updatedAt };
          planned.set(item, plan);
          if (item.children !== undefined) walk(item.children, plan, `${ip}.children`);
        });
      };
      walk(deployment.items ?? [], null, `${dp}.items`);

      for (const { dashboard, path } of dashboards) {
        (dashboard.reportSnapshots ?? []).forEach((snapshot, s) => {
          const sp = `${path}.reportSnapshots[${s}]`;
          if (itemTypes.get(snapshot.report) !== 'REPORT') {
            throw new ImportError(`${sp}.report`, `names no REPORT of this deployment ("${snapshot.report}")`);
          }
        });
      }
      const requireItem = (ref: string, path: string) => {
        if (!itemTypes.has(ref)) throw new ImportError(path, `names no item of this deployment ("${ref}")`);
      };
      (deployment.views ?? []).forEach((view, v) => {
        requireUser(view.user, `${dp}.views[${v}].user`);
        requireItem(view.item, `${dp}.views[${v}].item`);
        normalizeTimestamp(view.at, `${dp}.views[${v}].at`);
      });
      (deployment.favorites ?? []).forEach((favorite, f) => {
        requireUser(favorite.user, `${dp}.favorites[${f}].user`);
        requireItem(favorite.item, `${dp}.favorites[${f}].item`);
      });
    });

    const embedTenantNames = new Set<string>();
    (account.embedTenants ?? []).forEach((tenant, t) => {
      const tp = `${ap}.embedTenants[${t}]`;
      if (embedTenantNames.has(tenant.name)) throw new ImportError(`${tp}.name`, `duplicate embed tenant "${tenant.name}"`);
      embedTenantNames.add(tenant.name);
      const externalIds = new Set<string>();
      (tenant.users ?? []).forEach((user, u) => {
        const up = `${tp}.users[${u}]`;
        claimRef(user.ref, up);
        const externalId = normalizeExternalId(user.externalId);
        if (externalId === '') throw new ImportError(`${up}.externalId`, 'is empty');
        if (externalIds.has(externalId)) throw new ImportError(`${up}.externalId`, `duplicate externalId "${externalId}" in this embed tenant`);
        externalIds.add(externalId);
      });
    });
  });
  return planned;
}

/** Refuses what already exists in the database: tenant names, dashboard publicIds, API keys. */
async function checkAgainstDatabase(trx: Transaction<Database>, file: ImportFile): Promise<void> {
  for (const [a, account] of file.accounts.entries()) {
    const ap = `$.accounts[${a}]`;
    const taken = await trx.selectFrom('accounts').select('id').where('tenant_name', '=', account.tenantName).executeTakeFirst();
    if (taken) throw new ImportError(`${ap}.tenantName`, `an account with tenantName "${account.tenantName}" already exists`);
    for (const [u, user] of (account.users ?? []).entries()) {
      for (const [k, key] of (user.apiKeys ?? []).entries()) {
        const existing = await trx.selectFrom('api_keys').select('id').where('digest', '=', digestSecret(key)).executeTakeFirst();
        if (existing) throw new ImportError(`${ap}.users[${u}].apiKeys[${k}]`, 'this API key already exists');
      }
    }
  }
  const publicIds: Array<{ id: string; path: string }> = [];
  const collect = (items: ImportItem[], base: string) =>
    items.forEach((item, i) => {
      if (item.dashboard) publicIds.push({ id: item.dashboard.publicId, path: `${base}[${i}].dashboard.publicId` });
      if (item.children) collect(item.children, `${base}[${i}].children`);
    });
  file.accounts.forEach((account, a) =>
    (account.deployments ?? []).forEach((deployment, d) => collect(deployment.items ?? [], `$.accounts[${a}].deployments[${d}].items`)),
  );
  for (const { id, path } of publicIds) {
    const existing = await trx.selectFrom('dashboards').select('id').where('public_id', '=', id).executeTakeFirst();
    if (existing) throw new ImportError(path, `a dashboard with publicId "${id}" already exists`);
  }
}

const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(value));
const bool = (value: boolean | null | undefined): number | null => (value === undefined || value === null ? null : value ? 1 : 0);

async function writeAccount(trx: Transaction<Database>, account: ImportAccount, planned: Map<ImportItem, PlannedItem>, refs: Record<string, number>, now: string): Promise<void> {
  const accountId = (
    await trx.insertInto('accounts')
      .values({ name: account.name, tenant_name: account.tenantName, settings: JSON.stringify(account.settings ?? {}), created_at: now })
      .returning('id').executeTakeFirstOrThrow()
  ).id;
  if (account.ref !== undefined) refs[account.ref] = accountId;

  const userIds = new Map<string, number>();
  for (const user of account.users ?? []) {
    const password = user.password === undefined ? null : await hashPassword(user.password);
    const { id } = await trx.insertInto('users')
      .values({
        account_id: accountId, email: normalizeEmail(user.email), first_name: user.firstName ?? null,
        picture: user.picture ?? null, role: user.role, password_digest: password, created_at: now,
      })
      .returning('id').executeTakeFirstOrThrow();
    if (user.ref !== undefined) {
      userIds.set(user.ref, id);
      refs[user.ref] = id;
    }
    for (const key of user.apiKeys ?? []) {
      await trx.insertInto('api_keys').values({ account_id: accountId, user_id: id, digest: digestSecret(key), created_at: now }).execute();
    }
  }

  const groupIds = new Map<string, number>();
  for (const group of account.groups ?? []) {
    const { id } = await trx.insertInto('groups').values({ account_id: accountId, name: group.name }).returning('id').executeTakeFirstOrThrow();
    if (group.ref !== undefined) {
      groupIds.set(group.ref, id);
      refs[group.ref] = id;
    }
    for (const member of new Set(group.members ?? [])) {
      await trx.insertInto('group_members').values({ account_id: accountId, group_id: id, user_id: userIds.get(member)! }).execute();
    }
  }

  for (const deployment of account.deployments ?? []) {
    const deploymentId = (
      await trx.insertInto('deployments').values({
        account_id: accountId, name: deployment.name, created_at: now,
        data_source: deployment.dataSource === undefined ? null : JSON.stringify(deployment.dataSource),
        semantic_views: deployment.semanticViews === undefined ? null : JSON.stringify(deployment.semanticViews),
      }).returning('id').executeTakeFirstOrThrow()
    ).id;
    if (deployment.ref !== undefined) refs[deployment.ref] = deploymentId;

    const itemIds = new Map<string, number>();
    const ancestorsOf = new Map<ImportItem, number[]>();
    const dashboards: Array<{ dashboard: ImportDashboard; workbookId: number; createdBy: number | null; createdAt: string; updatedAt: string }> = [];
    const writeItems = async (items: ImportItem[], parentId: number | null) => {
      for (const item of items) {
        const plan = planned.get(item)!;
        const createdBy = item.createdBy === undefined ? null : userIds.get(item.createdBy)!;
        const { id } = await trx.insertInto('workspace_items')
          .values({
            account_id: accountId, deployment_id: deploymentId, type: item.type, is_folder: item.type === 'FOLDER' ? 1 : 0,
            name: item.name, name_key: foldSearchKey(item.name), folder_id: parentId, depth: plan.depth, created_by: createdBy,
            created_at: plan.createdAt, updated_at: plan.updatedAt, meta: JSON.stringify(item.meta ?? {}),
            calculated_fields: JSON.stringify(item.calculatedFields ?? {}), slug: item.slug ?? null,
          })
          .returning('id').executeTakeFirstOrThrow();
        if (item.ref !== undefined) {
          itemIds.set(item.ref, id);
          refs[item.ref] = id;
        }
        const ancestors = [id, ...(plan.parent === null ? [] : ancestorsOf.get(plan.parent.item)!)];
        ancestorsOf.set(item, ancestors);
        await trx.insertInto('item_ancestors')
          .values(ancestors.map((ancestorId, distance) => ({ account_id: accountId, item_id: id, ancestor_id: ancestorId, distance })))
          .execute();
        for (const grant of item.grants ?? []) {
          await trx.insertInto('item_grants')
            .values({
              account_id: accountId, item_id: id,
              user_id: grant.user === undefined ? null : userIds.get(grant.user)!,
              group_id: grant.group === undefined ? null : groupIds.get(grant.group)!,
            })
            .execute();
        }
        if (item.dashboard) dashboards.push({ dashboard: item.dashboard, workbookId: id, createdBy, createdAt: plan.createdAt, updatedAt: plan.updatedAt });
        if (item.children) await writeItems(item.children, id);
      }
    };
    await writeItems(deployment.items ?? [], null);

    for (const { dashboard, workbookId, createdBy, createdAt, updatedAt } of dashboards) {
      const versionNumber = dashboard.versionNumber ?? 1;
      const { id } = await trx.insertInto('dashboards')
        .values({
          account_id: accountId, deployment_id: deploymentId, workbook_id: workbookId, public_id: dashboard.publicId,
          status: dashboard.status ?? 'draft', allow_embed: dashboard.allowEmbed ? 1 : 0, title: dashboard.title ?? null,
          description: dashboard.description ?? null, config: JSON.stringify(dashboard.config ?? {}), draft_config: json(dashboard.draftConfig),
          version_number: versionNumber, version_id: versionNumber, created_by: createdBy,
          from_shared_workspace: bool(dashboard.fromSharedWorkspace), restrict_data_download: bool(dashboard.restrictDataDownload),
          use_board_dashboards: bool(dashboard.useBoardDashboards), created_at: createdAt, updated_at: updatedAt,
        })
        .returning('id').executeTakeFirstOrThrow();
      for (const [position, s] of (dashboard.reportSnapshots ?? []).entries()) {
        await trx.insertInto('report_snapshots')
          .values({
            account_id: accountId, dashboard_id: id, report_id: itemIds.get(s.report)!,
            position, version_number: s.versionNumber ?? 1, name: s.name ?? null, title: s.title ?? null, description: s.description ?? null,
            kind: s.kind ?? null, is_source_report: bool(s.isSourceReport), meta: json(s.meta),
            spec: json(s.spec), sql_query: s.sqlQuery ?? null, python_code: s.pythonCode ?? null,
            fill_missing_rows: json(s.fillMissingRows), period_comparisons: json(s.periodComparisons), preferences: json(s.preferences),
          })
          .execute();
      }
    }

    for (const view of deployment.views ?? []) {
      await trx.insertInto('item_views')
        .values({ account_id: accountId, user_id: userIds.get(view.user)!, item_id: itemIds.get(view.item)!, viewed_at: normalizeTimestamp(view.at, '') })
        .onConflict((oc) => oc.columns(['user_id', 'item_id']).doUpdateSet({ viewed_at: normalizeTimestamp(view.at, '') }))
        .execute();
    }
    for (const favorite of deployment.favorites ?? []) {
      await trx.insertInto('item_favorites')
        .values({ account_id: accountId, user_id: userIds.get(favorite.user)!, item_id: itemIds.get(favorite.item)!, created_at: now })
        .onConflict((oc) => oc.columns(['user_id', 'item_id']).doNothing())
        .execute();
    }
  }

  for (const tenant of account.embedTenants ?? []) {
    const tenantId = (
      await trx.insertInto('embed_tenants').values({ account_id: accountId, name: tenant.name, created_at: now }).returning('id').executeTakeFirstOrThrow()
    ).id;
    for (const user of tenant.users ?? []) {
      const externalId = normalizeExternalId(user.externalId);
      const { id } = await trx.insertInto('embed_users')
        .values({
          account_id: accountId, embed_tenant_id: tenantId, external_id: externalId, username: user.username ?? externalId,
          username_key: foldSearchKey(user.username ?? externalId), email: user.email ?? null, email_key: foldSearchKey(user.email ?? ''),
          first_name: user.firstName ?? null, created_at: now, updated_at: now,
        })
        .returning('id').executeTakeFirstOrThrow();
      if (user.ref !== undefined) refs[user.ref] = id;
    }
  }
}

/** PostgreSQL text cannot hold U+0000; refuse it at its path on both databases alike. */
function rejectNulCharacters(value: unknown, path: string): void {
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

function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || (typeof e.message === 'string' && e.message.includes('UNIQUE constraint failed'));
}

/**
 * Loads an import file (DESIGN.md "The import file") in one transaction and returns the id of every ref.
 * Any error names the JSON path of the first bad entry and writes nothing.
 *
 * @example
 * const { refs } = await importFile(db, JSON.parse(readFileSync('demo.json', 'utf8')));
 * refs.prod; // the deployment's id
 */
export async function importFile(db: Kysely<Database>, input: unknown, now: Date = new Date()): Promise<{ refs: Record<string, number> }> {
  rejectNulCharacters(input, '$');
  if (!validateShape(input)) throw shapeError(validateShape.errors![0]!);
  const file = input as unknown as ImportFile;
  const stamp = now.toISOString();
  const planned = checkFile(file, stamp);
  const refs: Record<string, number> = {};
  try {
    await db.transaction().execute(async (trx) => {
      await checkAgainstDatabase(trx, file);
      for (const account of file.accounts) await writeAccount(trx, account, planned, refs, stamp);
    });
  } catch (error) {
    // Two imports racing for one tenantName, publicId or API key both pass the check; the loser's unique
    // violation is reported like the check would have, at the path of the entry that now exists.
    if (!(error instanceof ImportError) && isUniqueViolation(error)) {
      await db.transaction().execute((trx) => checkAgainstDatabase(trx, file));
    }
    throw error;
  }
  return { refs };
}
