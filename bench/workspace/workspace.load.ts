import { digestSecret } from '../../apps/server/src/core/core.digest.js';
import type { GeneratedWorkspace } from './workspace.generate.js';
import { T, bulkWriter } from '../bulk.js';
import type { Row } from '../bulk.js';

const TABLES = {
  accounts: T('accounts', [['id', 'int'], ['name', 'text'], ['tenant_name', 'text'], ['settings', 'text'], ['created_at', 'text']]),
  users: T('users', [['id', 'int'], ['account_id', 'int'], ['email', 'text'], ['first_name', 'text'], ['role', 'text'], ['created_at', 'text']]),
  groups: T('groups', [['id', 'int'], ['account_id', 'int'], ['name', 'text']]),
  group_members: T('group_members', [['account_id', 'int'], ['group_id', 'int'], ['user_id', 'int']]),
  api_keys: T('api_keys', [['account_id', 'int'], ['user_id', 'int'], ['digest', 'text'], ['created_at', 'text']]),
  deployments: T('deployments', [['id', 'int'], ['account_id', 'int'], ['name', 'text'], ['created_at', 'text']]),
  workspace_items: T('workspace_items', [
    ['id', 'int'], ['account_id', 'int'], ['deployment_id', 'int'], ['type', 'text'], ['is_folder', 'int'], ['name', 'text'],
    ['name_key', 'text'], ['folder_id', 'int'], ['depth', 'int'], ['created_by', 'int'], ['created_at', 'text'], ['updated_at', 'text'],
  ]),
  item_ancestors: T('item_ancestors', [['account_id', 'int'], ['item_id', 'int'], ['ancestor_id', 'int'], ['distance', 'int']]),
  item_grants: T('item_grants', [['account_id', 'int'], ['item_id', 'int'], ['user_id', 'int'], ['group_id', 'int']]),
  item_views: T('item_views', [['account_id', 'int'], ['user_id', 'int'], ['item_id', 'int'], ['viewed_at', 'text']]),
};

export interface LoadedWorkspace {
  deploymentId: number;
  adminKey: string;
  memberKey: string;
  deepFolderId: number;
}

/**
 * Loads a generated workspace into an empty, migrated database with multi-row inserts (the import path does the
 * same writes one row at a time, which is too slow for a million items). Ids are explicit: item i is id i + 1.
 */
export async function loadWorkspace(
  target: { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string },
  w: GeneratedWorkspace,
  onProgress: (done: number, total: number) => void,
): Promise<LoadedWorkspace> {
  const writer = bulkWriter(target, ['accounts', 'users', 'groups', 'deployments', 'workspace_items']);
  const now = new Date().toISOString();
  const accountId = 1;
  const deploymentId = 1;
  const adminKey = 'svc_bench_admin_key_0001';
  const memberKey = 'svc_bench_member_key_0001';
  const userId = (index: number) => index + 1;
  const itemId = (index: number) => index + 1;
  const total = w.type.length;

  await writer.write(TABLES.accounts, [[accountId, 'Bench', 'bench', '{}', now]]);
  await writer.write(TABLES.users, Array.from({ length: w.userCount }, (_, u) => [userId(u), accountId, `user${u}@bench.test`, `User ${u}`, u === w.adminUserIndex ? 'admin' : 'member', now]));
  await writer.write(TABLES.groups, Array.from({ length: 20 }, (_, g) => [g + 1, accountId, `Group ${g}`]));
  await writer.write(TABLES.group_members, w.groupOf.flatMap((groups, u) => groups.map((g) => [accountId, g + 1, userId(u)])));
  await writer.write(TABLES.api_keys, [
    [accountId, userId(w.adminUserIndex), digestSecret(adminKey), now],
    [accountId, userId(w.member), digestSecret(memberKey), now],
  ]);
  await writer.write(TABLES.deployments, [[deploymentId, accountId, 'Bench deployment', now]]);

  const batch = 20_000;
  for (let start = 0; start < total; start += batch) {
    const end = Math.min(total, start + batch);
    const items: Row[] = [];
    const ancestors: Row[] = [];
    for (let i = start; i < end; i++) {
      const parent = w.parent[i]!;
      items.push([
        itemId(i), accountId, deploymentId, w.type[i]!, w.type[i] === 'FOLDER' ? 1 : 0, w.name[i]!, w.name[i]!.toLowerCase(),
        parent < 0 ? null : itemId(parent), w.depth[i]!, userId(w.createdBy[i]!), w.createdAt[i]!, w.updatedAt[i]!,
      ]);
      let distance = 0;
      for (let a = i; a >= 0; a = w.parent[a]!) ancestors.push([accountId, itemId(i), itemId(a), distance++]);
    }
    await writer.write(TABLES.workspace_items, items);
    await writer.write(TABLES.item_ancestors, ancestors);
    onProgress(end, total);
  }
  await writer.write(TABLES.item_grants, w.grants.map((g) => [accountId, itemId(g.item), g.user === null ? null : userId(g.user), g.group === null ? null : g.group + 1]));
  const seen = new Set<string>();
  const views = w.views.filter((v) => {
    const key = `${v.user}:${v.item}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  for (let start = 0; start < views.length; start += batch) {
    await writer.write(TABLES.item_views, views.slice(start, start + batch).map((v) => [accountId, userId(v.user), itemId(v.item), v.at]));
  }
  await writer.finish();
  return { deploymentId, adminKey, memberKey, deepFolderId: itemId(w.deepFolder) };
}
