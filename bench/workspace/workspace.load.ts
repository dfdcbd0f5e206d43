import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import { digestSecret } from '../../apps/server/src/accounts/accounts.keys.js';
import type { GeneratedWorkspace } from './workspace.generate.js';

type Row = Array<string | number | null>;
type PgType = 'int' | 'text';

interface TableSpec {
  table: string;
  columns: string[];
  types: PgType[];
}

const T = (table: string, columns: Array<[string, PgType]>): TableSpec => ({ table, columns: columns.map((c) => c[0]), types: columns.map((c) => c[1]) });

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

/** Writes rows in batches; the two dialects differ only here. */
interface BulkWriter {
  write(spec: TableSpec, rows: Row[]): Promise<void>;
  finish(): Promise<void>;
}

function sqliteWriter(path: string): BulkWriter {
  const db = new SqliteDatabase(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    async write(spec, rows) {
      let statement = statements.get(spec.table);
      if (!statement) {
        statement = db.prepare(`insert into ${spec.table} (${spec.columns.join(', ')}) values (${spec.columns.map(() => '?').join(', ')})`);
        statements.set(spec.table, statement);
      }
      const run = statement;
      db.transaction(() => {
        for (const row of rows) run.run(row);
      })();
    },
    async finish() {
      db.exec('analyze');
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
    },
  };
}

function postgresWriter(url: string): BulkWriter {
  const client = new pg.Client({ connectionString: url });
  const connected = client.connect();
  return {
    async write(spec, rows) {
      await connected;
      const columns = spec.columns.map((_, c) => rows.map((row) => row[c]));
      const unnest = spec.types.map((type, c) => `$${c + 1}::${type === 'int' ? 'int' : 'text'}[]`).join(', ');
      await client.query(`insert into ${spec.table} (${spec.columns.join(', ')}) select * from unnest(${unnest})`, columns);
    },
    async finish() {
      await connected;
      for (const table of ['accounts', 'users', 'groups', 'deployments', 'workspace_items']) {
        await client.query(`select setval(pg_get_serial_sequence('${table}', 'id'), (select max(id) from ${table}))`);
      }
      await client.query('analyze');
      await client.end();
    },
  };
}

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
  const writer = target.dialect === 'sqlite' ? sqliteWriter(target.path) : postgresWriter(target.url);
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
