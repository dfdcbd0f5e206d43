import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DEMO_ORDERS, demoCustomers, demoOrders, demoProducts } from '../src/data/warehouse/warehouse.demo.js';

/** The demo warehouse as DuckDB data sources: a database file, and the same tables as Parquet and CSV files. */
export interface DuckDbDemoWarehouse {
  /** A DuckDB database file: `orders.created_at` is a TIMESTAMP (UTC), `customers.created_at` a TIMESTAMPTZ. */
  path: string;
  /**
   * The `files` of a data source: `orders` in Parquet with `created_at` as ISO 8601 text, `customers` in CSV, and
   * `products` as a glob over two Parquet files.
   */
  files: Record<'orders' | 'customers' | 'products', string>;
}

async function appendRows(connection: DuckDBConnection, table: string, rows: Iterable<ReadonlyArray<string | number>>): Promise<void> {
  const appender = await connection.createAppender(table);
  for (const row of rows) {
    for (const value of row) {
      if (typeof value === 'string') appender.appendVarchar(value);
      else if (Number.isInteger(value)) appender.appendInteger(value);
      else appender.appendDouble(value);
    }
    appender.endRow();
  }
  appender.closeSync();
}

/**
 * Writes the demo warehouse (the same generator and seeds as the SQLite file, so every figure is the same) into
 * `dir` as a DuckDB database file and as Parquet and CSV files, with the time columns in each form the DuckDB
 * dialect reads: TIMESTAMP, TIMESTAMPTZ and ISO 8601 text.
 */
export async function writeDemoWarehouseDuckDb(dir: string, orders = DEMO_ORDERS): Promise<DuckDbDemoWarehouse> {
  const path = join(dir, 'demo-warehouse.duckdb');
  const filesDir = join(dir, 'demo-files');
  mkdirSync(join(filesDir, 'products'), { recursive: true });
  const instance = await DuckDBInstance.create(path);
  const connection = await instance.connect();
  try {
    await connection.run("SET TimeZone = 'UTC'");
    await connection.run(`
      CREATE TABLE customers_text (id INTEGER, name VARCHAR, segment VARCHAR, region VARCHAR, country VARCHAR, city VARCHAR, latitude DOUBLE, longitude DOUBLE, created_at VARCHAR);
      CREATE TABLE products (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, category VARCHAR NOT NULL, price DOUBLE NOT NULL);
      CREATE TABLE orders_text (id INTEGER, customer_id INTEGER, product_id INTEGER, status VARCHAR, quantity INTEGER, amount DOUBLE, created_at VARCHAR, tenant VARCHAR);
    `);
    const customers = demoCustomers(orders);
    const products = demoProducts();
    await appendRows(connection, 'customers_text', customers.map((c) => [c.id, c.name, c.segment, c.region, c.country, c.city, c.latitude, c.longitude, c.created_at]));
    await appendRows(connection, 'products', products.map((p) => [p.id, p.name, p.category, p.price]));
    await appendRows(connection, 'orders_text', (function* () {
      for (const o of demoOrders(orders, customers.length, products)) yield [o.id, o.customer_id, o.product_id, o.status, o.quantity, o.amount, o.created_at, o.tenant];
    })());
    await connection.run(`
      CREATE TABLE customers AS SELECT * REPLACE (CAST(created_at AS TIMESTAMPTZ) AS created_at) FROM customers_text ORDER BY id;
      CREATE TABLE orders AS SELECT * REPLACE (CAST(CAST(created_at AS TIMESTAMPTZ) AS TIMESTAMP) AS created_at) FROM orders_text ORDER BY id;
    `);
    await connection.run(`COPY orders_text TO '${join(filesDir, 'orders.parquet')}' (FORMAT parquet)`);
    await connection.run(`COPY customers TO '${join(filesDir, 'customers.csv')}' (FORMAT csv, HEADER)`);
    await connection.run(`COPY (SELECT * FROM products WHERE id <= 30) TO '${join(filesDir, 'products', 'part-1.parquet')}' (FORMAT parquet)`);
    await connection.run(`COPY (SELECT * FROM products WHERE id > 30) TO '${join(filesDir, 'products', 'part-2.parquet')}' (FORMAT parquet)`);
    await connection.run('DROP TABLE customers_text; DROP TABLE orders_text; CHECKPOINT');
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  return {
    path,
    files: { orders: join(filesDir, 'orders.parquet'), customers: join(filesDir, 'customers.csv'), products: join(filesDir, 'products', '*.parquet') },
  };
}
