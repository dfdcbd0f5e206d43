import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { inject } from 'vitest';
import type { AccessPolicy } from '../src/data/semantic/semantic.model.js';
import type { DataSourceConfig, SemanticView } from '../src/data/semantic/semantic.model.js';

/**
 * Issue 20's test warehouse: a small multi-tenant warehouse of our own, whose every row names who may see it.
 * Customer names and order codes are MARKERS (`MARKER-<tenant>-<region>-<tier>-c<id>`, `MARKER-<tenant>-<region>-o<id>`):
 * a response body that carries a marker its viewer must not see is a leak, whatever the path. Written once per
 * run by global-setup.ts as a SQLite file and as the `policy_wh` schema of the test database; tests compute
 * expected figures from the same rows in TypeScript (POLICY_ROWS).
 */
export const POLICY_TENANTS = ['acme', 'globex', 'initech'] as const;
export const POLICY_REGIONS = ['north', 'south'] as const;
export const POLICY_TIERS = ['gold', 'basic'] as const;
export const POLICY_STATUSES = ['paid', 'open', 'refunded'] as const;

/** The PostgreSQL schema of the test database that holds this warehouse. */
export const POLICY_WAREHOUSE_SCHEMA = 'policy_wh';

export interface PolicyCustomer {
  id: number;
  tenant: string;
  region: string;
  tier: string;
  name: string;
}

export interface PolicyOrder {
  id: number;
  code: string;
  tenant: string;
  region: string;
  /** Null on a few orders, so policies and filters meet SQL's NULL. */
  status: string | null;
  amount: number;
  /** ISO 8601 instant, UTC. */
  created_at: string;
  customer_id: number;
}

/** An order whose customer does not exist (customer_id 999): a LEFT JOIN gives it NULL customer members. */
export const ORPHAN_CUSTOMER_ID = 999;

function buildRows(): { customers: PolicyCustomer[]; orders: PolicyOrder[] } {
  const customers: PolicyCustomer[] = [];
  for (const tenant of POLICY_TENANTS) {
    for (const region of POLICY_REGIONS) {
      for (const tier of POLICY_TIERS) {
        const id = customers.length + 1;
        customers.push({ id, tenant, region, tier, name: `MARKER-${tenant}-${region}-${tier}-c${id}` });
      }
    }
  }
  const orders: PolicyOrder[] = [];
  const pad = (n: number) => String(n).padStart(2, '0');
  const addOrder = (customer: Pick<PolicyCustomer, 'id' | 'tenant' | 'region'>, k: number) => {
    const id = orders.length + 1;
    const year = id % 3 === 0 ? 2024 : 2025;
    const month = 1 + ((id * 5 + k) % 12);
    orders.push({
      id,
      code: `MARKER-${customer.tenant}-${customer.region}-o${id}`,
      tenant: customer.tenant,
      region: customer.region,
      status: id % 7 === 0 ? null : POLICY_STATUSES[(id + k) % POLICY_STATUSES.length]!,
      // Whole amounts: sums are exact on both dialects.
      amount: 10 + ((id * 37) % 90),
      created_at: `${year}-${pad(month)}-${pad(1 + (id % 27))}T${pad((id * 7) % 24)}:15:00.000Z`,
      customer_id: customer.id,
    });
  };
  for (const customer of customers) for (let k = 0; k < 4 + (customer.id % 3); k++) addOrder(customer, k);
  addOrder({ id: ORPHAN_CUSTOMER_ID, tenant: 'acme', region: 'north' }, 0);
  return { customers, orders };
}

/** The warehouse's rows, as written. */
export const POLICY_ROWS = buildRows();

/** A marker found in a response body, read back into whose row it is. */
export interface Marker {
  text: string;
  kind: 'customer' | 'order';
  tenant: string;
  region: string;
  tier: string | null;
}

/** Every marker a text carries (a response body, a prompt). */
export function markersIn(text: string): Marker[] {
  return [...text.matchAll(/MARKER-([a-z]+)-([a-z]+)-(?:([a-z]+)-)?([co])(\d+)/g)].map((m) => ({
    text: m[0], kind: m[4] === 'c' ? 'customer' : 'order', tenant: m[1]!, region: m[2]!, tier: m[3] ?? null,
  }));
}

const ORDER_COLUMNS = ['id', 'code', 'tenant', 'region', 'status', 'amount', 'created_at', 'customer_id'] as const;
const CUSTOMER_COLUMNS = ['id', 'tenant', 'region', 'tier', 'name'] as const;

/** Writes the warehouse as a SQLite file (through a temporary file and a rename). */
export function writePolicyWarehouseSqlite(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  const db = new Database(temporary);
  try {
    db.exec(`
      CREATE TABLE customers (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, region TEXT NOT NULL, tier TEXT NOT NULL, name TEXT NOT NULL);
      CREATE TABLE orders (id INTEGER PRIMARY KEY, code TEXT NOT NULL, tenant TEXT NOT NULL, region TEXT NOT NULL, status TEXT,
        amount REAL NOT NULL, created_at TEXT NOT NULL, customer_id INTEGER NOT NULL);
    `);
    const customers = db.prepare(`INSERT INTO customers VALUES (${CUSTOMER_COLUMNS.map(() => '?').join(', ')})`);
    const orders = db.prepare(`INSERT INTO orders VALUES (${ORDER_COLUMNS.map(() => '?').join(', ')})`);
    db.transaction(() => {
      for (const row of POLICY_ROWS.customers) customers.run(...CUSTOMER_COLUMNS.map((k) => row[k]));
      for (const row of POLICY_ROWS.orders) orders.run(...ORDER_COLUMNS.map((k) => row[k]));
    })();
  } finally {
    db.close();
  }
  renameSync(temporary, path);
}

/** Loads the warehouse into a PostgreSQL schema, replacing what it held. */
export async function loadPolicyWarehousePostgres(client: pg.Client, schema = POLICY_WAREHOUSE_SCHEMA): Promise<void> {
  const s = `"${schema.replace(/"/g, '')}"`;
  await client.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await client.query(`CREATE SCHEMA ${s}`);
  await client.query(`
    CREATE TABLE ${s}.customers (id integer PRIMARY KEY, tenant text NOT NULL, region text NOT NULL, tier text NOT NULL, name text NOT NULL);
    CREATE TABLE ${s}.orders (id integer PRIMARY KEY, code text NOT NULL, tenant text NOT NULL, region text NOT NULL, status text,
      amount double precision NOT NULL, created_at timestamptz NOT NULL, customer_id integer NOT NULL);
  `);
  const customerTypes = ['int4', 'text', 'text', 'text', 'text'];
  const orderTypes = ['int4', 'text', 'text', 'text', 'text', 'float8', 'timestamptz', 'int4'];
  await client.query(
    `INSERT INTO ${s}.customers SELECT * FROM unnest(${customerTypes.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`,
    CUSTOMER_COLUMNS.map((k) => POLICY_ROWS.customers.map((row) => row[k])),
  );
  await client.query(
    `INSERT INTO ${s}.orders SELECT * FROM unnest(${orderTypes.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`,
    ORDER_COLUMNS.map((k) => POLICY_ROWS.orders.map((row) => row[k])),
  );
}

/** The warehouse's data source on each dialect (postgres: null when this run has no PostgreSQL). */
export function policyWarehouseSource(dialect: 'sqlite' | 'postgres'): DataSourceConfig | null {
  if (dialect === 'sqlite') return { type: 'sqlite', path: inject('policyWarehousePath') };
  const url = inject('postgresUrl');
  return url === null ? null : { type: 'postgres', url, schema: POLICY_WAREHOUSE_SCHEMA };
}

/**
 * The warehouse's semantic views, with the access policies given per view. `orders` joins `customers` many to
 * one; drilling into an order measure lists its code, tenant, amount and customer name.
 */
export function policyViews(policies: { orders?: AccessPolicy[]; customers?: AccessPolicy[] } = {}): SemanticView[] {
  return [
    {
      name: 'orders', title: 'Orders', table: 'orders',
      joins: [{ view: 'customers', foreignKey: 'customer_id' }],
      dimensions: [
        { name: 'id', type: 'number', primaryKey: true },
        { name: 'code', type: 'string' },
        { name: 'tenant', type: 'string' },
        { name: 'region', type: 'string' },
        { name: 'status', type: 'string' },
        { name: 'amount', type: 'number' },
        { name: 'created_at', type: 'time' },
      ],
      measures: [
        { name: 'count', type: 'count' },
        { name: 'revenue', type: 'sum', column: 'amount' },
        { name: 'customers', type: 'count_distinct', column: 'customer_id' },
      ],
      drillMembers: ['orders.code', 'orders.tenant', 'orders.amount', 'customers.name'],
      ...(policies.orders !== undefined ? { accessPolicy: policies.orders } : {}),
    },
    {
      name: 'customers', title: 'Customers', table: 'customers',
      dimensions: [
        { name: 'id', type: 'number', primaryKey: true },
        { name: 'name', type: 'string' },
        { name: 'tenant', type: 'string' },
        { name: 'region', type: 'string' },
        { name: 'tier', type: 'string' },
      ],
      measures: [{ name: 'count', type: 'count' }],
      ...(policies.customers !== undefined ? { accessPolicy: policies.customers } : {}),
    },
  ];
}

const byTenant = (root: string): AccessPolicy['rowLevel'] => ({ filters: [{ member: 'tenant', operator: 'equals', values: [`{${root}}`] }] });

/**
 * The policies of the isolation matrix (data.isolation.test.ts). Embed group `customer`: its tenant's rows, from
 * `{securityContext.tenant}`. Groups `region-north` / `region-south`: that region's orders, and gold customers.
 * Group `limited`: its tenant's rows without the order amounts and codes. Group `admins`: everything.
 */
export const MATRIX_POLICIES: { orders: AccessPolicy[]; customers: AccessPolicy[] } = {
  orders: [
    { group: 'customer', rowLevel: byTenant('securityContext.tenant') },
    { group: 'region-north', rowLevel: { filters: [{ member: 'region', operator: 'equals', values: ['north'] }] } },
    { groups: ['region-south'], rowLevel: { filters: [{ or: [{ member: 'region', operator: 'equals', values: ['south'] }] }] } },
    { group: 'limited', memberLevel: { excludes: ['amount', 'orders.revenue', 'code'] }, rowLevel: byTenant('securityContext.tenant') },
    { group: 'admins', rowLevel: { allowAll: true } },
  ],
  customers: [
    { groups: ['customer', 'limited'], rowLevel: byTenant('securityContext.tenant') },
    { groups: ['region-north', 'region-south'], rowLevel: { filters: [{ member: 'tier', operator: 'equals', values: ['gold'] }] } },
    { group: 'admins', memberLevel: { includes: '*' }, rowLevel: { allowAll: true } },
  ],
};

/** A policy warehouse of a test's own, which the test may change: a SQLite file in `dir`, or a PostgreSQL schema. */
export interface OwnPolicyWarehouse {
  source: DataSourceConfig;
  /** Runs a statement on it (a test changes its rows to see caches and rollups go stale). */
  sql(statement: string): Promise<void>;
  /** Drops the PostgreSQL schema and ends its connection (the SQLite file goes with the test's `dir`). */
  close(): Promise<void>;
}

/**
 * Writes a fresh copy of the policy warehouse for one test file: `warehouse.db` in `dir` on SQLite, the schema
 * `schema` of `url` on PostgreSQL.
 */
export async function openPolicyWarehouse(dialect: 'sqlite' | 'postgres', dir: string, postgres: { url: string; schema: string }): Promise<OwnPolicyWarehouse> {
  if (dialect === 'sqlite') {
    const path = join(dir, 'warehouse.db');
    writePolicyWarehouseSqlite(path);
    return {
      source: { type: 'sqlite', path },
      sql: async (statement) => {
        const db = new Database(path);
        db.exec(statement);
        db.close();
      },
      close: async () => undefined,
    };
  }
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  await loadPolicyWarehousePostgres(client, postgres.schema);
  return {
    source: { type: 'postgres', url: postgres.url, schema: postgres.schema },
    sql: async (statement) => {
      await client.query(`SET search_path = ${postgres.schema}`);
      await client.query(statement);
    },
    close: async () => {
      await client.query(`DROP SCHEMA IF EXISTS ${postgres.schema} CASCADE`);
      await client.end();
    },
  };
}
