import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type pg from 'pg';
import type { SemanticView } from '../semantic/semantic.model.js';
import type { PreAggregation } from '../semantic/semantic.model.js';

/**
 * The bundled demo warehouse: customers, products and orders of a made-up shop over 2024 and 2025, generated
 * deterministically (the same seed gives the same rows on every machine), so `npm start` shows live numbers
 * with no set-up and tests can recompute every figure from the generator itself.
 */
export const DEMO_WAREHOUSE_VERSION = 2;
export const DEMO_ORDERS = 100_000;
const START = Date.UTC(2024, 0, 1) / 1000;
const END = Date.UTC(2026, 0, 1) / 1000;

const CITIES = [
  ['Berlin', 'Germany', 'Europe', 52.52, 13.405], ['Munich', 'Germany', 'Europe', 48.137, 11.575], ['Paris', 'France', 'Europe', 48.857, 2.352],
  ['Lyon', 'France', 'Europe', 45.764, 4.836], ['Madrid', 'Spain', 'Europe', 40.417, -3.704], ['London', 'United Kingdom', 'Europe', 51.507, -0.128],
  ['Amsterdam', 'Netherlands', 'Europe', 52.368, 4.904], ['Stockholm', 'Sweden', 'Europe', 59.329, 18.069],
  ['New York', 'United States', 'North America', 40.713, -74.006], ['Chicago', 'United States', 'North America', 41.878, -87.63],
  ['San Francisco', 'United States', 'North America', 37.775, -122.419], ['Austin', 'United States', 'North America', 30.267, -97.743],
  ['Toronto', 'Canada', 'North America', 43.653, -79.383], ['Vancouver', 'Canada', 'North America', 49.283, -123.121],
  ['São Paulo', 'Brazil', 'Latin America', -23.551, -46.633], ['Mexico City', 'Mexico', 'Latin America', 19.433, -99.133],
  ['Buenos Aires', 'Argentina', 'Latin America', -34.604, -58.382], ['Bogotá', 'Colombia', 'Latin America', 4.711, -74.072],
  ['Tokyo', 'Japan', 'Asia Pacific', 35.676, 139.65], ['Singapore', 'Singapore', 'Asia Pacific', 1.352, 103.82],
  ['Sydney', 'Australia', 'Asia Pacific', -33.869, 151.209], ['Seoul', 'South Korea', 'Asia Pacific', 37.567, 126.978],
  ['Mumbai', 'India', 'Asia Pacific', 19.076, 72.878], ['Auckland', 'New Zealand', 'Asia Pacific', -36.848, 174.763],
] as const;
const SEGMENTS = ['Enterprise', 'Mid-market', 'Small business', 'Consumer'] as const;
const CATEGORIES = [
  ['Books', 8, 40], ['Electronics', 40, 900], ['Garden', 10, 250], ['Home', 12, 300], ['Sports', 15, 400], ['Toys', 6, 120],
] as const;
const STATUSES = [['completed', 0.8], ['shipped', 0.08], ['processing', 0.05], ['cancelled', 0.05], ['returned', 0.02]] as const;
/**
 * The customer accounts of the host app (issue 20's demo): an order belongs to the account of its customer, so each
 * account has about a tenth of the orders. Derived from the customer id, it draws no random number: every other
 * figure of the warehouse is the same as before the column existed.
 */
export const DEMO_TENANTS = ['customer-a', 'customer-b', 'customer-c', 'customer-d', 'customer-e', 'customer-f', 'customer-g', 'customer-h', 'customer-i', 'customer-j'] as const;

/** The customer account (`orders.tenant`) of a demo customer: `demoTenantOf(1)` is `customer-a`, `demoTenantOf(12)` is `customer-b`. */
export function demoTenantOf(customerId: number): string {
  return DEMO_TENANTS[(customerId - 1) % DEMO_TENANTS.length]!;
}

const FIRST = ['Ada', 'Ben', 'Chloé', 'Dev', 'Emil', 'Fatima', 'Goro', 'Hana', 'Ines', 'Jonas', 'Kofi', 'Lena', 'Mateo', 'Nia', 'Omar', 'Priya'];
const LAST = ['Andersen', 'Bauer', 'Costa', 'Dubois', 'Evans', 'Fischer', 'García', 'Hoshino', 'Ivanova', 'Jensen', 'Kim', 'López', 'Müller', 'Novak'];

/** mulberry32: a small, fast, seeded generator; the same seed gives the same sequence everywhere. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface DemoCustomer { id: number; name: string; segment: string; region: string; country: string; city: string; latitude: number; longitude: number; created_at: string }
export interface DemoProduct { id: number; name: string; category: string; price: number }
export interface DemoOrder { id: number; customer_id: number; product_id: number; status: string; quantity: number; amount: number; created_at: string; tenant: string }

const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z');

export function demoCustomers(orders: number): DemoCustomer[] {
  const next = random(1);
  const count = Math.max(100, Math.round(orders / 50));
  return Array.from({ length: count }, (_, i) => {
    const [city, country, region, latitude, longitude] = CITIES[Math.floor(next() * CITIES.length)]!;
    return {
      id: i + 1, name: `${FIRST[Math.floor(next() * FIRST.length)]} ${LAST[Math.floor(next() * LAST.length)]} ${i + 1}`,
      segment: SEGMENTS[Math.floor(next() * SEGMENTS.length)]!, region, country, city, latitude, longitude,
      created_at: iso(START - 86_400 * 365 + Math.floor(next() * 86_400 * 365 * 2)),
    };
  });
}

export function demoProducts(): DemoProduct[] {
  const next = random(2);
  return CATEGORIES.flatMap(([category, low, high], c) => Array.from({ length: 10 }, (_, i) => ({
    id: c * 10 + i + 1, name: `${category} item ${i + 1}`, category, price: Math.round((low + next() * (high - low)) * 100) / 100,
  })));
}

/** Orders in time order: the pace grows over the two years; each has a customer (and its account), a product and a status. */
export function* demoOrders(count: number, customers: number, products: readonly DemoProduct[]): Generator<DemoOrder> {
  const next = random(3);
  const span = END - START;
  for (let i = 0; i < count; i++) {
    const at = START + Math.min(span - 1, Math.floor(span * Math.pow((i + next()) / count, 0.8)));
    const product = products[Math.floor(next() * products.length)]!;
    const quantity = 1 + Math.floor(next() * next() * 5);
    let pick = next();
    let status: string = STATUSES[0][0];
    for (const [name, share] of STATUSES) {
      if (pick < share) {
        status = name;
        break;
      }
      pick -= share;
    }
    const customerId = 1 + Math.floor(next() * customers);
    yield {
      id: i + 1, customer_id: customerId, product_id: product.id, status, quantity,
      amount: Math.round(product.price * quantity * (0.85 + next() * 0.15) * 100) / 100, created_at: iso(at), tenant: demoTenantOf(customerId),
    };
  }
}

/** The orders in batches of 50,000 (the last one smaller), each with the count written once it is. */
function* orderBatches(count: number, customers: number, products: readonly DemoProduct[]): Generator<{ batch: DemoOrder[]; done: number }> {
  let batch: DemoOrder[] = [];
  let done = 0;
  for (const order of demoOrders(count, customers, products)) {
    batch.push(order);
    if (batch.length === 50_000) {
      done += batch.length;
      yield { batch, done };
      batch = [];
    }
  }
  if (batch.length > 0) yield { batch, done: done + batch.length };
}

const TABLES = {
  customers: ['id', 'name', 'segment', 'region', 'country', 'city', 'latitude', 'longitude', 'created_at'],
  products: ['id', 'name', 'category', 'price'],
  orders: ['id', 'customer_id', 'product_id', 'status', 'quantity', 'amount', 'created_at', 'tenant'],
} as const;

/** Writes the demo warehouse as a SQLite file (through a temporary file and a rename: never half a file). */
export function writeDemoWarehouseSqlite(path: string, orders = DEMO_ORDERS, onProgress?: (done: number) => void): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  const db = new Database(temporary);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec(`
      CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, segment TEXT NOT NULL, region TEXT NOT NULL, country TEXT NOT NULL,
        city TEXT NOT NULL, latitude REAL NOT NULL, longitude REAL NOT NULL, created_at TEXT NOT NULL);
      CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price REAL NOT NULL);
      CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, product_id INTEGER NOT NULL, status TEXT NOT NULL,
        quantity INTEGER NOT NULL, amount REAL NOT NULL, created_at TEXT NOT NULL, tenant TEXT NOT NULL);
      CREATE TABLE svc_demo (version INTEGER NOT NULL, orders INTEGER NOT NULL);
    `);
    const insert = (table: keyof typeof TABLES) => db.prepare(`INSERT INTO ${table} VALUES (${TABLES[table].map(() => '?').join(', ')})`);
    const customers = demoCustomers(orders);
    const products = demoProducts();
    db.transaction(() => {
      const c = insert('customers');
      for (const row of customers) c.run(...TABLES.customers.map((k) => row[k]));
      const p = insert('products');
      for (const row of products) p.run(...TABLES.products.map((k) => row[k]));
    })();
    const o = insert('orders');
    const flush = db.transaction((rows: DemoOrder[]) => {
      for (const row of rows) o.run(row.id, row.customer_id, row.product_id, row.status, row.quantity, row.amount, row.created_at, row.tenant);
    });
    for (const { batch, done } of orderBatches(orders, customers.length, products)) {
      flush(batch);
      onProgress?.(done);
    }
    db.prepare('INSERT INTO svc_demo VALUES (?, ?)').run(DEMO_WAREHOUSE_VERSION, orders);
  } finally {
    db.close();
  }
  renameSync(temporary, path);
}

/** The demo warehouse file at `path`, written first when it is missing or of another generator version. */
export function ensureDemoWarehouseSqlite(path: string, orders = DEMO_ORDERS): string {
  if (existsSync(path)) {
    try {
      const db = new Database(path, { readonly: true, fileMustExist: true });
      const row = db.prepare('SELECT version, orders FROM svc_demo').get() as { version: number; orders: number } | undefined;
      db.close();
      if (row?.version === DEMO_WAREHOUSE_VERSION && row.orders === orders) return path;
    } catch {
      // not a demo warehouse of this version: written again below
    }
  }
  writeDemoWarehouseSqlite(path, orders);
  return path;
}

/** Loads the demo warehouse into a PostgreSQL schema (tests and the benchmark), replacing what it held. */
export async function loadDemoWarehousePostgres(client: pg.Pool | pg.Client, schema: string, orders = DEMO_ORDERS, onProgress?: (done: number) => void): Promise<void> {
  const s = `"${schema.replace(/"/g, '')}"`;
  await client.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await client.query(`CREATE SCHEMA ${s}`);
  await client.query(`
    CREATE TABLE ${s}.customers (id integer PRIMARY KEY, name text NOT NULL, segment text NOT NULL, region text NOT NULL, country text NOT NULL,
      city text NOT NULL, latitude double precision NOT NULL, longitude double precision NOT NULL, created_at timestamptz NOT NULL);
    CREATE TABLE ${s}.products (id integer PRIMARY KEY, name text NOT NULL, category text NOT NULL, price double precision NOT NULL);
    CREATE TABLE ${s}.orders (id integer PRIMARY KEY, customer_id integer NOT NULL, product_id integer NOT NULL, status text NOT NULL,
      quantity integer NOT NULL, amount double precision NOT NULL, created_at timestamptz NOT NULL, tenant text NOT NULL);
  `);
  const customers = demoCustomers(orders);
  const products = demoProducts();
  const types = {
    customers: ['int4', 'text', 'text', 'text', 'text', 'text', 'float8', 'float8', 'timestamptz'],
    products: ['int4', 'text', 'text', 'float8'],
    orders: ['int4', 'int4', 'int4', 'text', 'int4', 'float8', 'timestamptz', 'text'],
  } as const;
  const insert = async <T extends keyof typeof TABLES>(table: T, rows: ReadonlyArray<Record<(typeof TABLES)[T][number], unknown>>) => {
    const columns = TABLES[table];
    const unnest = columns.map((_, i) => `$${i + 1}::${types[table][i]}[]`).join(', ');
    await client.query(`INSERT INTO ${s}.${table} SELECT * FROM unnest(${unnest})`, columns.map((column) => rows.map((row) => row[column as keyof typeof row])));
  };
  await insert('customers', customers);
  await insert('products', products);
  for (const { batch, done } of orderBatches(orders, customers.length, products)) {
    await insert('orders', batch);
    onProgress?.(done);
  }
  await client.query(`ANALYZE ${s}.orders`);
}

/** The demo warehouse's semantic views: what its dashboards, the AI and apps may ask for. */
/**
 * The rollups the demo's dashboards need (issue 21): a monthly one for the KPIs, trends and breakdowns of whole
 * months, a daily one by the same dimensions for weeks and days, one by status for the order-status widgets, and
 * one per customer for the top customers and the map. A query reads the smallest that answers it. Each holds the
 * tenant, so that a customer's policy filters it. Built for UTC, Berlin and New York.
 */
export const DEMO_PRE_AGGREGATIONS: PreAggregation[] = [
  {
    name: 'monthly', measures: ['orders.count', 'orders.revenue', 'orders.units', 'orders.average_order_value', 'orders.largest_order', 'orders.smallest_order'],
    dimensions: ['products.category', 'customers.region', 'orders.tenant'], timeDimension: 'orders.created_at', granularity: 'month',
    refresh: { every: '1 hour' }, timezones: ['UTC', 'Europe/Berlin', 'America/New_York'],
  },
  {
    name: 'daily', measures: ['orders.count', 'orders.revenue', 'orders.units', 'orders.average_order_value', 'orders.largest_order', 'orders.smallest_order'],
    dimensions: ['products.category', 'customers.region', 'orders.tenant'], timeDimension: 'orders.created_at', granularity: 'day',
    partitionGranularity: 'month', refresh: { every: '1 hour', incremental: true, updateWindow: '7 days' }, timezones: ['UTC', 'Europe/Berlin', 'America/New_York'],
  },
  {
    name: 'by_status', measures: ['orders.count', 'orders.revenue'], dimensions: ['orders.status', 'orders.tenant'],
    timeDimension: 'orders.created_at', granularity: 'day', refresh: { every: '1 hour' }, timezones: ['UTC', 'Europe/Berlin', 'America/New_York'],
  },
  {
    name: 'by_customer', measures: ['orders.count', 'orders.revenue'],
    dimensions: ['customers.name', 'customers.city', 'customers.region', 'customers.latitude', 'customers.longitude', 'orders.tenant'], refresh: { every: '1 hour' },
  },
];

export const DEMO_SEMANTIC_VIEWS: SemanticView[] = [
  {
    name: 'orders', title: 'Orders', table: 'orders',
    joins: [{ view: 'customers', foreignKey: 'customer_id' }, { view: 'products', foreignKey: 'product_id' }],
    dimensions: [
      { name: 'id', type: 'number', primaryKey: true, title: 'Order' },
      { name: 'status', type: 'string', title: 'Status' },
      { name: 'quantity', type: 'number', title: 'Quantity' },
      { name: 'amount', type: 'number', title: 'Amount', format: { type: 'currency', decimalPlaces: 2 } },
      { name: 'created_at', type: 'time', title: 'Ordered at' },
      { name: 'tenant', type: 'string', title: 'Customer account' },
    ],
    measures: [
      { name: 'count', type: 'count', title: 'Orders' },
      { name: 'revenue', type: 'sum', column: 'amount', title: 'Revenue', format: { type: 'currency', decimalPlaces: 0 } },
      { name: 'average_order_value', type: 'avg', column: 'amount', title: 'Average order value', format: { type: 'currency', decimalPlaces: 2 } },
      { name: 'smallest_order', type: 'min', column: 'amount', title: 'Smallest order' },
      { name: 'largest_order', type: 'max', column: 'amount', title: 'Largest order' },
      { name: 'customers', type: 'count_distinct', column: 'customer_id', title: 'Customers' },
      { name: 'units', type: 'sum', column: 'quantity', title: 'Units' },
    ],
    drillMembers: ['orders.id', 'orders.created_at', 'orders.status', 'customers.name', 'customers.city', 'products.name', 'orders.quantity', 'orders.amount'],
    preAggregations: DEMO_PRE_AGGREGATIONS,
  },
  {
    name: 'customers', title: 'Customers', table: 'customers',
    dimensions: [
      { name: 'id', type: 'number', primaryKey: true, title: 'Customer' },
      { name: 'name', type: 'string', title: 'Name' },
      { name: 'segment', type: 'string', title: 'Segment' },
      { name: 'region', type: 'string', title: 'Region' },
      { name: 'country', type: 'string', title: 'Country' },
      { name: 'city', type: 'string', title: 'City' },
      { name: 'latitude', type: 'number', title: 'Latitude' },
      { name: 'longitude', type: 'number', title: 'Longitude' },
      { name: 'created_at', type: 'time', title: 'Customer since' },
    ],
    measures: [{ name: 'count', type: 'count', title: 'Customers' }],
  },
  {
    name: 'products', title: 'Products', table: 'products',
    dimensions: [
      { name: 'id', type: 'number', primaryKey: true, title: 'Product' },
      { name: 'name', type: 'string', title: 'Product' },
      { name: 'category', type: 'string', title: 'Category' },
      { name: 'price', type: 'number', title: 'Price' },
    ],
    measures: [{ name: 'count', type: 'count', title: 'Products' }, { name: 'average_price', type: 'avg', column: 'price', title: 'Average price' }],
  },
];
