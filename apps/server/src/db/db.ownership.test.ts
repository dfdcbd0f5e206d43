import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Database } from './db.schema.js';

const SRC = join(import.meta.dirname, '..');
const ARCHITECTURE = join(SRC, '../../../docs/architecture.md');

/**
 * Issue 19: every table of svc's database has one owning store. Only that store writes it or reads it on its own;
 * other features call its functions. `satisfies` makes a new table in db.schema.ts fail to compile until it is
 * given an owner here (and in docs/architecture.md, which the test below compares).
 */
const OWNERS = {
  accounts: 'accounts/accounts.store.ts',
  users: 'accounts/accounts.store.ts',
  api_keys: 'accounts/accounts.store.ts',
  console_sessions: 'accounts/accounts.store.ts',
  deployments: 'accounts/accounts.store.ts',
  groups: 'workspace/workspace.store.ts',
  group_members: 'workspace/workspace.store.ts',
  workspace_items: 'workspace/workspace.store.ts',
  item_ancestors: 'workspace/workspace.store.ts',
  item_grants: 'workspace/workspace.store.ts',
  item_views: 'workspace/workspace.store.ts',
  item_favorites: 'workspace/workspace.store.ts',
  dashboards: 'dashboards/dashboards.store.ts',
  report_snapshots: 'dashboards/dashboards.store.ts',
  dashboard_versions: 'dashboards/dashboards.store.ts',
  embed_tenants: 'sessions/sessions.store.ts',
  embed_users: 'sessions/sessions.store.ts',
  embed_sessions: 'sessions/sessions.store.ts',
  server_keys: 'sessions/sessions.store.ts',
  comments: 'comments/comments.store.ts',
  comment_streams: 'comments/comments.store.ts',
  comment_events: 'comments/comments.store.ts',
  webhook_endpoints: 'webhooks/webhooks.store.ts',
  webhook_deliveries: 'webhooks/webhooks.store.ts',
  webhook_attempts: 'webhooks/webhooks.store.ts',
  audit_events: 'audit/audit.store.ts',
  // Issue 35 saved charts and views.
  saved_charts: 'explore/explore.store.ts',
  saved_views: 'explore/explore.store.ts',
} as const satisfies Record<keyof Database, string>;

/**
 * The reads of another store's table that stay, each a join inside one statement whose point is to be one
 * statement: the workspace listing reads a page with its items' owners and dashboards in one round trip.
 */
const JOINS_ALLOWED: ReadonlyArray<{ store: string; table: keyof Database }> = [
  { store: 'workspace/workspace.store.ts', table: 'users' },
  { store: 'workspace/workspace.store.ts', table: 'dashboards' },
  // A webhook claim returns each delivery with its account's settings (may it use private addresses?).
  { store: 'webhooks/webhooks.store.ts', table: 'accounts' },
  // Issue 35 saved charts and views: a list shows each item's author by username, read in the same statement.
  { store: 'explore/explore.store.ts', table: 'embed_users' },
];

/**
 * The import (DESIGN "The import file") writes a whole account, every table of it, in one transaction: it is the one
 * store that writes tables it does not own.
 */
const LOADERS = ['import/'];

const TABLE_REFERENCE = /\b(selectFrom|insertInto|updateTable|deleteFrom|innerJoin|leftJoin|rightJoin|fullJoin)\(\s*'([a-z_]+)/g;
const CTE_NAME = /\.with\(\s*'([a-z_]+)'/g;
const UPDATE_FROM = /\.from\(\s*(\[[^\]]*\]|'[^']*')/g;

function storesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.store.ts'))
    .map((entry) => relative(SRC, join(entry.parentPath, entry.name)));
}

/** The queries of `source` (the text of `store`) on tables that store does not own, but for the joins allowed. */
function foreignQueries(store: string, source: string): string[] {
  const foreign: string[] = [];
  // Common table expressions (`.with('name', ...)`) are named in the statement, not tables.
  const ctes = new Set([...source.matchAll(CTE_NAME)].map((match) => match[1]!));
  // An update's other tables (`.from('t')`, `.from(['t as a', 'u as b'])`, PostgreSQL's UPDATE ... FROM) join too.
  const updateFroms = [...source.matchAll(UPDATE_FROM)].flatMap((match) =>
    [...match[1]!.matchAll(/'([a-z_]+)/g)].map((table) => ['', 'updateFromJoin', table[1]!] as const));
  for (const match of [...source.matchAll(TABLE_REFERENCE), ...updateFroms]) {
    const [, method, table] = match as unknown as [string, string, string];
    const owner: string | undefined = (OWNERS as Record<string, string>)[table];
    if (owner === store || ctes.has(table)) continue;
    if (method.endsWith('Join') && JOINS_ALLOWED.some((j) => j.store === store && j.table === table)) continue;
    foreign.push(`${store} ${method}('${table}'), owned by ${owner ?? 'no store'}`);
  }
  return foreign;
}

describe('table ownership', () => {
  it('lets only the owning store query a table, but for the listed joins and the import', () => {
    const stores = storesUnder(SRC).filter((store) => !LOADERS.some((prefix) => store.startsWith(prefix)));
    expect(stores.length).toBeGreaterThanOrEqual(5);
    expect(stores.flatMap((store) => foreignQueries(store, readFileSync(join(SRC, store), 'utf8')))).toEqual([]);
  });

  it('finds a foreign query when there is one (the check bites)', () => {
    const probe = "db.selectFrom('embed_sessions').select('account_id'); db.selectFrom('comments as c').leftJoin('users as u', 'u.id', 'c.x')";
    expect(foreignQueries('comments/comments.store.ts', probe)).toEqual([
      "comments/comments.store.ts selectFrom('embed_sessions'), owned by sessions/sessions.store.ts",
      "comments/comments.store.ts leftJoin('users'), owned by accounts/accounts.store.ts",
    ]);
    expect(foreignQueries('workspace/workspace.store.ts', "qb.leftJoin('users as u', 'u.id', 'p.created_by')")).toEqual([]);
    expect(foreignQueries('workspace/workspace.store.ts', "db.updateTable('users')")).toHaveLength(1);
  });

  it('is the table docs/architecture.md shows', () => {
    const doc = readFileSync(ARCHITECTURE, 'utf8');
    const byStore = new Map<string, string[]>();
    for (const [table, store] of Object.entries(OWNERS)) byStore.set(store, [...(byStore.get(store) ?? []), table]);
    for (const [store, tables] of byStore) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${store.split('/')[1]}\``));
      expect(row, `docs/architecture.md has a row for ${store}`).toBeDefined();
      const listed = [...row!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]).sort();
      expect(listed, `the tables docs/architecture.md gives ${store}`).toEqual([...tables].sort());
    }
  });
});
